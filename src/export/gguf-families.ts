// GGUF files of issue 29's model families, in the llama.cpp architectures that compute exactly specconf's math
// (read from the bundled llama.cpp's src/models/*.cpp and llama-model.cpp; docs/export.md):
// - scaled RoPE alone: architecture llama with `rope.scaling.type` linear / yarn, `rope.scaling.factor` and
//   `rope.scaling.original_context_length`. llama.cpp's YaRN (ggml rope_yarn with yarn_ext_factor 1, the attention
//   factor 0.1 ln(factor) + 1 set in llama_context) is transformers' with the default betas 32 / 1, which
//   llama.cpp does not read from a file: other betas are refused.
// - sliding windows: granite_swa (src/models/granite-swa.cpp), a Llama block over an iSWA KV cache:
//   `attention.sliding_window` W and a per-layer `attention.sliding_window_pattern`; llama.cpp's standard window
//   masks p0 when p1 - p0 >= W, so a row attends W positions with its own, as spec.slidingWindow does. Its
//   required per-head attention sinks are written as -1e30 (exp underflows to 0: no sink), its required
//   logit_scale as 1; it rotates every layer with the model's own (scaled) RoPE.
// - hybrid Mamba2 layers: granitehybrid (gguf-hybrid.ts).
// Tokenizer and specconf.* keys are gguf.ts's, so a family file is read the way a Llama one is.
import type { LoadedModels } from "../case/models.ts";
import { YARN_BETA_FAST, YARN_BETA_SLOW } from "../model/rope-scaling.ts";
import { draftLogitScale, type DraftSpec, type ModelSpec } from "../model/spec.ts";
import type { TargetWeights } from "../model/weights.ts";
import { writeGguf, type GgufTensor, type GgufValue } from "./gguf-format.ts";
import { ggufFiles, layerTensors, linear, tokenizerMetadata, type GgufFiles, type GgufIdentity } from "./gguf.ts";
import { standaloneDraftWeights } from "./standalone-draft.ts";
import { hybridGgufUnsupported, hybridLayerTensors, hybridMetadata } from "./gguf-hybrid.ts";

/** The sink logit of "no sink": exp(-1e30 - max) is 0 in float32, so the softmax is the plain one. */
export const NO_SINK = -1e30;

/** The llama.cpp architecture of a spec: llama, granite_swa or granitehybrid. */
export function ggufArchitecture(spec: ModelSpec): string {
  if (spec.recurrent) return "granitehybrid";
  if (spec.slidingWindow) return "granite_swa";
  return "llama";
}

/** Why llama.cpp cannot run the spec's family exactly (undefined: it can). */
export function ggufFamilyUnsupported(spec: ModelSpec): string | undefined {
  const scaling = spec.ropeScaling;
  if (
    scaling?.type === "yarn" &&
    ((scaling.betaFast ?? YARN_BETA_FAST) !== YARN_BETA_FAST || (scaling.betaSlow ?? YARN_BETA_SLOW) !== YARN_BETA_SLOW)
  )
    return `YaRN betas other than ${YARN_BETA_FAST} / ${YARN_BETA_SLOW} (llama.cpp reads no yarn_beta_* key from a model file)`;
  if (spec.recurrent && spec.slidingWindow) return "hybrid layers with sliding windows (no llama.cpp architecture)";
  if (spec.recurrent) return hybridGgufUnsupported(spec);
  return undefined;
}

function ropeScalingMetadata(arch: string, spec: ModelSpec): [string, GgufValue][] {
  const scaling = spec.ropeScaling;
  if (!scaling) return [];
  const entries: [string, GgufValue][] = [
    [`${arch}.rope.scaling.type`, { type: "string", value: scaling.type }],
    [`${arch}.rope.scaling.factor`, { type: "float32", value: scaling.factor }],
  ];
  if (scaling.type === "yarn")
    entries.push([
      `${arch}.rope.scaling.original_context_length`,
      { type: "uint32", value: scaling.originalMaxPositions },
    ]);
  return entries;
}

/** The keys every family file has (gguf.ts's llama set under the family's architecture name). */
function commonMetadata(arch: string, spec: ModelSpec, layers: number, identity: GgufIdentity): [string, GgufValue][] {
  const u32 = (value: number): GgufValue => ({ type: "uint32", value });
  const entries: [string, GgufValue][] = [
    ["general.architecture", { type: "string", value: arch }],
    ["general.name", { type: "string", value: `${spec.name}-${identity.role}` }],
    ["general.file_type", u32(0)], // ALL_F32
    [`${arch}.vocab_size`, u32(spec.vocab)],
    [`${arch}.context_length`, u32(spec.maxPositions)],
    [`${arch}.embedding_length`, u32(spec.hidden)],
    [`${arch}.block_count`, u32(layers)],
    [`${arch}.feed_forward_length`, u32(spec.intermediate)],
    [`${arch}.rope.dimension_count`, u32(spec.headDim)],
    [`${arch}.attention.head_count`, u32(spec.heads)],
    [`${arch}.attention.key_length`, u32(spec.headDim)],
    [`${arch}.attention.value_length`, u32(spec.headDim)],
    [`${arch}.attention.layer_norm_rms_epsilon`, { type: "float32", value: spec.rmsEps }],
    [`${arch}.rope.freq_base`, { type: "float32", value: spec.ropeTheta }],
    ...ropeScalingMetadata(arch, spec),
    ...tokenizerMetadata(spec),
    ["specconf.role", { type: "string", value: identity.role }],
    ["specconf.onnx_digest", { type: "string", value: identity.onnxDigest }],
    ["specconf.spec", { type: "string", value: JSON.stringify(spec) }],
    ["specconf.source_dtype", { type: "string", value: spec.dtype }],
  ];
  if (identity.draftKind) entries.push(["specconf.draft_kind", { type: "string", value: identity.draftKind }]);
  if (identity.logitScale !== undefined)
    entries.push(["specconf.logit_scale", { type: "float32", value: identity.logitScale }]);
  if (identity.suite) entries.push(["specconf.suite", { type: "string", value: identity.suite }]);
  return entries;
}

function graniteSwaMetadata(spec: ModelSpec, layers: number): [string, GgufValue][] {
  const window = spec.slidingWindow!;
  const pattern = Uint32Array.from({ length: layers }, (_, l) => (window.layers.includes(l) ? 1 : 0));
  return [
    ["granite_swa.attention.head_count_kv", { type: "uint32", value: spec.kvHeads }],
    ["granite_swa.logit_scale", { type: "float32", value: 1 }],
    ["granite_swa.attention.sliding_window", { type: "uint32", value: window.size }],
    ["granite_swa.attention.sliding_window_pattern", { type: "array", items: "uint32", value: pattern }],
  ];
}

/**
 * The GGUF of a family spec's stack (the target, or a standalone draft: its copy or first layers). Throws with
 * ggufFamilyUnsupported's reason when llama.cpp cannot run it exactly.
 */
export function familyGguf(spec: ModelSpec, weights: TargetWeights, identity: GgufIdentity): Uint8Array {
  const unsupported = ggufFamilyUnsupported(spec);
  if (unsupported) throw new Error(`no GGUF of ${spec.name}: ${unsupported}`);
  const arch = ggufArchitecture(spec);
  const layers = weights.layers.length;
  const metadata = new Map<string, GgufValue>(commonMetadata(arch, spec, layers, identity));
  let blocks: GgufTensor[];
  if (arch === "granitehybrid") {
    for (const [key, value] of hybridMetadata(spec, layers)) metadata.set(key, value);
    blocks = weights.layers.flatMap((layer, l) =>
      layer.mamba ? hybridLayerTensors(spec, l, layer) : layerTensors(spec, l, layer),
    );
  } else {
    if (arch === "granite_swa") for (const [key, value] of graniteSwaMetadata(spec, layers)) metadata.set(key, value);
    else metadata.set("llama.attention.head_count_kv", { type: "uint32", value: spec.kvHeads });
    blocks = weights.layers.flatMap((layer, l) => [
      ...layerTensors(spec, l, layer),
      ...(arch === "granite_swa"
        ? [{ name: `blk.${l}.attn_sinks.weight`, dims: [spec.heads], data: new Float64Array(spec.heads).fill(NO_SINK) }]
        : []),
    ]);
  }
  const tensors: GgufTensor[] = [
    { name: "token_embd.weight", dims: [spec.hidden, spec.vocab], data: weights.embed },
    ...blocks,
    { name: "output_norm.weight", dims: [spec.hidden], data: weights.finalNorm },
    linear("output.weight", weights.lmHead, spec.hidden, spec.vocab),
  ];
  return writeGguf(metadata, tensors);
}

/** Whether the spec needs a family file rather than gguf.ts's plain llama one. */
export function isFamilySpec(spec: ModelSpec): boolean {
  return Boolean(spec.recurrent || spec.slidingWindow || spec.ropeScaling);
}

/**
 * gguf.ts's ggufFiles for every spec: a plain spec's files are its, a family spec's target and standalone draft
 * (mirror, truncated-mirror, noisy-mirror) are written here; trained heads have no family form.
 */
export function modelGgufFiles(models: LoadedModels, draft?: DraftSpec | null, suite?: string): GgufFiles {
  const spec = models.spec;
  if (!isFamilySpec(spec)) return ggufFiles(models, draft, suite);
  const notes: string[] = [];
  if (spec.dtype === "float64")
    notes.push("float64 spec: weights rounded to F32 (llama.cpp runs F32); margins below ~1e-5 may flip");
  const onnxDigest = models.target.graph.digest;
  const target = familyGguf(spec, models.target.weights, { role: "target", onnxDigest, suite });
  if (!draft) return { target, notes };
  const weights = standaloneDraftWeights(models, draft);
  if (typeof weights === "string") return { target, notes: [...notes, `no standalone draft: ${weights}`] };
  const draftFile = familyGguf(spec, weights, {
    role: "standalone-draft",
    onnxDigest: models.draft?.graphs[0].digest ?? onnxDigest,
    draftKind: draft.kind,
    logitScale: draftLogitScale(draft),
    suite,
  });
  return { target, draft: draftFile, notes };
}
