// Hugging Face checkpoints of the generated models, for other engines:
// - the target as a Llama checkpoint (LlamaForCausalLM: config.json + model.safetensors with the standard
//   tensor names). Our matrices are [in, out] (y = x W); HF Linear weights are [out, in]: transposed.
//   Our RoPE is HF's rotate-half with inv_freq = theta^(-2i/d), so q/k need no permutation; RMSNorm is
//   x / sqrt(mean(x^2) + eps) * weight as in HF; GQA maps query head h to KV head floor(h / (heads/kvHeads)).
// - the EAGLE head in the EAGLE checkpoint layout SGLang and vLLM load as LlamaForCausalLMEagle:
//   fc.weight [H, 2H] over concat(embedding, target hidden), fc.bias, layers.0.* without
//   input_layernorm, no final norm, embed_tokens.weight (a copy of the target's); the LM head is the
//   target's (not stored, as in EAGLE checkpoints).
// - the standalone draft: a copy of the target (config and tensors), for engines' draft-model mode,
//   where it predicts the target's greedy token and so accepts every draft, like the mirror; its LM head
//   carries the mirror family's 2^16 logit scale, so its scores are the mirror's (src/export/standalone-draft.ts).
// Each checkpoint also gets generation_config.json and a word-level tokenizer (token i is "t<i>").
import type { ModelSpec } from "../model/spec.ts";
import type { EagleWeights, LayerWeights, TargetWeights } from "../model/weights.ts";
import { transpose, writeSafetensors, type SafetensorsDtype, type TensorEntry } from "./safetensors.ts";

export type CheckpointFiles = Map<string, Uint8Array | string>;

export interface ExportIdentity {
  /** sha256 of the ONNX bytes of the model this checkpoint is a copy of. */
  digest: string;
  /** What this checkpoint is, recorded in config.json under "specconf". */
  role: "target" | "standalone-draft" | "eagle" | "eagle3";
  /**
   * The factor this checkpoint's logits carry against the target's: a mirror-family standalone draft's LM head
   * holds the family's 2^16 (src/export/standalone-draft.ts). Recorded in config.json; absent: 1.
   */
  logitScale?: number;
  suite?: string;
}

export function dtypeOf(spec: ModelSpec): SafetensorsDtype {
  return spec.dtype === "float32" ? "F32" : "F64";
}

export function llamaConfig(
  spec: ModelSpec,
  layers: number,
  architecture: string,
  identity: ExportIdentity,
): Record<string, unknown> {
  return {
    architectures: [architecture],
    model_type: "llama",
    vocab_size: spec.vocab,
    hidden_size: spec.hidden,
    intermediate_size: spec.intermediate,
    num_hidden_layers: layers,
    num_attention_heads: spec.heads,
    num_key_value_heads: spec.kvHeads,
    head_dim: spec.headDim,
    hidden_act: "silu",
    max_position_embeddings: spec.maxPositions,
    rms_norm_eps: spec.rmsEps,
    rope_theta: spec.ropeTheta,
    rope_scaling: null,
    attention_bias: false,
    attention_dropout: 0.0,
    mlp_bias: false,
    tie_word_embeddings: false,
    bos_token_id: spec.bosId,
    eos_token_id: spec.eosId,
    pad_token_id: null,
    initializer_range: 0.02,
    pretraining_tp: 1,
    use_cache: true,
    torch_dtype: spec.dtype,
    specconf: {
      role: identity.role,
      onnxDigest: identity.digest,
      ...(identity.logitScale !== undefined ? { logitScale: identity.logitScale } : {}),
      ...(identity.suite ? { suite: identity.suite } : {}),
      spec,
    },
  };
}

function layerTensors(spec: ModelSpec, prefix: string, layer: LayerWeights): TensorEntry[] {
  const dtype = dtypeOf(spec);
  const { hidden, intermediate } = spec;
  const qDim = spec.heads * spec.headDim;
  const kvDim = spec.kvHeads * spec.headDim;
  const linear = (name: string, weights: Float64Array, inDim: number, outDim: number): TensorEntry => ({
    name: `${prefix}.${name}.weight`,
    dtype,
    shape: [outDim, inDim],
    data: transpose(weights, inDim, outDim),
  });
  const tensors = [
    linear("self_attn.q_proj", layer.wq, hidden, qDim),
    linear("self_attn.k_proj", layer.wk, hidden, kvDim),
    linear("self_attn.v_proj", layer.wv, hidden, kvDim),
    linear("self_attn.o_proj", layer.wo, qDim, hidden),
    { name: `${prefix}.post_attention_layernorm.weight`, dtype, shape: [hidden], data: layer.mlpNorm },
    linear("mlp.gate_proj", layer.wGate, hidden, intermediate),
    linear("mlp.up_proj", layer.wUp, hidden, intermediate),
    linear("mlp.down_proj", layer.wDown, intermediate, hidden),
  ];
  if (layer.attnNorm)
    tensors.push({ name: `${prefix}.input_layernorm.weight`, dtype, shape: [hidden], data: layer.attnNorm });
  return tensors;
}

function tokenizerFiles(spec: ModelSpec): CheckpointFiles {
  const vocab: Record<string, number> = {};
  for (let id = 0; id < spec.vocab; id++) vocab[`t${id}`] = id;
  const tokenizer = {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: [],
    normalizer: null,
    pre_tokenizer: { type: "WhitespaceSplit" },
    post_processor: null,
    decoder: null,
    model: { type: "WordLevel", vocab, unk_token: `t${spec.bosId}` },
  };
  const config = {
    tokenizer_class: "PreTrainedTokenizerFast",
    bos_token: `t${spec.bosId}`,
    eos_token: `t${spec.eosId}`,
    unk_token: `t${spec.bosId}`,
    add_bos_token: false,
    model_max_length: spec.maxPositions,
    clean_up_tokenization_spaces: false,
  };
  return new Map<string, Uint8Array | string>([
    ["tokenizer.json", `${JSON.stringify(tokenizer)}\n`],
    ["tokenizer_config.json", `${JSON.stringify(config, null, 2)}\n`],
  ]);
}

function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

function generationConfig(spec: ModelSpec): string {
  return json({ bos_token_id: spec.bosId, eos_token_id: spec.eosId, do_sample: false });
}

export function targetTensors(spec: ModelSpec, weights: TargetWeights): TensorEntry[] {
  const dtype = dtypeOf(spec);
  return [
    { name: "model.embed_tokens.weight", dtype, shape: [spec.vocab, spec.hidden], data: weights.embed },
    ...weights.layers.flatMap((layer, l) => layerTensors(spec, `model.layers.${l}`, layer)),
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
 * A checkpoint directory's files: config.json, generation_config.json, model.safetensors (its metadata naming
 * the role and the ONNX digest it was exported from) and the tokenizer files. Shared by every exporter.
 */
export function checkpointFiles(
  spec: ModelSpec,
  config: unknown,
  tensors: readonly TensorEntry[],
  identity: ExportIdentity,
): CheckpointFiles {
  const files: CheckpointFiles = new Map();
  files.set("config.json", json(config));
  files.set("generation_config.json", generationConfig(spec));
  files.set(
    "model.safetensors",
    writeSafetensors(tensors, { format: "pt", specconf_role: identity.role, specconf_onnx_digest: identity.digest }),
  );
  for (const [name, content] of tokenizerFiles(spec)) files.set(name, content);
  return files;
}

/** A Llama checkpoint of the target (role "target") or of its standalone-draft copy. */
export function llamaCheckpoint(spec: ModelSpec, weights: TargetWeights, identity: ExportIdentity): CheckpointFiles {
  const config = llamaConfig(spec, weights.layers.length, "LlamaForCausalLM", identity);
  return checkpointFiles(spec, config, targetTensors(spec, weights), identity);
}

export function eagleTensors(spec: ModelSpec, target: TargetWeights, eagle: EagleWeights): TensorEntry[] {
  const dtype = dtypeOf(spec);
  return [
    { name: "embed_tokens.weight", dtype, shape: [spec.vocab, spec.hidden], data: target.embed },
    {
      name: "fc.weight",
      dtype,
      shape: [spec.hidden, 2 * spec.hidden],
      data: transpose(eagle.fc, 2 * spec.hidden, spec.hidden),
    },
    { name: "fc.bias", dtype, shape: [spec.hidden], data: eagle.fcBias },
    ...layerTensors(spec, "layers.0", eagle.layer),
  ];
}

export function eagleCheckpoint(
  spec: ModelSpec,
  target: TargetWeights,
  eagle: EagleWeights,
  identity: ExportIdentity,
): CheckpointFiles {
  const config = llamaConfig(spec, 1, "LlamaForCausalLMEagle", identity);
  return checkpointFiles(spec, config, eagleTensors(spec, target, eagle), identity);
}
