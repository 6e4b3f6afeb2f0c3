// Law "termination equivalence": a request ends exactly where greedy decoding over the processed logits
// ends it (a grammar's end state too, and a detokenized request's first stop string). Its tokens equal the cache-free, teacher-forced reference with the same processing (tie-aware
// with the processed margins); the first EOS, stop id or the max-new-tokens cap ends it, with nothing
// emitted after it (sglang issue 31599: a run crossing the cap after a stop kept the tokens past it); the
// finish reason, the matched stop id and the finished length agree with that end; EOS and the stop ids
// never come before min new tokens; and in a trace no forward carries the request after its finishing
// round. Checked on the case's run and on its target-only baseline.
import type { Case } from "../case/case.ts";
import type { RequestOutput } from "../trace/run-result.ts";
import { hasText, isStochasticRequest, requestSampling, stopTokenIdsOf } from "../sampling/params.ts";
import { detokenize, pieceEnds, vocabularyOf, type Vocabulary } from "../model/vocabulary.ts";
import { firstStopOccurrence, textOptionsOf, type TextOptions } from "../sampling/stop-strings.ts";
import { compareTokens } from "../trace/compare.ts";
import { isEndState, nextState, START_STATE, type Grammar } from "../sampling/grammar.ts";
import type { Trace } from "../trace/schema.ts";
import type { Law } from "./definition.ts";
import { combine, LawTally, type LawResult } from "./law.ts";
import type { ReferenceOracle } from "../reference/oracle.ts";

export const TERMINATION_EQUIVALENCE = "termination equivalence";

export interface Ending {
  /** Output index of the token that ends the request. */
  index: number;
  reason: "eos" | "stop" | "length";
  stopTokenId?: number;
  /** A stop string's first occurrence ends in this token (src/sampling/stop-strings.ts). */
  stopString?: string;
}

/** A detokenized request's text as endingOf reads it: the vocabulary's pieces and the request's text options. */
export interface TextEnding {
  vocabulary: Vocabulary;
  options: TextOptions;
}

/**
 * Where greedy decoding ends this output: its first EOS or stop id, the token holding the last character of the
 * first stop string occurrence in its text (detokenized requests), the token taking its grammar to an end state
 * (finish reason "stop", no stop id), or the token reaching the cap. Pure.
 */
export function endingOf(
  output: readonly number[],
  maxNewTokens: number,
  eosId: number,
  stopTokenIds: ReadonlySet<number>,
  grammar?: Grammar,
  text?: TextEnding,
): Ending | undefined {
  let state = START_STATE;
  const occurrence = text
    ? firstStopOccurrence(detokenize(text.vocabulary, output), pieceEnds(text.vocabulary, output), text.options)
    : undefined;
  for (const [index, token] of output.entries()) {
    if (token === eosId) return { index, reason: "eos" };
    if (stopTokenIds.has(token))
      return {
        index,
        reason: "stop",
        stopTokenId: token,
        ...(occurrence?.tokenIndex === index ? { stopString: occurrence.stop } : {}),
      };
    if (occurrence?.tokenIndex === index) return { index, reason: "stop", stopString: occurrence.stop };
    if (grammar) {
      state = nextState(grammar, state, token);
      if (isEndState(grammar, state)) return { index, reason: "stop" };
    }
    if (index + 1 >= maxNewTokens) return { index, reason: "length" };
  }
  return undefined;
}

function endingName(ending: Ending, token: number): string {
  if (ending.reason === "eos") return `EOS ${token}`;
  if (ending.stopString !== undefined && ending.stopTokenId === undefined)
    return `stop string ${JSON.stringify(ending.stopString)} ending in token ${token}`;
  return `stop id ${token}`;
}

/** The structural checks of one output against its ending; the first violation's message, or undefined. */
function terminationViolation(
  output: Readonly<RequestOutput>,
  request: Case["workload"]["requests"][number],
  eosId: number,
  vocabulary: () => Vocabulary,
): { message: string; index?: number } | undefined {
  const stops = stopTokenIdsOf(request.sampling);
  const tokens = output.tokens;
  const text = hasText(request.sampling)
    ? { vocabulary: vocabulary(), options: textOptionsOf(request.sampling) }
    : undefined;
  const ending = endingOf(tokens, request.maxNewTokens, eosId, stops, request.sampling?.grammar, text);
  const id = output.id;
  if (ending && ending.index < tokens.length - 1)
    return {
      message: `request ${id}: ${tokens.length - 1 - ending.index} token(s) after output token ${ending.index} (${ending.reason === "length" ? `the cap of ${request.maxNewTokens}` : endingName(ending, tokens[ending.index])}), finish reason '${output.finishReason}'`,
      index: ending.index + 1,
    };
  const minNewTokens = request.sampling?.minNewTokens ?? 0;
  const early = tokens.findIndex((token, index) => index < minNewTokens && (token === eosId || stops.has(token)));
  if (early >= 0)
    return {
      message: `request ${id}: output token ${early} is ${tokens[early]}, masked until ${minNewTokens} new tokens`,
      index: early,
    };
  const reason = output.finishReason;
  if (reason === "abort") return undefined;
  if (!ending)
    return reason === "unfinished"
      ? undefined
      : { message: `request ${id}: finish reason '${reason}' after ${tokens.length} tokens, none of which ends it` };
  if (reason !== ending.reason)
    return {
      message: `request ${id}: finish reason '${reason}', but output token ${ending.index} ends it by ${ending.reason}`,
      index: ending.index,
    };
  if (reason === "stop" && output.stopTokenId !== undefined && output.stopTokenId !== ending.stopTokenId)
    return {
      message: `request ${id}: stop id reported ${output.stopTokenId}, the output stops at ${ending.stopTokenId}`,
      index: ending.index,
    };
  if (output.finishedLength !== undefined && output.finishedLength !== tokens.length)
    return {
      message: `request ${id}: finished length ${output.finishedLength}, ${tokens.length} output tokens`,
      index: Math.min(output.finishedLength, tokens.length),
    };
  return undefined;
}

/**
 * Forwards carrying a request after the verify round that finished it (nothing past the end runs). Discarded
 * work is not the request's: an overlap engine runs one round it planned before it knew (docs/scheduling.md)
 * and emits nothing of it.
 */
function ranAfterFinish(trace: Trace, id: number): number | undefined {
  let finishedAt: number | undefined;
  for (const event of trace.events) {
    if (finishedAt !== undefined && event.rows.some((row) => row.request === id && !row.discarded)) return event.index;
    if (event.verify?.some((result) => result.request === id && result.finished)) finishedAt = event.index;
  }
  return undefined;
}

export async function checkTermination(
  testCase: Readonly<Case>,
  outputs: readonly Readonly<RequestOutput>[],
  trace: Trace,
  oracle: ReferenceOracle,
): Promise<LawResult> {
  const tally = new LawTally(TERMINATION_EQUIVALENCE);
  for (const output of outputs) {
    const request = testCase.workload.requests.find((candidate) => candidate.id === output.id);
    if (!request) continue;
    const structural = terminationViolation(output, request, oracle.spec.eosId, () => vocabularyOf(oracle.spec));
    tally.checked += 1;
    if (structural) {
      tally.fail({ ...structural, request: output.id });
      continue;
    }
    const after = ranAfterFinish(trace, output.id);
    if (after !== undefined) {
      tally.fail({
        message: `request ${output.id}: forward event ${after} runs it after the round that finished it`,
        request: output.id,
        event: after,
      });
      continue;
    }
    // A stochastic request's tokens are drawn (sampling replay judges them); where it ends is judged above.
    if (output.tokens.length === 0 || isStochasticRequest(testCase, output.id)) continue;
    const sampling = requestSampling(testCase, output.id);
    const reference = await oracle.targetOver([...request.prompt, ...output.tokens], sampling);
    const first = request.prompt.length - 1;
    const expected = output.tokens.map((_, k) => reference.predictions[first + k].argmax);
    const margins = output.tokens.map((_, k) => reference.predictions[first + k].margin);
    const comparison = compareTokens(expected, margins, output.tokens, oracle.epsilon);
    tally.checked += comparison.compared;
    if (comparison.status === "tie") tally.ties += 1;
    if (comparison.status === "diverged")
      tally.fail({
        message: `request ${output.id} output token ${comparison.index} is ${comparison.got}, the ${sampling ? "processed " : ""}reference argmax is ${comparison.expected} (margin ${comparison.margin})`,
        request: output.id,
        index: comparison.index,
        expected: comparison.expected,
        got: comparison.got,
        margin: comparison.margin,
      });
  }
  return tally.result();
}

export const law: Law = {
  name: TERMINATION_EQUIVALENCE,
  summary:
    "tokens, finish reason, stop id and finished length equal greedy decoding over the processed logits; nothing after the first EOS / stop id / cap",
  appliesTo: () => true,
  needs: { baseline: "also-check", oracle: true },
  check: async ({ testCase, run, baseline, oracle }) => {
    const own = await checkTermination(testCase, run.outputs, run.trace, oracle);
    return baseline
      ? combine(own, await checkTermination(testCase, baseline.outputs, baseline.trace, oracle), "target-only run")
      : own;
  },
};
