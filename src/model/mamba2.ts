// Hybrid models' recurrent mixer: the Mamba2 block as transformers' Bamba (BambaMixer, its per-token cache
// path) and llama.cpp's mamba2 graph (ggml_ssm_conv, ggml_ssm_scan) compute it, with one group (n_groups = 1):
//   [z | xBC | dt] = in_proj(h)                          z: [I], xBC: [I + 2N], dt: [H]   (I = H * P)
//   xBC = silu(conv1d_causal(xBC) + conv_bias)           depthwise, kernel K over the last K inputs
//   x, B, C = split(xBC, [I, N, N])
//   dt = softplus(dt + dt_bias);  dA = exp(dt * A), A = -exp(A_log)
//   state[h] = dA[h] * state[h] + dt[h] * x[h] (outer) B          [H, P, N]
//   y[h] = state[h] @ C + D[h] * x[h]
//   out = out_proj(rmsnorm(y * silu(z)) * norm_weight)
// The per-request recurrent state is the conv window (the last K - 1 xBC inputs, oldest first) and the SSM
// state. Speculation's hard part lives here: a verify pass advances it through every draft, and only the
// accepted position's state may be kept (vllm#39273, vllm#40738, sglang#26351, llama.cpp#20075).
import type { ModelSpec } from "./spec.ts";

export interface RecurrentSpec {
  /** The layers whose mixer is a Mamba2 block (Bamba's layers_block_type "mamba"); the others attend. */
  layers: number[];
  /** mamba_n_heads. */
  heads: number;
  /** mamba_d_head (heads * headDim = the block's inner width, mamba_expand * hidden in Bamba). */
  headDim: number;
  /** mamba_d_state: N. */
  stateSize: number;
  /** mamba_d_conv: K. */
  convKernel: number;
}

export interface MambaWeights {
  /** [hidden, I + (I + 2N) + H]: z, xBC, dt (the in_proj's output order in Bamba and llama.cpp). */
  inProj: Float64Array;
  /** [K, I + 2N]: row k weighs the input k steps after the oldest of the window (row K - 1: the current one). */
  convWeight: Float64Array;
  convBias: Float64Array;
  dtBias: Float64Array; // [H]
  aLog: Float64Array; // [H]
  d: Float64Array; // [H]
  normWeight: Float64Array; // [I]
  outProj: Float64Array; // [I, hidden]
}

export interface MambaDims {
  inner: number;
  convDim: number;
  convWidth: number;
  ssmWidth: number;
  /** One layer's state: the conv window, then the SSM state. */
  width: number;
}

export function mambaDims(recurrent: RecurrentSpec): MambaDims {
  const inner = recurrent.heads * recurrent.headDim;
  const convDim = inner + 2 * recurrent.stateSize;
  const convWidth = (recurrent.convKernel - 1) * convDim;
  const ssmWidth = inner * recurrent.stateSize;
  return { inner, convDim, convWidth, ssmWidth, width: convWidth + ssmWidth };
}

/** Whether the spec's layer `layer` is recurrent. */
export function isRecurrentLayer(spec: ModelSpec, layer: number): boolean {
  return spec.recurrent?.layers.includes(layer) ?? false;
}

/** The recurrent layers among a stack of the spec's first `layerCount` layers, in order. */
export function recurrentLayers(spec: ModelSpec, layerCount = spec.layers): number[] {
  return Array.from({ length: layerCount }, (_, l) => l).filter((l) => isRecurrentLayer(spec, l));
}

/** Width of a request's whole recurrent state in a stack (every recurrent layer's, in layer order); 0: none. */
export function recurrentWidth(spec: ModelSpec, layerCount = spec.layers): number {
  return spec.recurrent ? recurrentLayers(spec, layerCount).length * mambaDims(spec.recurrent).width : 0;
}

/** Throws through `fail(field, reason)` for an impossible recurrent spec. */
export function checkRecurrent(
  recurrent: RecurrentSpec,
  layers: number,
  fail: (field: string, reason: string) => never,
): void {
  for (const field of ["heads", "headDim", "stateSize"] as const)
    if (!Number.isInteger(recurrent[field]) || recurrent[field] < 1)
      fail(`recurrent/${field}`, `must be an integer >= 1, got ${JSON.stringify(recurrent[field])}`);
  if (!Number.isInteger(recurrent.convKernel) || recurrent.convKernel < 2)
    fail("recurrent/convKernel", `must be an integer >= 2, got ${JSON.stringify(recurrent.convKernel)}`);
  if (!Array.isArray(recurrent.layers) || recurrent.layers.length < 1)
    fail("recurrent/layers", "must name at least one layer");
  recurrent.layers.forEach((layer, i) => {
    if (!Number.isInteger(layer) || layer < 0 || layer >= layers)
      fail(`recurrent/layers/${i}`, `layer ${layer} is not a layer of the ${layers}-layer model`);
    if (recurrent.layers.indexOf(layer) !== i) fail(`recurrent/layers/${i}`, `layer ${layer} is listed twice`);
  });
}

/** softplus as PyTorch computes it (linear above 20). */
export function softplus(x: number): number {
  return x > 20 ? x : Math.log1p(Math.exp(x));
}

function silu(x: number): number {
  return x / (1 + Math.exp(-x));
}

/**
 * One Mamba2 block over rows of one sequence (normed [rows, hidden]) from `state` (one layer's, mutated: it
 * ends as the state after the last row). Returns the block's output [rows, hidden].
 */
export function mambaMixer(
  spec: ModelSpec,
  weights: MambaWeights,
  normed: Float64Array,
  rows: number,
  state: Float64Array,
): Float64Array {
  const recurrent = spec.recurrent!;
  const { heads, headDim, stateSize: n, convKernel: k } = recurrent;
  const { inner, convDim, convWidth } = mambaDims(recurrent);
  const hidden = spec.hidden;
  const projWidth = inner + convDim + heads;
  const out = new Float64Array(rows * hidden);
  const projected = new Float64Array(projWidth);
  const conv = new Float64Array(convDim);
  const y = new Float64Array(inner);
  for (let r = 0; r < rows; r++) {
    projected.fill(0);
    for (let i = 0; i < hidden; i++) {
      const value = normed[r * hidden + i];
      for (let c = 0; c < projWidth; c++) projected[c] += value * weights.inProj[i * projWidth + c];
    }
    // The conv window: the state's K - 1 rows then the current xBC; the window slides by one.
    for (let c = 0; c < convDim; c++) {
      const current = projected[inner + c];
      let sum = weights.convBias[c];
      for (let j = 0; j < k - 1; j++) sum += weights.convWeight[j * convDim + c] * state[j * convDim + c];
      sum += weights.convWeight[(k - 1) * convDim + c] * current;
      conv[c] = silu(sum);
      for (let j = 0; j < k - 2; j++) state[j * convDim + c] = state[(j + 1) * convDim + c];
      state[(k - 2) * convDim + c] = current;
    }
    for (let h = 0; h < heads; h++) {
      const dt = softplus(projected[inner + convDim + h] + weights.dtBias[h]);
      const dA = Math.exp(dt * -Math.exp(weights.aLog[h]));
      for (let p = 0; p < headDim; p++) {
        const x = conv[h * headDim + p];
        const base = convWidth + (h * headDim + p) * n;
        let dot = 0;
        for (let s = 0; s < n; s++) {
          const next = dA * state[base + s] + dt * x * conv[inner + s];
          state[base + s] = next;
          dot += next * conv[inner + n + s];
        }
        y[h * headDim + p] = dot + weights.d[h] * x;
      }
    }
    // Gated RMSNorm (norm_before_gate = false): normalize y * silu(z), then the weight.
    let sumSquares = 0;
    for (let c = 0; c < inner; c++) {
      y[c] *= silu(projected[c]);
      sumSquares += y[c] * y[c];
    }
    const inv = 1 / Math.sqrt(sumSquares / inner + spec.rmsEps);
    for (let c = 0; c < inner; c++) {
      const value = y[c] * inv * weights.normWeight[c];
      for (let o = 0; o < hidden; o++) out[r * hidden + o] += value * weights.outProj[c * hidden + o];
    }
  }
  return out;
}

/** Seeded Mamba2 weights with Mamba's initialisation ranges (dt in [0.05, 0.5], A in [1, 4]) at small scale. */
export function generateMambaWeights(
  spec: ModelSpec,
  gauss: { fill(count: number, std: number, mean?: number): Float64Array; next(): number },
  round: (values: Float64Array) => Float64Array,
): MambaWeights {
  const recurrent = spec.recurrent!;
  const { heads, convKernel } = recurrent;
  const { inner, convDim } = mambaDims(recurrent);
  const hidden = spec.hidden;
  const dt = Array.from({ length: heads }, () => Math.min(0.5, Math.max(0.05, Math.exp(-1.5 + 0.5 * gauss.next()))));
  return {
    inProj: round(gauss.fill(hidden * (inner + convDim + heads), 1 / Math.sqrt(hidden))),
    convWeight: round(gauss.fill(convKernel * convDim, 1 / Math.sqrt(convKernel))),
    convBias: round(gauss.fill(convDim, 0.1)),
    // dt_bias is softplus's inverse of the initial dt (Mamba's init).
    dtBias: round(Float64Array.from(dt, (value) => value + Math.log(-Math.expm1(-value)))),
    aLog: round(Float64Array.from({ length: heads }, () => Math.log(1 + 3 * Math.abs(Math.tanh(gauss.next()))))),
    d: round(gauss.fill(heads, 0.1, 1)),
    normWeight: round(gauss.fill(inner, 0.1, 1)),
    outProj: round(gauss.fill(inner * hidden, 1 / Math.sqrt(inner))),
  };
}
