// Chunked prefill: one packed target forward for the step's chunks, then (speculative mode) one packed
// draft extend. Only a final chunk samples x_n. A non-final chunk's last draft row pairs h_{b-1} with
// the next prompt token x_b (sglang PR 26800), not the token sampled from the chunk's last logits.
// After a retract the same path re-prefills the verified tokens; the pending bonus x_L is kept.
import type { EngineContext } from "../context.ts";
import { forwardPlan, rowPlan, windowFromFor, type RowPlan } from "../forward.ts";
import { captureDraftInput } from "../aux-capture.ts";
import { concatInputRows, HiddenRows, type DraftInputRows } from "../hidden-rows.ts";
import { DraftExtendInput, type DraftExtendSegment } from "../phase-inputs.ts";
import { logprobOf } from "../row-sampler.ts";
import { drawNext, rowDistribution } from "../stochastic-sampler.ts";
import type { Request } from "../request.ts";
import { planPrefillChunks, type PrefillChunk } from "../scheduler.ts";
import { runDraftExtend } from "./draft-extend.ts";
import { keepTargetHidden, runModuleExtends } from "./multi-layer.ts";
import { applyPrefixHit, cachePrefix } from "./prefix-hit.ts";
import { draftAnchorEnd } from "../../case/context-limit.ts";

export async function runPrefill(context: EngineContext, prefilling: readonly Request[]): Promise<void> {
  const pool = context.pools.target;
  const epochs = context.epochs(prefilling);
  // Chunks are planned after the checkpoint: an abort or retract there changes what is left to prefill.
  const live = context.checkpoint(prefilling, epochs);
  for (const request of live) applyPrefixHit(context, request);
  const chunks: PrefillChunk[] = planPrefillChunks(live, context.config.chunkSize, context.config.tokenBudget);
  if (chunks.length === 0) return;
  const hasDraftModel = context.config.mode === "speculative" && !context.ngram;
  // Overlap: a final chunk's outputs (its sample, its draft root) go to a ring entry planned now.
  for (const { request, final } of chunks)
    if (final)
      context.allocateFuture(
        request,
        { token: !request.hasPendingBonus, draft: hasDraftModel && !request.skipDraftOnResume },
        live.length,
      );

  const rows: RowPlan[] = [];
  const rowRanges: { chunk: PrefillChunk; firstRow: number }[] = [];
  for (const chunk of chunks) {
    const { request, start, end } = chunk;
    const slots = pool.extendPersisted(request.id, end);
    const firstRow = rows.length;
    rowRanges.push({ chunk, firstRow });
    // Only a final chunk's last row samples (the first output token; a resumed request keeps its bonus).
    const sampler = chunk.final && !request.hasPendingBonus ? request.rowSampler([], context.spec.eosId) : undefined;
    for (let position = start; position < end; position++) {
      const i = position - start;
      rows.push(
        rowPlan({
          ...(position === end - 1 && sampler ? { sampler } : {}),
          request: request.id,
          token: request.tokens[position],
          position,
          windowFrom: windowFromFor(context.sessions.target, position),
          writeSlot: slots[i],
          temporary: false,
          attendPersisted: start,
          attendTemporary: [],
          attendBatchRows: Array.from({ length: i + 1 }, (_, k) => firstRow + k),
        }),
      );
    }
  }
  const output = await context.forward(
    forwardPlan({
      phase: "prefill",
      model: "target",
      pool,
      session: context.sessions.target,
      rows,
    }),
  );

  const segments: DraftExtendSegment[] = [];
  const hiddenParts: DraftInputRows[] = [];
  const multiLayer = context.pools.draftModules !== undefined;
  const moduleRequests: Request[] = [];
  const finalRequests = new Set<Request>();
  for (const { chunk, firstRow } of rowRanges) {
    const { request, start, end, final } = chunk;
    request.prefilledLength = end;
    request.targetKvLength = end;
    // The window of the next target row (position end): what decode and verify rows continue from.
    request.targetWindowStart = end - (context.sessions.target.window ?? 0) + 1;
    const lastRow = firstRow + (end - start) - 1;
    const resumingWithBonus = request.hasPendingBonus;
    let sampledAtChunkEnd = output.predict[lastRow];
    if (final && !resumingWithBonus && request.stochastic) {
      const distribution = rowDistribution(request, output.sampled[lastRow], false, context.faults);
      const { token, record } = drawNext(distribution, request);
      context.recorder.annotateRow(output.event, lastRow, { draws: [record] });
      sampledAtChunkEnd = token;
    }
    if (final && !resumingWithBonus) {
      const logprob = logprobOf(output.sampled[lastRow], sampledAtChunkEnd, request.sampling);
      if (context.overlap) {
        // The device goes on with the sample; the host processes it once the next step is planned.
        context.publishToken(request, sampledAtChunkEnd, output.event);
        request.tokens.push(sampledAtChunkEnd);
        context.pending.push({
          request,
          candidates: [sampledAtChunkEnd],
          logprobs: [logprob],
          event: output.event,
          epoch: request.retracts,
          drawsAfter: request.stream?.taken,
        });
      } else {
        request.emit([sampledAtChunkEnd], context.spec.eosId, context.faults, [logprob]);
        if (request.status === "finished") {
          context.releaseRequest(request);
          continue;
        }
      }
    }
    // The stale-draft-KV fault: a resumed request keeps its old draft state and never re-extends.
    const skipDraft = request.skipDraftOnResume;
    if (final && (!hasDraftModel || skipDraft)) {
      request.status = "decoding";
      request.skipDraftOnResume = false;
      cachePrefix(context, request);
    }
    // Target-only and prompt lookup keep no draft state.
    if (!hasDraftModel) continue;
    if (multiLayer) {
      // Target-side bookkeeping: the modules read these hidden rows later even when the fault skips their KV.
      keepTargetHidden(
        request,
        start,
        HiddenRows.fromForward(context.spec.hidden, output.result.hidden, output.event, range(firstRow, lastRow + 1)),
      );
      if (skipDraft) continue;
      moduleRequests.push(request);
      if (final) finalRequests.add(request);
      continue;
    }
    if (skipDraft) continue;
    // Draft row i pairs h_i with x_{i+1}; the chunk's last row takes x_b: the next known token (a prompt
    // token, or the pending bonus on resume), and only for a final chunk without one the sampled token.
    const tailToken =
      (final && !resumingWithBonus) || context.faults.has("chunked-tail-token")
        ? sampledAtChunkEnd
        : request.tokens[end];
    const tokens = [...request.tokens.slice(start + 1, end), tailToken];
    // Anchors a prefix hit already gave the draft pool are not extended again (the unaligned-length fault
    // leaves it past the target's page-aligned start).
    const skip = Math.min(end - start, Math.max(0, request.draftKvLength - start));
    // Resumed while speculation is off (draft-schedule.ts): the draft KV is rewritten as far as it reached at the
    // retract; the positions verified since wait for the catch-up again, as in the run without the retract.
    const waitsFrom = request.scheduledSteps(context.numSteps) === 0 ? request.draftWaitsFrom : undefined;
    if (final) request.draftWaitsFrom = undefined;
    // Anchors at or past the draft's context are not extended (case/context-limit.ts): a final chunk cut there
    // yields no root, and the request decodes on without speculation.
    const inside = Math.max(skip, Math.min(end, draftAnchorEnd(context.contextLimits)) - start);
    if (inside < end - start) {
      if (final) {
        request.status = "decoding";
        cachePrefix(context, request);
      }
      if (inside === skip) continue;
      segments.push({ request, firstAnchor: start + skip, tokens: tokens.slice(skip, inside), yieldsDraft: false });
      hiddenParts.push(captureDraftInput(context, output, range(firstRow + skip, firstRow + inside)));
      continue;
    }
    if (waitsFrom !== undefined) {
      const extendTo = Math.max(skip, Math.min(end - start, waitsFrom - start));
      if (extendTo > skip) {
        segments.push({ request, firstAnchor: start + skip, tokens: tokens.slice(skip, extendTo), yieldsDraft: false });
        hiddenParts.push(captureDraftInput(context, output, range(firstRow + skip, firstRow + extendTo)));
      }
      if (extendTo < end - start)
        request.pendingExtends.push({
          firstAnchor: start + extendTo,
          tokens: tokens.slice(extendTo),
          hidden: captureDraftInput(context, output, range(firstRow + extendTo, lastRow + 1)),
        });
      if (final) {
        request.status = "decoding";
        cachePrefix(context, request);
      }
      continue;
    }
    if (skip === end - start && !final) continue;
    segments.push({ request, firstAnchor: start + skip, tokens: tokens.slice(skip), yieldsDraft: final });
    hiddenParts.push(captureDraftInput(context, output, range(firstRow + skip, lastRow + 1)));
  }
  if (moduleRequests.length > 0) {
    const kept = await runModuleExtends(context, context.checkpoint(moduleRequests, epochs), finalRequests);
    for (const request of kept)
      if (finalRequests.has(request)) {
        request.status = "decoding";
        cachePrefix(context, request);
      }
  }
  if (segments.length === 0) return;

  const extendActive = new Set(
    context.checkpoint(
      segments.map((segment) => segment.request),
      epochs,
    ),
  );
  const kept = segments
    .map((segment, i) => ({ segment, hidden: hiddenParts[i] }))
    .filter(({ segment }) => extendActive.has(segment.request));
  if (kept.length > 0) {
    const hidden = concatInputRows(kept.map((k) => k.hidden));
    await runDraftExtend(
      context,
      new DraftExtendInput(
        kept.map((k) => k.segment),
        hidden,
      ),
    );
  }
  for (const { segment } of kept) {
    if (!segment.yieldsDraft) continue;
    segment.request.status = "decoding";
    cachePrefix(context, segment.request);
  }
}

function range(start: number, end: number): number[] {
  return Array.from({ length: end - start }, (_, i) => start + i);
}
