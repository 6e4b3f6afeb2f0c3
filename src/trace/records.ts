// Trace rows and events as the reference engine builds them: every field of the schema present, in one
// order, absent ones undefined. A trace is read by a dozen laws whose loops run over every row of every
// event; with fields added only when present (object spreads, later annotations) a trace holds dozens of
// row shapes, each law's loop deoptimizes on every new one and V8 compiles it again (runForward and the KV
// conservation law were each compiled 6-8 times per process, ~100 ms a time). One shape keeps those loops
// monomorphic. JSON output is unchanged (undefined fields are not written) and so is what a law reads
// (`row.parent === undefined` either way); traces read from JSON keep the shapes they come with.
import type { LifecycleEvent, SlotReference, TraceEvent, TraceRequest, TraceRow, VerifyResult } from "./schema.ts";

/**
 * `items.map(fn)` as an array of one kind. Optimized code's inlined map() returns a holey array where the
 * builtin returns a packed one, so a trace's arrays would come in two shapes depending on which tier built
 * them, and every law's loop over them would be deoptimized once per shape it had not seen.
 */
export function mapPacked<T, U>(items: readonly T[], fn: (item: T, index: number) => U): U[] {
  const out: U[] = [];
  for (let i = 0; i < items.length; i++) out.push(fn(items[i], i));
  return out;
}

/** A trace row with every schema field, in schema order; `fields` gives the ones present. */
export function traceRow(fields: TraceRow): TraceRow {
  return {
    request: fields.request,
    token: fields.token,
    position: fields.position,
    slot: fields.slot,
    temporary: fields.temporary,
    parent: fields.parent,
    placeholder: fields.placeholder,
    discarded: fields.discarded,
    hidden: fields.hidden,
    aux: fields.aux,
    draftPredict: fields.draftPredict,
    predict: fields.predict,
    margin: fields.margin,
    topLogit: fields.topLogit,
    rawPredict: fields.rawPredict,
    attended: fields.attended,
    window: fields.window,
    recurrent: fields.recurrent,
    candidate: fields.candidate,
    children: fields.children,
    childMargin: fields.childMargin,
    draws: fields.draws,
    grammarState: fields.grammarState,
  };
}

/** A trace event with every schema field, in schema order. */
export function traceEvent(fields: TraceEvent): TraceEvent {
  return {
    index: fields.index,
    step: fields.step,
    phase: fields.phase,
    model: fields.model,
    pool: fields.pool,
    draftStep: fields.draftStep,
    module: fields.module,
    paddedRows: fields.paddedRows,
    rows: fields.rows,
    verify: fields.verify,
    released: fields.released,
    futures: fields.futures,
    references: fields.references,
  };
}

/** A trace's request record with every schema field, in schema order. */
export function traceRequest(fields: TraceRequest): TraceRequest {
  return {
    id: fields.id,
    prompt: fields.prompt,
    output: fields.output,
    finishReason: fields.finishReason,
    stopTokenId: fields.stopTokenId,
    finishedLength: fields.finishedLength,
    logprobs: fields.logprobs,
    slot: fields.slot,
    text: fields.text,
    stopString: fields.stopString,
    deltas: fields.deltas,
    usage: fields.usage,
  };
}

/** An abort, retract or prefix hit with every schema field, in schema order. */
export function lifecycleEvent(fields: LifecycleEvent): LifecycleEvent {
  return {
    kind: fields.kind,
    request: fields.request,
    step: fields.step,
    beforeEvent: fields.beforeEvent,
    matched: fields.matched,
    pools: fields.pools,
  };
}

/** A slot reference change with every schema field, in schema order (its own copy of the slots). */
export function slotReference(fields: SlotReference): SlotReference {
  return {
    pool: fields.pool,
    holder: fields.holder,
    slots: [...fields.slots],
    change: fields.change,
    reason: fields.reason,
  };
}

/** A verify result with every schema field, in schema order (emitted, finished, discarded are set later). */
export function verifyResult(fields: VerifyResult): VerifyResult {
  return {
    request: fields.request,
    acceptIndex: fields.acceptIndex,
    acceptLen: fields.acceptLen,
    acceptTokens: fields.acceptTokens,
    bonus: fields.bonus,
    emitted: fields.emitted,
    finished: fields.finished,
    discarded: fields.discarded,
  };
}
