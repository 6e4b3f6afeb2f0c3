// Law "draft schedule": a request's speculation schedule (case draftSchedule: draft steps per round, 0 for
// speculation off, cut to what fits before the context limits: case/context-limit.ts) is what its rounds
// verify: round k of a request carries s_k drafts on its chain (prompt lookup: at most s_k, a proposal may be
// shorter), and a round with speculation off verifies the bonus alone.
// Switching speculation off and on must not shift the schedule (a round skipped or counted twice) nor keep
// drafting while it is off. What the switches must not break besides (the draft KV caught up over the
// positions verified while it was off, lossless output) the draft reference, positions, KV conservation and
// lossless laws judge on the same runs. Trace-only.
import type { Case } from "../case/case.ts";
import { draftStepsOf } from "../case/draft-schedule.ts";
import { contextLimitsOf, roundDraftSteps } from "../case/context-limit.ts";
import { resolveModelSpec } from "../case/models.ts";
import type { Trace } from "../trace/schema.ts";
import type { Law } from "./definition.ts";
import { LawTally, notCheckable, type LawResult } from "./law.ts";
import { readRounds } from "./rounds.ts";

export const DRAFT_SCHEDULE = "draft schedule";

export function hasSchedule(testCase: Readonly<Case>): boolean {
  return testCase.workload.requests.some((request) => request.draftSchedule !== undefined);
}

export function checkDraftSchedule(testCase: Readonly<Case>, trace: Readonly<Trace>): LawResult {
  const schedules = new Map(testCase.workload.requests.map((request) => [request.id, request.draftSchedule]));
  const numSteps = testCase.engine.numSteps;
  const atMost = testCase.draft?.kind === "ngram";
  const limits = contextLimitsOf(testCase.engine, resolveModelSpec(testCase.model), testCase.draft);
  const tally = new LawTally(DRAFT_SCHEDULE);
  const roundsSoFar = new Map<number, number>();
  for (const round of readRounds(trace as Trace)) {
    const index = roundsSoFar.get(round.request) ?? 0;
    roundsSoFar.set(round.request, index + 1);
    const schedule = schedules.get(round.request);
    if (!schedule) continue;
    tally.checked += 1;
    const expected = roundDraftSteps(draftStepsOf(schedule, index, numSteps), limits, round.verifyRows[0].position);
    const drafted = round.verifyRows.length - 1;
    if (drafted === expected || (atMost && drafted < expected)) continue;
    tally.fail({
      message: `request ${round.request}, round ${index} (verify event ${round.event}): ${drafted} draft(s) verified, the schedule gives ${expected}${atMost ? " at most" : ""}`,
      request: round.request,
      event: round.event,
      expected,
      got: drafted,
    });
  }
  if (tally.checked === 0) return notCheckable(DRAFT_SCHEDULE, "no round of a request with a schedule");
  return tally.result();
}

export const law: Law = {
  name: DRAFT_SCHEDULE,
  summary: "each round of a request with a speculation schedule verifies the drafts its schedule gives (0: none)",
  appliesTo: (testCase) => testCase.engine.mode === "speculative" && hasSchedule(testCase),
  needs: {},
  unavailable: ({ run }) =>
    readRounds(run.trace).length > 0 ? undefined : "the trace has no verify events with results",
  check: ({ testCase, run }) => checkDraftSchedule(testCase, run.trace),
};
