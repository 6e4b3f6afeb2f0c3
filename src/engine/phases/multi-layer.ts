// Multi-layer (MTP-style) drafting, topk 1, docs/design.md section 3: S modules, module k used at draft step k,
// each with its own weights, KV pool and req_to_token table. Module k's row i (anchor i) pairs the
// target hidden h_i with x_{i+k+1}; it is persisted once x_{i+k+1} is verified (h_i is kept until then).
// Draft step k >= 1 runs k temporary rows (anchors L-k..L-1, tokens d_1..d_k); its last row yields d_{k+1}.
import type { EngineContext } from "../context.ts";
import { forwardPlan, rowPlan, windowFromFor, type RowPlan } from "../forward.ts";
import { HiddenRows } from "../hidden-rows.ts";
import type { KvPool } from "../kv-pool.ts";
import { DraftDecodeInput } from "../phase-inputs.ts";
import type { Request } from "../request.ts";
import { topKLogSoftmax } from "../topk.ts";
import { launchPlaceholders } from "./tree-draft.ts";
import { chainTree, type DraftTree } from "./verify.ts";

/** Mutates: keeps target hidden rows (one per position, in order from firstPosition) for the modules. */
export function keepTargetHidden(request: Request, firstPosition: number, rows: HiddenRows): void {
  for (let i = 0; i < rows.count; i++) request.targetHidden.set(firstPosition + i, rows.select([i]));
}

function hiddenAt(context: EngineContext, request: Request, positions: readonly number[]): HiddenRows {
  const parts = positions.map((position) => {
    const row = request.targetHidden.get(position);
    if (!row) throw new Error(`request ${request.id}: no target hidden kept for position ${position}`);
    return row;
  });
  return HiddenRows.concat(context.spec.hidden, parts);
}

/**
 * Persists every module's rows that became ready: module k extends anchors up to
 * min(target hidden available, known tokens - k - 1). Module 0's last row yields the next d_1.
 * One packed forward per module. Drops target hidden rows every module has consumed. Returns the requests
 * still in the phase (none retracted or aborted between its forwards).
 */
export async function runModuleExtends(
  context: EngineContext,
  requests: readonly Request[],
  yieldsDraft: ReadonlySet<Request>,
  /** After verify (a decode-side forward, which padded graph replay runs), not after a prefill chunk. */
  afterVerify = false,
): Promise<Request[]> {
  // Every gap between two forwards is an abort or retract point (the caller's checkpoint was module 0's):
  // a request retracted or aborted between two modules' extends leaves the phase (issue 25).
  const epochs = context.epochs(requests);
  let live: Request[] = [...requests];
  for (let module = 0; module < context.numSteps; module++) {
    if (module > 0) live = context.checkpoint(live, epochs);
    const pool = context.modulePool(module);
    const rows: RowPlan[] = [];
    const hidden: HiddenRows[] = [];
    const lastRows: { request: Request; row: number; end: number }[] = [];
    for (const request of live) {
      const start = request.moduleKvLength[module] ?? 0;
      const end = Math.min(request.targetKvLength, request.tokens.length - module - 1);
      if (end <= start) continue;
      const slots = pool.extendPersisted(request.id, end);
      const firstRow = rows.length;
      for (let anchor = start; anchor < end; anchor++) {
        const i = anchor - start;
        rows.push(
          rowPlan({
            request: request.id,
            token: request.tokens[anchor + module + 1],
            position: anchor,
            windowFrom: windowFromFor(context.moduleSession(module), anchor),
            writeSlot: slots[i],
            temporary: false,
            attendPersisted: start,
            attendTemporary: [],
            attendBatchRows: Array.from({ length: i + 1 }, (_, k) => firstRow + k),
          }),
        );
      }
      hidden.push(
        hiddenAt(
          context,
          request,
          Array.from({ length: end - start }, (_, i) => start + i),
        ),
      );
      lastRows.push({ request, row: rows.length - 1, end });
    }
    if (rows.length === 0) continue;
    const input = HiddenRows.concat(context.spec.hidden, hidden);
    const output = await context.forward(
      forwardPlan({
        phase: "draft-extend",
        model: `draft-module-${module}`,
        module,
        pool,
        session: context.moduleSession(module),
        rows,
        hidden: input,
        replayable: afterVerify,
      }),
    );
    for (const { request, row, end } of lastRows) {
      request.moduleKvLength[module] = end;
      if (module === 0 && yieldsDraft.has(request)) {
        request.draftRoot = topKLogSoftmax(output.result, row, 1);
        request.draftHidden = HiddenRows.fromForward(context.spec.hidden, output.result.hidden, output.event, [row]);
        context.publishDraft(request, request.draftRoot, request.draftHidden, output.event);
      }
    }
  }
  for (const request of live) {
    const consumed = Math.min(...Array.from({ length: context.numSteps }, (_, k) => request.moduleKvLength[k] ?? 0));
    for (const position of [...request.targetHidden.keys()])
      if (position < consumed) request.targetHidden.delete(position);
  }
  return live;
}

/** Draft steps 1..S-1 of a multi-layer round; returns each request's chain d_1..d_S as a tree. */
export async function runMultiLayerDraft(
  context: EngineContext,
  decoding: readonly Request[],
  epochs: ReadonlyMap<Request, number>,
): Promise<Map<number, DraftTree>> {
  const drafts = new Map<number, number[]>(decoding.map((request) => [request.id, [request.rootDraft!.tokens[0]]]));
  for (let module = 1; module < context.numSteps; module++) {
    const active = context.checkpoint(decoding, epochs);
    if (active.length === 0) break;
    // The shared-draft-pool fault (sglang PR 22954): step k's forward keeps module 0's pool.
    const pool: KvPool = context.faults.has("shared-draft-pool") ? context.modulePool(0) : context.modulePool(module);
    const rows: RowPlan[] = [];
    const tokens: number[] = [];
    const hidden: HiddenRows[] = [];
    for (const request of active) {
      const L = request.targetKvLength;
      const anchors = Array.from({ length: module }, (_, i) => L - module + i);
      const slots = pool.allocateTemporary(request.id, module);
      const firstRow = rows.length;
      anchors.forEach((anchor, i) => {
        const token = drafts.get(request.id)![i];
        tokens.push(token);
        rows.push(
          rowPlan({
            request: request.id,
            token,
            position: anchor,
            windowFrom: windowFromFor(context.moduleSession(module), anchor),
            writeSlot: slots[i],
            temporary: true,
            attendPersisted: request.moduleKvLength[module],
            attendTemporary: [],
            attendBatchRows: Array.from({ length: i + 1 }, (_, k) => firstRow + k),
            // d_1 is the draft root: under overlap, resolved from the ring at launch.
            placeholder: i === 0 ? request.launch?.draftPlaceholder : undefined,
          }),
        );
      });
      hidden.push(hiddenAt(context, request, anchors));
    }
    const input = new DraftDecodeInput(active, module, tokens, HiddenRows.concat(context.spec.hidden, hidden));
    const output = await context.forward(
      forwardPlan({
        phase: "draft-decode",
        model: `draft-module-${module}`,
        module,
        pool,
        session: context.moduleSession(module),
        rows,
        hidden: input.hidden,
        draftStep: module,
        replayable: true,
      }),
    );
    active.forEach((request, r) => drafts.get(request.id)!.push(output.predict[(r + 1) * module - 1]));
  }
  const trees = new Map<number, DraftTree>();
  for (const request of decoding) {
    if (!request.running || epochs.get(request) !== request.retracts) continue;
    const chain = drafts.get(request.id)!;
    const tree = chainTree(request.rootToken, chain);
    if (request.launch) tree.placeholders = launchPlaceholders(request, tree);
    trees.set(request.id, tree);
  }
  return trees;
}
