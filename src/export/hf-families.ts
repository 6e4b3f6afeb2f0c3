// Hugging Face checkpoints of issue 29's model families, each as an architecture transformers implements with
// exactly specconf's math (docs/export.md lists what each one needs):
// - sliding windows: MinistralForCausalLM, a Llama block whose `layer_types` mark each layer
//   "sliding_attention" or "full_attention" and whose sliding layers attend `sliding_window` positions, the
//   row's own included (masking_utils' sliding_window_overlay: kv > q - window), as spec.slidingWindow does;
// - scaled RoPE: `rope_parameters` (rope_type linear / yarn) on whichever architecture the spec takes. YaRN's
//   factor, original context, betas and attention factor are written out, and max_position_embeddings is
//   factor * original context, so that transformers versions deriving the factor from that ratio agree;
// - hybrid (Mamba2 layers): GraniteMoeHybridForCausalLM with no experts (a dense shared MLP), every Granite
//   multiplier 1 and attention_multiplier 1/sqrt(head_dim): its Mamba layers are BambaMixer (in_proj [z | xBC |
//   dt], a depthwise causal conv1d with bias, softplus(dt + dt_bias), A = -exp(A_log), D, a gated RMSNorm over
//   the whole inner width with one group, out_proj), its attention layers Llama's with full rotate-half RoPE.
//   Bamba itself rotates only attn_rotary_emb dims of each head; GraniteMoeHybrid rotates all of them.
// The plain Llama checkpoint (hf.ts) stays what a spec without these fields gets, byte for byte.
import { BadInputError } from "../errors/bad-input.ts";
import type { ModelSpec } from "../model/spec.ts";
import { mambaDims } from "../model/mamba2.ts";
import { YARN_BETA_FAST, YARN_BETA_SLOW, ropeFrequencies } from "../model/rope-scaling.ts";
import type { LayerWeights, TargetWeights } from "../model/weights.ts";
import {
  checkpointFiles,
  dtypeOf,
  llamaCheckpoint,
  llamaConfig,
  targetTensors,
  type CheckpointFiles,
  type ExportIdentity,
} from "./hf.ts";
import { transpose, type TensorEntry } from "./safetensors.ts";

export const MINISTRAL_ARCHITECTURE = "MinistralForCausalLM";
export const HYBRID_ARCHITECTURE = "GraniteMoeHybridForCausalLM";

/** A spec whose family no transformers architecture computes exactly (exit 2: the spec is what is wrong). */
export class FamilyExportError extends BadInputError {
  constructor(detail: string) {
    super(`no Hugging Face checkpoint: ${detail}`, { jsonPath: "/model/spec" });
    this.name = "FamilyExportError";
  }
}

/** The architecture a spec's checkpoint takes. */
export function hfArchitecture(spec: ModelSpec): string {
  if (spec.recurrent) return HYBRID_ARCHITECTURE;
  if (spec.slidingWindow) return MINISTRAL_ARCHITECTURE;
  return "LlamaForCausalLM";
}

/** transformers' rope_parameters for the spec (v5 layout: rope_theta inside). */
export function ropeParameters(spec: ModelSpec): Record<string, unknown> {
  const scaling = spec.ropeScaling;
  if (!scaling) return { rope_type: "default", rope_theta: spec.ropeTheta };
  if (scaling.type === "linear") return { rope_type: "linear", rope_theta: spec.ropeTheta, factor: scaling.factor };
  return {
    rope_type: "yarn",
    rope_theta: spec.ropeTheta,
    factor: scaling.factor,
    original_max_position_embeddings: scaling.originalMaxPositions,
    beta_fast: scaling.betaFast ?? YARN_BETA_FAST,
    beta_slow: scaling.betaSlow ?? YARN_BETA_SLOW,
    attention_factor: ropeFrequencies(spec).attentionFactor,
    truncate: true,
  };
}

/** max_position_embeddings: YaRN's factor * original context (see the header), the spec's otherwise. */
function maxPositionEmbeddings(spec: ModelSpec): number {
  const scaling = spec.ropeScaling;
  return scaling?.type === "yarn" ? Math.round(scaling.factor * scaling.originalMaxPositions) : spec.maxPositions;
}

/** config.json of a family checkpoint of the spec's first `layers` layers. */
export function familyConfig(spec: ModelSpec, layers: number, identity: ExportIdentity): Record<string, unknown> {
  const architecture = hfArchitecture(spec);
  const base = llamaConfig(spec, layers, architecture, identity);
  const config: Record<string, unknown> = {
    ...base,
    max_position_embeddings: maxPositionEmbeddings(spec),
    rope_parameters: ropeParameters(spec),
  };
  delete config.rope_scaling;
  if (architecture === MINISTRAL_ARCHITECTURE) {
    const window = spec.slidingWindow!;
    config.model_type = "ministral";
    config.sliding_window = window.size;
    config.layer_types = Array.from({ length: layers }, (_, l) =>
      window.layers.includes(l) ? "sliding_attention" : "full_attention",
    );
  }
  if (architecture === HYBRID_ARCHITECTURE) Object.assign(config, hybridFields(spec, layers));
  return config;
}

/** Why no transformers architecture computes the spec exactly (undefined: one does). */
export function hfFamilyUnsupported(spec: ModelSpec): string | undefined {
  if (!spec.recurrent) return undefined;
  if (spec.slidingWindow) return "a hybrid spec with sliding windows has no transformers architecture";
  // Granite's attention takes head_dim = hidden_size / num_attention_heads.
  if (spec.heads * spec.headDim !== spec.hidden)
    return `${HYBRID_ARCHITECTURE} needs heads * headDim = hidden (${spec.heads} * ${spec.headDim} != ${spec.hidden})`;
  return undefined;
}

function hybridFields(spec: ModelSpec, layers: number): Record<string, unknown> {
  const recurrent = spec.recurrent!;
  const unsupported = hfFamilyUnsupported(spec);
  if (unsupported) throw new FamilyExportError(unsupported);
  const blockTypes = Array.from({ length: layers }, (_, l) =>
    recurrent.layers.includes(l) ? "linear_attention" : "full_attention",
  );
  const inner = recurrent.heads * recurrent.headDim;
  return {
    model_type: "granitemoehybrid",
    // transformers 5.17 maps layers_block_type onto layer_types and validates it against its layer kinds: Mamba2
    // blocks are "linear_attention" there (its GraniteMoeHybrid decoder layer tests that name), attention
    // "full_attention" (its causal mask mapping's key); the legacy "mamba" / "attention" fail validation.
    layer_types: blockTypes,
    position_embedding_type: "rope",
    embedding_multiplier: 1.0,
    residual_multiplier: 1.0,
    logits_scaling: 1.0,
    attention_multiplier: 1 / Math.sqrt(spec.headDim),
    num_local_experts: 0,
    num_experts_per_tok: 0,
    shared_intermediate_size: spec.intermediate,
    output_router_logits: false,
    normalization_function: "rmsnorm",
    mamba_n_heads: recurrent.heads,
    mamba_d_head: recurrent.headDim,
    mamba_n_groups: 1,
    mamba_d_state: recurrent.stateSize,
    mamba_d_conv: recurrent.convKernel,
    mamba_expand: inner / spec.hidden,
    mamba_chunk_size: 256,
    mamba_conv_bias: true,
    mamba_proj_bias: false,
  };
}

/** One GraniteMoeHybrid layer's tensors (Mamba2 or attention mixer, then the dense shared MLP). */
function hybridLayerTensors(spec: ModelSpec, l: number, layer: LayerWeights): TensorEntry[] {
  const dtype = dtypeOf(spec);
  const prefix = `model.layers.${l}`;
  const { hidden, intermediate } = spec;
  const linear = (name: string, weights: Float64Array, inDim: number, outDim: number): TensorEntry => ({
    name: `${prefix}.${name}.weight`,
    dtype,
    shape: [outDim, inDim],
    data: transpose(weights, inDim, outDim),
  });
  const vector = (name: string, data: Float64Array): TensorEntry => ({ name, dtype, shape: [data.length], data });
  const tensors: TensorEntry[] = [vector(`${prefix}.input_layernorm.weight`, layer.attnNorm!)];
  if (layer.mamba) {
    const recurrent = spec.recurrent!;
    const { inner, convDim } = mambaDims(recurrent);
    const projWidth = inner + convDim + recurrent.heads;
    const kernel = recurrent.convKernel;
    // nn.Conv1d(groups = channels) weight [channels, 1, K]: [c, 0, k] is our row k (oldest input first).
    const conv = new Float64Array(convDim * kernel);
    for (let c = 0; c < convDim; c++)
      for (let k = 0; k < kernel; k++) conv[c * kernel + k] = layer.mamba.convWeight[k * convDim + c];
    tensors.push(
      linear("mamba.in_proj", layer.mamba.inProj, hidden, projWidth),
      { name: `${prefix}.mamba.conv1d.weight`, dtype, shape: [convDim, 1, kernel], data: conv },
      vector(`${prefix}.mamba.conv1d.bias`, layer.mamba.convBias),
      vector(`${prefix}.mamba.dt_bias`, layer.mamba.dtBias),
      vector(`${prefix}.mamba.A_log`, layer.mamba.aLog),
      vector(`${prefix}.mamba.D`, layer.mamba.d),
      vector(`${prefix}.mamba.norm.weight`, layer.mamba.normWeight),
      linear("mamba.out_proj", layer.mamba.outProj, inner, hidden),
    );
  } else {
    const qDim = spec.heads * spec.headDim;
    const kvDim = spec.kvHeads * spec.headDim;
    tensors.push(
      linear("self_attn.q_proj", layer.wq, hidden, qDim),
      linear("self_attn.k_proj", layer.wk, hidden, kvDim),
      linear("self_attn.v_proj", layer.wv, hidden, kvDim),
      linear("self_attn.o_proj", layer.wo, qDim, hidden),
    );
  }
  // shared_mlp.input_linear [2 * intermediate, hidden]: the gate's rows, then the up projection's (chunk(2)).
  const gateUp = new Float64Array(2 * intermediate * hidden);
  gateUp.set(transpose(layer.wGate, hidden, intermediate), 0);
  gateUp.set(transpose(layer.wUp, hidden, intermediate), intermediate * hidden);
  tensors.push(
    vector(`${prefix}.post_attention_layernorm.weight`, layer.mlpNorm),
    { name: `${prefix}.shared_mlp.input_linear.weight`, dtype, shape: [2 * intermediate, hidden], data: gateUp },
    linear("shared_mlp.output_linear", layer.wDown, intermediate, hidden),
  );
  return tensors;
}

export function hybridTensors(spec: ModelSpec, weights: TargetWeights): TensorEntry[] {
  const dtype = dtypeOf(spec);
  return [
    { name: "model.embed_tokens.weight", dtype, shape: [spec.vocab, spec.hidden], data: weights.embed },
    ...weights.layers.flatMap((layer, l) => hybridLayerTensors(spec, l, layer)),
    { name: "model.norm.weight", dtype, shape: [spec.hidden], data: weights.finalNorm },
    {
      name: "lm_head.weight",
      dtype,
      shape: [spec.vocab, spec.hidden],
      data: transpose(weights.lmHead, spec.hidden, spec.vocab),
    },
  ];
}

/**
 * The checkpoint of the target (or of a standalone draft: the target's copy or its first layers) in the
 * architecture its family takes: the plain Llama checkpoint for a spec without issue 29's fields.
 */
export function modelCheckpoint(spec: ModelSpec, weights: TargetWeights, identity: ExportIdentity): CheckpointFiles {
  if (!spec.recurrent && !spec.slidingWindow && !spec.ropeScaling) return llamaCheckpoint(spec, weights, identity);
  const config = familyConfig(spec, weights.layers.length, identity);
  const tensors = spec.recurrent ? hybridTensors(spec, weights) : targetTensors(spec, weights);
  return checkpointFiles(spec, config, tensors, identity);
}
