// Law "mirror acceptance": with the mirror, the tapped mirror, the EAGLE-3 mirror or the EAGLE-3 oracle on its
// bigram target every round accepts all S drafts (a speculation schedule's own count for the request's round, 0
// included, cut to what fits before the context limits), except rounds cut by max new tokens or EOS, and ties (the
// target's margin at the rejection is below epsilon).
// With topk > 1 this holds when the tree can hold the whole greedy chain (N - 1 >= S). Requests whose
// sampling options process the logits (penalties, bias, min tokens) are not judged: the mirror drafts the
// raw argmax, as real drafters do, and verification rightly rejects where processing moved it; nor are
// requests that sample (the mirror's draft is accepted with the target's probability of it, not always).
import type { RequestOutput } from "../trace/run-result.ts";
import type { Case } from "../case/case.ts";
import { changesLogits, isStochastic } from "../sampling/params.ts";
import type { Trace } from "../trace/schema.ts";
import { LawTally, notCheckable, type LawResult } from "./law.ts";
import type { ReferenceOracle } from "../reference/oracle.ts";
import { readRounds, sequenceOf } from "./rounds.ts";
import type { Law } from "./definition.ts";
import { draftStepsOf } from "../case/draft-schedule.ts";
import { contextLimitsOf, roundDraftSteps } from "../case/context-limit.ts";
import { resolveModelSpec } from "../case/models.ts";

export const MIRROR_ACCEPTANCE = "mirror acceptance";

export interface AcceptanceStats {
  rounds: number;
  /** Rounds not cut by EOS / max new tokens. */
  uncutRounds: number;
  fullAcceptRounds: number;
  /** histogram[a] = rounds with accept_len a (index 0 unused). */
  histogram: number[];
  meanAcceptLen: number;
}

export function acceptanceStats(trace: Trace, numSteps: number): AcceptanceStats {
  const histogram = Array(numSteps + 2).fill(0);
  let uncutRounds = 0;
  let fullAcceptRounds = 0;
  let total = 0;
  const rounds = readRounds(trace);
  for (const { result } of rounds) {
    histogram[result.acceptLen] += 1;
    total += result.acceptLen;
    if (result.finished) continue;
    uncutRounds += 1;
    if (result.acceptLen === numSteps + 1) fullAcceptRounds += 1;
  }
  return {
    rounds: rounds.length,
    uncutRounds,
    fullAcceptRounds,
    histogram,
    meanAcceptLen: rounds.length ? total / rounds.length : 0,
  };
}

export async function checkMirrorAcceptance(
  trace: Trace,
  numSteps: number,
  numDraftTokens: number,
  oracle: ReferenceOracle,
  processed: ReadonlySet<number> = new Set(),
  /**
   * Draft steps of a request's round (0-based) whose bonus sits at a position, where a speculation schedule or
   * the context limits set them (case/context-limit.ts); default numSteps.
   */
  stepsOf: (request: number, round: number, bonusPosition: number) => number = () => numSteps,
): Promise<LawResult> {
  if (numDraftTokens - 1 < numSteps)
    return notCheckable(
      MIRROR_ACCEPTANCE,
      `a tree of ${numDraftTokens - 1} drafts cannot hold the greedy chain of ${numSteps}`,
    );
  const rounds = readRounds(trace);
  if (rounds.length === 0) return notCheckable(MIRROR_ACCEPTANCE, "the trace has no verify events with results");
  const tally = new LawTally(MIRROR_ACCEPTANCE);
  const roundsSoFar = new Map<number, number>();
  const full = rounds.map((round) => {
    const index = roundsSoFar.get(round.request) ?? 0;
    roundsSoFar.set(round.request, index + 1);
    return stepsOf(round.request, index, round.verifyRows[0].position) + 1;
  });
  if (rounds.some((round, i) => !round.result.finished && round.result.acceptLen !== full[i]))
    await oracle.prepareRequests(trace.requests);
  for (const [i, round] of rounds.entries()) {
    if (round.result.finished || processed.has(round.request)) continue;
    tally.checked += 1;
    if (round.result.acceptLen === full[i]) continue;
    const sequence = sequenceOf(trace, round.request);
    const rejectedAt = round.verifyRows[0].position + round.result.acceptLen - 1;
    if (sequence) {
      const reference = await oracle.targetOver(sequence);
      const margin = reference.predictions[rejectedAt]?.margin;
      if (margin !== undefined && margin < oracle.epsilon) {
        tally.ties += 1;
        continue;
      }
    }
    tally.fail({
      message: `request ${round.request}, verify event ${round.event}: accept_len ${round.result.acceptLen} < ${full[i]} with a mirror draft`,
      request: round.request,
      event: round.event,
      expected: full[i],
      got: round.result.acceptLen,
    });
  }
  return tally.result();
}

/**
 * The same law from outputs alone (engines without traces): each request's accept lengths in order. A
 * round's tokens start where the previous round's end; the first round starts at output token 1 (token 0
 * is the prefill's sample) unless the engine's rounds include the first token (Hugging Face assisted
 * generation, llama.cpp's predictors). The request's last round is excused when the request finished.
 */
export async function checkMirrorAcceptanceFromOutputs(
  outputs: readonly RequestOutput[],
  prompts: ReadonlyMap<number, readonly number[]>,
  numSteps: number,
  oracle: ReferenceOracle,
  processed: ReadonlySet<number> = new Set(),
): Promise<LawResult> {
  const tally = new LawTally(MIRROR_ACCEPTANCE);
  for (const output of outputs) {
    const prompt = prompts.get(output.id);
    if (!prompt || output.finishReason === "abort" || processed.has(output.id)) continue;
    let start = output.roundsIncludeFirstToken ? 0 : 1;
    for (const [round, acceptLen] of output.acceptLens.entries()) {
      const roundStart = start;
      start += acceptLen;
      const last = round === output.acceptLens.length - 1;
      if (last && ["eos", "stop", "length"].includes(output.finishReason)) continue;
      tally.checked += 1;
      if (acceptLen === numSteps + 1) continue;
      // The round's last token is the target's correction where it rejected a draft.
      const rejectedAt = prompt.length - 1 + roundStart + acceptLen - 1;
      const reference = await oracle.targetOver([...prompt, ...output.tokens]);
      const margin = reference.predictions[rejectedAt]?.margin;
      if (margin !== undefined && margin < oracle.epsilon) {
        tally.ties += 1;
        continue;
      }
      tally.fail({
        message: `request ${output.id}, round ${round}: accept_len ${acceptLen} < ${numSteps + 1} with a mirror draft (output token ${roundStart + acceptLen - 1}${margin === undefined ? "" : `, reference margin ${margin}`})`,
        request: output.id,
        index: roundStart + acceptLen - 1,
        expected: numSteps + 1,
        got: acceptLen,
        margin,
      });
    }
  }
  return tally.result();
}

export const law: Law = {
  name: MIRROR_ACCEPTANCE,
  summary: "a mirror draft accepts every draft of every uncut round",
  appliesTo: (testCase) =>
    testCase.engine.mode === "speculative" &&
    (testCase.draft?.kind === "mirror" ||
      testCase.draft?.kind === "tapped-mirror" ||
      testCase.draft?.kind === "eagle3-mirror" ||
      isEagle3Oracle(testCase)),
  needs: { oracle: true },
  check: ({ testCase, run, oracle }) => {
    const { numSteps, numDraftTokens } = testCase.engine;
    const processed = processedRequests(testCase);
    const schedules = new Map(testCase.workload.requests.map((request) => [request.id, request.draftSchedule]));
    const limits = contextLimitsOf(testCase.engine, resolveModelSpec(testCase.model), testCase.draft);
    const stepsOf = (request: number, round: number, bonusPosition: number) =>
      roundDraftSteps(draftStepsOf(schedules.get(request), round, numSteps), limits, bonusPosition);
    // A trace's verify events when it has them; else the accept lengths the outputs report.
    if (
      readRounds(run.trace).length > 0 ||
      numDraftTokens - 1 < numSteps ||
      !run.outputs.some((o) => o.acceptLens.length)
    )
      return checkMirrorAcceptance(run.trace, numSteps, numDraftTokens, oracle, processed, stepsOf);
    const prompts = new Map(testCase.workload.requests.map((request) => [request.id, request.prompt]));
    return checkMirrorAcceptanceFromOutputs(run.outputs, prompts, numSteps, oracle, processed);
  },
};

/**
 * The EAGLE-3 oracle (model/eagle3-oracle.ts) drafts the greedy chain on its target family only, the bigram
 * targets (model/bigram.ts), which its validation requires: on them it is judged as a mirror is.
 */
function isEagle3Oracle(testCase: Readonly<Case>): boolean {
  return (
    testCase.draft?.kind === "eagle3" && testCase.draft.oracle === true && !!resolveModelSpec(testCase.model).bigram
  );
}

/** Requests whose sampling options can move the greedy token off the raw argmax the mirror drafts. */
function processedRequests(testCase: Readonly<Case>): ReadonlySet<number> {
  return new Set(
    testCase.workload.requests
      // A speculation schedule's rounds are judged from the trace only (their round numbers).
      .filter((request) => changesLogits(request.sampling) || isStochastic(request.sampling) || request.draftSchedule)
      .map((request) => request.id),
  );
}
