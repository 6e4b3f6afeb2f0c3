// A handful of named model specs. Property runs draw from these so sessions are built once and cached.
import type { Dtype, ModelSpec } from "./spec.ts";

function preset(name: string, overrides: Partial<ModelSpec>): ModelSpec {
  return {
    name,
    vocab: 64,
    hidden: 32,
    layers: 2,
    heads: 4,
    kvHeads: 2,
    headDim: 8,
    intermediate: 64,
    ropeTheta: 10000,
    maxPositions: 256,
    dtype: "float32",
    seed: 1,
    bosId: 1,
    eosId: 2,
    preamble: [1, 5, 9, 13, 17],
    rmsEps: 1e-5,
    logitStd: 4,
    ...overrides,
  };
}

export const PRESETS: Record<string, ModelSpec> = {
  /** The default: small enough for thousands of property runs on 2 cores. */
  tiny: preset("tiny", {}),
  "tiny-f64": preset("tiny-f64", { dtype: "float64" }),
  /** Multi-head attention (kvHeads = heads) and a larger vocab. */
  "small-mha": preset("small-mha", {
    vocab: 256,
    hidden: 64,
    heads: 4,
    kvHeads: 4,
    headDim: 16,
    intermediate: 128,
    seed: 7,
  }),
  /** Deeper, grouped-query (8 heads over 2 KV heads); the EOS id is likely to be emitted. */
  "small-gqa": preset("small-gqa", {
    vocab: 48,
    hidden: 64,
    layers: 3,
    heads: 8,
    kvHeads: 2,
    headDim: 8,
    intermediate: 96,
    seed: 11,
  }),
  /**
   * The 2026 families, gpt-oss style: sliding-window attention on layer 0 only (gpt-oss alternates windowed and
   * full layers), a window of 4 positions so generated prompts (a 5-token preamble and more) cross it in their
   * first rows, and YaRN-scaled RoPE (factor 4 over an original context of 16 positions).
   */
  swa: preset("swa", {
    seed: 13,
    slidingWindow: { size: 4, layers: [0] },
    ropeScaling: { type: "yarn", factor: 4, originalMaxPositions: 16 },
  }),
  /** Every layer windowed (3 positions), float64, 3 layers, linearly scaled RoPE (factor 2). */
  "swa-f64": preset("swa-f64", {
    dtype: "float64",
    layers: 3,
    seed: 17,
    slidingWindow: { size: 3, layers: [0, 1, 2] },
    ropeScaling: { type: "linear", factor: 2 },
  }),
  /**
   * Hybrid (Bamba / Granite 4 style): Mamba2 blocks on layers 0 and 2 around an attention layer, 4 heads of 8
   * (inner width = hidden), a state of 4 and the conv kernel of 4 every Mamba2 checkpoint uses.
   */
  hybrid: preset("hybrid", {
    layers: 3,
    seed: 19,
    recurrent: { layers: [0, 2], heads: 4, headDim: 8, stateSize: 4, convKernel: 4 },
  }),
  /** float64, 2 layers: a Mamba2 block (8 heads of 4, state 8) then attention. */
  "hybrid-f64": preset("hybrid-f64", {
    dtype: "float64",
    seed: 23,
    recurrent: { layers: [0], heads: 8, headDim: 4, stateSize: 8, convKernel: 4 },
  }),
  /**
   * The bigram family (model/bigram.ts), the EAGLE-3 oracle's target: hidden >= vocab + 1 (a one-hot embedding),
   * kvHeads * headDim >= vocab (the oracle's value channels), grouped-query; seed 18: every token's successor has a
   * margin >= 0.085 (no ties), and 8 of the 45 prompt tokens lead to EOS within a few tokens.
   */
  bigram: preset("bigram", {
    vocab: 48,
    hidden: 64,
    layers: 3,
    heads: 4,
    kvHeads: 2,
    headDim: 32,
    intermediate: 96,
    seed: 18,
    bigram: true,
  }),
  /** A model whose forward takes >= 1 ms on 2 cores: the engine-overhead benchmark runs on it. */
  medium: preset("medium", {
    vocab: 2048,
    hidden: 256,
    layers: 4,
    heads: 8,
    kvHeads: 4,
    headDim: 32,
    intermediate: 768,
    maxPositions: 512,
    seed: 3,
  }),
  /**
   * The GPU benchmark's model (~170M parameters, 680 MB in float32): deeper layers contribute a tenth of
   * their residual, so the truncated mirror (its first layer) is a cheap draft that is often right.
   */
  large: preset("large", {
    vocab: 32000,
    hidden: 1024,
    layers: 8,
    heads: 16,
    kvHeads: 8,
    headDim: 64,
    intermediate: 2816,
    maxPositions: 1024,
    seed: 5,
    residualScale: { fromLayer: 1, factor: 0.1 },
  }),
};

export const DEFAULT_PRESET = "tiny";

export function presetNames(): string[] {
  return Object.keys(PRESETS);
}

export function getPreset(name: string, dtype?: Dtype): ModelSpec {
  const spec = PRESETS[name];
  if (!spec) throw new Error(`unknown model preset '${name}' (known: ${presetNames().join(", ")})`);
  const copy = { ...spec, preamble: [...spec.preamble] };
  if (spec.slidingWindow) copy.slidingWindow = { ...spec.slidingWindow, layers: [...spec.slidingWindow.layers] };
  if (spec.ropeScaling) copy.ropeScaling = { ...spec.ropeScaling };
  if (spec.recurrent) copy.recurrent = { ...spec.recurrent, layers: [...spec.recurrent.layers] };
  return dtype ? { ...copy, dtype } : copy;
}
