// Law "batch invariance": a request's tokens, drafts, accept lengths, positions and attention do not
// depend on the other requests in its batches or on arrival order. The baseline runs the same requests
// in reverse order with reversed arrival steps (so batches pack differently, and each request has other
// neighbours), without aborts or retracts; compared request by request, tie-aware. Catches cross-request
// mask leaks and any state shared between requests of a packed batch.
import type { Case } from "../case/case.ts";
import type { Trace } from "../trace/schema.ts";
import { checkInvariance, showsForwards, type Tolerance } from "./invariance.ts";
import { notCheckable, type LawResult } from "./law.ts";
import type { Law } from "./definition.ts";

export const BATCH_INVARIANCE = "batch invariance";

/** The baseline: requests reversed, arrival steps mirrored (last arrival first), no aborts or retracts. */
export function reorderedTwin(testCase: Case): Case {
  const requests = testCase.workload.requests;
  const last = Math.max(...requests.map((request) => request.arrivalStep));
  return {
    ...testCase,
    workload: {
      ...testCase.workload,
      requests: [...requests].reverse().map((request) => ({ ...request, arrivalStep: last - request.arrivalStep })),
      aborts: [],
      ...(testCase.workload.retracts ? { retracts: [] } : {}),
    },
  };
}

/** Some forward packed rows of two or more requests. */
export function hasSharedBatch(trace: Trace): boolean {
  return trace.events.some((event) => new Set(event.rows.map((row) => row.request)).size > 1);
}

const UNBATCHED = "no forward packed two requests";

/** The events show which requests shared a forward (else outputs are compared whenever the case batches). */
function showsBatches(trace: Trace): boolean {
  return showsForwards(trace) && trace.engine.batchGrouping !== "unobserved";
}

export function checkBatchInvariance(batched: Trace, reordered: Trace, tolerance?: Tolerance): LawResult {
  if (showsBatches(batched) && !hasSharedBatch(batched) && !hasSharedBatch(reordered))
    return notCheckable(BATCH_INVARIANCE, UNBATCHED);
  return checkInvariance(batched, reordered, {
    law: BATCH_INVARIANCE,
    subject: "this batch",
    baseline: "the reordered batch",
    tolerance,
  });
}

export const law: Law = {
  name: BATCH_INVARIANCE,
  summary: "a request's tokens, drafts, accept lengths and positions do not depend on its batch or arrival order",
  appliesTo: (testCase) => testCase.workload.requests.length > 1,
  needs: { twin: { kind: "reordered", describe: "the reordered batch", of: reorderedTwin, composable: true } },
  unavailable: ({ run }) => (showsBatches(run.trace) && !hasSharedBatch(run.trace) ? UNBATCHED : undefined),
  check: ({ run, twin }) => checkBatchInvariance(run.trace, twin!.trace),
};
