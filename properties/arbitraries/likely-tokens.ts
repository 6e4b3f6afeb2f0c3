// Tokens a preset's target actually emits: the most frequent of its greedy continuations of the preamble
// after a few start tokens, computed once per spec with the float64 TypeScript forward
// (src/model/reference-forward.ts). Small random targets fall into short cycles, so each of these turns up
// in about a third of short outputs (a uniform id: one in ten): stop ids and biases drawn among them reach
// the corners (a stop inside an accepted run, a bias moving the argmax) that uniform ids rarely do.
import { referenceTarget } from "../../src/model/reference-forward.ts";
import type { ModelSpec } from "../../src/model/spec.ts";
import { generateTargetWeights } from "../../src/model/weights.ts";

const CONTINUATION = 6;
/** Prompt suffixes continued (after the preamble): several starts find the tokens most outputs share. */
const STARTS = [[], [3], [4], [7], [10], [11, 12], [20], [25], [30], [40]];
/** Few and frequent: each of them turns up in about a third of short outputs. */
const KEEP = 4;
const memo = new Map<string, readonly number[]>();

/** The most frequent tokens of the greedy continuations, most frequent first (BOS and EOS left out). Pure. */
export function likelyTokens(spec: ModelSpec): readonly number[] {
  const key = JSON.stringify(spec);
  let tokens = memo.get(key);
  if (!tokens) {
    const weights = generateTargetWeights(spec);
    const counts = new Map<number, number>();
    for (const start of STARTS) {
      // Start tokens past a small vocabulary wrap (prompts are drawn modulo the vocabulary too).
      const sequence = [...spec.preamble, ...start.map((token) => token % spec.vocab)];
      for (let step = 0; step < CONTINUATION; step++) {
        const logits = referenceTarget(spec, weights, sequence).logits;
        const last = logits.subarray((sequence.length - 1) * spec.vocab);
        let best = 0;
        for (let token = 1; token < spec.vocab; token++) if (last[token] > last[best]) best = token;
        sequence.push(best);
        if (best !== spec.bosId && best !== spec.eosId) counts.set(best, (counts.get(best) ?? 0) + 1);
      }
    }
    tokens = [...counts.entries()]
      .sort((a, b) => b[1] - a[1] || a[0] - b[0])
      .slice(0, KEEP)
      .map(([token]) => token);
    memo.set(key, tokens);
  }
  return tokens;
}
