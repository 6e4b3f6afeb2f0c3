// A request's speculation schedule as the case format defines it (case /workload/requests/i/draftSchedule):
// the draft steps of each of its rounds, in order, 0 switching speculation off for that round, the engine's
// numSteps past the schedule's end; and what the engine cannot run with one. The engine's side (positions
// waiting for the draft extend, the catch-up) is engine/draft-schedule.ts.
import type { CaseRequest } from "./case.ts";
import { ConfigError, type EngineConfig } from "./engine-config.ts";

/** The draft steps of round `round` (0-based) of a request with this schedule. Pure. */
export function draftStepsOf(schedule: readonly number[] | undefined, round: number, numSteps: number): number {
  return schedule?.[round] ?? numSteps;
}

/** What the engine cannot run with a schedule; ConfigError with the JSON path. */
export function checkDraftSchedule(request: CaseRequest, path: string, engine: EngineConfig): void {
  const schedule = request.draftSchedule;
  if (!schedule) return;
  const where = `${path}/draftSchedule`;
  // Target-only runs of the same workload (the baselines) ignore it.
  if (engine.mode !== "speculative") return;
  if (engine.topk !== 1)
    throw new ConfigError(where, `a speculation schedule needs chain drafting (topk 1, not ${engine.topk})`);
  if (engine.multiLayer)
    throw new ConfigError(where, "a speculation schedule needs single-module drafting (multiLayer off)");
  if (engine.overlap) throw new ConfigError(where, "a speculation schedule needs overlap scheduling off");
  schedule.forEach((steps, i) => {
    if (steps > engine.numSteps)
      throw new ConfigError(`${where}/${i}`, `${steps} draft steps exceed the engine's numSteps ${engine.numSteps}`);
  });
}
