// Law "stream deltas": a detokenized request's streamed deltas add up to what it finally reports: their texts
// concatenate to its text and their tokens to its output tokens, in order. A server that streams a multi-token
// accepted run as one unit must still send every token and all of its text (vllm#26027: the streamed delta of a
// step kept only its last token). Output-only (engines that stream report `deltas`), checked on the run and its
// target-only baseline.
import type { Case } from "../case/case.ts";
import type { RequestOutput } from "../trace/run-result.ts";
import type { Law } from "./definition.ts";
import { combine, LawTally, notCheckable, type LawResult } from "./law.ts";
import { hasTextRequests, textRequests } from "./text-requests.ts";

export const STREAM_DELTAS = "stream deltas";

export function checkStreamDeltas(testCase: Readonly<Case>, outputs: readonly Readonly<RequestOutput>[]): LawResult {
  const tally = new LawTally(STREAM_DELTAS);
  for (const { output } of textRequests(testCase, outputs)) {
    if (output.deltas === undefined || output.text === undefined) continue;
    tally.checked += 1;
    const streamed = output.deltas.map((delta) => delta.text).join("");
    const tokens = output.deltas.flatMap((delta) => delta.tokens);
    const tokenIndex = firstDifference(tokens, output.tokens);
    if (tokenIndex !== undefined)
      tally.fail({
        message: `request ${output.id}: the deltas stream ${tokens.length} tokens, the output has ${output.tokens.length}; first difference at output token ${tokenIndex} (streamed ${tokens[tokenIndex] ?? "nothing"}, output ${output.tokens[tokenIndex] ?? "nothing"})`,
        request: output.id,
        index: tokenIndex,
        ...(tokens[tokenIndex] !== undefined ? { got: tokens[tokenIndex] } : {}),
        ...(output.tokens[tokenIndex] !== undefined ? { expected: output.tokens[tokenIndex] } : {}),
      });
    else if (streamed !== output.text)
      tally.fail({
        message: `request ${output.id}: the deltas' texts concatenate to ${JSON.stringify(streamed)}, the output text is ${JSON.stringify(output.text)}`,
        request: output.id,
      });
  }
  if (tally.checked === 0) return notCheckable(STREAM_DELTAS, "no detokenized request reports text and deltas");
  return tally.result();
}

function firstDifference(a: readonly number[], b: readonly number[]): number | undefined {
  for (let i = 0; i < Math.max(a.length, b.length); i++) if (a[i] !== b[i]) return i;
  return undefined;
}

export const law: Law = {
  name: STREAM_DELTAS,
  summary: "a detokenized request's streamed deltas concatenate to its text and its output tokens",
  appliesTo: hasTextRequests,
  needs: { baseline: "also-check" },
  check: ({ testCase, run, baseline }) => {
    const own = checkStreamDeltas(testCase, run.outputs);
    return baseline ? combine(own, checkStreamDeltas(testCase, baseline.outputs), "target-only run") : own;
  },
};
