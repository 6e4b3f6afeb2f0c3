// Coverage corners of speculation schedules (src/engine/draft-schedule.ts), read from a case and its trace:
// speculation switched back on after rounds without it (the draft KV must catch up), and resized between two
// rounds that both draft. Only spaces drawing schedules reach them (properties/dimensions.ts).
import type { Case } from "../case/case.ts";
import { draftStepsOf } from "../case/draft-schedule.ts";
import type { Trace } from "../trace/schema.ts";
import { readRounds } from "../laws/rounds.ts";

export const SCHEDULE_COVERAGE_LABELS = [
  /** A request verified a round with speculation off, then a round drafting again. */
  "speculation resumes after a round off",
  /** A request's consecutive rounds both drafted, with different draft steps. */
  "speculation resized mid-request",
] as const;

export type ScheduleCoverageLabel = (typeof SCHEDULE_COVERAGE_LABELS)[number];

export function scheduleCoverageLabels(testCase: Readonly<Case>, trace: Trace): ScheduleCoverageLabel[] {
  const schedules = new Map(testCase.workload.requests.map((request) => [request.id, request.draftSchedule]));
  if (testCase.engine.mode !== "speculative" || ![...schedules.values()].some((schedule) => schedule)) return [];
  const found = new Set<ScheduleCoverageLabel>();
  const rounds = new Map<number, number>();
  for (const round of readRounds(trace)) rounds.set(round.request, (rounds.get(round.request) ?? 0) + 1);
  for (const [request, count] of rounds) {
    const schedule = schedules.get(request);
    if (!schedule) continue;
    for (let k = 1; k < count; k++) {
      const before = draftStepsOf(schedule, k - 1, testCase.engine.numSteps);
      const after = draftStepsOf(schedule, k, testCase.engine.numSteps);
      if (before === 0 && after > 0) found.add("speculation resumes after a round off");
      if (before > 0 && after > 0 && before !== after) found.add("speculation resized mid-request");
    }
  }
  return [...found];
}
