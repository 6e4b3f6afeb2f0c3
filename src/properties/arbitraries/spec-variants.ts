// Model spec variants (issue 34, item 7: no blind spot by construction): the spec fields a law reads that every
// preset holds at one value (RMSNorm's epsilon, the RoPE base, the BOS and EOS ids, Mamba2's conv kernel, YaRN's
// original context), each drawn from the preset's own value and a few others an engine meets in checkpoints
// (Llama 2's rms_norm_eps 1e-5 / 1e-6, Llama 3's rope_theta 500000, Qwen's 1e6, d_conv 4 / 3 / 2, ...). A case
// with a variant carries its full spec (`model: { spec }`, the case format's inline model), so an engine that
// hard-codes one of these values computes another model than the one it is given. Drawn by the spaces that ask
// (CaseSpace.specVariants) only, so the other spaces (and the checked-in kills replaying them) draw as they did.
// Each field's first value is null, the preset's own: shrinking goes to the unmodified preset.
import fc from "fast-check";
import type { ModelSpec } from "../../model/spec.ts";

/** The BOS and EOS ids a variant moves the control tokens to (the presets' are 1 and 2). */
export interface ControlIds {
  bosId: number;
  eosId: number;
}

/** One draw: null keeps the preset's value. */
export interface SpecVariantDraw {
  rmsEps: number | null;
  ropeTheta: number | null;
  controls: ControlIds | null;
  /** Hybrid presets only (spec.recurrent). */
  convKernel: number | null;
  /** YaRN presets only (spec.ropeScaling.type yarn). */
  originalMaxPositions: number | null;
}

/**
 * 1e-6 (Llama 2's and Qwen's rms_norm_eps), 1e-4 and 0.1. Measured on the presets' targets (24 positions, against
 * the presets' 1e-5): 1e-6 moves logits by ~1.5e-4 and 1e-4 by ~1.5e-3, which logprob parity sees (tolerance
 * 1e-4 in float32, 1e-9 in float64); 0.1, on the scale of the normalized rows' mean square, moves them by ~1.4
 * and flips 1 to 11 greedy tokens in 24, which the token laws see.
 */
const RMS_EPS = [1e-6, 1e-4, 0.1];
/** Llama 3's 500000 and Qwen's 1e6: against 10000, logits move by 0.4 to 4.4 (2 to 5 greedy flips in 24). */
const ROPE_THETA = [500000, 1e6];
/**
 * BOS 3 and EOS 6 (above the presets' ids; the preamble's other tokens, 5 9 13 17, stay normal tokens), and EOS 0
 * below BOS 7 (an id an engine may test as falsy, and an EOS below BOS). The presets' 1 and 2 become normal tokens.
 */
const CONTROLS: ControlIds[] = [
  { bosId: 3, eosId: 6 },
  { bosId: 7, eosId: 0 },
];
/** Mamba2's d_conv: 4 in every checkpoint the presets follow; 3 and 2 (the smallest kernel model/mamba2.ts takes). */
const CONV_KERNELS = [3, 2];
/**
 * YaRN's original context: 64 and 256. With the swa preset's 4 rotary pairs the ramp moves in steps: 24, 32 and 48
 * give 16's frequencies exactly (measured: pair 1 at 0.025 for 16 to 48, 0.0625 from 64 on at base 10000; at base
 * 500000 only 256 moves it), so smaller values would vary the field without varying the model. Logits move by up
 * to 2.1 (2 greedy flips in 40 positions).
 */
const ORIGINAL_MAX_POSITIONS = [64, 256];

const keepOr = <T>(values: readonly T[]): fc.Arbitrary<T | null> => fc.constantFrom<T | null>(null, ...values);

export const specVariantArbitrary: fc.Arbitrary<SpecVariantDraw> = fc.record({
  rmsEps: keepOr(RMS_EPS),
  ropeTheta: keepOr(ROPE_THETA),
  controls: keepOr(CONTROLS),
  convKernel: keepOr(CONV_KERNELS),
  originalMaxPositions: keepOr(ORIGINAL_MAX_POSITIONS),
});

/** The preset's spec with the draw's values (the same spec when the draw keeps every value the preset has). */
export function specVariant(preset: ModelSpec, draw: SpecVariantDraw): ModelSpec {
  const spec: ModelSpec = { ...preset, preamble: [...preset.preamble] };
  if (draw.rmsEps !== null) spec.rmsEps = draw.rmsEps;
  if (draw.ropeTheta !== null) spec.ropeTheta = draw.ropeTheta;
  if (draw.controls !== null) {
    spec.bosId = draw.controls.bosId;
    spec.eosId = draw.controls.eosId;
    // The preamble starts with BOS (model/spec.ts); its other tokens must not be a control token.
    spec.preamble = [spec.bosId, ...preset.preamble.slice(1)];
    if (spec.preamble.slice(1).some((token) => token === spec.bosId || token === spec.eosId))
      throw new Error(`spec variant: the preamble of ${preset.name} holds a moved control id`);
  }
  if (draw.convKernel !== null && preset.recurrent)
    spec.recurrent = { ...preset.recurrent, layers: [...preset.recurrent.layers], convKernel: draw.convKernel };
  if (draw.originalMaxPositions !== null && preset.ropeScaling?.type === "yarn")
    spec.ropeScaling = { ...preset.ropeScaling, originalMaxPositions: draw.originalMaxPositions };
  if (preset.slidingWindow) spec.slidingWindow = { ...preset.slidingWindow, layers: [...preset.slidingWindow.layers] };
  return spec;
}

/** Whether a spec differs from its preset in a field a variant draws (else the case names the preset). */
export function isVariant(preset: ModelSpec, spec: ModelSpec): boolean {
  return JSON.stringify(preset) !== JSON.stringify(spec);
}
