// Scaled RoPE (spec.ropeScaling), as Hugging Face transformers computes it (modeling_rope_utils.py:
// _compute_linear_scaling_rope_parameters, _compute_yarn_parameters): each rotary pair's inverse frequency, and
// the attention factor YaRN multiplies cos and sin by. One function serves the graphs (rope-graph.ts) and the
// TypeScript reference, so a model's RoPE is defined once; a draft built without the target's scaling
// (the draft-rope-unscaled fault) rotates with other frequencies.
import type { ModelSpec } from "./spec.ts";

export type RopeScaling =
  /** Position interpolation: every frequency divided by `factor`. */
  | { type: "linear"; factor: number }
  /**
   * YaRN: frequencies that rotate fewer than betaSlow times over the original context are interpolated (divided by
   * `factor`), those rotating more than betaFast times kept, a linear ramp between; cos and sin scaled by
   * 0.1 ln(factor) + 1.
   */
  | { type: "yarn"; factor: number; originalMaxPositions: number; betaFast?: number; betaSlow?: number };

export interface RopeFrequencies {
  /** [headDim / 2]: pair i rotates by position * invFreq[i]. */
  invFreq: number[];
  /** cos and sin are multiplied by it (YaRN's mscale; 1 otherwise). */
  attentionFactor: number;
}

/** YaRN's defaults (transformers' beta_fast, beta_slow). */
export const YARN_BETA_FAST = 32;
export const YARN_BETA_SLOW = 1;

/** The pair index at which a frequency completes `rotations` turns over `maxPositions` (YaRN's correction dim). */
function correctionDim(rotations: number, headDim: number, base: number, maxPositions: number): number {
  return (headDim * Math.log(maxPositions / (rotations * 2 * Math.PI))) / (2 * Math.log(base));
}

export function ropeFrequencies(spec: Pick<ModelSpec, "headDim" | "ropeTheta" | "ropeScaling">): RopeFrequencies {
  const { headDim, ropeTheta } = spec;
  const half = headDim / 2;
  // Math.pow per pair, as the unscaled tables always computed it (their bytes stay the same).
  const base = Array.from({ length: half }, (_, i) => Math.pow(ropeTheta, (-2 * i) / headDim));
  const scaling = spec.ropeScaling;
  if (!scaling) return { invFreq: base, attentionFactor: 1 };
  if (scaling.type === "linear") return { invFreq: base.map((freq) => freq / scaling.factor), attentionFactor: 1 };
  const betaFast = scaling.betaFast ?? YARN_BETA_FAST;
  const betaSlow = scaling.betaSlow ?? YARN_BETA_SLOW;
  const low = Math.max(Math.floor(correctionDim(betaFast, headDim, ropeTheta, scaling.originalMaxPositions)), 0);
  let high = Math.min(
    Math.ceil(correctionDim(betaSlow, headDim, ropeTheta, scaling.originalMaxPositions)),
    headDim - 1,
  );
  if (low === high) high += 0.001; // transformers' guard against a zero-width ramp
  const invFreq = base.map((freq, i) => {
    const ramp = Math.min(1, Math.max(0, (i - low) / (high - low)));
    const extrapolation = 1 - ramp; // 1: the frequency kept, 0: interpolated
    return (freq / scaling.factor) * (1 - extrapolation) + freq * extrapolation;
  });
  const attentionFactor = scaling.factor > 1 ? 0.1 * Math.log(scaling.factor) + 1 : 1;
  return { invFreq, attentionFactor };
}

/** Throws (via `fail(field, reason)`) on scaling parameters transformers would refuse. */
export function checkRopeScaling(scaling: RopeScaling, fail: (field: string, reason: string) => never): void {
  if (scaling.type !== "linear" && scaling.type !== "yarn") fail("ropeScaling/type", "must be linear or yarn");
  if (!(typeof scaling.factor === "number" && scaling.factor >= 1 && Number.isFinite(scaling.factor)))
    fail("ropeScaling/factor", `must be a number >= 1, got ${JSON.stringify(scaling.factor)}`);
  if (scaling.type === "yarn") {
    if (!Number.isInteger(scaling.originalMaxPositions) || scaling.originalMaxPositions < 1)
      fail("ropeScaling/originalMaxPositions", "must be an integer >= 1");
    const fast = scaling.betaFast ?? YARN_BETA_FAST;
    const slow = scaling.betaSlow ?? YARN_BETA_SLOW;
    if (!(slow > 0 && fast > slow)) fail("ropeScaling/betaFast", `must exceed betaSlow (> 0), got ${fast} and ${slow}`);
  }
}
