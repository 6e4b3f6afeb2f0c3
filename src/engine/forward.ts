// Builds the tensors of one packed ragged forward, runs it, writes the new K/V rows into the pool and
// records the trace event. Trace rows are read back from the exact tensors passed to the runtime and
// the slots actually written, never from scheduler intent, so a plumbing bug shows in the trace.
import {
  NonFiniteOutputError,
  type FloatArray,
  type ForwardFeeds,
  type ForwardResult,
  type ModelSession,
} from "../runtime/ort.ts";
import { rowTop } from "./topk.ts";
import { traceEvent, traceRow } from "../trace/records.ts";
import type { Phase, TraceRow } from "../trace/schema.ts";
import type { Faults } from "../case/faults.ts";
import { toTargetIds } from "./draft-vocabulary.ts";
import type { ForwardMemo } from "./forward-memo.ts";
import type { DraftInputRows } from "./hidden-rows.ts";
import type { KvPool, SlotOwner } from "./kv-pool.ts";
import type { ReplayOutput, ReplayWrites } from "./padded-replay.ts";
import { sampleRow, type RowSampler, type SampledRow } from "./row-sampler.ts";
import { OUTSIDE_WINDOW, windowStart } from "../model/window.ts";
import type { TraceRecorder } from "./trace-recorder.ts";
import { keepRecurrentStates, recurrentFeeds } from "./recurrent-states.ts";

/** Additive mask value for "not attended": finite so the mirror's prefix columns can be derived by * 0. */
export const MASKED = -1e9;

export interface RowPlan {
  request: number;
  token: number;
  position: number;
  /** Slot this row's K/V is written to (allocated by the phase). */
  writeSlot: number;
  temporary: boolean;
  /** Attend the request's persisted positions [0, attendPersisted) in this pool. */
  attendPersisted: number;
  /** Temporary slots of earlier forwards this row attends (its ancestors'). */
  attendTemporary: readonly number[];
  /** Rows of this forward this row attends; always includes itself. */
  attendBatchRows: readonly number[];
  /** Verify rows: the parent node's index within the request's block (-1 for the root). */
  treeParent?: number;
  /** Overlap: the future-ring placeholder this row's token was resolved from at launch. */
  placeholder?: number;
  /** A target row sampling the next token of a request with sampling options (processing, logprobs). */
  sampler?: RowSampler;
  /** Tree drafting: the draft candidate number this row carries (0 for the verify root). */
  candidate?: number;
  /**
   * Sliding-window attention (graphs with windowed layers): the first position the row's windowed layers attend,
   * the window metadata a real engine passes with the KV indices. Undefined: none was passed, so they attend
   * everything the full-attention layers do.
   */
  windowFrom?: number;
  /** A draft row of a request with a grammar: its mask state (the phase ranks its candidates over the full logits). */
  grammarState?: number;
}

export interface ForwardPlan {
  phase: Phase;
  model: string;
  pool: KvPool;
  session: ModelSession;
  rows: RowPlan[];
  /** Draft graphs: one input row per plan row (a hidden state, or EAGLE-3 auxiliary states). */
  hidden?: DraftInputRows;
  /** Runs the forward instead of session.run (graph replay); writes are the real rows' write slots. */
  runner?: (feeds: ForwardFeeds, writes: ReplayWrites) => Promise<ReplayOutput>;
  /** A decode-side forward (decode, verify, draft decode, draft extend after verify): padded replay may run it. */
  replayable?: boolean;
  draftStep?: number;
  /** Multi-layer drafting: the module this forward runs. */
  module?: number;
  /**
   * Added to every row's position where the graph is fed (the row's recorded position, its anchor, and its
   * bookkeeping stay): the draft-model-position-shifted fault's shift; 0 or absent otherwise.
   */
  positionShift?: number;
}

/**
 * A row plan with every field present, in one order. Phases build plans with different optional fields; built
 * as literals they give runForward's loops a new hidden class per phase and per option, each a deoptimization
 * and a recompile of runForward (~80 ms of compiler time each, several per process). One shape avoids that.
 */
export function rowPlan(fields: RowPlan): RowPlan {
  return {
    request: fields.request,
    token: fields.token,
    position: fields.position,
    writeSlot: fields.writeSlot,
    temporary: fields.temporary,
    attendPersisted: fields.attendPersisted,
    attendTemporary: fields.attendTemporary,
    attendBatchRows: fields.attendBatchRows,
    treeParent: fields.treeParent,
    placeholder: fields.placeholder,
    sampler: fields.sampler,
    candidate: fields.candidate,
    windowFrom: fields.windowFrom,
    grammarState: fields.grammarState,
  };
}

/**
 * The window metadata of a decode or verify row at L + depth: from the request's window bookkeeping
 * (targetWindowStart, the window of position L), as SWA engines keep it per request, not recomputed.
 */
export function targetWindowFrom(
  context: { sessions: { target: ModelSession } },
  request: { targetWindowStart: number },
  depth: number,
): number | undefined {
  return context.sessions.target.window === undefined ? undefined : Math.max(0, request.targetWindowStart + depth);
}

/** The window metadata of a row at `position` of a session's graph: its window's first position (none unwindowed). */
export function windowFromFor(session: ModelSession, position: number): number | undefined {
  return session.window === undefined ? undefined : windowStart(position, session.window);
}

/** A forward plan with every field present, in one order (as rowPlan). */
export function forwardPlan(fields: ForwardPlan): ForwardPlan {
  return {
    phase: fields.phase,
    model: fields.model,
    pool: fields.pool,
    session: fields.session,
    rows: fields.rows,
    hidden: fields.hidden,
    runner: fields.runner,
    replayable: fields.replayable,
    draftStep: fields.draftStep,
    module: fields.module,
    positionShift: fields.positionShift,
  };
}

export interface ForwardOutput {
  event: number;
  result: ForwardResult;
  predict: number[];
  margins: number[];
  /** Rows with a sampler: their processed choice (predict and margins already hold it). */
  sampled: (SampledRow | undefined)[];
}

export interface ForwardContext {
  step: number;
  faults: Faults;
  recorder: TraceRecorder;
  vocab: number;
  /** EAGLE-3 drafts: aux_in's width, and the target id of each draft id (what the engine believes d2t says). */
  eagle3?: { auxWidth: number; draftToTarget: Int32Array };
  /** Forwards of the case's runs so far: an exact repeat is not run again (forward-memo.ts). */
  memo?: ForwardMemo;
}

export async function runForward(context: ForwardContext, plan: ForwardPlan): Promise<ForwardOutput> {
  const { pool, rows } = plan;
  const numRows = rows.length;
  // Context columns: each request's persisted slots (a contiguous column range, up to the longest need
  // among its rows), then the temporary slots its rows attend.
  const persistedNeed = new Map<number, number>();
  for (const row of rows)
    persistedNeed.set(row.request, Math.max(persistedNeed.get(row.request) ?? 0, row.attendPersisted));
  const ctxSlots: number[] = [];
  const firstColumnOfRequest = new Map<number, number>();
  for (const [request, need] of persistedNeed) {
    if (need > 0) firstColumnOfRequest.set(request, ctxSlots.length);
    pool.persistedSlotsInto(request, need, ctxSlots);
  }
  const temporaryColumn = new Map<number, number>();
  for (const row of rows) {
    for (const slot of row.attendTemporary) {
      if (temporaryColumn.has(slot)) continue;
      if (!firstColumnOfRequest.has(row.request)) firstColumnOfRequest.set(row.request, ctxSlots.length);
      temporaryColumn.set(slot, ctxSlots.length);
      ctxSlots.push(slot);
    }
  }

  const numCtx = ctxSlots.length;
  const width = numCtx + numRows;
  const FloatCtor = pool.dtype === "float32" ? Float32Array : Float64Array;
  const mask: FloatArray = new FloatCtor(numRows * width).fill(MASKED);
  rows.forEach((row, r) => {
    const base = r * width;
    const start = firstColumnOfRequest.get(row.request) ?? 0;
    mask.fill(0, base + start, base + start + row.attendPersisted);
    for (const slot of row.attendTemporary) mask[base + temporaryColumn.get(slot)!] = 0;
    for (const other of row.attendBatchRows) mask[base + numCtx + other] = 0;
  });
  if (context.faults.has("cross-request-mask-leak")) leakAcrossRequests(rows, firstColumnOfRequest, mask, width);
  const windowed = plan.session.window !== undefined;
  if (windowed) markWindows(rows, ctxSlots, firstColumnOfRequest, persistedNeed, pool, mask, width);

  const tokens = new BigInt64Array(numRows);
  const positions = new BigInt64Array(numRows);
  const tokenWords = new Int32Array(tokens.buffer);
  const positionWords = new Int32Array(positions.buffer);
  const writeSlots: number[] = new Array(numRows);
  let withLogits = false;
  const positionShift = plan.positionShift ?? 0;
  for (let r = 0; r < numRows; r++) {
    const row = rows[r];
    setInt64(tokens, tokenWords, r, row.token);
    setInt64(positions, positionWords, r, row.position + positionShift);
    writeSlots[r] = row.writeSlot;
    if (row.sampler !== undefined || row.grammarState !== undefined) withLogits = true;
  }
  const ctxSlotTensor = int64Array(ctxSlots);
  // EAGLE-3 graphs take both inputs: a row fed auxiliary states has a zero hidden input and vice versa.
  const { hiddenIn, auxIn } = draftFeeds(context, plan, pool.dtype, numRows);
  // Hybrid models: each row's recurrent state source (recurrent-states.ts).
  const recurrent =
    plan.session.recurrent && pool.recurrent
      ? recurrentFeeds(pool.recurrent, rows, (slot) => pool.ownerOf(slot)?.position)
      : undefined;
  const feeds: ForwardFeeds = {
    tokens,
    positions,
    hiddenIn,
    auxIn,
    kCache: pool.keys,
    vCache: pool.values,
    cacheDims: [pool.layers, pool.numSlots, pool.kvDim],
    ctxSlots: ctxSlotTensor,
    mask,
    // Processing needs the whole row of logits; other forwards fetch only the graph's top-K.
    withLogits,
    recInit: recurrent?.recInit,
    recSrc: recurrent?.recSrc,
  };
  // Graph replay (padded or not) runs on its own static buffers: not memoized.
  let memoized;
  try {
    memoized =
      context.memo && !plan.runner
        ? { ...(await context.memo.run(plan.session, feeds, pool.contentOf(ctxSlots))), paddedRows: 0 }
        : plan.runner
          ? { ...(await plan.runner(feeds, { pool, slots: writeSlots })), contentBase: undefined }
          : { result: await plan.session.run(feeds), contentBase: undefined, paddedRows: 0 };
  } catch (error) {
    if (!(error instanceof NonFiniteOutputError)) throw error;
    // Named in the engine's terms; the event is not recorded (no trace row holds the value).
    const row = rows[error.row];
    const who = row ? `request ${row.request}, position ${row.position}` : "a padding row";
    throw new NonFiniteOutputError(
      error.output,
      error.row,
      error.value,
      error.ep,
      `step ${context.step}, ${plan.phase} forward of ${plan.model} (${who})`,
    );
  }
  const { paddedRows } = memoized;
  const ran = memoized.result;
  // EAGLE-3: the graph ranks draft ids; what the engine drafts are their target ids through d2t (a copy:
  // the memo's outputs stay as the graph returned them).
  const vocabMap = plan.session.hasAuxInput ? context.eagle3?.draftToTarget : undefined;
  const result = vocabMap ? toTargetIds(ran, vocabMap) : ran;
  pool.writeRows(writeSlots, result.kNew, result.vNew, numRows, 0, memoized.contentBase);
  rows.forEach((row) => {
    if (row.temporary) pool.setTemporaryPosition(row.writeSlot, row.position);
  });
  if (recurrent && pool.recurrent && result.recOut) keepRecurrentStates(pool.recurrent, rows, result.recOut);

  const predict: number[] = [];
  const margins: number[] = [];
  const topLogits: number[] = [];
  const rawPredict: number[] = [];
  const sampled: (SampledRow | undefined)[] = [];
  for (let r = 0; r < numRows; r++) {
    const raw = rowTop(result, r);
    const sampler = rows[r].sampler;
    const choice = sampler ? sampleRow(sampler, result.logits!, r, context.vocab) : undefined;
    const top = choice ?? raw;
    sampled.push(choice);
    rawPredict.push(raw.predict);
    predict.push(top.predict);
    margins.push(top.margin);
    topLogits.push(top.topLogit);
  }

  // Each context column's slot owner, looked up once per forward; every row reads its own mask row.
  const columnOwners = context.recorder.enabled ? ctxSlots.map((slot) => pool.ownerOf(slot)) : [];
  const event = context.recorder.record((index) => {
    // Pushed, not mapped: one array kind for every event's rows (trace/records.ts, mapPacked).
    const traced: TraceRow[] = [];
    for (let r = 0; r < numRows; r++) {
      const row = rows[r];
      traced.push(
        traceRow({
          request: row.request,
          token: Number(tokens[r]),
          // Read back from the fed tensor (graph capture may have moved it), less the shift the plan added.
          position: Number(positions[r]) - positionShift,
          slot: writeSlots[r],
          temporary: row.temporary,
          parent: row.treeParent,
          placeholder: row.placeholder,
          candidate: row.candidate,
          aux: plan.hidden?.kind === "aux" ? [...plan.hidden.provenance[r]] : undefined,
          hidden: plan.hidden?.kind === "hidden" ? plan.hidden.provenance[r] : undefined,
          predict: predict[r],
          draftPredict: vocabMap ? Number(ran.topIndices[r * ran.topK]) : undefined,
          margin: margins[r],
          topLogit: topLogits[r],
          rawPredict: sampled[r]?.processed ? rawPredict[r] : undefined,
          attended: readAttended(row.request, mask, r * width, width, columnOwners, pool, ctxSlots, windowed),
          window: windowed
            ? readAttended(row.request, mask, r * width, width, columnOwners, pool, ctxSlots, false)
            : undefined,
          recurrent: recurrent?.read[r],
          grammarState: row.grammarState ?? row.sampler?.context.grammarState,
        }),
      );
    }
    return traceEvent({
      index,
      step: context.step,
      phase: plan.phase,
      model: plan.model,
      pool: pool.name,
      draftStep: plan.draftStep,
      module: plan.module,
      paddedRows: paddedRows > 0 ? paddedRows : undefined,
      rows: traced,
    });
  });
  return { event, result, predict, margins, sampled };
}

/** hidden_in and aux_in of a draft forward: the plan's rows in the one they belong to, zeros in the other. */
function draftFeeds(
  context: ForwardContext,
  plan: ForwardPlan,
  dtype: "float32" | "float64",
  numRows: number,
): { hiddenIn?: FloatArray; auxIn?: FloatArray } {
  const input = plan.hidden;
  if (!plan.session.hasAuxInput) return { hiddenIn: input?.values };
  const auxWidth = context.eagle3?.auxWidth;
  if (auxWidth === undefined) throw new Error("an EAGLE-3 draft forward without the checkpoint's aux width");
  const FloatCtor = dtype === "float32" ? Float32Array : Float64Array;
  return {
    hiddenIn: input?.kind === "hidden" ? input.values : new FloatCtor(numRows * plan.session.hiddenSize),
    auxIn: input?.kind === "aux" ? input.values : new FloatCtor(numRows * auxWidth),
  };
}

/**
 * int64 tensors from small non-negative integers, written as little-endian words into the buffer:
 * BigInt64Array.from(values, BigInt) costs ~15x more per element on this hot path.
 */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

function int64Array(values: readonly number[]): BigInt64Array {
  const out = new BigInt64Array(values.length);
  const words = new Int32Array(out.buffer);
  for (let i = 0; i < values.length; i++) setInt64(out, words, i, values[i]);
  return out;
}

/** out[i] = value; `words` views out's buffer (zero-filled): a small non-negative integer is its low word. */
function setInt64(out: BigInt64Array, words: Int32Array, i: number, value: number): void {
  if (LITTLE_ENDIAN && value >= 0 && value <= 0x7fffffff && Number.isInteger(value)) words[2 * i] = value;
  else out[i] = BigInt(value); // negative or large: the exact (slow) path
}

/** The fault: every row of a request also sees the first context slot of the next request in the batch. */
function leakAcrossRequests(
  rows: readonly RowPlan[],
  firstColumnOfRequest: Map<number, number>,
  mask: FloatArray,
  width: number,
): void {
  const order = [...new Set(rows.map((row) => row.request))];
  rows.forEach((row, r) => {
    const next = order[order.indexOf(row.request) + 1];
    const column = next === undefined ? undefined : firstColumnOfRequest.get(next);
    if (column !== undefined) mask[r * width + column] = 0;
  });
}

/**
 * Sliding windows: marks each row's attended columns before its windowFrom as OUTSIDE_WINDOW (seen by the
 * full-attention layers only). Column positions: a request's persisted columns hold positions 0.. in order,
 * temporary columns the positions their rows were written at, batch columns their rows' positions.
 */
function markWindows(
  rows: readonly RowPlan[],
  ctxSlots: readonly number[],
  firstColumnOfRequest: ReadonlyMap<number, number>,
  persistedNeed: ReadonlyMap<number, number>,
  pool: KvPool,
  mask: FloatArray,
  width: number,
): void {
  const numCtx = ctxSlots.length;
  const columnPositions = new Float64Array(width);
  for (let column = 0; column < numCtx; column++)
    columnPositions[column] = pool.ownerOf(ctxSlots[column])?.position ?? -1;
  for (const [request, need] of persistedNeed) {
    const start = firstColumnOfRequest.get(request);
    if (start !== undefined) for (let p = 0; p < need; p++) columnPositions[start + p] = p;
  }
  rows.forEach((row, r) => (columnPositions[numCtx + r] = row.position));
  rows.forEach((row, r) => {
    if (row.windowFrom === undefined) return;
    const base = r * width;
    for (let column = 0; column < width; column++)
      if (mask[base + column] === 0 && columnPositions[column] < row.windowFrom) mask[base + column] = OUTSIDE_WINDOW;
  });
}

/**
 * What one mask row (mask[base, base + width)) lets the row see, resolved through the slot owners: through the
 * full-attention layers (OUTSIDE_WINDOW columns attended) or, with `outsideAttended` off, the windowed ones.
 */
function readAttended(
  request: number,
  mask: FloatArray,
  base: number,
  width: number,
  columnOwners: readonly (SlotOwner | undefined)[],
  /** Whether the request holds a column's slot as a persisted position of its own (a shared prefix's page). */
  pool: Pick<KvPool, "holdsPersisted">,
  ctxSlots: readonly number[],
  outsideAttended: boolean,
): TraceRow["attended"] {
  const seen = (value: number) => value === 0 || (outsideAttended && value === OUTSIDE_WINDOW);
  const numCtx = columnOwners.length;
  // Persisted positions merged into ranges as they come: columns are laid out in position order, so only
  // a scrambled layout (a bug) needs the collect-and-sort path.
  let ranges: [number, number][] = [];
  let scrambled: number[] | undefined;
  const temporary: number[] = [];
  const foreign: { request: number; position: number }[] = [];
  const batchRows: number[] = [];
  for (let column = 0; column < numCtx; column++) {
    if (!seen(mask[base + column])) continue;
    const owner = columnOwners[column];
    // A shared prefix's slots keep their writer as owner; the request holds them at the same positions.
    if (!owner || (owner.request !== request && !pool.holdsPersisted(request, ctxSlots[column])))
      foreign.push({ request: owner?.request ?? -1, position: owner?.position ?? -1 });
    else if (owner.temporary) temporary.push(owner.position);
    else {
      const position = owner.position;
      const last = ranges[ranges.length - 1];
      if (scrambled) scrambled.push(position);
      else if (last && position <= last[1]) {
        scrambled = ranges.flatMap(([from, to]) => Array.from({ length: to - from + 1 }, (_, i) => from + i));
        scrambled.push(position);
      } else if (last && position === last[1] + 1) last[1] = position;
      else ranges.push([position, position]);
    }
  }
  for (let column = numCtx; column < width; column++) if (seen(mask[base + column])) batchRows.push(column - numCtx);
  if (scrambled) {
    scrambled.sort((a, b) => a - b);
    ranges = [];
    for (const position of scrambled) {
      const last = ranges[ranges.length - 1];
      if (last && position <= last[1] + 1) last[1] = Math.max(last[1], position);
      else ranges.push([position, position]);
    }
  }
  // Absent lists undefined, not left out: one shape for every row's attended set (trace/records.ts).
  return {
    positions: ranges,
    temporary: temporary.length > 0 ? temporary : undefined,
    batchRows,
    foreign: foreign.length > 0 ? foreign : undefined,
  };
}
