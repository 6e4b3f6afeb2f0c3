// Prompt-lookup (n-gram) drafting, the draft kind "ngram" (vLLM's NgramProposer, llama.cpp's prompt lookup):
// no draft model, no draft KV. For n from NGRAM_MAX_N down to NGRAM_MIN_N, the latest earlier occurrence of
// the sequence's last n tokens (x_{L-n+1}..x_L, the pending bonus included) proposes the tokens that followed
// it, at most S of them and never past x_L. No match proposes nothing: a round verifies 0..S drafts per
// request, so verify blocks are ragged (each request's block is its own chain's length + 1).
import type { Request } from "../request.ts";
import { chainTree, type DraftTree } from "./verify.ts";
import { grammarPrefix } from "../grammar-draft.ts";

export const NGRAM_MAX_N = 3;
export const NGRAM_MIN_N = 1;

/** The drafts prompt lookup proposes after `tokens` (x_0..x_L): 0..numSteps tokens. Pure. */
export function proposeNgram(tokens: readonly number[], numSteps: number): number[] {
  const last = tokens.length - 1;
  for (let n = Math.min(NGRAM_MAX_N, tokens.length - 1); n >= NGRAM_MIN_N; n--) {
    // Occurrences start at i with i + n - 1 < last (ending before the suffix's own end), latest first.
    for (let start = last - n; start >= 0; start--) {
      let matches = true;
      for (let k = 0; k < n && matches; k++) matches = tokens[start + k] === tokens[last - n + 1 + k];
      if (!matches) continue;
      const from = start + n;
      return tokens.slice(from, Math.min(from + numSteps, last + 1));
    }
  }
  return [];
}

/** Each request's chain for this round, proposed from its verified tokens with `root` as x_L. */
export function proposeNgramTrees(
  requests: readonly Request[],
  numSteps: number,
  rootOf: (request: Request) => number,
  eosId: number,
): Map<number, DraftTree> {
  const trees = new Map<number, DraftTree>();
  for (const request of requests) {
    const root = rootOf(request);
    // The slot's history of x_0..x_{L-1} (slot-drafter.ts), then the root.
    const history = [...request.slotDrafter.historyOf(request.tokens, request.targetKvLength), root];
    // A chain of the proposed drafts after the root (the bonus token x_L, or its launch-time resolution).
    trees.set(
      request.id,
      chainTree(root, grammarPrefix(request, proposeNgram(history, request.draftSteps(numSteps)), eosId)),
    );
  }
  return trees;
}
