// An independent float64 forward of the same math as the ONNX graphs: no cache, no paging, no batching.
// One causal sequence at a time. Tests prove every ONNX graph against it; it is written from the
// math (RMSNorm, RoPE rotate-half, grouped-query attention, SwiGLU), not from the graph writers.
import { MIRROR_LOGIT_SCALE, type DraftSpec, type ModelSpec } from "./spec.ts";
import { layerWindows } from "./window.ts";
import { mambaDims, mambaMixer } from "./mamba2.ts";
import { ropeFrequencies, type RopeFrequencies } from "./rope-scaling.ts";
import type {
  Eagle3Input,
  Eagle3MirrorWeights,
  Eagle3Weights,
  EagleWeights,
  LayerWeights,
  TargetWeights,
} from "./weights.ts";

export interface StackOutput {
  /** [T, hidden]: the residual stream after the last layer (before any final norm). */
  residual: Float64Array;
}

export interface HeadOutput {
  logits: Float64Array; // [T, vocab]
  hidden: Float64Array; // [T, hidden]: the draft's/target's hidden state output
}

export function matmul(
  x: Float64Array,
  rows: number,
  inDim: number,
  w: ArrayLike<number>,
  outDim: number,
): Float64Array {
  const out = new Float64Array(rows * outDim);
  for (let r = 0; r < rows; r++) {
    for (let k = 0; k < inDim; k++) {
      const xv = x[r * inDim + k];
      if (xv === 0) continue;
      const wRow = k * outDim;
      const oRow = r * outDim;
      for (let c = 0; c < outDim; c++) out[oRow + c] += xv * w[wRow + c];
    }
  }
  return out;
}

export function rmsNorm(
  x: Float64Array,
  rows: number,
  dim: number,
  gain: ArrayLike<number>,
  eps: number,
): Float64Array {
  const out = new Float64Array(x.length);
  for (let r = 0; r < rows; r++) {
    let sumSquares = 0;
    for (let c = 0; c < dim; c++) sumSquares += x[r * dim + c] ** 2;
    const inv = 1 / Math.sqrt(sumSquares / dim + eps);
    for (let c = 0; c < dim; c++) out[r * dim + c] = x[r * dim + c] * inv * gain[c];
  }
  return out;
}

/** HF Llama rotate-half RoPE on [rows, numHeads, headDim] in place, with the spec's scaling (rope-scaling.ts). */
function applyRope(
  x: Float64Array,
  rows: number,
  numHeads: number,
  headDim: number,
  positions: readonly number[],
  frequencies: RopeFrequencies,
): void {
  const half = headDim / 2;
  const { invFreq, attentionFactor } = frequencies;
  for (let r = 0; r < rows; r++) {
    for (let i = 0; i < half; i++) {
      const angle = positions[r] * invFreq[i];
      const cos = Math.cos(angle) * attentionFactor;
      const sin = Math.sin(angle) * attentionFactor;
      for (let h = 0; h < numHeads; h++) {
        const base = (r * numHeads + h) * headDim;
        const a = x[base + i];
        const b = x[base + i + half];
        x[base + i] = a * cos - b * sin;
        x[base + i + half] = b * cos + a * sin;
      }
    }
  }
}

/** Keys/values of rows every query attends to before the sequence (the mirror's constant BOS K/V). */
export interface PrefixKv {
  keys: Float64Array[]; // per layer [prefixLen, kvDim]
  values: Float64Array[];
  length: number;
}

export interface LayerKv {
  keys: Float64Array[]; // per layer [T, kvDim] (after RoPE)
  values: Float64Array[];
}

/**
 * Runs decoder layers causally over one sequence whose input rows are x [T, hidden]. A layer with a window
 * (sliding-window attention) lets the row at position p attend positions p - window + 1 .. p only; prefix rows
 * sit at positions 0 .. prefix.length - 1.
 */
export function runLayers(
  spec: ModelSpec,
  layers: readonly LayerWeights[],
  input: Float64Array,
  positions: readonly number[],
  prefix?: PrefixKv,
  /** EAGLE-3's midlayer: the token embeddings its attention reads next to the hidden input. */
  embedded?: Float64Array,
  /** Each layer's attention window (undefined: full attention). */
  windows: readonly (number | undefined)[] = [],
  /**
   * Hybrid models: the recurrent state the rows start from (every Mamba2 layer's, in layer order: mamba2.ts),
   * advanced in place to the state after the last row. Absent: zeros (a sequence from its first token).
   */
  recurrentState?: Float64Array,
): StackOutput & LayerKv & { streams: Float64Array[]; recurrentState: Float64Array } {
  const { hidden, heads, kvHeads, headDim, rmsEps } = spec;
  const rows = positions.length;
  const kvDimension = kvHeads * headDim;
  const groupSize = heads / kvHeads;
  const scale = 1 / Math.sqrt(headDim);
  const prefixLen = prefix?.length ?? 0;
  const frequencies = ropeFrequencies(spec);
  const x = Float64Array.from(input);
  const keysOut: Float64Array[] = [];
  const valuesOut: Float64Array[] = [];
  const streams: Float64Array[] = [];
  const stateWidth = spec.recurrent ? mambaDims(spec.recurrent).width : 0;
  const mambaLayers = layers.filter((layer) => layer.mamba).length;
  const state = recurrentState ?? new Float64Array(mambaLayers * stateWidth);
  let mambaIndex = 0;
  layers.forEach((layer, layerIndex) => {
    streams.push(Float64Array.from(x));
    if (layer.mamba) {
      // A recurrent layer: the Mamba2 block replaces attention; its K/V rows are zeros (nothing attends them).
      const normedIn = rmsNorm(x, rows, hidden, layer.attnNorm!, rmsEps);
      const layerState = state.subarray(mambaIndex * stateWidth, (mambaIndex + 1) * stateWidth);
      mambaIndex += 1;
      const mixed = mambaMixer(spec, layer.mamba, normedIn, rows, layerState);
      for (let i = 0; i < x.length; i++) x[i] += mixed[i];
      keysOut.push(new Float64Array(rows * kvDimension));
      valuesOut.push(new Float64Array(rows * kvDimension));
      mlpInto(spec, layer, x, rows);
      return;
    }
    let normed = layer.attnNorm ? rmsNorm(x, rows, hidden, layer.attnNorm, rmsEps) : x;
    let attnIn = hidden;
    if (layer.embedNorm && layer.hiddenNorm) {
      if (!embedded) throw new Error("an EAGLE-3 midlayer needs the token embeddings");
      const embedPart = rmsNorm(embedded, rows, hidden, layer.embedNorm, rmsEps);
      const hiddenPart = rmsNorm(x, rows, hidden, layer.hiddenNorm, rmsEps);
      attnIn = 2 * hidden;
      normed = new Float64Array(rows * attnIn);
      for (let r = 0; r < rows; r++) {
        normed.set(embedPart.subarray(r * hidden, (r + 1) * hidden), r * attnIn);
        normed.set(hiddenPart.subarray(r * hidden, (r + 1) * hidden), r * attnIn + hidden);
      }
    }
    const q = matmul(normed, rows, attnIn, layer.wq, heads * headDim);
    const k = matmul(normed, rows, attnIn, layer.wk, kvDimension);
    const v = matmul(normed, rows, attnIn, layer.wv, kvDimension);
    applyRope(q, rows, heads, headDim, positions, frequencies);
    applyRope(k, rows, kvHeads, headDim, positions, frequencies);
    keysOut.push(k);
    valuesOut.push(v);
    const attn = new Float64Array(rows * heads * headDim);
    const scores = new Float64Array(prefixLen + rows);
    // Attended row j: the prefix's rows first, then this forward's (causal).
    const prefixKeys = prefix?.keys[layerIndex];
    const prefixValues = prefix?.values[layerIndex];
    for (let t = 0; t < rows; t++) {
      for (let h = 0; h < heads; h++) {
        const kvHead = Math.floor(h / groupSize);
        const qBase = (t * heads + h) * headDim;
        const count = prefixLen + t + 1;
        // A window hides the attended rows before its first position (weight 0: left out of the softmax).
        const window = windows[layerIndex];
        const attends = (j: number) =>
          window === undefined || (j < prefixLen ? j : positions[j - prefixLen]) > positions[t] - window;
        let max = -Infinity;
        for (let j = 0; j < count; j++) {
          if (!attends(j)) continue;
          const keys = j < prefixLen ? prefixKeys! : k;
          const kBase = (j < prefixLen ? j : j - prefixLen) * kvDimension + kvHead * headDim;
          let dot = 0;
          for (let d = 0; d < headDim; d++) dot += q[qBase + d] * keys[kBase + d];
          scores[j] = dot * scale;
          if (scores[j] > max) max = scores[j];
        }
        let denom = 0;
        for (let j = 0; j < count; j++) {
          if (!attends(j)) continue;
          scores[j] = Math.exp(scores[j] - max);
          denom += scores[j];
        }
        for (let j = 0; j < count; j++) {
          if (!attends(j)) continue;
          const values = j < prefixLen ? prefixValues! : v;
          const vBase = (j < prefixLen ? j : j - prefixLen) * kvDimension + kvHead * headDim;
          const weight = scores[j] / denom;
          for (let d = 0; d < headDim; d++) attn[qBase + d] += weight * values[vBase + d];
        }
      }
    }
    const projected = matmul(attn, rows, heads * headDim, layer.wo, hidden);
    for (let i = 0; i < x.length; i++) x[i] += projected[i];
    mlpInto(spec, layer, x, rows);
  });
  streams.push(Float64Array.from(x));
  return { residual: x, keys: keysOut, values: valuesOut, streams, recurrentState: state };
}

/** The SwiGLU MLP's residual contribution, added to x in place. */
function mlpInto(spec: ModelSpec, layer: LayerWeights, x: Float64Array, rows: number): void {
  const { hidden, intermediate, rmsEps } = spec;
  const mlpIn = rmsNorm(x, rows, hidden, layer.mlpNorm, rmsEps);
  const gate = matmul(mlpIn, rows, hidden, layer.wGate, intermediate);
  const up = matmul(mlpIn, rows, hidden, layer.wUp, intermediate);
  for (let i = 0; i < gate.length; i++) gate[i] = (gate[i] / (1 + Math.exp(-gate[i]))) * up[i];
  const down = matmul(gate, rows, intermediate, layer.wDown, hidden);
  for (let i = 0; i < x.length; i++) x[i] += down[i];
}

export function embed(spec: ModelSpec, weights: TargetWeights, tokens: readonly number[]): Float64Array {
  const out = new Float64Array(tokens.length * spec.hidden);
  tokens.forEach((token, row) =>
    out.set(weights.embed.subarray(token * spec.hidden, (token + 1) * spec.hidden), row * spec.hidden),
  );
  return out;
}

/** Target: tokens at positions 0..T-1 (or the given positions). hidden = final-normed LM-head input. */
export function referenceTarget(
  spec: ModelSpec,
  weights: TargetWeights,
  tokens: readonly number[],
  positions?: readonly number[],
  layerCount = spec.layers,
): HeadOutput & LayerKv & { streams: Float64Array[]; recurrentState: Float64Array } {
  const pos = positions ?? tokens.map((_, i) => i);
  const stack = runLayers(
    spec,
    weights.layers.slice(0, layerCount),
    embed(spec, weights, tokens),
    pos,
    undefined,
    undefined,
    layerWindows(spec, layerCount),
  );
  const hidden = rmsNorm(stack.residual, tokens.length, spec.hidden, weights.finalNorm, spec.rmsEps);
  return {
    logits: matmul(hidden, tokens.length, spec.hidden, weights.lmHead, spec.vocab),
    hidden,
    keys: stack.keys,
    values: stack.values,
    // streams[j]: the input of layer j; streams[layers]: the last layer's output before the final norm.
    streams: stack.streams,
    // Hybrid models: the recurrent state after the last token (empty without recurrent layers).
    recurrentState: stack.recurrentState,
  };
}

/**
 * Mirror family, one causal sequence of draft rows: row i has anchor position i, token tokens[i], and
 * runs at RoPE position i + 1 after the constant BOS row. Equivalent, in exact arithmetic, to the
 * target over [BOS, ...tokens], which is how this reference computes it.
 */
export function referenceMirror(
  spec: ModelSpec,
  weights: TargetWeights,
  draft: DraftSpec,
  tokens: readonly number[],
  hiddenIn: Float64Array,
  tap?: Float64Array,
): HeadOutput {
  const layerCount = draft.kind === "truncated-mirror" ? draft.truncatedLayers : spec.layers;
  const full = referenceTarget(spec, weights, [spec.bosId, ...tokens], undefined, layerCount);
  const rows = tokens.length;
  const logits = full.logits.slice(spec.vocab).map((v) => v * MIRROR_LOGIT_SCALE);
  if (draft.kind === "tapped-mirror" && tap) {
    for (let r = 0; r < rows; r++) {
      let dot = 0;
      for (let c = 0; c < spec.hidden; c++) dot += tap[c] * hiddenIn[r * spec.hidden + c];
      const shift = draft.tapDelta * MIRROR_LOGIT_SCALE * dot;
      for (let c = 0; c < spec.vocab; c++) logits[r * spec.vocab + c] += shift;
    }
  }
  return { logits, hidden: full.hidden.slice(spec.hidden) };
}

/** EAGLE head over one causal sequence of rows (token, target hidden) at the given anchor positions. */
export function referenceEagle(
  spec: ModelSpec,
  target: TargetWeights,
  eagle: EagleWeights,
  tokens: readonly number[],
  hiddenIn: Float64Array,
  positions: readonly number[],
): HeadOutput {
  const rows = tokens.length;
  const concat = new Float64Array(rows * 2 * spec.hidden);
  const embedded = embed(spec, target, tokens);
  for (let r = 0; r < rows; r++) {
    concat.set(embedded.subarray(r * spec.hidden, (r + 1) * spec.hidden), r * 2 * spec.hidden);
    concat.set(hiddenIn.subarray(r * spec.hidden, (r + 1) * spec.hidden), r * 2 * spec.hidden + spec.hidden);
  }
  const fused = matmul(concat, rows, 2 * spec.hidden, eagle.fc, spec.hidden);
  for (let r = 0; r < rows; r++) for (let c = 0; c < spec.hidden; c++) fused[r * spec.hidden + c] += eagle.fcBias[c];
  const stack = runLayers(spec, [eagle.layer], fused, positions);
  // EAGLE: no final norm; the decoder layer's output (hidden + residual) feeds the target's LM head.
  return { logits: matmul(stack.residual, rows, spec.hidden, target.lmHead, spec.vocab), hidden: stack.residual };
}
