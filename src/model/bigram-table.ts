// A bigram target's next-token table (model/bigram.ts): with every attention output zero, token t's residual
// streams and logits are the same at every position, so one float64 forward of t alone gives its greedy successor,
// the successor's margin and the auxiliary states an EAGLE-3 head reads at any position holding t.
import { referenceTarget } from "./reference-forward.ts";
import type { ModelSpec } from "./spec.ts";
import type { TargetWeights } from "./weights.ts";

/** Each token's greedy successor (ties to the lower id) and its top-1 margin, in target logit units. */
export interface BigramTable {
  next: Int32Array;
  margin: Float64Array;
  /** streams[k][t]: token t's residual stream k (the input of layer k; k = layers: the last layer's output). */
  streams: Float64Array[][];
}

/** The table, from the float64 forward of each token alone (position 0: with no attention output, any position). */
export function bigramTable(spec: ModelSpec, weights: TargetWeights): BigramTable {
  const next = new Int32Array(spec.vocab);
  const margin = new Float64Array(spec.vocab);
  const streams: Float64Array[][] = Array.from({ length: spec.layers + 1 }, () => []);
  for (let token = 0; token < spec.vocab; token++) {
    const out = referenceTarget(spec, weights, [token]);
    let best = 0;
    for (let id = 1; id < spec.vocab; id++) if (out.logits[id] > out.logits[best]) best = id;
    let second = -Infinity;
    for (let id = 0; id < spec.vocab; id++) if (id !== best) second = Math.max(second, out.logits[id]);
    next[token] = best;
    margin[token] = out.logits[best] - second;
    out.streams.forEach((stream, k) => streams[k].push(stream));
  }
  return { next, margin, streams };
}
