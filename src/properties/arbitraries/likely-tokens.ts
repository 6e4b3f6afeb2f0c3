// Tokens a preset's target actually emits: the most frequent of its greedy continuations of the preamble
// after a few start tokens, computed once per spec with the float64 TypeScript forward
// (src/model/reference-forward.ts). Small random targets fall into short cycles, so each of these turns up
// in about a third of short outputs (a uniform id: one in ten): stop ids and biases drawn among them reach
// the corners (a stop inside an accepted run, a bias moving the argmax) that uniform ids rarely do.
import { buildTarget } from "../../model/build.ts";
import { embed, matmul, rmsNorm, runLayers, type PrefixKv } from "../../model/reference-forward.ts";
import type { ModelSpec } from "../../model/spec.ts";
import type { TargetWeights } from "../../model/weights.ts";
import { layerWindows } from "../../model/window.ts";
import { recurrentWidth } from "../../model/mamba2.ts";

const CONTINUATION = 6;
/** Prompt suffixes continued (after the preamble): several starts find the tokens most outputs share. */
const STARTS = [[], [3], [4], [7], [10], [11, 12], [20], [25], [30], [40]];
/** Few and frequent: each of them turns up in about a third of short outputs. */
const KEEP = 4;
const memo = new Map<string, readonly number[]>();

/**
 * The greedy continuation of `sequence` by `steps` tokens, decoded incrementally: each step runs the new
 * row against the earlier rows' K/V. Every row of the reference forward is computed on its own (causal
 * attention over the rows before it, in order), so this gives the bits of a full forward per step.
 */
export function greedyContinuation(
  spec: ModelSpec,
  weights: TargetWeights,
  sequence: readonly number[],
  steps: number,
): number[] {
  const tokens = [...sequence];
  const kv: PrefixKv = { keys: [], values: [], length: 0 };
  let rows: readonly number[] = [...sequence];
  // Hybrid models: the recurrent state carried from step to step as the K/V are.
  const recurrentState = new Float64Array(recurrentWidth(spec));
  for (let step = 0; step < steps; step++) {
    const positions = rows.map((_, i) => kv.length + i);
    const stack = runLayers(
      spec,
      weights.layers,
      embed(spec, weights, rows),
      positions,
      kv.length > 0 ? kv : undefined,
      undefined,
      layerWindows(spec),
      recurrentState,
    );
    const last = stack.residual.subarray((rows.length - 1) * spec.hidden);
    const logits = matmul(
      rmsNorm(last, 1, spec.hidden, weights.finalNorm, spec.rmsEps),
      1,
      spec.hidden,
      weights.lmHead,
      spec.vocab,
    );
    let best = 0;
    for (let token = 1; token < spec.vocab; token++) if (logits[token] > logits[best]) best = token;
    tokens.push(best);
    // The new rows' K/V join the prefix the next step attends.
    stack.keys.forEach((keys, layer) => (kv.keys[layer] = concat(kv.keys[layer], keys)));
    stack.values.forEach((values, layer) => (kv.values[layer] = concat(kv.values[layer], values)));
    kv.length += rows.length;
    rows = [best];
  }
  return tokens.slice(sequence.length);
}

function concat(a: Float64Array | undefined, b: Float64Array): Float64Array {
  if (!a) return b;
  const out = new Float64Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** The most frequent tokens of the greedy continuations, most frequent first (BOS and EOS left out). Pure. */
export function likelyTokens(spec: ModelSpec): readonly number[] {
  const key = JSON.stringify(spec);
  let tokens = memo.get(key);
  if (!tokens) {
    const weights = buildTarget(spec).weights;
    const counts = new Map<number, number>();
    for (const start of STARTS) {
      // Start tokens past a small vocabulary wrap (prompts are drawn modulo the vocabulary too).
      const sequence = [...spec.preamble, ...start.map((token) => token % spec.vocab)];
      for (const best of greedyContinuation(spec, weights, sequence, CONTINUATION))
        if (best !== spec.bosId && best !== spec.eosId) counts.set(best, (counts.get(best) ?? 0) + 1);
    }
    tokens = [...counts.entries()]
      .sort((a, b) => b[1] - a[1] || a[0] - b[0])
      .slice(0, KEEP)
      .map(([token]) => token);
    memo.set(key, tokens);
  }
  return tokens;
}
