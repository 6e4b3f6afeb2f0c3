// Top-K tokens of a forward's row with their log-softmax, read from the graph's TopK outputs (ties to
// the lower token id) and its log-softmax normalizer: no scan of the vocabulary in JavaScript.
import type { ForwardResult } from "../runtime/ort.ts";
import type { TraceRow } from "../trace/schema.ts";
import { mapPacked } from "../trace/records.ts";

export interface TopK {
  tokens: number[];
  logprobs: number[];
  /** The k-th best minus the (k+1)-th best logit, when the graph returned more than k (recorded as childMargin). */
  cutMargin?: number;
}

export interface RowTop {
  /** argmax (the lower id on a tie). */
  predict: number;
  /** top-1 minus top-2 logit (0 on an exact tie). */
  margin: number;
  /** the logit of predict. */
  topLogit: number;
}

export function rowTop(result: ForwardResult, row: number): RowTop {
  const base = row * result.topK;
  const top1 = result.topValues[base];
  const top2 = result.topK > 1 ? result.topValues[base + 1] : -Infinity;
  return { predict: Number(result.topIndices[base]), margin: top1 === top2 ? 0 : top1 - top2, topLogit: top1 };
}

export function topKLogSoftmax(result: ForwardResult, row: number, k: number): TopK {
  if (k > result.topK) throw new Error(`topk ${k} exceeds the ${result.topK} candidates the graph returns`);
  const base = row * result.topK;
  const tokens: number[] = [];
  const logprobs: number[] = [];
  for (let i = 0; i < k; i++) {
    tokens.push(Number(result.topIndices[base + i]));
    logprobs.push(result.topValues[base + i] - result.logNormalizer[row]);
  }
  if (k < result.topK)
    return { tokens, logprobs, cutMargin: result.topValues[base + k - 1] - result.topValues[base + k] };
  return { tokens, logprobs };
}

/**
 * The trace fields of a row expanded into draft candidates: its children numbered from `firstNumber`
 * in creation order, each with its cumulative score (the parent's score plus its log-softmax), and the
 * margin at the topk cut. Read from the same expansion the drafter uses, never recomputed.
 */
export function childrenFields(
  expansion: TopK,
  firstNumber: number,
  parentScore: number,
): Pick<TraceRow, "children" | "childMargin"> {
  return {
    children: mapPacked(expansion.tokens, (token, i) => ({
      number: firstNumber + i,
      token,
      score: parentScore + expansion.logprobs[i],
    })),
    ...(expansion.cutMargin !== undefined ? { childMargin: expansion.cutMargin } : {}),
  };
}
