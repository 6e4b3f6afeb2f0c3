// Law "processing parity": under every sampling option (stop ids, min new tokens, penalties, logit bias,
// logprobs) the speculative run equals the target-only run request by request: the same tokens (tie-aware
// with the processed margins at the first difference), then the same finish reason, stop id, finished
// length and number of logprob entries. Speculation moves where processing happens (verified drafts, the
// bonus, several tokens per step), never what it yields: penalties counted per step (sglang PR 33643),
// processing applied to the bonus only (vLLM issue 42744), min tokens counted in steps all break it.
import { isStochasticRequest, requestSampling } from "../sampling/params.ts";
import type { RequestOutput } from "../trace/run-result.ts";
import type { Law } from "./definition.ts";
import { LawTally, type LawResult } from "./law.ts";
import { checkOutputsAgree, type OutputPair } from "./lossless.ts";

export const PROCESSING_PARITY = "processing parity";

/** The first finishing field two equal-token outputs disagree on, or undefined. Pure. */
export function finishDifference(
  speculative: Readonly<RequestOutput>,
  targetOnly: Readonly<RequestOutput>,
): string | undefined {
  const fields = [
    ["finish reason", speculative.finishReason, targetOnly.finishReason],
    ["stop id", speculative.stopTokenId, targetOnly.stopTokenId],
    ["finished length", speculative.finishedLength, targetOnly.finishedLength],
    ["logprob entries", speculative.logprobs?.length, targetOnly.logprobs?.length],
  ] as const;
  const differing = fields.find(([, a, b]) => a !== b);
  return differing && `${differing[0]} ${differing[1] ?? "absent"}, target-only ${differing[2] ?? "absent"}`;
}

export const law: Law = {
  name: PROCESSING_PARITY,
  summary:
    "with sampling options, speculative tokens, finish reason, stop id, finished length and logprob count equal target-only",
  appliesTo: (testCase) =>
    testCase.engine.mode === "speculative" &&
    testCase.workload.requests.some((request) => requestSampling(testCase, request.id) !== undefined),
  needs: { baseline: "compare", oracle: true },
  unavailable: ({ testCase, run }) =>
    run.outputs.some(
      (output) => requestSampling(testCase, output.id) !== undefined && !isStochasticRequest(testCase, output.id),
    )
      ? undefined
      : "no greedy request with sampling options has an output",
  check: async ({ testCase, run, baseline, oracle }): Promise<LawResult> => {
    const targetOnly = new Map((baseline?.outputs ?? []).map((output) => [output.id, output]));
    const prompts = new Map(testCase.workload.requests.map((request) => [request.id, request.prompt]));
    // Stochastic requests draw other tokens per mode: the sampling laws judge them.
    const sampled = run.outputs.filter(
      (output) => requestSampling(testCase, output.id) !== undefined && !isStochasticRequest(testCase, output.id),
    );
    const pairs: OutputPair[] = sampled.map((output) => {
      const other = targetOnly.get(output.id);
      return {
        request: {
          id: output.id,
          prompt: [...(prompts.get(output.id) ?? [])],
          output: output.tokens,
          finishReason: output.finishReason,
        },
        targetOnly: other?.tokens ?? [],
        baselineAborted: other?.finishReason === "abort",
        sampling: requestSampling(testCase, output.id),
      };
    });
    const tokens = await checkOutputsAgree(PROCESSING_PARITY, pairs, oracle, "target-only");
    if (tokens.status === "fails") return tokens;
    const tally = new LawTally(PROCESSING_PARITY);
    tally.checked = tokens.checked;
    tally.ties = tokens.ties;
    for (const output of sampled) {
      const other = targetOnly.get(output.id);
      if (!other || output.finishReason === "abort" || other.finishReason === "abort") continue;
      if (output.tokens.join(",") !== other.tokens.join(",")) continue; // a tie, counted above
      tally.checked += 1;
      const difference = finishDifference(output, other);
      if (difference)
        tally.fail({ message: `request ${output.id}: ${difference}`, request: output.id, index: output.tokens.length });
    }
    return tally.result();
  },
};
