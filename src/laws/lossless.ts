// Law "lossless": speculative greedy output equals target-only greedy output. At the first difference
// the reference target's margin there decides: below epsilon it is a tie, above it a failure. Requests that
// sample are lossless in distribution (law "sampling distribution"), not token by token.
import { isStochasticRequest, requestSampling, type RequestSampling } from "../sampling/params.ts";
import type { TraceRequest } from "../trace/schema.ts";
import { LawTally, type LawResult } from "./law.ts";
import type { ReferenceOracle } from "../reference/oracle.ts";
import type { Law } from "./definition.ts";

export const LOSSLESS = "lossless";

export interface OutputPair {
  request: TraceRequest;
  /** The same request's output in the baseline run (target-only, for lossless). */
  targetOnly: readonly number[];
  /** The baseline aborted this request (its output may stop at another token than this run's). */
  baselineAborted?: boolean;
  /** The request's sampling options: the margin at a difference is the processed logits'. */
  sampling?: RequestSampling;
}

export async function checkLossless(pairs: readonly OutputPair[], oracle: ReferenceOracle): Promise<LawResult> {
  return checkOutputsAgree(LOSSLESS, pairs, oracle, "target-only");
}

/**
 * Two runs of the same requests must emit the same tokens, tie-aware (lossless: speculative vs
 * target-only; retract/resume invariance: with vs without retracts; and the other invariances).
 */
export async function checkOutputsAgree(
  law: string,
  pairs: readonly OutputPair[],
  oracle: ReferenceOracle,
  baselineName = "reference run",
): Promise<LawResult> {
  const tally = new LawTally(law);
  for (const { request, targetOnly, baselineAborted, sampling } of pairs) {
    const speculative = request.output;
    // An abort lands at a step, and steps emit different token counts per mode: compare the common part.
    const aborted = request.finishReason === "abort" || baselineAborted === true;
    const common = Math.min(speculative.length, targetOnly.length);
    let index = 0;
    while (index < common && speculative[index] === targetOnly[index]) index++;
    tally.checked += index;
    if (index === common) {
      if (speculative.length !== targetOnly.length && !aborted) {
        tally.fail({
          message: `request ${request.id}: ${speculative.length} tokens, the baseline (${baselineName}) has ${targetOnly.length}`,
          request: request.id,
          index,
        });
      }
      continue;
    }
    const reference = await oracle.targetOver([...request.prompt, ...speculative.slice(0, index)], sampling);
    const margin = reference.predictions[request.prompt.length - 1 + index].margin;
    if (margin < oracle.epsilon) {
      tally.ties += 1;
      continue;
    }
    tally.fail({
      message: `request ${request.id} token ${index}: ${speculative[index]}, the baseline (${baselineName}) has ${targetOnly[index]} (reference margin ${margin})`,
      request: request.id,
      index,
      expected: targetOnly[index],
      got: speculative[index],
      margin,
    });
  }
  return tally.result();
}

export const law: Law = {
  name: LOSSLESS,
  summary: "speculative greedy output equals target-only greedy output",
  appliesTo: (testCase) => testCase.engine.mode === "speculative",
  needs: { baseline: "compare", oracle: true },
  check: ({ testCase, run, baseline, oracle }) => {
    const targetOnly = new Map((baseline?.trace.requests ?? []).map((request) => [request.id, request]));
    return checkLossless(
      // Stochastic requests draw different tokens in the two modes; their losslessness is in distribution.
      (run.trace.requests ?? [])
        .filter((request) => !isStochasticRequest(testCase, request.id))
        .map((request) => {
          const other = targetOnly.get(request.id);
          // An abort in either run cuts its output at a different token (steps emit different counts).
          return {
            request,
            targetOnly: other?.output ?? [],
            baselineAborted: other?.finishReason === "abort",
            sampling: requestSampling(testCase, request.id),
          };
        }),
      oracle,
    );
  },
};
