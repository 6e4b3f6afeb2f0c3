// Law "retract resumes": a retract the case asks for, landing on a request that is running (it has forwards
// before the point and after it), is carried out: the request's next forward after the point is a prefill
// that goes back over positions it already had (resume re-prefills x_0..x_{L-1} into every pool), or starts
// where a prefix hit recorded right before it ends (the cache may hold more than the request had computed), not
// a continuation. The points are the case's (schedule-points.ts), not the
// engine's lifecycle: a retract the engine drops leaves its outputs unchanged, so retract/resume invariance
// alone holds on it (issue 25). A retract meeting a request not yet admitted or already done has nothing to
// check. Trace-only: events' steps, phases, rows' positions.
import type { Case } from "../case/case.ts";
import type { Trace } from "../trace/schema.ts";
import type { Law } from "./definition.ts";
import { LawTally, type LawResult, notCheckable } from "./law.ts";
import { doneBefore, eventsOf, placePoints, unplaceable } from "./schedule-points.ts";

export const RETRACT_RESUMES = "retract resumes";

/** The request's highest target-pool row position among events before `beforeEvent` (discarded rows too). */
function highestBefore(trace: Trace, request: number, beforeEvent: number): number | undefined {
  let highest: number | undefined;
  for (const event of trace.events) {
    if (event.index >= beforeEvent) break;
    const target =
      event.pool === undefined ? ["prefill", "decode", "verify"].includes(event.phase) : event.pool === "target";
    if (!target) continue;
    for (const row of event.rows)
      if (row.request === request && (highest === undefined || row.position > highest)) highest = row.position;
  }
  return highest;
}

export function checkRetractResumes(testCase: Readonly<Case>, trace: Trace): LawResult {
  const reason = unplaceable(trace);
  if (reason) return notCheckable(RETRACT_RESUMES, reason);
  const tally = new LawTally(RETRACT_RESUMES);
  for (const retract of placePoints(testCase.workload.retracts ?? [], trace)) {
    const request = retract.request;
    const highest = highestBefore(trace, request, retract.beforeEvent);
    const next = eventsOf(trace, request).find((event) => event.index >= retract.beforeEvent);
    // Not admitted yet, or done before the point (an overlap zombie may still run once): nothing to act on.
    if (highest === undefined || !next || doneBefore(trace, request, retract.beforeEvent)) continue;
    const rows = next.rows.filter((row) => row.request === request);
    const first = Math.min(...rows.map((row) => row.position));
    // A resume may start past what the request had computed when the prefix cache gives it more (a prefix hit
    // recorded right before that prefill: its target length is where the prefill starts).
    const hit = (trace.lifecycle ?? []).find(
      (entry) => entry.kind === "prefix-hit" && entry.request === request && entry.beforeEvent === next.index,
    );
    const resumedFrom = hit?.pools?.find((pool) => pool.pool === "target")?.length;
    // Retracted mid-prefill with the prefix cache on, a resume may restart above where the request was (another
    // request's longer cached prefix, whose hit need not sit right before the prefill) while a dropped retract
    // continues at the next prompt position: both are prefills moving forward, which positions alone cannot tell
    // apart. Not counted as checked.
    const midPrefill = !eventsOf(trace, request).some(
      (event) => event.index < retract.beforeEvent && (event.phase === "decode" || event.phase === "verify"),
    );
    if (
      next.phase === "prefill" &&
      first > highest &&
      first !== resumedFrom &&
      midPrefill &&
      testCase.engine.prefixCache
    )
      continue;
    tally.checked += 1;
    const where = `step ${retract.step} before forward ${retract.beforeForward} (before event ${retract.beforeEvent})`;
    if (next.phase !== "prefill" || (first > highest && first !== resumedFrom))
      tally.fail({
        request,
        event: next.index,
        message: `the case retracts request ${request} at ${where}, but its next forward, ${next.phase} event ${next.index} at position ${first}, continues where it was (position ${highest} reached before) instead of re-prefilling`,
      });
  }
  return tally.result();
}

export const law: Law = {
  name: RETRACT_RESUMES,
  summary: "a requested retract of a running request is carried out: its next forward re-prefills what it had",
  appliesTo: (testCase) => (testCase.workload.retracts ?? []).length > 0,
  needs: {},
  unavailable: ({ run }) => unplaceable(run.trace),
  check: ({ testCase, run }) => checkRetractResumes(testCase, run.trace),
};
