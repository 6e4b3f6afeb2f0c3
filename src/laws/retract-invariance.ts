// Law "retract/resume invariance": retracting a request (freeing its KV in every pool) and resuming it
// (re-prefilling every verified token, keeping the pending bonus) changes nothing it computes: its
// tokens, draft chains, accept lengths, positions and attention equal those of the same case without
// retracts, tie-aware. The rows a resume re-runs to rebuild KV it already had, and the temporary rows of
// a round the retract cut short, are left out of the comparison (request-view.ts).
import type { Case } from "../case/case.ts";
import type { Trace } from "../trace/schema.ts";
import { checkInvariance, type Tolerance } from "./invariance.ts";
import { notCheckable, type LawResult } from "./law.ts";

export const RETRACT_INVARIANCE = "retract/resume invariance";

/** The baseline: the same case without retracts (nor aborts, which land elsewhere once timing changes). */
export function unretractedTwin(testCase: Case): Case {
  return { ...testCase, workload: { ...testCase.workload, aborts: [], retracts: [] } };
}

export function checkRetractInvariance(retracted: Trace, baseline: Trace, tolerance?: Tolerance): LawResult {
  if (!(retracted.lifecycle ?? []).some((entry) => entry.kind === "retract"))
    return notCheckable(RETRACT_INVARIANCE, "no retract landed on an active request");
  return checkInvariance(retracted, baseline, {
    law: RETRACT_INVARIANCE,
    subject: "the retracted run",
    baseline: "the run without retracts",
    tolerance,
  });
}
