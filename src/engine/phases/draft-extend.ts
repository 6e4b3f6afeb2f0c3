// Draft extend: persists draft KV for newly verified positions and yields d_1 for the next round.
// Used after a prefill chunk (rows pair h_i with x_{i+1}) and after verify (the accepted path's verify
// hidden states with the emitted tokens, shifted by one).
import type { EngineContext } from "../context.ts";
import { forwardPlan, rowPlan, windowFromFor, type RowPlan } from "../forward.ts";
import { HiddenRows } from "../hidden-rows.ts";
import type { DraftExtendInput } from "../phase-inputs.ts";
import { childrenFields, topKLogSoftmax } from "../topk.ts";
import { draftRowMask, draftTopK } from "../grammar-draft.ts";

export async function runDraftExtend(
  context: EngineContext,
  input: DraftExtendInput,
  /** After verify: a decode-side forward, which padded graph replay runs (not after a prefill chunk). */
  afterVerify = false,
): Promise<void> {
  const pool = context.draftPool();
  const session = context.draftSession();
  // sglang issue 22679: the draft-extend path built its attention metadata without the sliding window.
  const windowMissing = context.faults.has("window-missing-on-draft-extend");
  const rows: RowPlan[] = [];
  const lastRowOf: { segmentIndex: number; row: number; maskState?: number }[] = [];
  // The skipped-draft-position fault: after verify, a segment of 2+ rows drops its first anchor's row (its slot
  // is allocated, never written) while the later rows take that position as persisted KV.
  const skipping = afterVerify && context.faults.has("skipped-draft-position");
  const keptHidden: number[] = [];
  let hiddenRow = 0;
  input.segments.forEach((segment, segmentIndex) => {
    const { request, firstAnchor, tokens } = segment;
    const slots = pool.extendPersisted(request.id, firstAnchor + tokens.length);
    const skipFirst = skipping && tokens.length > 1 ? 1 : 0;
    const firstRow = rows.length;
    // The row yielding the next round's root candidates: masked by the grammar's state after every verified token.
    const maskState = segment.yieldsDraft ? draftRowMask(context, request, []) : undefined;
    tokens.forEach((token, i) => {
      if (i < skipFirst) {
        hiddenRow += 1;
        return;
      }
      keptHidden.push(hiddenRow++);
      rows.push(
        rowPlan({
          request: request.id,
          token,
          position: firstAnchor + i,
          windowFrom: windowMissing ? undefined : windowFromFor(session, firstAnchor + i),
          writeSlot: slots[i],
          temporary: false,
          attendPersisted: firstAnchor + skipFirst,
          attendTemporary: [],
          // Causal within the segment: rows of the same request up to and including itself.
          attendBatchRows: Array.from({ length: i + 1 - skipFirst }, (_, k) => firstRow + k),
          grammarState: i === tokens.length - 1 ? maskState : undefined,
        }),
      );
    });
    lastRowOf.push({ segmentIndex, row: rows.length - 1, maskState });
  });
  const output = await context.forward(
    forwardPlan({
      phase: "draft-extend",
      model: "draft",
      pool,
      session,
      rows,
      hidden: keptHidden.length === hiddenRow ? input.hidden : input.hidden.select(keptHidden),
      replayable: afterVerify,
    }),
  );
  for (const { segmentIndex, row, maskState } of lastRowOf) {
    const segment = input.segments[segmentIndex];
    segment.request.draftKvLength = segment.firstAnchor + segment.tokens.length;
    if (segment.yieldsDraft) {
      segment.request.draftRoot = draftTopK(
        context,
        segment.request,
        output.result,
        row,
        context.config.topk,
        maskState,
        topKLogSoftmax,
      );
      // The root's expansion: candidates 1..K of the next round, scored from the root (score 0).
      context.recorder.annotateRow(output.event, row, childrenFields(segment.request.draftRoot, 1, 0));
      segment.request.draftHidden = HiddenRows.fromForward(context.spec.hidden, output.result.hidden, output.event, [
        row,
      ]);
      context.publishDraft(segment.request, segment.request.draftRoot, segment.request.draftHidden, output.event);
    }
  }
}
