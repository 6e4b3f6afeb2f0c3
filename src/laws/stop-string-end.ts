// Law "stop string end": a detokenized request's text ends where the first stop string occurrence in its
// output's text ends it (src/sampling/stop-strings.ts: the occurrence ending first, past min new tokens; the
// text cut at its start, or its end with includeStopStrInOutput), wherever that occurrence falls inside a
// multi-token accepted run (sglang#23802 / #27637: a stop string early in the run missed, the text cut late or
// never). With an occurrence the request finished by it (finish reason "stop", the reported stop string that
// one); without one the text is the whole detokenized output. Judged teacher-forced on the engine's own tokens
// (the text their pieces spell): whether those tokens are the reference's is the token laws' question (tie-aware),
// and termination equivalence holds the end itself to the reference. Output-only, checked on the run and its
// target-only baseline.
import type { Case } from "../case/case.ts";
import { detokenize, pieceEnds, vocabularyOf } from "../model/vocabulary.ts";
import { finalText, firstStopOccurrence, textOptionsOf } from "../sampling/stop-strings.ts";
import type { ModelSpec } from "../model/spec.ts";
import type { RequestOutput } from "../trace/run-result.ts";
import type { Law } from "./definition.ts";
import { combine, LawTally, notCheckable, type LawResult } from "./law.ts";
import { hasTextRequests, textRequests } from "./text-requests.ts";

export const STOP_STRING_END = "stop string end";

export function checkStopStringEnd(
  testCase: Readonly<Case>,
  outputs: readonly Readonly<RequestOutput>[],
  spec: ModelSpec,
): LawResult {
  const tally = new LawTally(STOP_STRING_END);
  const vocabulary = vocabularyOf(spec);
  for (const { request, output } of textRequests(testCase, outputs)) {
    if (output.text === undefined) continue;
    tally.checked += 1;
    const options = textOptionsOf(request.sampling);
    const full = detokenize(vocabulary, output.tokens);
    const occurrence = firstStopOccurrence(full, pieceEnds(vocabulary, output.tokens), options);
    const expected = finalText(full, occurrence, options.include);
    const where = occurrence
      ? `the first stop string ${JSON.stringify(occurrence.stop)} occurs at characters [${occurrence.start}, ${occurrence.end}) of ${JSON.stringify(full)}, ending in output token ${occurrence.tokenIndex}`
      : `no stop string occurs in ${JSON.stringify(full)}`;
    if (output.text !== expected)
      tally.fail({
        message: `request ${output.id}: text ${JSON.stringify(output.text)}, expected ${JSON.stringify(expected)}: ${where}`,
        request: output.id,
        ...(occurrence ? { index: occurrence.tokenIndex } : {}),
      });
    else if (occurrence && output.finishReason !== "stop")
      tally.fail({
        message: `request ${output.id}: finish reason '${output.finishReason}', but ${where}`,
        request: output.id,
        index: occurrence.tokenIndex,
      });
    else if (output.stopString !== undefined && output.stopString !== occurrence?.stop)
      tally.fail({
        message: `request ${output.id}: reported stop string ${JSON.stringify(output.stopString)}, but ${where}`,
        request: output.id,
        ...(occurrence ? { index: occurrence.tokenIndex } : {}),
      });
  }
  if (tally.checked === 0) return notCheckable(STOP_STRING_END, "no detokenized request reports text");
  return tally.result();
}

export const law: Law = {
  name: STOP_STRING_END,
  summary: "a detokenized request's text ends where the first stop string in its output ends it, anywhere in a run",
  appliesTo: hasTextRequests,
  needs: { baseline: "also-check" },
  check: ({ testCase, run, baseline, oracle }) => {
    const own = checkStopStringEnd(testCase, run.outputs, oracle.spec);
    return baseline
      ? combine(own, checkStopStringEnd(testCase, baseline.outputs, oracle.spec), "target-only run")
      : own;
  },
};
