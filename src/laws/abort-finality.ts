// Law "abort finality": an abort may land at any point (before any forward of a step, after its last one,
// on a request queued but not yet admitted) and is final there: no forward includes the request after its
// abort point, and its output holds no more tokens than its forwards before that point produced (an
// overlap engine may drop results still in flight; it may never emit later ones). That it holds no slot
// afterwards is KV conservation's check. The points are the case's own (schedule-points.ts), not the engine's
// lifecycle record: an abort the engine silently drops is still checked (issue 25). An abort that met the
// request already finished has nothing to check. Trace-only: events' steps, rows, verify results.
import type { Case } from "../case/case.ts";
import type { Trace } from "../trace/schema.ts";
import { LawTally, notCheckable, type LawResult } from "./law.ts";
import type { Law } from "./definition.ts";
import { doneBefore, placePoints, producedBefore, unplaceable } from "./schedule-points.ts";

export const ABORT_FINALITY = "abort finality";

export function checkAbortFinality(testCase: Readonly<Case>, trace: Trace): LawResult {
  const reason = unplaceable(trace);
  if (reason) return notCheckable(ABORT_FINALITY, reason);
  const tally = new LawTally(ABORT_FINALITY);
  for (const abort of placePoints(testCase.workload.aborts, trace)) {
    const request = abort.request;
    const where = `step ${abort.step} before forward ${abort.beforeForward}`;
    const output = trace.requests?.find((entry) => entry.id === request);
    if (doneBefore(trace, request, abort.beforeEvent)) continue;
    const after = trace.events.find(
      (event) => event.index >= abort.beforeEvent && event.rows.some((row) => row.request === request),
    );
    // Checked: the abort met the request unfinished (it ran on after it, or it ended aborted).
    if (after || output?.finishReason === "abort") tally.checked += 1;
    if (after) {
      tally.fail({
        request,
        event: after.index,
        message: `the case aborts request ${request} at ${where} (before event ${abort.beforeEvent}), but ${after.phase} event ${after.index} runs it${output?.finishReason && output.finishReason !== "abort" ? ` and it finished as "${output.finishReason}"` : ""}`,
      });
      continue;
    }
    const tokens = output?.output;
    if (!tokens) continue;
    const produced = producedBefore(trace, request, abort.beforeEvent);
    if (tokens.length > produced)
      tally.fail({
        request,
        message: `the case aborts request ${request} at ${where} (before event ${abort.beforeEvent}) with ${produced} tokens produced, yet its output holds ${tokens.length}`,
        expected: produced,
        got: tokens.length,
      });
  }
  return tally.result();
}

export const law: Law = {
  name: ABORT_FINALITY,
  summary: "a requested abort ends the request where the case asks: no forward after it, nothing produced later",
  appliesTo: (testCase) => testCase.workload.aborts.length > 0,
  needs: {},
  unavailable: ({ run }) => unplaceable(run.trace),
  check: ({ testCase, run }) => checkAbortFinality(testCase, run.trace),
};
