// The EAGLE-3 head as a GGUF of llama.cpp's `eagle3` architecture, written as llama.cpp's converter writes it
// from the HF checkpoint (src/export/eagle3-hf.ts) and the target's config (conversion/llama.py, LlamaModel with
// is_eagle3; loaded by src/models/eagle3.cpp, run by --spec-type draft-eagle3):
// - metadata: eagle3.target_layers = the checkpoint's eagle_aux_hidden_state_layer_ids, copied as they are
//   (llama.cpp requires exactly three), eagle3.target_hidden_size, eagle3.norm_before_fc,
//   eagle3.norm_before_residual (false: the residual is the hidden input, as in LlamaForCausalLMEagle3), the
//   Llama hyperparameters of the one decoder layer, the target's tokenizer;
// - tensors: fc.weight [3H -> H]; enc.output_norm.weight (input_norm, with norm_before_fc); token_embd (the
//   checkpoint's embed_tokens, a copy of the target's); blk.0.attn_norm (input_layernorm, on the embedding),
//   blk.0.attn_norm_2 (hidden_norm), q/k/v over [2H] (embedding half first; q and k rows permuted for
//   llama.cpp's RoPE like every Llama q/k), attn_output, ffn_norm (post_attention_layernorm), ffn_*;
//   output_norm (the head's norm), output (lm_head over the draft vocabulary); d2t as I64 absolute target ids
//   (offset + draft id: the converter's prepare_tensors), t2d left out (unused at run time).
// Note on the layer ids: llama.cpp extracts the input of each named layer k < n_layer
// (llama_set_embeddings_layer_inp; src/models/llama.cpp stores t_layer_inp[il] at the top of layer il) and
// k == n_layer as the last layer's output (llama_set_embeddings_nextn), in common/speculative.cpp; that is the
// reading of the HF checkpoint's ids (src/export/eagle3-hf.ts), so the converter's unchanged copy agrees.
// (llama.cpp's llama graph sets no t_h_nextn, so by reading of the source an id n_layer on a Llama target
// reads a buffer nothing writes; the default ids stay below n_layer: model/spec.ts eagle3AuxLayers.)
import type { DraftSpec, ModelSpec } from "../model/spec.ts";
import { eagle3Options } from "../model/spec.ts";
import { draftToTarget, type Eagle3Weights, type TargetWeights } from "../model/weights.ts";
import { permuteRopeRows, tokenizerMetadata } from "./gguf.ts";
import { writeGguf, type GgufTensor, type GgufValue } from "./gguf-format.ts";
import { transpose } from "./safetensors.ts";

/** llama.cpp's EAGLE-3 loader takes exactly three auxiliary layers (src/models/eagle3.cpp). */
export const LLAMA_EAGLE3_AUX_LAYERS = 3;

/** Why llama.cpp cannot load this EAGLE-3 draft, or undefined when it can. */
export function eagle3GgufUnsupported(spec: ModelSpec, draft: DraftSpec): string | undefined {
  const layers = eagle3Options(spec, draft).auxLayers;
  if (layers.length !== LLAMA_EAGLE3_AUX_LAYERS)
    return `/draft/auxLayers: ${layers.length} auxiliary layers (llama.cpp's eagle3 takes exactly ${LLAMA_EAGLE3_AUX_LAYERS})`;
  return undefined;
}

export function eagle3Gguf(
  spec: ModelSpec,
  draft: DraftSpec,
  target: TargetWeights,
  head: Eagle3Weights,
  onnxDigest: string,
): Uint8Array {
  const options = eagle3Options(spec, draft);
  const { hidden, heads, kvHeads, headDim, intermediate } = spec;
  const qDim = heads * headDim;
  const kvDim = kvHeads * headDim;
  const attnIn = 2 * hidden;
  const fcIn = head.fc.length / hidden;
  const draftVocab = head.d2t.length;
  const u32 = (value: number): GgufValue => ({ type: "uint32", value });
  const linear = (name: string, weights: Float64Array, inDim: number, outDim: number): GgufTensor => ({
    name,
    dims: [inDim, outDim],
    data: transpose(weights, inDim, outDim),
  });
  const roped = (name: string, weights: Float64Array, numHeads: number): GgufTensor => ({
    name,
    dims: [attnIn, numHeads * headDim],
    data: permuteRopeRows(transpose(weights, attnIn, numHeads * headDim), numHeads, headDim, attnIn),
  });
  const metadata = new Map<string, GgufValue>([
    ["general.architecture", { type: "string", value: "eagle3" }],
    ["general.name", { type: "string", value: `${spec.name}-eagle3` }],
    ["general.file_type", u32(0)],
    ["eagle3.vocab_size", u32(spec.vocab)],
    ["eagle3.context_length", u32(spec.maxPositions)],
    ["eagle3.embedding_length", u32(hidden)],
    ["eagle3.block_count", u32(1)],
    ["eagle3.feed_forward_length", u32(intermediate)],
    ["eagle3.rope.dimension_count", u32(headDim)],
    ["eagle3.attention.head_count", u32(heads)],
    ["eagle3.attention.head_count_kv", u32(kvHeads)],
    ["eagle3.attention.key_length", u32(headDim)],
    ["eagle3.attention.value_length", u32(headDim)],
    ["eagle3.attention.layer_norm_rms_epsilon", { type: "float32", value: spec.rmsEps }],
    ["eagle3.rope.freq_base", { type: "float32", value: spec.ropeTheta }],
    ["eagle3.target_layers", { type: "array", items: "int32", value: Int32Array.from(options.auxLayers) }],
    ["eagle3.target_hidden_size", u32(hidden)],
    ["eagle3.norm_before_residual", { type: "bool", value: false }],
    ["eagle3.norm_before_fc", { type: "bool", value: head.inputNorm !== undefined }],
    ...tokenizerMetadata(spec),
    ["specconf.role", { type: "string", value: "eagle3" }],
    ["specconf.onnx_digest", { type: "string", value: onnxDigest }],
    ["specconf.spec", { type: "string", value: JSON.stringify(spec) }],
    ["specconf.draft", { type: "string", value: JSON.stringify(draft) }],
  ]);
  const layer = head.layer;
  const tensors: GgufTensor[] = [
    { name: "token_embd.weight", dims: [hidden, spec.vocab], data: target.embed },
    linear("fc.weight", head.fc, fcIn, hidden),
    ...(head.inputNorm ? [{ name: "enc.output_norm.weight", dims: [fcIn], data: head.inputNorm }] : []),
    { name: "blk.0.attn_norm.weight", dims: [hidden], data: layer.embedNorm! },
    { name: "blk.0.attn_norm_2.weight", dims: [hidden], data: layer.hiddenNorm! },
    roped("blk.0.attn_q.weight", layer.wq, heads),
    roped("blk.0.attn_k.weight", layer.wk, kvHeads),
    linear("blk.0.attn_v.weight", layer.wv, attnIn, kvDim),
    linear("blk.0.attn_output.weight", layer.wo, qDim, hidden),
    { name: "blk.0.ffn_norm.weight", dims: [hidden], data: layer.mlpNorm },
    linear("blk.0.ffn_gate.weight", layer.wGate, hidden, intermediate),
    linear("blk.0.ffn_up.weight", layer.wUp, hidden, intermediate),
    linear("blk.0.ffn_down.weight", layer.wDown, intermediate, hidden),
    { name: "output_norm.weight", dims: [hidden], data: head.norm },
    linear("output.weight", head.lmHead, hidden, draftVocab),
    { name: "d2t", dims: [draftVocab], data: draftToTarget(head.d2t), type: "I64" },
  ];
  return writeGguf(metadata, tensors);
}
