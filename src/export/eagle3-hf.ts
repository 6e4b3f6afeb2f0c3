// The EAGLE-3 head as the checkpoint SGLang (LlamaForCausalLMEagle3) and vLLM (Eagle3LlamaForCausalLM) load:
//   fc.weight [H, 3H] over the concatenated auxiliary states (no bias); with norm_before_fc, input_norm.weight
//   [3H] (one RMSNorm over that concatenation, before fc); midlayer.* (input_layernorm on the embedding,
//   hidden_norm on the hidden input, q/k/v_proj over [2H], o_proj, post_attention_layernorm, mlp); norm.weight;
//   lm_head.weight [draft_vocab_size, H]; d2t [draft_vocab_size] int64 offsets (target id = draft id + d2t);
//   t2d [vocab_size] bool (the target ids the draft vocabulary holds); embed_tokens.weight, a copy of the
//   target's. config.json names the auxiliary layers (eagle_aux_hidden_state_layer_ids: id k is the input of
//   target layer k, k = the layer count the last layer's output, as vLLM's LlamaModel.forward, the EAGLE authors'
//   modeling_llama_kv.py and llama.cpp read it; SGLang since PR 25454 too, unless the first id is 1) and
//   norm_before_fc, at the top level and in eagle_config, where each engine reads them.
// The laws' references read this config back (src/reference/eagle3-reading.ts): they are computed from what
// the checkpoint says, not from what the engine believes it says.
import type { ModelSpec } from "../model/spec.ts";
import type { Eagle3Input, Eagle3Weights, TargetWeights } from "../model/weights.ts";
import { checkpointFiles, dtypeOf, llamaConfig, type CheckpointFiles, type ExportIdentity } from "./hf.ts";
import { transpose, type TensorEntry } from "./safetensors.ts";

export const EAGLE3_ARCHITECTURE = "LlamaForCausalLMEagle3";

/** config.json of an EAGLE-3 checkpoint (the EAGLE-3 mirror's input path has the same fields). */
export function eagle3Config(
  spec: ModelSpec,
  input: Eagle3Input,
  auxLayers: readonly number[],
  identity: ExportIdentity,
): Record<string, unknown> {
  const normBeforeFc = input.inputNorm !== undefined;
  return {
    ...llamaConfig(spec, 1, EAGLE3_ARCHITECTURE, identity),
    draft_vocab_size: input.d2t.length,
    target_hidden_size: spec.hidden,
    eagle_aux_hidden_state_layer_ids: [...auxLayers],
    norm_before_fc: normBeforeFc,
    eagle_config: {
      eagle_aux_hidden_state_layer_ids: [...auxLayers],
      use_aux_hidden_state: true,
      norm_before_fc: normBeforeFc,
    },
  };
}

export function eagle3Tensors(spec: ModelSpec, target: TargetWeights, head: Eagle3Weights): TensorEntry[] {
  const dtype = dtypeOf(spec);
  const { hidden, intermediate } = spec;
  const qDim = spec.heads * spec.headDim;
  const kvDim = spec.kvHeads * spec.headDim;
  const fcIn = head.fc.length / hidden;
  const draftVocab = head.d2t.length;
  const linear = (name: string, weights: Float64Array, inDim: number, outDim: number): TensorEntry => ({
    name: `${name}.weight`,
    dtype,
    shape: [outDim, inDim],
    data: transpose(weights, inDim, outDim),
  });
  const layer = head.layer;
  const tensors: TensorEntry[] = [
    { name: "embed_tokens.weight", dtype, shape: [spec.vocab, hidden], data: target.embed },
    linear("fc", head.fc, fcIn, hidden),
    { name: "midlayer.input_layernorm.weight", dtype, shape: [hidden], data: layer.embedNorm! },
    { name: "midlayer.hidden_norm.weight", dtype, shape: [hidden], data: layer.hiddenNorm! },
    linear("midlayer.self_attn.q_proj", layer.wq, 2 * hidden, qDim),
    linear("midlayer.self_attn.k_proj", layer.wk, 2 * hidden, kvDim),
    linear("midlayer.self_attn.v_proj", layer.wv, 2 * hidden, kvDim),
    linear("midlayer.self_attn.o_proj", layer.wo, qDim, hidden),
    { name: "midlayer.post_attention_layernorm.weight", dtype, shape: [hidden], data: layer.mlpNorm },
    linear("midlayer.mlp.gate_proj", layer.wGate, hidden, intermediate),
    linear("midlayer.mlp.up_proj", layer.wUp, hidden, intermediate),
    linear("midlayer.mlp.down_proj", layer.wDown, intermediate, hidden),
    { name: "norm.weight", dtype, shape: [hidden], data: head.norm },
    linear("lm_head", head.lmHead, hidden, draftVocab),
    { name: "d2t", dtype: "I64", shape: [draftVocab], data: head.d2t },
    { name: "t2d", dtype: "BOOL", shape: [spec.vocab], data: head.t2d },
  ];
  if (head.inputNorm) tensors.push({ name: "input_norm.weight", dtype, shape: [fcIn], data: head.inputNorm });
  return tensors;
}

export function eagle3Checkpoint(
  spec: ModelSpec,
  target: TargetWeights,
  head: Eagle3Weights,
  auxLayers: readonly number[],
  identity: ExportIdentity,
): CheckpointFiles {
  const config = eagle3Config(spec, head, auxLayers, identity);
  return checkpointFiles(spec, config, eagle3Tensors(spec, target, head), identity);
}
