// The processed logits a greedy request samples from, as vLLM V1's sampler defines them
// (vllm/v1/sample/sampler.py, in this order): the logits processors that can change the argmax, min tokens
// (EOS and the stop ids at -inf while fewer than min_tokens output tokens are committed) then logit bias
// (added); then the penalties (vllm/model_executor/layers/utils.py apply_penalties, SGLang's penalizers
// agree): repetition (for every token seen in prompt or output, a positive logit divided by the penalty,
// any other multiplied by it), frequency (subtracted once per occurrence in the output), presence
// (subtracted once per token present in the output). A grammar's mask (grammar.ts) comes first. The output is what was committed before the
// position: under speculation the drafts on the path to a verify node count as committed.
// Logprobs are the log-softmax of these processed logits (vLLM's logprobs_mode=processed_logprobs).
// Pure; the engine and the cache-free oracle both compute rows with it, from their own contexts.
import type { LogprobEntry, SamplingParams } from "./params.ts";
import { logitBiasEntries, stopTokenIdsOf } from "./params.ts";
import { applyGrammarMask, START_STATE, stateAfter, type Grammar } from "./grammar.ts";

/** What a position's processing depends on: the tokens committed before it. */
export interface ProcessingContext {
  /** Distinct prompt tokens (the repetition penalty counts them as seen). */
  prompt: ReadonlySet<number>;
  /** Occurrences of each output token committed before the position. */
  outputCounts: ReadonlyMap<number, number>;
  /** Output tokens committed before the position (min new tokens). */
  committed: number;
  /** Requests with a grammar: the automaton's state after the committed output (the mask, applied first). */
  grammarState?: number;
}

/** The context of the position after prompt ++ output, counted from the tokens themselves. */
export function contextOf(prompt: readonly number[], output: readonly number[], grammar?: Grammar): ProcessingContext {
  const outputCounts = new Map<number, number>();
  for (const token of output) outputCounts.set(token, (outputCounts.get(token) ?? 0) + 1);
  const context: ProcessingContext = { prompt: new Set(prompt), outputCounts, committed: output.length };
  if (grammar) context.grammarState = stateAfter(grammar, START_STATE, output);
  return context;
}

/** A copy of logits[offset, offset + vocab) as float64. */
export function rowAt(logits: ArrayLike<number>, offset: number, vocab: number): Float64Array {
  const row = new Float64Array(vocab);
  for (let token = 0; token < vocab; token++) row[token] = logits[offset + token];
  return row;
}

/** The processed row of logits[offset, offset + vocab) in float64. Pure. */
export function processLogits(
  logits: ArrayLike<number>,
  offset: number,
  vocab: number,
  params: SamplingParams,
  context: ProcessingContext,
  eosId: number,
): Float64Array {
  const row = rowAt(logits, offset, vocab);
  // vLLM applies the grammar bitmask in the model runner, before the sampler's processors.
  if (params.grammar && context.grammarState !== undefined)
    applyGrammarMask(row, params.grammar, context.grammarState, eosId);
  if (context.committed < (params.minNewTokens ?? 0)) {
    for (const token of [eosId, ...stopTokenIdsOf(params)]) if (token < vocab) row[token] = -Infinity;
  }
  for (const [token, bias] of logitBiasEntries(params)) if (token < vocab) row[token] += bias;
  const repetition = params.repetitionPenalty ?? 1;
  if (repetition !== 1) {
    const seen = new Set([...context.prompt, ...context.outputCounts.keys()]);
    for (const token of seen) {
      if (token >= vocab) continue;
      row[token] = row[token] > 0 ? row[token] / repetition : row[token] * repetition;
    }
  }
  const frequency = params.frequencyPenalty ?? 0;
  const presence = params.presencePenalty ?? 0;
  if (frequency !== 0 || presence !== 0) {
    for (const [token, count] of context.outputCounts) {
      if (token >= vocab) continue;
      row[token] -= frequency * count + presence;
    }
  }
  return row;
}

export interface RowChoice {
  /** argmax (the lower id on a tie). */
  predict: number;
  /** top-1 minus top-2 (0 on an exact tie). */
  margin: number;
  topLogit: number;
}

/** Greedy choice over a processed row. */
export function choose(row: ArrayLike<number>): RowChoice {
  let predict = 0;
  let top1 = -Infinity;
  let top2 = -Infinity;
  for (let token = 0; token < row.length; token++) {
    const value = row[token];
    if (value > top1) {
      top2 = top1;
      top1 = value;
      predict = token;
    } else if (value > top2) top2 = value;
  }
  // One finite entry (a grammar allowing one token): the choice is forced; the margin stays finite for JSON.
  if (top2 === -Infinity && top1 > -Infinity) return { predict, margin: Number.MAX_VALUE, topLogit: top1 };
  return { predict, margin: top1 === top2 ? 0 : top1 - top2, topLogit: top1 };
}

/** log(sum(exp(row))) over the finite entries. */
export function logSumExp(row: ArrayLike<number>): number {
  let max = -Infinity;
  for (let i = 0; i < row.length; i++) if (row[i] > max) max = row[i];
  if (max === -Infinity) return -Infinity;
  let sum = 0;
  for (let i = 0; i < row.length; i++) sum += Math.exp(row[i] - max);
  return max + Math.log(sum);
}

/** Token ids of the k largest entries, descending, ties to the lower id. */
export function topTokens(row: ArrayLike<number>, k: number): number[] {
  // A selection, not a sort of the vocabulary: ids come in ascending order, so a value equal to a kept one
  // goes after it (the lower id first), and a new one enters before the first strictly smaller value.
  const best: number[] = [];
  for (let token = 0; token < row.length; token++) {
    const value = row[token];
    if (best.length === k && !(value > row[best[k - 1]])) continue;
    let at = best.length;
    while (at > 0 && value > row[best[at - 1]]) at--;
    best.splice(at, 0, token);
    if (best.length > k) best.pop();
  }
  return best;
}

/** The logprob entry of `token` in a processed row, with its `k` best alternatives. */
export function logprobEntry(row: ArrayLike<number>, token: number, k: number): LogprobEntry {
  const normalizer = logSumExp(row);
  return {
    token,
    logprob: row[token] - normalizer,
    // A masked token (-inf) is no alternative: JSON cannot carry its logprob either.
    top: topTokens(row, k)
      .filter((id) => row[id] > -Infinity)
      .map((id) => ({ token: id, logprob: row[id] - normalizer })),
  };
}
