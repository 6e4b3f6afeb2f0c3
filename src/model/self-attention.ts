// Attention that attends only the row itself, exactly, in float32 (the EAGLE-3 oracle's, eagle3-oracle.ts): every
// query and key is the same constant vector A * (1, 0) in one RoPE pair, so after RoPE the score of query position
// m against key position n is A^2 * f^2 * cos((m - n) * theta) / sqrt(headDim) (f: YaRN's attention factor, 1
// otherwise): largest on the diagonal, and with A large enough every other attended position scores at least
// SELF_ATTENTION_GAP below it. exp(-SELF_ATTENTION_GAP) is 0 in float32 (its smallest subnormal is e^-103.3), so a
// max-shifted softmax (ONNX Runtime's Attention, llama.cpp's soft_max_ext) gives the diagonal weight 1 and every other
// column 0: the row's own value, whatever the other rows hold. float64 keeps e^-400 ~ 1e-174 of the others' values.
import { ropeFrequencies } from "./rope-scaling.ts";
import type { ModelSpec } from "./spec.ts";

/** How far below the diagonal every other attended score sits (float32's exp underflows to 0 from ~-104). */
export const SELF_ATTENTION_GAP = 400;

export interface SelfAttentionPair {
  /** The rotary pair (dims pair and pair + headDim / 2 in HF's rotate-half layout). */
  pair: number;
  /** The constant query and key magnitude A. */
  scale: number;
  /** The smallest 1 - cos(distance * theta) over distances 1 .. maxPositions - 1 (what A is sized against). */
  minGap: number;
}

/** The rotary pair whose frequency keeps every distance below maxPositions farthest from a full turn, and A for it. */
export function selfAttentionPair(spec: ModelSpec): SelfAttentionPair {
  const { invFreq, attentionFactor } = ropeFrequencies(spec);
  let best = { pair: 0, minGap: -1 };
  invFreq.forEach((theta, pair) => {
    let minGap = Infinity;
    for (let distance = 1; distance < spec.maxPositions; distance++)
      minGap = Math.min(minGap, 1 - Math.cos(distance * theta));
    if (minGap > best.minGap) best = { pair, minGap };
  });
  if (!(best.minGap > 1e-9)) throw new Error(`no RoPE pair separates the ${spec.maxPositions} positions`);
  const scale = Math.sqrt((SELF_ATTENTION_GAP * Math.sqrt(spec.headDim)) / (best.minGap * attentionFactor ** 2));
  return { ...best, scale };
}
