// Which stop string an engine reports when one check sees several (docs/design.md, "Which stop"): a convention
// each engine documents in its source, declared per engine by a profile. specconf's reference (and the laws)
// take the occurrence that ends first, the one a token-by-token reader meets first. The engines check stop
// strings once per window of new text and pick among the occurrences ending inside it by a rule of their own:
// - llama.cpp's server (tools/server/server-context.cpp, `server_slot::find_stopping_strings(text,
//   last_token_size, true)`, called from `process_token` after every token, also inside an accepted run): the
//   window is one token; of the stop strings found there, the one starting first (`pos < stop_pos`: a tie keeps
//   the one listed first).
// - vLLM (vllm/v1/engine/detokenizer.py, `BaseIncrementalDetokenizer.update` -> `check_stop_strings`, before
//   that `StopChecker.check_stop_strings` in vllm/engine/output_processor/stop_checker.py): the window is the
//   text one engine step added (every token of an accepted run); the first stop string in the request's list
//   that occurs ending in it, at its first such occurrence.
// - SGLang (python/sglang/srt/managers/schedule_batch.py, `Req._check_str_based_finish`): the tail of the text
//   after each step; the first stop string in the list found there. Occurrences ending before the step were seen
//   by the step before, so this is vLLM's rule.
// A window is read from the output: its streamed deltas' tokens (one delta per engine step), else each token
// alone (a step without speculation emits one token). The reference is never changed: a profile translates the
// engine's answer when, and only when, it is exactly what its rule gives (relax.ts, `translateStopChoice`).
import { detokenize, pieceEnds, vocabularyOf } from "../model/vocabulary.ts";
import type { ModelSpec } from "../model/spec.ts";
import { finalText, firstStopOccurrence, textOptionsOf, type StopOccurrence } from "../sampling/stop-strings.ts";
import type { Case } from "../case/case.ts";
import type { RequestOutput } from "../trace/run-result.ts";
import { textRequests } from "../laws/text-requests.ts";

/** earliest-start: llama.cpp's server; list-order: vLLM and SGLang. */
export type StopChoiceRule = "earliest-start" | "list-order";

/** How an engine groups tokens for its stop check. */
export type StopWindow = "token" | "step";

/** Each window's last output token index, in order (the windows partition the output). */
export function windowEnds(output: Pick<RequestOutput, "tokens" | "deltas">, window: StopWindow): number[] {
  const count = output.tokens.length;
  const sizes = window === "step" ? (output.deltas ?? []).map((delta) => delta.tokens.length).filter((n) => n > 0) : [];
  const total = sizes.reduce((sum, size) => sum + size, 0);
  // Without deltas that cover the output (no stream, or cut), each token is a window: a plain decode step's.
  if (total !== count) return Array.from({ length: count }, (_, index) => index);
  const ends: number[] = [];
  let last = -1;
  for (const size of sizes) ends.push((last += size));
  return ends;
}

/**
 * The occurrence an engine's rule reports: the first window holding the end of some occurrence (past min new
 * tokens, as the reference counts them), and in it the rule's pick. Undefined when no stop string occurs. Pure.
 */
export function engineStopChoice(
  text: string,
  ends: readonly number[],
  stops: readonly string[],
  minNewTokens: number,
  windows: readonly number[],
  rule: StopChoiceRule,
): StopOccurrence | undefined {
  const floor = minNewTokens > 0 ? (ends[Math.min(minNewTokens, ends.length) - 1] ?? 0) : 0;
  let from = 0;
  for (const last of windows) {
    const windowStart = Math.max(floor, from > 0 ? ends[from - 1] : 0);
    const windowEnd = ends[last] ?? 0;
    from = last + 1;
    if (windowEnd <= windowStart) continue;
    let best: { stop: string; start: number; end: number } | undefined;
    for (const stop of stops) {
      // The first occurrence ending inside the window (the engines search from just before its start).
      const start = text.indexOf(stop, Math.max(0, windowStart + 1 - stop.length));
      if (start < 0 || start + stop.length > windowEnd) continue;
      if (!best || (rule === "earliest-start" && start < best.start)) best = { stop, start, end: start + stop.length };
      if (rule === "list-order") break;
    }
    if (best) return { ...best, tokenIndex: ends.findIndex((tokenEnd) => tokenEnd >= best.end) };
  }
  return undefined;
}

export interface StopChoiceConvention {
  rule: StopChoiceRule;
  window: StopWindow;
}

/**
 * The outputs as the stop-string laws read them under an engine's convention: a request whose text and
 * reported stop string are exactly what the engine's rule gives, where that differs from the reference's
 * choice, gets the reference's text and stop string; everything else is left as the engine reported it (a text
 * that follows neither rule still fails). Tokens are never touched. Counts the requests translated.
 */
export function translateStopChoice(
  testCase: Readonly<Case>,
  outputs: readonly RequestOutput[],
  spec: ModelSpec,
  convention: StopChoiceConvention,
): { outputs: RequestOutput[]; applied: number; detail: string } {
  const vocabulary = vocabularyOf(spec);
  const translated = new Map<RequestOutput, RequestOutput>();
  const details: string[] = [];
  for (const { request, output } of textRequests(testCase, outputs)) {
    if (output.text === undefined) continue;
    const options = textOptionsOf(request.sampling);
    const full = detokenize(vocabulary, output.tokens);
    const ends = pieceEnds(vocabulary, output.tokens);
    const reference = firstStopOccurrence(full, ends, options);
    const windows = windowEnds(output, convention.window);
    const engine = engineStopChoice(full, ends, options.stops, options.minNewTokens, windows, convention.rule);
    if (!reference || !engine || (engine.stop === reference.stop && engine.start === reference.start)) continue;
    const engineText = finalText(full, engine, options.include);
    if (output.text !== engineText || (output.stopString !== undefined && output.stopString !== engine.stop)) continue;
    translated.set(output, {
      ...output,
      text: finalText(full, reference, options.include),
      ...(output.stopString !== undefined ? { stopString: reference.stop } : {}),
    });
    details.push(
      `request ${output.id}: ${JSON.stringify(engine.stop)} at ${engine.start} (${convention.rule}) read as ${JSON.stringify(reference.stop)} at ${reference.start}`,
    );
  }
  return {
    outputs: outputs.map((output) => translated.get(output) ?? output),
    applied: translated.size,
    detail: details.join("; "),
  };
}
