// Law "reference decode": each request's greedy output equals one cache-free, teacher-forced target
// forward over prompt + output (tie-aware at the first divergence); for a request with sampling options,
// the argmax of the processed logits (penalties, bias, min tokens counted from the sequence itself). Requests
// that sample (temperature > 0) are left to the sampling laws.
import type { Case } from "../case/case.ts";
import { isStochasticRequest, requestSampling } from "../sampling/params.ts";
import type { TraceRequest } from "../trace/schema.ts";
import { compareTokens } from "../trace/compare.ts";
import { combine, LawTally, notCheckable, type LawResult } from "./law.ts";
import type { ReferenceOracle } from "../reference/oracle.ts";
import type { Law } from "./definition.ts";

export const REFERENCE_DECODE = "reference decode";

export async function checkReferenceDecode(
  requests: readonly TraceRequest[] | undefined,
  oracle: ReferenceOracle,
  testCase?: Readonly<Case>,
): Promise<LawResult> {
  if (!requests) return notCheckable(REFERENCE_DECODE, "the trace has no requests with outputs");
  const tally = new LawTally(REFERENCE_DECODE);
  const sequenceOf = (request: TraceRequest) => [...request.prompt, ...request.output];
  await oracle.prepareRequests(requests);
  for (const request of requests) {
    // A stochastic request's tokens are drawn: the sampling laws judge them.
    if (request.output.length === 0 || (testCase && isStochasticRequest(testCase, request.id))) continue;
    const sampling = testCase && requestSampling(testCase, request.id);
    const reference = await oracle.targetOver(sequenceOf(request), sampling);
    const first = request.prompt.length - 1;
    const expected = request.output.map((_, k) => reference.predictions[first + k].argmax);
    const margins = request.output.map((_, k) => reference.predictions[first + k].margin);
    const comparison = compareTokens(expected, margins, request.output, oracle.epsilon);
    tally.checked += comparison.compared;
    if (comparison.status === "tie") tally.ties += 1;
    if (comparison.status === "diverged") {
      tally.fail({
        message: `request ${request.id} output token ${comparison.index} is ${comparison.got}, the reference argmax is ${comparison.expected} (margin ${comparison.margin})`,
        request: request.id,
        index: comparison.index,
        expected: comparison.expected,
        got: comparison.got,
        margin: comparison.margin,
      });
    }
  }
  return tally.result();
}

export const law: Law = {
  name: REFERENCE_DECODE,
  summary: "outputs (speculative and target-only) equal a cache-free teacher-forced target forward",
  appliesTo: () => true,
  needs: { baseline: "also-check", oracle: true },
  check: async ({ testCase, run, baseline, oracle }) => {
    const own = await checkReferenceDecode(run.trace.requests, oracle, testCase);
    return baseline
      ? combine(own, await checkReferenceDecode(baseline.trace.requests, oracle, testCase), "target-only run")
      : own;
  },
};
