// Seeded weights for the target, the EAGLE head and the mirror variants.
// Values are stored as float64; for float32 specs they are rounded to float32 at generation, so the
// ONNX graph and the float64 TypeScript forward use bit-identical weights.
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";
import { generateMambaWeights, isRecurrentLayer, type MambaWeights } from "./mamba2.ts";
import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";
import { uniformInt } from "pure-rand/distribution/uniformInt";
import type { RandomGenerator } from "pure-rand/types/RandomGenerator";
import { eagle3Options, type DraftSpec, type ModelSpec } from "./spec.ts";
import { applyBigram } from "./bigram.ts";

/** Matrices are row-major [in, out]: y = x W. */
export interface LayerWeights {
  /** Absent in the EAGLE head's decoder layer (it has no input RMSNorm). */
  attnNorm?: Float64Array;
  /**
   * EAGLE-3's decoder layer (midlayer): attention reads concat(input_layernorm(embedding), hidden_norm(hidden))
   * [2 * hidden], so wq/wk/wv are [2 * hidden, *]; the residual is the hidden input itself.
   */
  embedNorm?: Float64Array;
  hiddenNorm?: Float64Array;
  wq: Float64Array;
  wk: Float64Array;
  wv: Float64Array;
  wo: Float64Array;
  mlpNorm: Float64Array;
  wGate: Float64Array;
  wUp: Float64Array;
  wDown: Float64Array;
  /** Hybrid models: this layer mixes with a Mamba2 block instead of attention (its wq..wo unused). */
  mamba?: MambaWeights;
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

/**
 * The EAGLE-3 input path and vocabulary, shared by the head and the EAGLE-3 mirror: fc (no bias) over the
 * concatenated auxiliary states [auxLayers * hidden], optionally after one RMSNorm over that concatenation
 * (norm_before_fc), and the draft vocabulary: draft id d is target id d + d2t[d] (d2t holds offsets, as
 * checkpoints store it); t2d marks the target ids the draft vocabulary holds.
 */
export interface Eagle3Input {
  fc: Float64Array; // [auxLayers * hidden, hidden]
  inputNorm?: Float64Array; // [auxLayers * hidden]
  d2t: Int32Array; // [draftVocab]: offsets
  t2d: Uint8Array; // [vocab]: 1 where the draft vocabulary holds the target id
}

/** The EAGLE-3 head: its input path, one decoder layer (midlayer), its own final norm and LM head over the draft vocabulary. */
export interface Eagle3Weights extends Eagle3Input {
  layer: LayerWeights; // embedNorm and hiddenNorm, no attnNorm; wq/wk/wv over 2 * hidden
  norm: Float64Array; // [hidden]
  lmHead: Float64Array; // [hidden, draftVocab]
}

/** The EAGLE-3 mirror: the mirror stack, its LM head's columns permuted into draft order, a tap over the fc path. */
export interface Eagle3MirrorWeights extends Eagle3Input {
  tap: Float64Array; // [hidden]
  lmHead: Float64Array; // [hidden, vocab]: column d is the target's column d + d2t[d]
}

/** Target id of each draft id: d + d2t[d]. */
export function draftToTarget(d2t: Int32Array): Int32Array {
  return d2t.map((offset, draftId) => draftId + offset);
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
  if (spec.recurrent) {
    // A stream of their own: the attention weights of every other family keep their values.
    const mambaGauss = new Gaussian(spec.seed * 7907 + 101);
    layers.forEach((layer, l) => {
      if (isRecurrentLayer(spec, l)) layer.mamba = generateMambaWeights(spec, mambaGauss, r);
    });
  }
  // The final-normed hidden has unit RMS, so this std gives logits of std logitStd.
  const lmHead = r(gauss.fill(spec.hidden * spec.vocab, spec.logitStd / Math.sqrt(spec.hidden)));
  return applyBigram(spec, { embed, layers, finalNorm, lmHead });
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
      ...(layer.mamba
        ? { mamba: { ...layer.mamba, inProj: perturb(layer.mamba.inProj)!, outProj: perturb(layer.mamba.outProj)! } }
        : {}),
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

/** Seeded draft vocabulary: eagle3 keeps a sorted subset of the target ids (as trained checkpoints do, most
 * frequent tokens in id order); eagle3-mirror a permutation of all of them, so an identity map is wrong. */
function draftVocabulary(spec: ModelSpec, draft: DraftSpec, size: number): Int32Array {
  const rng = xoroshiro128plus((draft.seed * 7727 + 41) | 0);
  const ids = Array.from({ length: spec.vocab }, (_, id) => id);
  for (let i = ids.length - 1; i > 0; i--) {
    const j = uniformInt(rng, 0, i); // Fisher-Yates
    [ids[i], ids[j]] = [ids[j], ids[i]];
  }
  const chosen = draft.kind === "eagle3-mirror" ? ids : ids.slice(0, size).sort((a, b) => a - b);
  return Int32Array.from(chosen);
}

function eagle3Input(spec: ModelSpec, draft: DraftSpec, gauss: Gaussian): Eagle3Input {
  const options = eagle3Options(spec, draft);
  const r = (v: Float64Array) => roundTo(spec.dtype, v);
  const fcIn = options.auxLayers.length * spec.hidden;
  const fc = r(gauss.fill(fcIn * spec.hidden, 1 / Math.sqrt(fcIn)));
  const inputNorm = options.normBeforeFc ? r(gauss.fill(fcIn, 0.1, 1)) : undefined;
  const targets = draftVocabulary(spec, draft, options.draftVocab);
  const t2d = new Uint8Array(spec.vocab);
  for (const id of targets) t2d[id] = 1;
  return { fc, inputNorm, d2t: targets.map((target, draftId) => target - draftId), t2d };
}

export function generateEagle3Weights(spec: ModelSpec, draft: DraftSpec): Eagle3Weights {
  const gauss = new Gaussian(draft.seed * 6007 + 29);
  const input = eagle3Input(spec, draft, gauss);
  const r = (v: Float64Array) => roundTo(spec.dtype, v);
  const { hidden, heads, kvHeads, headDim, intermediate } = spec;
  const attnIn = 2 * hidden;
  const layer: LayerWeights = {
    embedNorm: r(gauss.fill(hidden, 0.1, 1)),
    hiddenNorm: r(gauss.fill(hidden, 0.1, 1)),
    wq: r(gauss.fill(attnIn * heads * headDim, 1 / Math.sqrt(attnIn))),
    wk: r(gauss.fill(attnIn * kvHeads * headDim, 1 / Math.sqrt(attnIn))),
    wv: r(gauss.fill(attnIn * kvHeads * headDim, 1 / Math.sqrt(attnIn))),
    wo: r(gauss.fill(heads * headDim * hidden, 1 / Math.sqrt(heads * headDim))),
    mlpNorm: r(gauss.fill(hidden, 0.1, 1)),
    wGate: r(gauss.fill(hidden * intermediate, 1 / Math.sqrt(hidden))),
    wUp: r(gauss.fill(hidden * intermediate, 1 / Math.sqrt(hidden))),
    wDown: r(gauss.fill(intermediate * hidden, 1 / Math.sqrt(intermediate))),
  };
  const norm = r(gauss.fill(hidden, 0.1, 1));
  const draftVocab = input.d2t.length;
  const lmHead = r(gauss.fill(hidden * draftVocab, spec.logitStd / Math.sqrt(hidden)));
  return { ...input, layer, norm, lmHead };
}

/** The EAGLE-3 mirror's own parts: input path, permuted LM head (exact copies of target columns), tap vector. */
export function generateEagle3MirrorWeights(
  spec: ModelSpec,
  target: TargetWeights,
  draft: DraftSpec,
): Eagle3MirrorWeights {
  const gauss = new Gaussian(draft.seed * 6007 + 31);
  const input = eagle3Input(spec, draft, gauss);
  const targets = draftToTarget(input.d2t);
  const lmHead = new Float64Array(spec.hidden * spec.vocab);
  for (let row = 0; row < spec.hidden; row++)
    for (let draftId = 0; draftId < spec.vocab; draftId++)
      lmHead[row * spec.vocab + draftId] = target.lmHead[row * spec.vocab + targets[draftId]];
  const tap = roundTo(spec.dtype, gauss.fill(spec.hidden, 1 / Math.sqrt(spec.hidden)));
  return { ...input, tap, lmHead };
}
