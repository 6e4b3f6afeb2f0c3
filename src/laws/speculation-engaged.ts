// Law "speculation engaged" (issue 34, liveness): a speculative request with a draft model must speculate
// wherever a whole round fits. Every other law is a safety law: a server that silently stops speculating
// (llama.cpp clears a round whose draft decode failed and decodes the token alone: common/speculative.cpp
// draft-simple draft() returns early on a failed llama_decode, server-context.cpp handle_last_sampled_token
// with spec_draft empty) keeps every output exact, reports no rounds, and passes them all. Engines ship the
// class: speculation configured but not running for some requests (a non-greedy fallback, idle data-parallel
// ranks, a batch past the captured graph's size).
//
// A decode step of a request has room for a round of s drafts (s = S, or its speculation schedule's count for
// that step, 0 excused) when, with the step's root (the bonus) at position L after e output tokens:
//   - the round's s + 1 tokens fit under max new tokens: maxNewTokens - e >= s + 1;
//   - its verify rows fit inside the target's context with one position to spare: L + s + 2 <= context (the
//     reference drafts up to target - 1 - L; llama.cpp's get_n_draft_max keeps one more for a context shift);
//   - its draft rows fit inside the draft's context: L + s <= draft context (case/context-limit.ts).
// That is the most any engine known here waits for: llama-server, run with n_min = n_max = S and p_min 0
// (adapter/llama-server/launch.ts), drafts exactly when min(n_ctx - n_tokens - 2, n_remaining - 1) >= S, and
// the reference engine drafts in every round. A step with room must be a round verifying at least s drafts
// (a tree: N - 1); a step without room is not judged (rounds cut by EOS, a stop or the cap are rounds and
// judged only when they had room). A stretch of output tokens no reported round covers was decoded without
// speculating: it fails at the steps that had room, naming them.
// Not judged: prompt lookup (ngram: a lookup that finds no match legitimately proposes nothing; engines differ
// in the rule), an aborted request's tail after its last reported round (its rounds in flight are not
// reported), a round rooted where an earlier round already verified (llama.cpp's checkpoint replay re-verifies
// a partially accepted draft: server-context.cpp, "restore checkpoint"). An engine drafter that stops early by
// confidence (llama.cpp's p_min > 0 with n_min < S) drafts fewer than the case's S: outside the case's
// semantics, which the adapters keep (p_min 0, n_min = S). The rounds are read from the trace's verify events
// (their draft counts) where it has any, else from the outputs' accept lengths (the stretches only). A source
// that says its engine reports no rounds at all (run.roundsObserved false) makes the law not checkable; one
// that reports rounds and shows none where a round fitted fails.
import type { Case } from "../case/case.ts";
import { draftStepsOf } from "../case/draft-schedule.ts";
import { contextLimitsOf, type ContextLimits } from "../case/context-limit.ts";
import { resolveModelSpec } from "../case/models.ts";
import type { RequestOutput, RunResult } from "../trace/run-result.ts";
import type { Law } from "./definition.ts";
import { LawTally, notCheckable, type LawResult } from "./law.ts";
import { readRounds } from "./rounds.ts";

export const SPECULATION_ENGAGED = "speculation engaged";

/** One reported round of a request: its root's position, its accept length, its drafts where a trace shows them. */
interface ReportedRound {
  rootPosition: number;
  acceptLen: number;
  drafts?: number;
  event?: number;
}

/** What a request's steps are judged against. */
interface Judged {
  promptLength: number;
  maxNewTokens: number;
  schedule: readonly number[] | undefined;
  numSteps: number;
  /** Drafts a round with room must verify beyond s: a tree's N - 1 (undefined: s itself, a chain). */
  treeDrafts: number | undefined;
  limits: ContextLimits;
}

/** Drafts a round rooted at `root` after `emitted` output tokens has room for; 0: no room (not judged). Pure. */
export function roomFor(judged: Judged, steps: number, root: number, emitted: number): number {
  if (steps <= 0) return 0;
  const { limits } = judged;
  const fits =
    judged.maxNewTokens - emitted >= steps + 1 && root + steps + 2 <= limits.target && root + steps <= limits.draft;
  return fits ? steps : 0;
}

/** The request's rounds in order: from the trace's verify events when it has any, else its accept lengths. */
function roundsOf(run: Readonly<RunResult>, output: RequestOutput, promptLength: number): ReportedRound[] {
  const traced = readRounds(run.trace).filter((round) => round.request === output.id);
  if (traced.length > 0)
    return traced.map((round) => ({
      rootPosition: round.verifyRows[0].position,
      acceptLen: round.result.acceptLen,
      drafts: round.verifyRows.length - 1,
      event: round.event,
    }));
  let start = output.roundsIncludeFirstToken ? 0 : 1;
  return output.acceptLens.map((acceptLen) => {
    const round = { rootPosition: promptLength - 1 + start, acceptLen };
    start += acceptLen;
    return round;
  });
}

/** What one request showed: steps and rounds judged, and what failed. */
interface RequestVerdict {
  checked: number;
  /** Output indices (of the token each emitted) of the steps decoded without a round where one fitted. */
  plainSteps: number[];
  /** The first round with room that verified fewer drafts than the case asks for. */
  shortRound?: { round: ReportedRound; index: number; required: number };
}

/** Walks one request's output: reported rounds, and the stretches between them decoded without speculating. */
export function judgeRequest(judged: Judged, output: RequestOutput, rounds: readonly ReportedRound[]): RequestVerdict {
  const p = judged.promptLength;
  const verdict: RequestVerdict = { checked: 0, plainSteps: [] };
  // The last position emitted so far (the prefill's token, or the prompt's last when rounds include the first).
  let covered = output.roundsIncludeFirstToken ? p - 1 : p;
  let step = 0;
  const plain = (root: number) => {
    const room = roomFor(judged, draftStepsOf(judged.schedule, step++, judged.numSteps), root, root - p + 1);
    if (room === 0) return;
    verdict.checked += 1;
    verdict.plainSteps.push(root + 1 - p);
  };
  for (const [index, round] of rounds.entries()) {
    // A round rooted where an earlier one already verified from re-verifies it (a checkpoint replay).
    if (round.rootPosition < covered) {
      covered = Math.max(covered, round.rootPosition + round.acceptLen);
      continue;
    }
    for (let root = covered; root < round.rootPosition; root++) plain(root);
    const steps = draftStepsOf(judged.schedule, step++, judged.numSteps);
    const room = roomFor(judged, steps, round.rootPosition, round.rootPosition - p + 1);
    covered = round.rootPosition + round.acceptLen;
    if (room === 0) continue;
    // A round where one fitted: engaged; its draft count is judged where the trace shows it.
    verdict.checked += 1;
    if (round.drafts === undefined) continue;
    const required = judged.treeDrafts ?? room;
    if (round.drafts < required) verdict.shortRound ??= { round, index, required };
  }
  // After the last round: every later token was decoded alone (an aborted request's tail is not reported).
  const last = p + output.tokens.length - 1;
  if (output.finishReason !== "abort") for (let root = covered; root < last; root++) plain(root);
  return verdict;
}

/** "output tokens 3-5, 8" from sorted indices. */
function spans(indices: readonly number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < indices.length;) {
    let j = i;
    while (j + 1 < indices.length && indices[j + 1] === indices[j] + 1) j++;
    parts.push(i === j ? `${indices[i]}` : `${indices[i]}-${indices[j]}`);
    i = j + 1;
  }
  return parts.join(", ");
}

export function checkSpeculationEngaged(testCase: Readonly<Case>, run: Readonly<RunResult>): LawResult {
  const engine = testCase.engine;
  const limits = contextLimitsOf(engine, resolveModelSpec(testCase.model), testCase.draft);
  const requests = new Map(testCase.workload.requests.map((request) => [request.id, request]));
  const tally = new LawTally(SPECULATION_ENGAGED);
  for (const output of run.outputs) {
    const request = requests.get(output.id);
    if (!request) continue;
    const judged: Judged = {
      promptLength: request.prompt.length,
      maxNewTokens: request.maxNewTokens,
      schedule: request.draftSchedule,
      numSteps: engine.numSteps,
      treeDrafts: engine.topk > 1 ? engine.numDraftTokens - 1 : undefined,
      limits,
    };
    const verdict = judgeRequest(judged, output, roundsOf(run, output, request.prompt.length));
    tally.checked += verdict.checked;
    if (verdict.plainSteps.length > 0)
      tally.fail({
        message: `request ${output.id} decoded output tokens ${spans(verdict.plainSteps)} without speculating where a round of ${engine.topk > 1 ? `${engine.numDraftTokens - 1} tree drafts` : `${engine.numSteps} draft(s)`} fitted (${verdict.plainSteps.length} step(s); ${output.acceptLens.length} round(s) reported)`,
        request: output.id,
        index: verdict.plainSteps[0],
      });
    else if (verdict.shortRound) {
      const { round, index, required } = verdict.shortRound;
      tally.fail({
        message: `request ${output.id}, round ${index}${round.event === undefined ? "" : ` (verify event ${round.event})`}: ${round.drafts} draft(s) verified where a round of ${required} fitted (root at position ${round.rootPosition})`,
        request: output.id,
        event: round.event,
        expected: required,
        got: round.drafts,
      });
    }
  }
  if (tally.checked === 0)
    return notCheckable(SPECULATION_ENGAGED, "no decode step had room for a whole round (max new tokens, context)");
  return tally.result();
}

export const law: Law = {
  name: SPECULATION_ENGAGED,
  summary: "a speculative request drafts (S drafts, a tree's N - 1) in every decode step a whole round fits",
  appliesTo: (testCase) =>
    testCase.engine.mode === "speculative" && testCase.draft != null && testCase.draft.kind !== "ngram",
  needs: {},
  unavailable: ({ run }) => {
    if (run.roundsObserved === false)
      return "the engine reports no speculative rounds (its hello observes neither acceptLens nor verify)";
    // A recording with no events and no accept lengths shows no decode step at all, speculative or not.
    if (
      run.roundsObserved === undefined &&
      run.trace.events.length === 0 &&
      run.outputs.every((o) => !o.acceptLens.length)
    )
      return "the run records no forwards and no accept lengths";
    return undefined;
  },
  check: ({ testCase, run }) => checkSpeculationEngaged(testCase, run),
};
