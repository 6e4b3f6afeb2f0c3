// Stop strings over detokenized text (issue 28, item 2), as vLLM, SGLang and llama.cpp's server apply them: the
// output text is the output tokens' pieces concatenated (src/model/vocabulary.ts; BOS and EOS add nothing, a
// stop id's own text is kept), and the first occurrence of any stop string ends the request, wherever it falls
// inside a multi-token accepted run (sglang#23802 / #27637 missed one early in the run).
//
// Conventions (docs/design.md, "The text layer"):
// - First: the occurrence that ends first; of two ending at one character, the longer (it starts first). An
//   occurrence counts only if it ends in output token minNewTokens or later (vLLM checks stop strings only once
//   the output is past min_tokens, each token against the text it completes).
// - Text: it ends where the occurrence starts (vLLM's and llama.cpp's default), or where it ends with
//   includeStopStrInOutput.
// - Tokens: the output ends with the token holding the occurrence's last character, kept whole even when its
//   text runs past the stop string (that token produced the stop: vLLM's output token ids, llama.cpp's
//   n_decoded); logprobs have one entry per kept token (vllm#47616: text trimmed, token ids and logprobs not).
// - Streaming: one delta per engine step that emitted tokens, its text what became final in that step; while
//   the stop string is excluded, a text ending in a proper prefix of a stop string holds that suffix back (it
//   may still become the stop), as vLLM's and llama.cpp's streaming do. A last delta with no tokens releases
//   what was held when the request ends otherwise (EOS, the cap, an abort).
// Pure; the laws read the whole text at once (firstStopOccurrence), the engine token by token
// (src/engine/text-stream.ts).
import type { SamplingParams } from "./params.ts";

export interface StopOccurrence {
  /** The stop string. */
  stop: string;
  /** Character offsets of the occurrence in the output text: [start, end). */
  start: number;
  end: number;
  /** The output token holding its last character (the request's last token). */
  tokenIndex: number;
}

/** The text options of a request: its stop strings, whether the text keeps them, min new tokens. */
export interface TextOptions {
  stops: readonly string[];
  include: boolean;
  minNewTokens: number;
}

export function textOptionsOf(params: SamplingParams | undefined): TextOptions {
  return {
    stops: params?.stop ?? [],
    include: params?.includeStopStrInOutput === true,
    minNewTokens: params?.minNewTokens ?? 0,
  };
}

/**
 * The first stop-string occurrence in the text whose pieces end at `ends` (ends[i]: the text length through
 * output token i), counting only those ending in token minNewTokens or later; undefined when none. Pure.
 */
export function firstStopOccurrence(
  text: string,
  ends: readonly number[],
  options: Pick<TextOptions, "stops" | "minNewTokens">,
): StopOccurrence | undefined {
  // An occurrence must end past the text of the first minNewTokens tokens.
  const after = options.minNewTokens > 0 ? (ends[Math.min(options.minNewTokens, ends.length) - 1] ?? 0) : 0;
  let best: { stop: string; start: number; end: number } | undefined;
  for (const stop of options.stops) {
    const start = text.indexOf(stop, Math.max(0, after + 1 - stop.length));
    if (start < 0) continue;
    const end = start + stop.length;
    if (!best || end < best.end || (end === best.end && start < best.start)) best = { stop, start, end };
  }
  if (!best) return undefined;
  const end = best.end;
  return { ...best, tokenIndex: ends.findIndex((tokenEnd) => tokenEnd >= end) };
}

/** The output text a request reports: the text cut at the occurrence (its start, or its end when included). */
export function finalText(text: string, occurrence: StopOccurrence | undefined, include: boolean): string {
  if (!occurrence) return text;
  return text.slice(0, include ? occurrence.end : occurrence.start);
}

/**
 * Characters a stream holds back at the end of an unfinished text: the longest proper prefix of a stop string
 * the text ends with (0 when stop strings are included in the output: nothing is cut then). Pure.
 */
export function heldBack(text: string, options: Pick<TextOptions, "stops" | "include">): number {
  if (options.include) return 0;
  let held = 0;
  for (const stop of options.stops)
    for (let length = Math.min(stop.length - 1, text.length); length > held; length--)
      if (text.endsWith(stop.slice(0, length))) {
        held = length;
        break;
      }
  return held;
}
