// Law "abort finality": an abort may land at any point (before any forward of a step, after its last one,
// on a request queued but not yet admitted) and is final there: no forward includes the request after its
// abort point, and its output holds no more tokens than its forwards before that point produced (an
// overlap engine may drop results still in flight; it may never emit later ones). That it holds no slot
// afterwards is KV conservation's check. Trace-only: lifecycle aborts, rows, verify results.
import type { Trace } from "../trace/schema.ts";
import { LawTally, notCheckable, type LawResult } from "./law.ts";
import type { Law } from "./definition.ts";

export const ABORT_FINALITY = "abort finality";

export function checkAbortFinality(trace: Trace): LawResult {
  const aborts = (trace.lifecycle ?? []).filter((entry) => entry.kind === "abort");
  if (aborts.length === 0) return notCheckable(ABORT_FINALITY, "no abort landed");
  const tally = new LawTally(ABORT_FINALITY);
  for (const abort of aborts) {
    tally.checked += 1;
    const request = abort.request;
    const after = trace.events.find(
      (event) => event.index >= abort.beforeEvent && event.rows.some((row) => row.request === request),
    );
    if (after) {
      tally.fail({
        request,
        event: after.index,
        message: `request ${request} was aborted before event ${abort.beforeEvent}, but ${after.phase} event ${after.index} runs it`,
      });
      continue;
    }
    const output = trace.requests?.find((entry) => entry.id === request)?.output;
    if (!output) continue;
    // What forwards before the abort produced: the prefill's sample, each decode row, each verify's tokens.
    let produced = 0;
    for (const event of trace.events) {
      if (event.index >= abort.beforeEvent) break;
      const rows = event.rows.filter((row) => row.request === request && !row.discarded);
      if (event.phase === "prefill" && rows.length > 0 && produced === 0) produced = 1;
      if (event.phase === "decode") produced += rows.length;
      for (const result of event.verify ?? [])
        if (result.request === request && !result.discarded) produced += result.emitted?.length ?? result.acceptLen;
    }
    if (output.length > produced)
      tally.fail({
        request,
        message: `request ${request} was aborted before event ${abort.beforeEvent} with ${produced} tokens produced, yet its output holds ${output.length}`,
        expected: produced,
        got: output.length,
      });
  }
  return tally.result();
}

export const law: Law = {
  name: ABORT_FINALITY,
  summary: "an aborted request takes part in no forward after its abort and emits nothing produced later",
  appliesTo: (testCase) => testCase.workload.aborts.length > 0,
  needs: {},
  unavailable: ({ run }) =>
    run.trace.events.length > 0 && !(run.trace.lifecycle ?? []).some((entry) => entry.kind === "abort")
      ? "no abort landed"
      : undefined,
  check: ({ run }) => checkAbortFinality(run.trace),
};
