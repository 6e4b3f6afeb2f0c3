// Coverage corners of the context boundary (src/case/context-limit.ts), read from a case and its trace: a
// request whose prompt + output reaches the target's context, a round whose lookahead the limit cut, and a
// request verifying rounds past its draft's context (decoding on without speculation). Only spaces at the
// context boundary reach them (properties/dimensions.ts).
import type { Case } from "../case/case.ts";
import { contextLimitsOf, contextRoom } from "../case/context-limit.ts";
import { draftStepsOf } from "../case/draft-schedule.ts";
import { resolveModelSpec } from "../case/models.ts";
import type { Trace } from "../trace/schema.ts";
import { readRounds } from "../laws/rounds.ts";

export const CONTEXT_COVERAGE_LABELS = [
  /** A request's prompt + output equals the target's context. */
  "request reaches the context limit",
  /** A round drafted fewer than its steps because the rest would run past a context. */
  "lookahead cut at the context limit",
  /** A request verified a round with its bonus at or past the draft's context (no speculation left). */
  "decoding past the draft's context",
] as const;

export type ContextCoverageLabel = (typeof CONTEXT_COVERAGE_LABELS)[number];

export function contextCoverageLabels(testCase: Readonly<Case>, trace: Trace): ContextCoverageLabel[] {
  const { engine } = testCase;
  if (engine.contextLength === undefined && engine.draftContextLength === undefined) return [];
  const limits = contextLimitsOf(engine, resolveModelSpec(testCase.model), testCase.draft);
  const found = new Set<ContextCoverageLabel>();
  for (const request of trace.requests ?? [])
    if (request.prompt.length + request.output.length === limits.target) found.add("request reaches the context limit");
  if (engine.mode !== "speculative") return [...found];
  const schedules = new Map(testCase.workload.requests.map((request) => [request.id, request.draftSchedule]));
  const roundsSoFar = new Map<number, number>();
  for (const round of readRounds(trace)) {
    const index = roundsSoFar.get(round.request) ?? 0;
    roundsSoFar.set(round.request, index + 1);
    const bonusPosition = round.verifyRows[0].position;
    const steps = draftStepsOf(schedules.get(round.request), index, engine.numSteps);
    const room = contextRoom(limits, bonusPosition);
    if (room > 0 && room < steps) found.add("lookahead cut at the context limit");
    if (bonusPosition >= limits.draft) found.add("decoding past the draft's context");
  }
  return [...found];
}
