// A request's speculation schedule (case /workload/requests/i/draftSchedule): the number of draft steps of
// each of its rounds, in order, 0 switching speculation off for that round (the round verifies the bonus
// alone), the engine's numSteps past the schedule's end. Engines switch speculation off and on per request
// and resize it mid-request (vllm#4592 dynamic speculation, sglang#24055, sglang#13804, mlc-llm#2916). While
// it is off the drafter is idle: the rounds' verified positions wait here with their target hidden states,
// and the round before speculation resumes extends the draft KV over all of them (the catch-up) before its
// root is drafted. The fault "draft-kv-not-caught-up" extends over the last round's positions only, leaving
// the positions verified while speculation was off without draft KV (vllm#4592's stale proposer state).
import type { Faults } from "../case/faults.ts";
import { concatInputRows, type DraftInputRows } from "./hidden-rows.ts";

/** Verified positions whose draft extend waits for speculation to resume. */
export interface PendingExtend {
  firstAnchor: number;
  /** x_{firstAnchor+1}.. : the tokens the rows pair with their hidden states. */
  tokens: number[];
  hidden: DraftInputRows;
}

/** The extend segment to run now: the waiting positions and this round's, in order (the fault drops the waiting ones). */
export function catchUp(waiting: readonly PendingExtend[], current: PendingExtend, faults: Faults): PendingExtend {
  const parts = faults.has("draft-kv-not-caught-up") ? [current] : [...waiting, current];
  return {
    firstAnchor: parts[0].firstAnchor,
    tokens: parts.flatMap((part) => part.tokens),
    hidden: concatInputRows(parts.map((part) => part.hidden)),
  };
}
