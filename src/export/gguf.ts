// GGUF exports of the generated models for llama.cpp (src/export/gguf-format.ts writes the container):
// - the target as a llama-architecture model: token_embd, blk.N.{attn_norm, attn_q, attn_k, attn_v,
//   attn_output, ffn_norm, ffn_gate, ffn_up, ffn_down}, output_norm, output. ggml's ne[0] is the contiguous
//   dimension, so a Linear weight stored [out, in] (HF layout, the transpose of our [in, out]) has dims
//   [in, out]. llama.cpp's llama architecture rotates adjacent pairs (2j, 2j + 1) while our RoPE (HF's) rotates
//   halves (j, j + d/2): q and k rows are permuted per head as llama.cpp's convert_hf_to_gguf.py does
//   (new row 2j + k = old row k * d/2 + j), which makes the two forwards the same function.
// - the standalone draft a draft-model engine runs for a case's draft (docs/design.md section 2): "mirror" is an
//   exact copy of the target; "truncated-mirror" the target's first truncatedLayers layers with its final
//   norm and LM head; "noisy-mirror" the target with the noisy mirror's perturbed matrices (the mirror graph
//   runs the same stack over BOS + tokens, so a standalone Llama over the sequence is the same function). Its
//   output weight carries the mirror family's 2^16 logit scale (src/export/standalone-draft.ts), so its logits
//   and scores (llama.cpp's p_min cut) are the mirror graph's. "tapped-mirror" (logits that depend on the
//   target's hidden state) and "eagle" have no standalone-Llama form.
// - F32 only: a float64 spec is rounded to F32, and the notes say so.
// Tokenizer: llama.cpp needs one that loads; "whitespace" (a BPE variant) with the vocabulary's token texts
// (src/model/vocabulary.ts), its merges, and add_bos/add_eos false (engines are fed token ids; the texts are what
// a server detokenizes, so its stop strings and text can be checked).
import type { LoadedModels } from "../case/models.ts";
import {
  draftLogitScale,
  STANDALONE_DRAFT_KINDS,
  type DraftKind,
  type DraftSpec,
  type ModelSpec,
} from "../model/spec.ts";
import type { LayerWeights, TargetWeights } from "../model/weights.ts";
import { writeGguf, type GgufTensor, type GgufValue } from "./gguf-format.ts";
import { eagle3Gguf, eagle3GgufUnsupported } from "./gguf-eagle3.ts";
import { transpose } from "./safetensors.ts";
import { standaloneDraftWeights } from "./standalone-draft.ts";
import { vocabularyOf } from "../model/vocabulary.ts";

/** Draft kinds with an exact standalone-Llama form (what a llama.cpp draft-model run can load). */
export const GGUF_DRAFT_KINDS: readonly DraftKind[] = STANDALONE_DRAFT_KINDS;

export interface GgufIdentity {
  role: "target" | "standalone-draft";
  /** sha256 of the ONNX bytes of the model this file is the llama.cpp form of. */
  onnxDigest: string;
  draftKind?: DraftKind;
  /** The factor the file's logits carry against the target's (a standalone draft's: model/spec.ts draftLogitScale). */
  logitScale?: number;
  suite?: string;
}

export interface GgufFiles {
  target: Uint8Array;
  /** Present when the draft kind has a standalone form (GGUF_DRAFT_KINDS). */
  draft?: Uint8Array;
  /** What was converted or left out (float64 -> F32, a draft kind with no standalone form). */
  notes: string[];
}

/** The llama.cpp row order of q_proj / k_proj ([out, in] rows, `numHeads` heads of headDim rows each). */
export function permuteRopeRows(rows: Float64Array, numHeads: number, headDim: number, inDim: number): Float64Array {
  const out = new Float64Array(rows.length);
  const half = headDim / 2;
  for (let head = 0; head < numHeads; head++)
    for (let j = 0; j < half; j++)
      for (let k = 0; k < 2; k++) {
        const from = (head * headDim + k * half + j) * inDim;
        const to = (head * headDim + 2 * j + k) * inDim;
        out.set(rows.subarray(from, from + inDim), to);
      }
  return out;
}

/** A Linear weight [in, out] (ours) as a ggml tensor of dims [in, out] holding the [out, in] rows. */
export function linear(name: string, weights: Float64Array, inDim: number, outDim: number): GgufTensor {
  return { name, dims: [inDim, outDim], data: transpose(weights, inDim, outDim) };
}

/** One Llama-block layer (attention + SwiGLU MLP) under llama.cpp's names; also the attention layers of gguf-families.ts. */
export function layerTensors(spec: ModelSpec, l: number, layer: LayerWeights): GgufTensor[] {
  const { hidden, heads, kvHeads, headDim, intermediate } = spec;
  const qDim = heads * headDim;
  const kvDim = kvHeads * headDim;
  if (!layer.attnNorm) throw new Error(`layer ${l} has no input norm: not a Llama layer`);
  const roped = (name: string, weights: Float64Array, numHeads: number): GgufTensor => ({
    name,
    dims: [hidden, numHeads * headDim],
    data: permuteRopeRows(transpose(weights, hidden, numHeads * headDim), numHeads, headDim, hidden),
  });
  return [
    { name: `blk.${l}.attn_norm.weight`, dims: [hidden], data: layer.attnNorm },
    roped(`blk.${l}.attn_q.weight`, layer.wq, heads),
    roped(`blk.${l}.attn_k.weight`, layer.wk, kvHeads),
    linear(`blk.${l}.attn_v.weight`, layer.wv, hidden, kvDim),
    linear(`blk.${l}.attn_output.weight`, layer.wo, qDim, hidden),
    { name: `blk.${l}.ffn_norm.weight`, dims: [hidden], data: layer.mlpNorm },
    linear(`blk.${l}.ffn_gate.weight`, layer.wGate, hidden, intermediate),
    linear(`blk.${l}.ffn_up.weight`, layer.wUp, hidden, intermediate),
    linear(`blk.${l}.ffn_down.weight`, layer.wDown, intermediate, hidden),
  ];
}

/**
 * The version of what the exports hold beyond the weights (the GGUF file name carries it: ggufFileName), so a
 * model cache written by an older export is not read for a newer one. 2: the vocabulary's token texts.
 */
export const GGUF_EXPORT_VERSION = 2;

/** The file name of a GGUF export of the model whose ONNX digest is `digest`. */
export function ggufFileName(digest: string): string {
  return `${digest}.v${GGUF_EXPORT_VERSION}.gguf`;
}

/** A control token's text in the file: not a piece (pieces hold no '<'), unique, never shown as text. */
function controlText(spec: ModelSpec, id: number): string {
  return id === spec.bosId ? "<bos>" : id === spec.eosId ? "<eos>" : `<control${id}>`;
}

export function tokenizerMetadata(spec: ModelSpec): [string, GgufValue][] {
  // Each token's text is the vocabulary's (src/model/vocabulary.ts: characters GPT-2's byte-level BPE maps to
  // themselves, so llama.cpp's detokenization of a piece is the piece). Control tokens (BOS, EOS) have no text:
  // the file names them apart (llama.cpp needs unique, non-empty token texts) and marks them control, which the
  // server leaves out of the text it returns.
  const vocabulary = vocabularyOf(spec);
  const tokens = vocabulary.pieces.map((piece, id) =>
    vocabulary.controlIds.includes(id) ? controlText(spec, id) : piece,
  );
  // token_type: 1 normal, 3 control.
  const types = Int32Array.from(tokens, (_, id) => (vocabulary.controlIds.includes(id) ? 3 : 1));
  // BPE needs a non-empty merges list to load; engines are fed token ids, so no merge is ever applied.
  const merges = vocabulary.merges.map(([left, right]) => `${left} ${right}`);
  if (merges.length === 0) merges.push(`${vocabulary.alphabet[0]} ${vocabulary.alphabet[0]}`);
  return [
    ["tokenizer.ggml.model", { type: "string", value: "whitespace" }],
    ["tokenizer.ggml.pre", { type: "string", value: "whitespace" }],
    ["tokenizer.ggml.tokens", { type: "array", items: "string", value: tokens }],
    ["tokenizer.ggml.token_type", { type: "array", items: "int32", value: types }],
    ["tokenizer.ggml.merges", { type: "array", items: "string", value: merges }],
    ["tokenizer.ggml.bos_token_id", { type: "uint32", value: spec.bosId }],
    ["tokenizer.ggml.eos_token_id", { type: "uint32", value: spec.eosId }],
    ["tokenizer.ggml.add_bos_token", { type: "bool", value: false }],
    ["tokenizer.ggml.add_eos_token", { type: "bool", value: false }],
  ];
}

/** A llama-architecture GGUF of `weights` (its layers: all of the target's, or a truncated prefix). */
export function llamaGguf(spec: ModelSpec, weights: TargetWeights, identity: GgufIdentity): Uint8Array {
  const layers = weights.layers;
  const u32 = (value: number): GgufValue => ({ type: "uint32", value });
  const metadata = new Map<string, GgufValue>([
    ["general.architecture", { type: "string", value: "llama" }],
    ["general.name", { type: "string", value: `${spec.name}-${identity.role}` }],
    ["general.file_type", u32(0)], // ALL_F32
    ["llama.vocab_size", u32(spec.vocab)],
    ["llama.context_length", u32(spec.maxPositions)],
    ["llama.embedding_length", u32(spec.hidden)],
    ["llama.block_count", u32(layers.length)],
    ["llama.feed_forward_length", u32(spec.intermediate)],
    ["llama.rope.dimension_count", u32(spec.headDim)],
    ["llama.attention.head_count", u32(spec.heads)],
    ["llama.attention.head_count_kv", u32(spec.kvHeads)],
    ["llama.attention.key_length", u32(spec.headDim)],
    ["llama.attention.value_length", u32(spec.headDim)],
    ["llama.attention.layer_norm_rms_epsilon", { type: "float32", value: spec.rmsEps }],
    ["llama.rope.freq_base", { type: "float32", value: spec.ropeTheta }],
    ...tokenizerMetadata(spec),
    ["specconf.role", { type: "string", value: identity.role }],
    ["specconf.onnx_digest", { type: "string", value: identity.onnxDigest }],
    ["specconf.spec", { type: "string", value: JSON.stringify(spec) }],
    ["specconf.source_dtype", { type: "string", value: spec.dtype }],
  ]);
  if (identity.draftKind) metadata.set("specconf.draft_kind", { type: "string", value: identity.draftKind });
  if (identity.logitScale !== undefined)
    metadata.set("specconf.logit_scale", { type: "float32", value: identity.logitScale });
  if (identity.suite) metadata.set("specconf.suite", { type: "string", value: identity.suite });
  const tensors: GgufTensor[] = [
    { name: "token_embd.weight", dims: [spec.hidden, spec.vocab], data: weights.embed },
    ...layers.flatMap((layer, l) => layerTensors(spec, l, layer)),
    { name: "output_norm.weight", dims: [spec.hidden], data: weights.finalNorm },
    linear("output.weight", weights.lmHead, spec.hidden, spec.vocab),
  ];
  return writeGguf(metadata, tensors);
}

/**
 * The GGUF files of a case's models: the target and, when `draft` names a kind in GGUF_DRAFT_KINDS, its
 * standalone draft (models must come from loadModels of the same case, so a noisy mirror's stack is built).
 */
export function ggufFiles(models: LoadedModels, draft?: DraftSpec | null, suite?: string): GgufFiles {
  const spec = models.spec;
  const notes: string[] = [];
  if (spec.dtype === "float64")
    notes.push("float64 spec: weights rounded to F32 (llama.cpp runs F32); margins below ~1e-5 may flip");
  const onnxDigest = models.target.graph.digest;
  const target = llamaGguf(spec, models.target.weights, { role: "target", onnxDigest, suite });
  if (!draft) return { target, notes };
  if (draft.kind === "eagle3" && models.draft?.eagle3Head) {
    // llama.cpp's own EAGLE-3 form (draft-eagle3), not a standalone Llama: src/export/gguf-eagle3.ts.
    const unsupported = eagle3GgufUnsupported(spec, draft);
    if (unsupported) return { target, notes: [...notes, `no eagle3 GGUF: ${unsupported}`] };
    const head = eagle3Gguf(spec, draft, models.target.weights, models.draft.eagle3Head, models.draft.graphs[0].digest);
    return { target, draft: head, notes };
  }
  const weights = standaloneDraftWeights(models, draft);
  if (typeof weights === "string") {
    notes.push(`no standalone draft: ${weights}`);
    return { target, notes };
  }
  const draftDigest = models.draft?.graphs[0].digest ?? onnxDigest;
  const draftFile = llamaGguf(spec, weights, {
    role: "standalone-draft",
    onnxDigest: draftDigest,
    draftKind: draft.kind,
    logitScale: draftLogitScale(draft),
    suite,
  });
  return { target, draft: draftFile, notes };
}
