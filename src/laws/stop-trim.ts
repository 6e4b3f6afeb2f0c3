// Law "stop trim": token ids and logprobs are trimmed with the text. When a detokenized request's text was cut
// at a stop string, its output tokens end with the token holding that occurrence's last character
// (src/sampling/stop-strings.ts; kept whole when its text runs past the stop string), not with the rest of the
// accepted run; its logprobs hold one entry per output token (each for that token) and its finished length is the
// output's (vllm#47616: the text trimmed at the stop string, the token ids and logprobs not). Output-only, checked
// on the run and its target-only baseline.
import type { Case } from "../case/case.ts";
import { detokenize, pieceEnds, vocabularyOf } from "../model/vocabulary.ts";
import type { ModelSpec } from "../model/spec.ts";
import { firstStopOccurrence, textOptionsOf } from "../sampling/stop-strings.ts";
import type { RequestOutput } from "../trace/run-result.ts";
import type { Law } from "./definition.ts";
import { combine, LawTally, notCheckable, type LawResult, type LawViolation } from "./law.ts";
import { hasTextRequests, textRequests } from "./text-requests.ts";

export const STOP_TRIM = "stop trim";

export function checkStopTrim(
  testCase: Readonly<Case>,
  outputs: readonly Readonly<RequestOutput>[],
  spec: ModelSpec,
): LawResult {
  const tally = new LawTally(STOP_TRIM);
  const vocabulary = vocabularyOf(spec);
  for (const { request, output } of textRequests(testCase, outputs)) {
    if (output.text === undefined) continue;
    tally.checked += 1;
    const violation = trimViolation(output, detokenize(vocabulary, output.tokens), () =>
      firstStopOccurrence(
        detokenize(vocabulary, output.tokens),
        pieceEnds(vocabulary, output.tokens),
        textOptionsOf(request.sampling),
      ),
    );
    if (violation) tally.fail({ ...violation, request: output.id });
  }
  if (tally.checked === 0) return notCheckable(STOP_TRIM, "no detokenized request reports text");
  return tally.result();
}

function trimViolation(
  output: Readonly<RequestOutput>,
  full: string,
  occurrenceOf: () => ReturnType<typeof firstStopOccurrence>,
): Omit<LawViolation, "request"> | undefined {
  const id = output.id;
  const last = output.tokens.length - 1;
  // The text was cut (at a stop string): the tokens must end where the stop string that cut it ends.
  if (output.text !== full || output.stopString !== undefined) {
    const occurrence = occurrenceOf();
    if (!occurrence)
      return {
        message: `request ${id}: text ${JSON.stringify(output.text)} cut from ${JSON.stringify(full)}, but no stop string occurs in its output`,
      };
    if (occurrence.tokenIndex !== last)
      return {
        message: `request ${id}: the text was cut at stop string ${JSON.stringify(occurrence.stop)}, whose last character is in output token ${occurrence.tokenIndex}, but the output runs ${last - occurrence.tokenIndex} token(s) past it`,
        index: occurrence.tokenIndex + 1,
        got: output.tokens[occurrence.tokenIndex + 1],
      };
  }
  if (output.logprobs !== undefined) {
    if (output.logprobs.length !== output.tokens.length)
      return {
        message: `request ${id}: ${output.logprobs.length} logprob entries for ${output.tokens.length} output tokens`,
        index: Math.min(output.logprobs.length, output.tokens.length),
      };
    const wrong = output.logprobs.findIndex((entry, i) => entry.token !== output.tokens[i]);
    if (wrong >= 0)
      return {
        message: `request ${id}: logprob entry ${wrong} is for token ${output.logprobs[wrong].token}, output token ${wrong} is ${output.tokens[wrong]}`,
        index: wrong,
        expected: output.tokens[wrong],
        got: output.logprobs[wrong].token,
      };
  }
  if (output.finishedLength !== undefined && output.finishedLength !== output.tokens.length)
    return {
      message: `request ${id}: finished length ${output.finishedLength}, ${output.tokens.length} output tokens`,
      index: Math.min(output.finishedLength, output.tokens.length),
    };
  return undefined;
}

export const law: Law = {
  name: STOP_TRIM,
  summary: "token ids and logprobs are trimmed with the text: a stop-cut output ends with the stop string's token",
  appliesTo: hasTextRequests,
  needs: { baseline: "also-check" },
  check: ({ testCase, run, baseline, oracle }) => {
    const own = checkStopTrim(testCase, run.outputs, oracle.spec);
    return baseline ? combine(own, checkStopTrim(testCase, baseline.outputs, oracle.spec), "target-only run") : own;
  },
};
