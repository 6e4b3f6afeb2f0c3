// Law "usage counts": a detokenized request's usage counts what it emitted: completion tokens equal its output
// tokens (after any stop cut) and prompt tokens its prompt. Speculative engines that count a round's verified
// tokens, or a stop-cut run's tokens past the cut, overcount (sglang#39826). Output-only, checked on the run and
// its target-only baseline.
import type { Case } from "../case/case.ts";
import type { RequestOutput } from "../trace/run-result.ts";
import type { Law } from "./definition.ts";
import { combine, LawTally, notCheckable, type LawResult } from "./law.ts";
import { hasTextRequests, textRequests } from "./text-requests.ts";

export const USAGE_COUNTS = "usage counts";

export function checkUsageCounts(testCase: Readonly<Case>, outputs: readonly Readonly<RequestOutput>[]): LawResult {
  const tally = new LawTally(USAGE_COUNTS);
  for (const { request, output } of textRequests(testCase, outputs)) {
    if (output.usage === undefined) continue;
    tally.checked += 1;
    const { promptTokens, completionTokens } = output.usage;
    if (completionTokens !== output.tokens.length)
      tally.fail({
        message: `request ${output.id}: usage counts ${completionTokens} completion tokens, the output has ${output.tokens.length}`,
        request: output.id,
        expected: output.tokens.length,
        got: completionTokens,
      });
    else if (promptTokens !== request.prompt.length)
      tally.fail({
        message: `request ${output.id}: usage counts ${promptTokens} prompt tokens, the prompt has ${request.prompt.length}`,
        request: output.id,
        expected: request.prompt.length,
        got: promptTokens,
      });
  }
  if (tally.checked === 0) return notCheckable(USAGE_COUNTS, "no detokenized request reports usage");
  return tally.result();
}

export const law: Law = {
  name: USAGE_COUNTS,
  summary: "a detokenized request's usage counts its prompt and its emitted output tokens",
  appliesTo: hasTextRequests,
  needs: { baseline: "also-check" },
  check: ({ testCase, run, baseline }) => {
    const own = checkUsageCounts(testCase, run.outputs);
    return baseline ? combine(own, checkUsageCounts(testCase, baseline.outputs), "target-only run") : own;
  },
};
