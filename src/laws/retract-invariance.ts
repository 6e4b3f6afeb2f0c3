// Law "retract/resume invariance": retracting a request (freeing its KV in every pool) and resuming it
// (re-prefilling every verified token, keeping the pending bonus) changes nothing it computes: its
// tokens, draft chains, accept lengths, positions and attention equal those of the same case without
// retracts, tie-aware. The rows a resume re-runs to rebuild KV it already had, and the temporary rows of
// a round the retract cut short, are left out of the comparison (request-view.ts).
import type { Case } from "../case/case.ts";
import type { Trace } from "../trace/schema.ts";
import { checkInvariance, showsForwards, type Tolerance } from "./invariance.ts";
import { notCheckable, type LawResult } from "./law.ts";
import type { Law } from "./definition.ts";

export const RETRACT_INVARIANCE = "retract/resume invariance";

/** The baseline: the same case without retracts (nor aborts, which land elsewhere once timing changes). */
export function unretractedTwin(testCase: Case): Case {
  return { ...testCase, workload: { ...testCase.workload, aborts: [], retracts: [] } };
}

const retractLanded = (trace: Trace) => (trace.lifecycle ?? []).some((entry) => entry.kind === "retract");
const NO_RETRACT = "no retract landed on an active request";

export function checkRetractInvariance(retracted: Trace, baseline: Trace, tolerance?: Tolerance): LawResult {
  if (showsForwards(retracted) && !retractLanded(retracted)) return notCheckable(RETRACT_INVARIANCE, NO_RETRACT);
  return checkInvariance(retracted, baseline, {
    law: RETRACT_INVARIANCE,
    subject: "the retracted run",
    baseline: "the run without retracts",
    tolerance,
  });
}

export const law: Law = {
  name: RETRACT_INVARIANCE,
  summary: "a retracted and resumed request computes what it computes without the retract",
  appliesTo: (testCase) => (testCase.workload.retracts ?? []).length > 0,
  needs: {
    twin: { kind: "unretracted", describe: "the run without retracts", of: unretractedTwin, composable: true },
  },
  unavailable: ({ run }) => (showsForwards(run.trace) && !retractLanded(run.trace) ? NO_RETRACT : undefined),
  check: ({ run, twin }) => checkRetractInvariance(run.trace, twin!.trace),
};
