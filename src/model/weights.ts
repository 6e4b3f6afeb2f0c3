// Seeded weights for the target, the EAGLE head and the mirror variants.
// Values are stored as float64; for float32 specs they are rounded to float32 at generation, so the
// ONNX graph and the float64 TypeScript forward use bit-identical weights.
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";
import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";
import type { RandomGenerator } from "pure-rand/types/RandomGenerator";
import { type DraftSpec, type ModelSpec } from "./spec.ts";

/** Matrices are row-major [in, out]: y = x W. */
export interface LayerWeights {
  /** Absent in the EAGLE head's decoder layer (it has no input RMSNorm). */
  attnNorm?: Float64Array;
  wq: Float64Array;
  wk: Float64Array;
  wv: Float64Array;
  wo: Float64Array;
  mlpNorm: Float64Array;
  wGate: Float64Array;
  wUp: Float64Array;
  wDown: Float64Array;
}

export interface TargetWeights {
  embed: Float64Array; // [vocab, hidden]
  layers: LayerWeights[];
  finalNorm: Float64Array; // [hidden]
  lmHead: Float64Array; // [hidden, vocab]
}

export interface EagleWeights {
  fc: Float64Array; // [2 * hidden, hidden] over concat(embedding, target hidden)
  fcBias: Float64Array; // [hidden]
  layer: LayerWeights; // no attnNorm
}

export class Gaussian {
  private readonly rng: RandomGenerator;
  private spare: number | undefined;

  constructor(seed: number) {
    this.rng = xoroshiro128plus(seed | 0);
  }

  /** Box-Muller; the second variate of each pair is kept for the next call. */
  next(): number {
    if (this.spare !== undefined) {
      const value = this.spare;
      this.spare = undefined;
      return value;
    }
    const u1 = 1 - uniformFloat64(this.rng); // (0, 1]
    const u2 = uniformFloat64(this.rng);
    const radius = Math.sqrt(-2 * Math.log(u1));
    this.spare = radius * Math.sin(2 * Math.PI * u2);
    return radius * Math.cos(2 * Math.PI * u2);
  }

  fill(count: number, std: number, mean = 0): Float64Array {
    const out = new Float64Array(count);
    for (let i = 0; i < count; i++) out[i] = mean + std * this.next();
    return out;
  }
}

function roundTo(dtype: ModelSpec["dtype"], values: Float64Array): Float64Array {
  if (dtype === "float32") for (let i = 0; i < values.length; i++) values[i] = Math.fround(values[i]);
  return values;
}

function generateLayer(spec: ModelSpec, gauss: Gaussian, withInputNorm: boolean): LayerWeights {
  const { hidden, heads, kvHeads, headDim, intermediate, dtype } = spec;
  const qDim = heads * headDim;
  const kvDimension = kvHeads * headDim;
  const r = (v: Float64Array) => roundTo(dtype, v);
  return {
    attnNorm: withInputNorm ? r(gauss.fill(hidden, 0.1, 1)) : undefined,
    wq: r(gauss.fill(hidden * qDim, 1 / Math.sqrt(hidden))),
    wk: r(gauss.fill(hidden * kvDimension, 1 / Math.sqrt(hidden))),
    wv: r(gauss.fill(hidden * kvDimension, 1 / Math.sqrt(hidden))),
    wo: r(gauss.fill(qDim * hidden, 1 / Math.sqrt(qDim))),
    mlpNorm: r(gauss.fill(hidden, 0.1, 1)),
    wGate: r(gauss.fill(hidden * intermediate, 1 / Math.sqrt(hidden))),
    wUp: r(gauss.fill(hidden * intermediate, 1 / Math.sqrt(hidden))),
    wDown: r(gauss.fill(intermediate * hidden, 1 / Math.sqrt(intermediate))),
  };
}

export function generateTargetWeights(spec: ModelSpec): TargetWeights {
  const gauss = new Gaussian(spec.seed);
  const r = (v: Float64Array) => roundTo(spec.dtype, v);
  const embed = r(gauss.fill(spec.vocab * spec.hidden, 1));
  const layers = Array.from({ length: spec.layers }, () => generateLayer(spec, gauss, true));
  const scale = spec.residualScale;
  if (scale) {
    for (const layer of layers.slice(scale.fromLayer)) {
      for (const matrix of [layer.wo, layer.wDown])
        for (let i = 0; i < matrix.length; i++)
          matrix[i] = spec.dtype === "float32" ? Math.fround(matrix[i] * scale.factor) : matrix[i] * scale.factor;
    }
  }
  const finalNorm = r(gauss.fill(spec.hidden, 0.1, 1));
  // The final-normed hidden has unit RMS, so this std gives logits of std logitStd.
  const lmHead = r(gauss.fill(spec.hidden * spec.vocab, spec.logitStd / Math.sqrt(spec.hidden)));
  return { embed, layers, finalNorm, lmHead };
}

export function generateEagleWeights(spec: ModelSpec, draft: DraftSpec): EagleWeights {
  const gauss = new Gaussian(draft.seed * 7919 + 17);
  const r = (v: Float64Array) => roundTo(spec.dtype, v);
  const fc = r(gauss.fill(2 * spec.hidden * spec.hidden, 1 / Math.sqrt(2 * spec.hidden)));
  const fcBias = r(gauss.fill(spec.hidden, 0.02));
  return { fc, fcBias, layer: generateLayer(spec, gauss, false) };
}

/** The noisy mirror's weights: every matrix of the target perturbed by (1 + alpha * N(0, 1)). */
export function perturbTargetWeights(spec: ModelSpec, weights: TargetWeights, draft: DraftSpec): TargetWeights {
  const gauss = new Gaussian(draft.seed * 104729 + 3);
  const perturb = (values: Float64Array | undefined): Float64Array | undefined =>
    values &&
    roundTo(
      spec.dtype,
      values.map((v) => v * (1 + draft.noiseAlpha * gauss.next())),
    );
  return {
    embed: weights.embed,
    layers: weights.layers.map((layer) => ({
      attnNorm: layer.attnNorm,
      wq: perturb(layer.wq)!,
      wk: perturb(layer.wk)!,
      wv: perturb(layer.wv)!,
      wo: perturb(layer.wo)!,
      mlpNorm: layer.mlpNorm,
      wGate: perturb(layer.wGate)!,
      wUp: perturb(layer.wUp)!,
      wDown: perturb(layer.wDown)!,
    })),
    finalNorm: weights.finalNorm,
    lmHead: weights.lmHead,
  };
}

/** The tapped mirror's tap vector w: the tap adds delta * (w . hidden) to every logit (see graphs.ts for why). */
export function generateTapVector(spec: ModelSpec, draft: DraftSpec): Float64Array {
  const gauss = new Gaussian(draft.seed * 31337 + 5);
  return roundTo(spec.dtype, gauss.fill(spec.hidden, 1 / Math.sqrt(spec.hidden)));
}
