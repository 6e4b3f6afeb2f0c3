// The hybrid family (Mamba2 layers between attention layers) as llama.cpp's granitehybrid architecture
// (src/models/granite-hybrid.cpp, its Mamba2 layer in src/models/mamba-base.cpp): a layer is recurrent iff its
// `attention.head_count_kv` entry is 0; ssm_in [z | xBC | dt], ssm_conv1d [K, channels] with bias, ssm_dt.bias,
// ssm_a holding A = -exp(A_log) itself (as convert_hf_to_gguf.py stores it), ssm_d, the gated RMSNorm's
// ssm_norm [inner / groups, groups] and ssm_out; attention layers are Llama's (q/k permuted for its interleaved
// RoPE), every layer ends in the SwiGLU MLP (ffn_gate/up/down). Granite's scales are left out (0: unused).
// llama.cpp loads only Mamba2 blocks twice as wide as the model (GGML_ASSERT(2 * n_embd == d_inner) in
// granite-hybrid.cpp's load_arch_tensors): other widths are refused with that reason.
import type { ModelSpec } from "../model/spec.ts";
import { mambaDims } from "../model/mamba2.ts";
import type { LayerWeights } from "../model/weights.ts";
import type { GgufTensor, GgufValue } from "./gguf-format.ts";
import { linear } from "./gguf.ts";

/** Why granitehybrid cannot hold the spec's recurrent layers (undefined: it can). */
export function hybridGgufUnsupported(spec: ModelSpec): string | undefined {
  const recurrent = spec.recurrent;
  if (!recurrent) return undefined;
  const inner = recurrent.heads * recurrent.headDim;
  if (inner !== 2 * spec.hidden)
    return `llama.cpp's granitehybrid loads only Mamba2 blocks of inner width 2 * hidden (GGML_ASSERT(2 * n_embd == d_inner), src/models/granite-hybrid.cpp); ${spec.name}'s is ${inner} for hidden ${spec.hidden}`;
  return undefined;
}

export function hybridMetadata(spec: ModelSpec, layers: number): [string, GgufValue][] {
  const recurrent = spec.recurrent!;
  const { inner } = mambaDims(recurrent);
  const kvHeads = Uint32Array.from({ length: layers }, (_, l) => (recurrent.layers.includes(l) ? 0 : spec.kvHeads));
  const u32 = (value: number): GgufValue => ({ type: "uint32", value });
  return [
    ["granitehybrid.attention.head_count_kv", { type: "array", items: "uint32", value: kvHeads }],
    ["granitehybrid.ssm.conv_kernel", u32(recurrent.convKernel)],
    ["granitehybrid.ssm.inner_size", u32(inner)],
    ["granitehybrid.ssm.state_size", u32(recurrent.stateSize)],
    ["granitehybrid.ssm.time_step_rank", u32(recurrent.heads)],
    ["granitehybrid.ssm.group_count", u32(1)],
  ];
}

/** A Mamba2 layer's tensors (attention norm, the block, then the MLP). */
export function hybridLayerTensors(spec: ModelSpec, l: number, layer: LayerWeights): GgufTensor[] {
  const recurrent = spec.recurrent!;
  const mamba = layer.mamba!;
  const { hidden, intermediate } = spec;
  const { inner, convDim } = mambaDims(recurrent);
  const kernel = recurrent.convKernel;
  // ggml dims [K, channels]: channel c's K taps contiguous, oldest input first (our row k).
  const conv = new Float64Array(convDim * kernel);
  for (let c = 0; c < convDim; c++)
    for (let k = 0; k < kernel; k++) conv[c * kernel + k] = mamba.convWeight[k * convDim + c];
  const heads = recurrent.heads;
  return [
    { name: `blk.${l}.attn_norm.weight`, dims: [hidden], data: layer.attnNorm! },
    linear(`blk.${l}.ssm_in.weight`, mamba.inProj, hidden, inner + convDim + heads),
    { name: `blk.${l}.ssm_conv1d.weight`, dims: [kernel, convDim], data: conv },
    { name: `blk.${l}.ssm_conv1d.bias`, dims: [convDim], data: mamba.convBias },
    { name: `blk.${l}.ssm_dt.bias`, dims: [heads], data: mamba.dtBias },
    { name: `blk.${l}.ssm_a`, dims: [1, heads], data: Float64Array.from(mamba.aLog, (value) => -Math.exp(value)) },
    { name: `blk.${l}.ssm_d`, dims: [1, heads], data: mamba.d },
    { name: `blk.${l}.ssm_norm.weight`, dims: [inner, 1], data: mamba.normWeight },
    linear(`blk.${l}.ssm_out.weight`, mamba.outProj, inner, hidden),
    { name: `blk.${l}.ffn_norm.weight`, dims: [hidden], data: layer.mlpNorm },
    linear(`blk.${l}.ffn_gate.weight`, layer.wGate, hidden, intermediate),
    linear(`blk.${l}.ffn_up.weight`, layer.wUp, hidden, intermediate),
    linear(`blk.${l}.ffn_down.weight`, layer.wDown, intermediate, hidden),
  ];
}
