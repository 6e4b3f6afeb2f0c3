// Per-request views of a trace, for the laws that compare two runs of the same requests (chunk,
// page-size and batch invariance). A request's rows are projected per pool, in event order, onto what
// must not depend on chunking, paging or batch composition: phase, draft step, position, token,
// temporary flag and the set of positions attended (slot ids, event numbers and row indices dropped).
// Each row carries its segment: how many verify/decode forwards of the request came before it (0 for
// prefill and its draft extend, k - 1 for round k's draft and verify rows), the clock used to decide
// whether a difference can be the echo of an earlier near-tie. Rows a retracted request re-runs to
// rebuild KV it already had, and the temporary rows of the round a retract cut short, are skipped:
// resume must continue exactly where the request left off. Discarded work (overlap: a zombie's extra
// round, a round in flight when an abort or retract landed) is left out: nothing of it was emitted. A
// prefix hit's length per pool is kept: the positions it reused are compared in neither run. Tree-drafting
// rows also carry what the selection read (draft-tree.ts): the candidate's token path, its rank gap, and a
// draft row's children, so a selection that flipped at a near-tie is told from a real difference.
import type { SamplingDraw, Trace, TraceEvent, TraceRow, VerifyResult } from "../trace/schema.ts";
import { readDraftRounds, selectedRows } from "./draft-tree.ts";

export interface ViewRow {
  phase: TraceEvent["phase"];
  pool: string;
  draftStep?: number;
  position: number;
  token: number;
  temporary?: boolean;
  /** Attended positions (persisted ranges, temporary, same-forward rows) as one canonical string. */
  attended?: string;
  predict?: number;
  margin?: number;
  topLogit?: number;
  /** Tree drafting (draft-decode and verify rows): the carried candidate's token path from the root. */
  path?: string;
  /** Its score gap to its neighbours in the selection's ranking (draft units): below epsilon, a near-tie. */
  rankGap?: number;
  /** Tree drafting: the tokens this draft row expanded into (sorted), and the margin at the topk cut. */
  children?: string;
  childMargin?: number;
  /** Stochastic rows: the uniforms their decisions took (one canonical string) and the smallest decision margin. */
  uniforms?: string;
  drawMargin?: number;
  /** Where the row is in its trace. */
  event: number;
  row: number;
  segment: number;
}

export interface RoundView {
  event: number;
  segment: number;
  result: VerifyResult;
}

export interface RequestView {
  id: number;
  prompt: readonly number[];
  output: readonly number[];
  finishReason?: string;
  /** Rows per pool, in event order. */
  pools: Map<string, ViewRow[]>;
  rounds: RoundView[];
  /** Output tokens emitted per verify/decode forward, in order (prefill emits output[0]). */
  emissions: number[];
  retracted: boolean;
  /** Pool -> positions [0, length) a prefix hit reused (their KV was not computed by this request). */
  prefixHits: Map<string, number>;
}

export function poolOf(event: TraceEvent): string {
  return event.pool ?? event.model ?? (event.phase.startsWith("draft") ? "draft" : "target");
}

/** Canonical attended set: own positions seen (persisted, temporary, same-forward rows) and foreign reads. */
export function attendedKey(event: TraceEvent, rowIndex: number, row: TraceRow): string | undefined {
  const attended = row.attended;
  if (!attended) return undefined;
  const sameForward: number[] = [];
  const temporary = [...(attended.temporary ?? [])];
  let self = false;
  for (const batchRow of attended.batchRows ?? []) {
    if (batchRow === rowIndex) self = true;
    else {
      const other = event.rows[batchRow];
      if (other?.temporary) temporary.push(other.position);
      else if (other) sameForward.push(other.position);
    }
  }
  temporary.sort((a, b) => a - b);
  const foreign = (attended.foreign ?? []).map((f) => `${f.request}@${f.position}`).sort();
  const positions = compressSortedRanges(attended.positions, sameForward);
  return `${positions ?? compressRanges(expanded(attended.positions, sameForward))}|t:${temporary.join(",")}|${self ? "self" : "noself"}${foreign.length ? `|foreign:${foreign.join(",")}` : ""}`;
}

/** Every position the ranges cover and the single positions, sorted. */
function expanded(ranges: readonly (readonly [number, number])[], singles: readonly number[]): number[] {
  const positions: number[] = [];
  for (const [lo, hi] of ranges) for (let p = lo; p <= hi; p++) positions.push(p);
  for (const position of singles) positions.push(position);
  return positions.sort((a, b) => a - b);
}

/**
 * compressRanges(expanded(ranges, singles)) without listing the positions, when the ranges and then the single
 * positions are in order and disjoint (how engines record them: a row reads a prefix, perhaps in a few pieces,
 * then the rows before it in the same forward); undefined otherwise.
 */
function compressSortedRanges(
  ranges: readonly (readonly [number, number])[],
  singles: readonly number[],
): string | undefined {
  const parts: string[] = [];
  let runStart = 0;
  let runEnd = -1;
  let open = false;
  const count = ranges.length + singles.length;
  for (let i = 0; i < count; i++) {
    const lo = i < ranges.length ? ranges[i][0] : singles[i - ranges.length];
    const hi = i < ranges.length ? ranges[i][1] : lo;
    if (lo > hi) continue;
    if (!Number.isInteger(lo) || !Number.isInteger(hi)) return undefined;
    if (open && lo <= runEnd) return undefined; // overlapping or out of order: the general path
    if (open && lo === runEnd + 1) {
      runEnd = hi;
      continue;
    }
    if (open) parts.push(rangeText(runStart, runEnd));
    runStart = lo;
    runEnd = hi;
    open = true;
  }
  if (open) parts.push(rangeText(runStart, runEnd));
  return parts.join(",");
}

/** A run of consecutive positions as compressRanges writes it: `p`, or `first..last`. */
const rangeText = (first: number, last: number): string => (first === last ? `${first}` : `${first}..${last}`);

/** Sorted positions as runs of consecutive ones (`0..4,7`), `separator` between runs. */
export function compressRanges(positions: readonly number[], separator = ","): string {
  const parts: string[] = [];
  let start = 0;
  for (let i = 1; i <= positions.length; i++) {
    if (i === positions.length || positions[i] !== positions[i - 1] + 1) {
      parts.push(rangeText(positions[start], positions[i - 1]));
      start = i;
    }
  }
  return parts.join(separator);
}

export function requestViews(trace: Trace): Map<number, RequestView> {
  const views = new Map<number, RequestView>();
  const viewOf = (id: number): RequestView => {
    let view = views.get(id);
    if (!view) {
      const entry = trace.requests?.find((request) => request.id === id);
      view = {
        id,
        prompt: entry?.prompt ?? [],
        output: entry?.output ?? [],
        finishReason: entry?.finishReason,
        pools: new Map(),
        rounds: [],
        emissions: [],
        retracted: false,
        prefixHits: new Map(),
      };
      views.set(id, view);
    }
    return view;
  };
  for (const request of trace.requests ?? []) viewOf(request.id);

  const retractsBefore = new Map<number, number[]>();
  for (const entry of trace.lifecycle ?? []) {
    if (entry.kind === "retract")
      retractsBefore.set(entry.beforeEvent, [...(retractsBefore.get(entry.beforeEvent) ?? []), entry.request]);
    if (entry.kind === "prefix-hit") {
      const hits = viewOf(entry.request).prefixHits;
      for (const { pool, length } of entry.pools ?? []) hits.set(pool, Math.max(hits.get(pool) ?? 0, length));
    }
  }
  const selected = selectedRows(readDraftRounds(trace));
  const segments = new Map<number, number>();
  /** Persisted positions already written per request and pool, and whether the request is rebuilding after a retract. */
  const written = new Map<string, number>();
  const rebuilding = new Set<number>();

  for (const event of trace.events) {
    for (const request of retractsBefore.get(event.index) ?? []) {
      rebuilding.add(request);
      const view = viewOf(request);
      view.retracted = true;
      // The round the retract cut short is run again after resume: its temporary rows are dropped.
      const segment = segments.get(request) ?? 0;
      for (const rows of view.pools.values()) {
        while (rows.length > 0 && rows[rows.length - 1].temporary === true && rows[rows.length - 1].segment === segment)
          rows.pop();
      }
    }
    const pool = poolOf(event);
    const seenRequests = new Set<number>();
    event.rows.forEach((row, rowIndex) => {
      if (row.discarded) return;
      seenRequests.add(row.request);
      const view = viewOf(row.request);
      const key = `${pool}:${row.request}`;
      const high = written.get(key) ?? 0;
      if (row.temporary !== true && rebuilding.has(row.request) && row.position < high) return; // resume rebuilding old KV
      if (row.temporary !== true) written.set(key, Math.max(high, row.position + 1));
      const rows = view.pools.get(pool) ?? [];
      rows.push({
        phase: event.phase,
        pool,
        draftStep: event.draftStep,
        position: row.position,
        token: row.token,
        temporary: row.temporary,
        attended: attendedKey(event, rowIndex, row),
        predict: row.predict,
        margin: row.margin,
        topLogit: row.topLogit,
        ...(row.draws ? drawsOf(row.draws) : {}),
        ...selected.get(`${event.index}:${rowIndex}`),
        ...(row.children
          ? {
              children: row.children
                .map((child) => child.token)
                .sort((a, b) => a - b)
                .join(","),
              childMargin: row.childMargin,
            }
          : {}),
        event: event.index,
        row: rowIndex,
        segment: segments.get(row.request) ?? 0,
      });
      view.pools.set(pool, rows);
    });
    for (const result of event.verify ?? []) {
      if (result.discarded) continue;
      const view = viewOf(result.request);
      // Compaction persists the accepted path's target KV at root .. root + accept_len - 1 without a row.
      const root = event.rows.find((row) => row.request === result.request && !row.discarded);
      if (root) {
        const key = `${pool}:${result.request}`;
        written.set(key, Math.max(written.get(key) ?? 0, root.position + result.acceptLen));
      }
      view.rounds.push({ event: event.index, segment: segments.get(result.request) ?? 0, result });
      view.emissions.push(result.emitted?.length ?? result.acceptLen);
    }
    if (event.phase === "verify" || event.phase === "decode") {
      for (const request of seenRequests) {
        if (event.phase === "decode") viewOf(request).emissions.push(1);
        segments.set(request, (segments.get(request) ?? 0) + 1);
        rebuilding.delete(request);
      }
    }
  }
  return views;
}

/** The segment of the forward that emitted output token `index` (prefill emits token 0). */
export function segmentOfOutput(view: RequestView, index: number): number {
  let emitted = 1;
  if (index < emitted) return 0;
  for (let k = 0; k < view.emissions.length; k++) {
    emitted += view.emissions[k];
    if (index < emitted) return k;
  }
  return view.emissions.length;
}

/** A row's decisions as the comparison reads them: the uniforms taken and how close any came to its boundary. */
function drawsOf(draws: readonly SamplingDraw[]): { uniforms: string; drawMargin: number } {
  return {
    uniforms: draws.map((draw) => draw.uniform).join(","),
    drawMargin: Math.min(...draws.map((draw) => draw.margin ?? Infinity)),
  };
}
