// The detokenized requests of a case (issue 28's text layer: requests with sampling.stop) beside their outputs,
// for the text laws (stream deltas, stop string end, stop trim, usage counts). An output without the field a law
// reads leaves that law not checkable for it: an engine that reports no text is never judged on invented text.
import type { Case, CaseRequest } from "../case/case.ts";
import { hasText } from "../sampling/params.ts";
import type { RequestOutput } from "../trace/run-result.ts";

/** Whether some request of the case is detokenized (has a `stop` list, even empty). */
export function hasTextRequests(testCase: Readonly<Case>): boolean {
  return testCase.workload.requests.some((request) => hasText(request.sampling));
}

/** Each detokenized request with its output, in output order. */
export function textRequests(
  testCase: Readonly<Case>,
  outputs: readonly Readonly<RequestOutput>[],
): { request: CaseRequest; output: Readonly<RequestOutput> }[] {
  const byId = new Map(testCase.workload.requests.map((request) => [request.id, request]));
  return outputs.flatMap((output) => {
    const request = byId.get(output.id);
    return request && hasText(request.sampling) ? [{ request, output }] : [];
  });
}
