// Coverage corners of the text layer (issue 28, item 2), read from a case and its trace's requests: where the
// stop-string and streaming bugs live (sglang#23802 / #27637: a stop early in an accepted run; vllm#47616: a stop
// ending inside a token; vllm#26027: a step streaming several tokens; issue 34: two stop strings one token
// completes, an abort while the stream holds text back). Only cases with detokenized requests reach
// them (the text properties' spaces: properties/dimensions.ts).
import type { Case, CaseRequest } from "../case/case.ts";
import { resolveModelSpec } from "../case/models.ts";
import { detokenize, pieceEnds, vocabularyOf } from "../model/vocabulary.ts";
import { hasText } from "../sampling/params.ts";
import { firstStopOccurrence, textOptionsOf } from "../sampling/stop-strings.ts";
import type { Trace } from "../trace/schema.ts";

export const TEXT_COVERAGE_LABELS = [
  /** A stop string ended a request at a token before the last its verify round accepted. */
  "stop string inside an accepted run",
  /** The stop string that ended a request starts in an earlier token than the one holding its end. */
  "stop string across tokens",
  /** The stop string that ended a request ends before its last token's text does (the token runs past it). */
  "stop string ending inside a token",
  /** One streamed delta carried two or more tokens (a multi-token step). */
  "delta of several tokens",
  /** The token that ended a request completed two or more of its stop strings (which one ends it is the convention). */
  "two stop strings completed by one token",
  /** A request was aborted while its stream held text back (a possible stop string's start): the last delta releases it. */
  "abort while text is held back",
] as const;

export type TextCoverageLabel = (typeof TEXT_COVERAGE_LABELS)[number];

/** How many of the request's stop strings have an occurrence ending inside the text [tokenStart, tokenEnd). */
function stopsCompletedBy(text: string, tokenStart: number, tokenEnd: number, request: CaseRequest): number {
  return textOptionsOf(request.sampling).stops.filter((stop) => {
    const start = text.indexOf(stop, Math.max(0, tokenStart + 1 - stop.length));
    return start >= 0 && start + stop.length <= tokenEnd;
  }).length;
}

export function textCoverageLabels(testCase: Readonly<Case>, trace: Trace): TextCoverageLabel[] {
  const requests = new Map(
    testCase.workload.requests.flatMap((request) =>
      hasText(request.sampling) ? [[request.id, request] as const] : [],
    ),
  );
  if (requests.size === 0) return [];
  const found = new Set<TextCoverageLabel>();
  const vocabulary = vocabularyOf(resolveModelSpec(testCase.model));
  const stoppedInRun = new Set<number>();
  for (const event of trace.events)
    for (const result of event.verify ?? [])
      if (result.finished && (result.emitted?.length ?? result.acceptLen) < result.acceptLen)
        stoppedInRun.add(result.request);
  for (const traced of trace.requests ?? []) {
    const request = requests.get(traced.id);
    if (!request) continue;
    const deltas = traced.deltas ?? [];
    if (deltas.some((delta) => delta.tokens.length >= 2)) found.add("delta of several tokens");
    // An aborted stream's last delta carries no token: it releases the text held back when the abort landed.
    const last = deltas[deltas.length - 1];
    if (traced.finishReason === "abort" && last?.tokens.length === 0 && last.text.length > 0)
      found.add("abort while text is held back");
    if (traced.stopString === undefined) continue;
    const ends = pieceEnds(vocabulary, traced.output);
    const occurrence = firstStopOccurrence(
      detokenize(vocabulary, traced.output),
      ends,
      textOptionsOf(request.sampling),
    );
    if (!occurrence) continue;
    if (stoppedInRun.has(traced.id) && occurrence.tokenIndex === traced.output.length - 1)
      found.add("stop string inside an accepted run");
    const tokenStart = occurrence.tokenIndex > 0 ? ends[occurrence.tokenIndex - 1] : 0;
    if (occurrence.start < tokenStart) found.add("stop string across tokens");
    if (occurrence.end < ends[occurrence.tokenIndex]) found.add("stop string ending inside a token");
    if (stopsCompletedBy(detokenize(vocabulary, traced.output), tokenStart, ends[occurrence.tokenIndex], request) >= 2)
      found.add("two stop strings completed by one token");
  }
  return [...found];
}
