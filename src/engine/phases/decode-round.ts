// One decode round for the decoding requests. Target-only: one row per request (x_L at position L).
// Speculative: draft (chain, tree, multi-layer modules, or prompt lookup), verify, emit, then draft extend
// over the accepted path. Under overlap the device state advances here and the outputs wait as pending
// results, processed when the next step has been planned (engine.ts); a zombie's round runs but emits nothing.
import type { EngineContext, PendingResult } from "../context.ts";
import { forwardPlan, rowPlan, targetWindowFrom, type RowPlan } from "../forward.ts";
import { concatInputRows, HiddenRows, type DraftInputRows } from "../hidden-rows.ts";
import { confuseDraftPhaseHidden, DraftExtendInput } from "../phase-inputs.ts";
import type { Request } from "../request.ts";
import { logprobOf } from "../row-sampler.ts";
import { drawNext, rowDistribution } from "../stochastic-sampler.ts";
import type { LogprobEntry } from "../../sampling/params.ts";
import { mapPacked } from "../../trace/records.ts";
import { runDraftExtend } from "./draft-extend.ts";
import { keepTargetHidden, runModuleExtends, runMultiLayerDraft } from "./multi-layer.ts";
import { proposeNgramTrees } from "./ngram-draft.ts";
import { launchPlaceholders, runTreeDraft } from "./tree-draft.ts";
import { runVerify, type DraftTree } from "./verify.ts";
import { catchUp, type PendingExtend } from "../draft-schedule.ts";
import { insideDraftContext } from "../context-limit.ts";

/** Launch: placeholders resolved from the previous step's outputs, ring entries for this step's. Mutates. */
function launch(context: EngineContext, requests: readonly Request[], draft: boolean): void {
  context.resolveLaunch(requests);
  for (const request of requests) context.allocateFuture(request, { token: true, draft }, requests.length);
}

/** Overlap: the device has computed the outputs; the host processes them after the next step is planned. */
function defer(context: EngineContext, item: Omit<PendingResult, "epoch">): void {
  item.request.tokens.push(...item.candidates);
  const drawsAfter = item.request.stream?.taken;
  if (!item.request.zombie) context.pending.push({ ...item, epoch: item.request.retracts, drawsAfter });
}

export async function runTargetDecode(context: EngineContext, decoding: readonly Request[]): Promise<void> {
  const active = context.checkpoint(decoding, context.epochs(decoding));
  if (active.length === 0) return;
  launch(context, active, false);
  const pool = context.pools.target;
  const rows: RowPlan[] = mapPacked(active, (request, r) => {
    const position = request.targetKvLength;
    const [slot] = pool.extendPersisted(request.id, position + 1);
    return rowPlan({
      request: request.id,
      token: request.rootToken,
      position,
      windowFrom: targetWindowFrom(context, request, 0),
      writeSlot: slot,
      temporary: false,
      attendPersisted: position,
      attendTemporary: [],
      attendBatchRows: [r],
      placeholder: request.launch?.tokenPlaceholder,
      sampler: request.rowSampler([], context.spec.eosId),
    });
  });
  const output = await context.forward(
    forwardPlan({
      phase: "decode",
      model: "target",
      pool,
      session: context.sessions.target,
      rows,
      replayable: true,
    }),
  );
  active.forEach((request, r) => {
    request.targetKvLength += 1;
    request.targetWindowStart += 1;
    let token = output.predict[r];
    if (request.stochastic) {
      const drawn = drawNext(rowDistribution(request, output.sampled[r], false, context.faults), request);
      context.recorder.annotateRow(output.event, r, { draws: [drawn.record] });
      token = drawn.token;
    }
    const logprobs = [logprobOf(output.sampled[r], token, request.sampling)];
    if (context.overlap) {
      context.publishToken(request, token, output.event);
      defer(context, { request, candidates: [token], logprobs, event: output.event });
      return;
    }
    request.emit([token], context.spec.eosId, context.faults, logprobs);
    if (request.status === "finished") context.releaseRequest(request);
  });
}

async function draftTrees(
  context: EngineContext,
  decoding: readonly Request[],
  epochs: ReadonlyMap<Request, number>,
): Promise<{ trees: Map<number, DraftTree>; draftPhaseHidden?: HiddenRows }> {
  if (context.ngram) {
    const trees = proposeNgramTrees(decoding, context.numSteps, (request) => request.rootToken, context.spec.eosId);
    for (const request of decoding) {
      const tree = trees.get(request.id)!;
      if (request.launch) tree.placeholders = launchPlaceholders(request, tree);
    }
    return { trees };
  }
  if (context.pools.draftModules !== undefined) return { trees: await runMultiLayerDraft(context, decoding, epochs) };
  return runTreeDraft(context, decoding, epochs);
}

export async function runSpeculativeRound(context: EngineContext, decoding: readonly Request[]): Promise<void> {
  const epochs = context.epochs(decoding);
  const multiLayer = context.pools.draftModules !== undefined;
  const launching = context.checkpoint(decoding, epochs);
  if (launching.length === 0) return;
  launch(context, launching, !context.ngram);
  const { trees, draftPhaseHidden } = await draftTrees(context, launching, epochs);
  const active = context.checkpoint(launching, epochs);
  // Draft decode KV is temporary: freed once the round's drafts exist (verify reads target KV only).
  for (const request of active) for (const pool of context.draftPools()) pool.freeTemporary(request.id);
  if (active.length === 0) return;
  const rounds = await runVerify(context, active, trees);

  const continuing: typeof rounds = [];
  for (const round of rounds) {
    const { request, result } = round;
    // The accepted drafts, then the bonus read from accept_tokens.
    const emittedCandidates = [...result.acceptTokens!.slice(0, result.acceptLen - 1), result.bonus];
    // Candidate i was sampled at the path's node i; the last is the bonus, the others verified drafts.
    const logprobs = emittedCandidates.map((token, i) => {
      const entry = logprobOf(round.pathSampled[i], token, request.sampling);
      const speculated = i < emittedCandidates.length - 1;
      return entry && speculated && context.faults.has("speculated-logprobs-zero") ? zeroLogprobs(entry) : entry;
    });
    if (context.overlap) {
      // The device goes on with the whole accepted path; EOS, stop ids and max new tokens are the host's business.
      context.publishToken(request, result.bonus, roundEvent(round));
      const chain = request.grammar ? draftChain(trees.get(request.id)!) : undefined;
      defer(context, {
        request,
        candidates: emittedCandidates,
        logprobs,
        result,
        event: roundEvent(round),
        draftChain: chain,
      });
      continuing.push(round);
      continue;
    }
    const grammarStart = request.grammar?.state;
    const { emitted, finished } = request.emit(emittedCandidates, context.spec.eosId, context.faults, logprobs);
    if (grammarStart !== undefined)
      request.grammar!.afterRound(
        grammarStart,
        draftChain(trees.get(request.id)!),
        result.acceptLen - 1,
        emitted,
        context.faults,
      );
    request.acceptLens.push(result.acceptLen);
    result.emitted = emitted;
    result.finished = finished;
    if (finished) {
      request.cutRounds += 1;
      context.releaseRequest(request);
      continue;
    }
    continuing.push(round);
  }

  const extendActive = new Set(
    context.checkpoint(
      continuing.map((round) => round.request),
      epochs,
    ),
  );
  const kept = continuing.filter((round) => extendActive.has(round.request));
  if (kept.length === 0) return;
  if (context.ngram) {
    // Prompt lookup keeps no draft state: the accepted path's target KV is all there is.
    for (const { request, path } of kept) request.targetKvLength += path.length;
    return;
  }
  if (multiLayer) {
    for (const { request, path, pathHidden } of kept) {
      // Multi-layer modules are mirrors (never EAGLE-3): their input is the target's hidden state.
      if (pathHidden.kind !== "hidden") throw new Error("multi-layer drafting with auxiliary states");
      keepTargetHidden(request, request.targetKvLength, pathHidden);
      request.targetKvLength += path.length;
    }
    await runModuleExtends(
      context,
      kept.map((round) => round.request),
      new Set(kept.map((round) => round.request)),
      true,
    );
    return;
  }
  // Row at anchor L + m pairs the path's verify hidden h_{L+m} with x_{L+m+1}, the m-th emitted token. A request
  // whose next round has speculation off keeps its rows waiting; the next extend catches up over them.
  // A request past its draft's context (context-limit.ts) drafts no more: the extend covers what fits, no root.
  const limits = context.contextLimits;
  const extending: { request: Request; extend: PendingExtend; yieldsDraft: boolean }[] = [];
  for (const { request, path, pathHidden } of kept) {
    const L = request.targetKvLength;
    request.targetKvLength = L + path.length;
    const current = { firstAnchor: L, tokens: request.tokens.slice(L + 1, L + 1 + path.length), hidden: pathHidden };
    const pastDraftContext = request.targetKvLength >= limits.draft;
    if (request.draftSteps(context.numSteps) === 0 && !pastDraftContext) {
      request.pendingExtends.push(current);
      continue;
    }
    const extend = catchUp(request.pendingExtends, current, context.faults);
    request.pendingExtends.length = 0;
    const inside = pastDraftContext ? insideDraftContext(extend, limits) : extend;
    if (inside) extending.push({ request, extend: inside, yieldsDraft: !pastDraftContext });
  }
  if (extending.length === 0) return;
  const segments = extending.map(({ request, extend, yieldsDraft }) => ({
    request,
    firstAnchor: extend.firstAnchor,
    tokens: extend.tokens,
    yieldsDraft,
  }));
  const expectedRows = segments.reduce((sum, segment) => sum + segment.tokens.length, 0);
  const hidden =
    context.faults.has("phase-confusion") && draftPhaseHidden
      ? confuseDraftPhaseHidden(draftPhaseHidden, expectedRows)
      : concatInputRows(extending.map(({ extend }) => extend.hidden));
  await runDraftExtend(context, new DraftExtendInput(segments, hidden), true);
}

/** A tree's first chain: from the root, each node's lowest-numbered child (a chain's every draft). */
function draftChain(tree: DraftTree): number[] {
  const chain: number[] = [];
  for (let node = 0; ;) {
    const child = tree.parents.indexOf(node, node + 1);
    if (child < 0) return chain;
    chain.push(tree.tokens[child]);
    node = child;
  }
}

/** The verify event of a round (its path's input rows carry it). */
function roundEvent(round: { pathHidden: DraftInputRows }): number {
  const rows = round.pathHidden;
  return rows.kind === "hidden" ? rows.provenance[0].event : rows.provenance[0][0].event;
}

/** vLLM issue 34497, llama.cpp issue 27972: speculated tokens' logprobs reported as 0.0. */
function zeroLogprobs(entry: LogprobEntry): LogprobEntry {
  return { ...entry, logprob: 0, top: entry.top.map((alternative) => ({ ...alternative, logprob: 0 })) };
}
