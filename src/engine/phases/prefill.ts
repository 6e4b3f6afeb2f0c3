// Chunked prefill: one packed target forward for the step's chunks, then (speculative mode) one packed
// draft extend. Only a final chunk samples x_n. A non-final chunk's last draft row pairs h_{b-1} with
// the next prompt token x_b (sglang PR 26800), not the token sampled from the chunk's last logits.
import type { EngineContext } from "../context.ts";
import type { RowPlan } from "../forward.ts";
import { HiddenRows } from "../hidden-rows.ts";
import { DraftExtendInput, type DraftExtendSegment } from "../phase-inputs.ts";
import type { PrefillChunk } from "../scheduler.ts";
import { runDraftExtend } from "./draft-extend.ts";

export async function runPrefill(context: EngineContext, planned: readonly PrefillChunk[]): Promise<void> {
  const pool = context.pools.target;
  const stillActive = new Set(context.checkpoint(planned.map((chunk) => chunk.request)));
  const chunks = planned.filter((chunk) => stillActive.has(chunk.request));
  if (chunks.length === 0) return;

  const rows: RowPlan[] = [];
  const rowRanges: { chunk: PrefillChunk; firstRow: number }[] = [];
  for (const chunk of chunks) {
    const { request, start, end } = chunk;
    const slots = pool.extendPersisted(request.id, end);
    const firstRow = rows.length;
    rowRanges.push({ chunk, firstRow });
    for (let position = start; position < end; position++) {
      const i = position - start;
      rows.push({
        request: request.id,
        token: request.prompt[position],
        position,
        writeSlot: slots[i],
        temporary: false,
        attendPersisted: start,
        attendTemporary: [],
        attendBatchRows: Array.from({ length: i + 1 }, (_, k) => firstRow + k),
      });
    }
  }
  const output = await context.forward({ phase: "prefill", model: "target", pool, session: context.sessions.target, rows });

  const segments: DraftExtendSegment[] = [];
  const hiddenParts: HiddenRows[] = [];
  for (const { chunk, firstRow } of rowRanges) {
    const { request, start, end, final } = chunk;
    request.prefilledLength = end;
    request.targetKvLength = end;
    const lastRow = firstRow + (end - start) - 1;
    const sampledAtChunkEnd = output.predict[lastRow];
    if (final) {
      request.emit([sampledAtChunkEnd], context.spec.eosId);
      if (request.status === "finished") {
        context.releaseRequest(request);
        continue;
      }
      if (context.config.mode === "target-only") request.status = "decoding";
    }
    if (context.config.mode !== "speculative") continue;
    // Draft row i pairs h_i with x_{i+1}; for the chunk's last row x_b is the next prompt token unless final.
    const tailToken = final || context.faults.has("chunked-tail-token") ? sampledAtChunkEnd : request.prompt[end];
    const tokens = [...request.prompt.slice(start + 1, end), tailToken];
    segments.push({ request, firstAnchor: start, tokens, yieldsDraft: final });
    hiddenParts.push(HiddenRows.fromForward(context.spec.hidden, output.result.hidden, output.event, range(firstRow, lastRow + 1)));
  }
  if (segments.length === 0) return;

  const extendActive = new Set(context.checkpoint(segments.map((segment) => segment.request)));
  const kept = segments.map((segment, i) => ({ segment, hidden: hiddenParts[i] })).filter(({ segment }) => extendActive.has(segment.request));
  if (kept.length > 0) {
    const hidden = HiddenRows.concat(context.spec.hidden, kept.map((k) => k.hidden), output.result.hidden);
    await runDraftExtend(context, new DraftExtendInput(kept.map((k) => k.segment), hidden));
  }
  for (const { segment } of kept) {
    if (segment.yieldsDraft) segment.request.status = "decoding";
  }
}

function range(start: number, end: number): number[] {
  return Array.from({ length: end - start }, (_, i) => start + i);
}
