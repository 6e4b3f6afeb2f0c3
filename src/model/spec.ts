// ModelSpec: everything that determines a generated model. Same spec -> same weights -> same ONNX bytes.
import { BadInputError } from "../errors/bad-input.ts";
import { checkRopeScaling, type RopeScaling } from "./rope-scaling.ts";
import { checkRecurrent, type RecurrentSpec } from "./mamba2.ts";
import { bigramMisfit } from "./bigram.ts";

export type Dtype = "float32" | "float64";

export interface ModelSpec {
  name: string;
  vocab: number;
  hidden: number;
  layers: number;
  heads: number;
  kvHeads: number;
  headDim: number;
  intermediate: number;
  ropeTheta: number;
  maxPositions: number;
  dtype: Dtype;
  seed: number;
  bosId: number;
  eosId: number;
  /** BOS followed by fixed tokens; prompts are preamble ++ suffix (multi-layer mirror modules need x_0..x_{S-1} fixed). */
  preamble: number[];
  rmsEps: number;
  /** Standard deviation of the target's logits; sets the top-1 margins. */
  logitStd: number;
  /**
   * Scales the residual contributions (attention output and MLP down projections) of layers from
   * `fromLayer` on: small factors make a truncated mirror (the first layers) agree with the target
   * often, a cheap draft for speed measurements.
   */
  residualScale?: { fromLayer: number; factor: number };
  /**
   * Sliding-window attention (gpt-oss, Gemma 3, Mistral): the listed layers attend only the `size` most
   * recent positions, the row's own included (position p attends p - size + 1 .. p, gpt-oss's convention);
   * the other layers attend every earlier position. Absent: every layer attends everything.
   */
  slidingWindow?: { size: number; layers: number[] };
  /** Scaled RoPE (linear or YaRN, as transformers' rope_scaling): model/rope-scaling.ts. Absent: plain RoPE. */
  ropeScaling?: RopeScaling;
  /**
   * Hybrid models (Bamba, Granite 4 hybrids, Nemotron-H, Falcon-H1): the listed layers mix with a Mamba2 block
   * (per-request recurrent state) instead of attention: model/mamba2.ts. Absent: every layer attends.
   */
  recurrent?: RecurrentSpec;
  /**
   * The bigram family (model/bigram.ts): every attention output projection zero, the embedding a constant channel
   * plus a one-hot per token, so the next token depends on the current one only (the EAGLE-3 oracle's target).
   */
  bigram?: boolean;
}

export type DraftKind =
  "mirror" | "tapped-mirror" | "noisy-mirror" | "truncated-mirror" | "eagle" | "eagle3" | "eagle3-mirror" | "ngram";
/** Model drafts (a graph each): what the reference engine runs. */
export const MODEL_DRAFT_KINDS = [
  "mirror",
  "tapped-mirror",
  "noisy-mirror",
  "truncated-mirror",
  "eagle",
  "eagle3",
  "eagle3-mirror",
] as const;
/**
 * EAGLE-3 drafts: fed the target's auxiliary hidden states (3 chosen layers) through fc, drafting over their
 * own vocabulary mapped to target ids by d2t. "eagle3" is the head in the checkpoint layout SGLang and vLLM
 * load; "eagle3-mirror" the mirror with an EAGLE-3 input path and a permuted draft vocabulary (accepts all).
 */
export const EAGLE3_DRAFT_KINDS: readonly DraftKind[] = ["eagle3", "eagle3-mirror"];
/**
 * Standalone drafts: ordinary causal LMs over the token sequence (the target's copy, a perturbed copy, its first
 * layers), taking no hidden state, so a row's prediction is a function of the tokens before it alone. What
 * draft-model engines run (a Llama checkpoint or GGUF of its own); the draft reference law reads their rows
 * from the tokens (laws/draft-rows.ts). The tapped mirror is mirror-family but reads the hidden state.
 */
export const STANDALONE_DRAFT_KINDS: readonly DraftKind[] = ["mirror", "noisy-mirror", "truncated-mirror"];

export function isStandaloneDraft(kind: DraftKind | undefined): boolean {
  return kind !== undefined && STANDALONE_DRAFT_KINDS.includes(kind);
}

/**
 * Every draft kind a case can name. "ngram" is prompt lookup (no model: drafts are copied from earlier tokens
 * of the request), run by external engines; the reference engine does not implement it yet.
 */
export const DRAFT_KINDS: readonly DraftKind[] = [...MODEL_DRAFT_KINDS, "ngram"];

export interface DraftSpec {
  kind: DraftKind;
  /** noisy-mirror: relative weight perturbation. */
  noiseAlpha: number;
  /** tapped-mirror: scale of the hidden-state tap, in unscaled logit units. */
  tapDelta: number;
  /** truncated-mirror: number of target layers kept. */
  truncatedLayers: number;
  /** seed for the draft's own weights (eagle head, noise, tap). */
  seed: number;
  /**
   * EAGLE-3: the checkpoint's eagle_aux_hidden_state_layer_ids, the residual streams that feed fc (default
   * eagle3AuxLayers(spec)); id k names the input of target layer k (k = layers: the last layer's output, before
   * the final norm), as vLLM, the EAGLE authors and llama.cpp read it (docs/design.md).
   */
  auxLayers?: number[];
  /** EAGLE-3: one RMSNorm over the concatenated auxiliary states before fc (the checkpoint's norm_before_fc). */
  normBeforeFc?: boolean;
  /** EAGLE-3: the draft vocabulary's size (eagle3: default half the target's; eagle3-mirror: always the target's). */
  draftVocab?: number;
  /**
   * eagle3: the oracle head (model/eagle3-oracle.ts) instead of random weights, for a bigram target: greedy drafts
   * that accept every draft, read from every auxiliary state in the checkpoint's order. Its draft vocabulary is a
   * permutation of the target's.
   */
  oracle?: boolean;
}

/** Mirror logits are scaled by 2^16: exact in binary floating point, argmax unchanged (docs/design.md section 2). */
export const MIRROR_LOGIT_SCALE = 65536;

export function defaultDraftSpec(kind: DraftKind, seed = 1, eagle3: Pick<DraftSpec, "normBeforeFc"> = {}): DraftSpec {
  const spec: DraftSpec = { kind, noiseAlpha: 0.2, tapDelta: 0.1, truncatedLayers: 1, seed };
  return isEagle3(kind) && eagle3.normBeforeFc ? { ...spec, normBeforeFc: true } : spec;
}

export function isEagle3(kind: DraftKind | undefined): boolean {
  return kind === "eagle3" || kind === "eagle3-mirror";
}

/** Trained heads (EAGLE, EAGLE-3): no mirror of the target inside, so no BOS or preamble requirement. */
export function isHead(kind: DraftKind | undefined): boolean {
  return kind === "eagle" || kind === "eagle3";
}

/** The factor the draft's logits carry relative to target logit units (tie thresholds scale with it). */
export function draftLogitScale(draft: DraftSpec): number {
  return isHead(draft.kind) ? 1 : MIRROR_LOGIT_SCALE;
}

/**
 * Default auxiliary layers: the engines' default, the inputs of layers 2, L/2 and L-3 (vLLM's
 * LlamaForCausalLM.get_eagle3_aux_hidden_state_layers, SGLang's and llama.cpp's converter's fallback, the EAGLE
 * authors' capture), where it names three distinct layers (L >= 7). Smaller targets (the presets have 2 to 8
 * layers) take the inputs of the first, the middle and the last layer: distinct from 3 layers up, and below the
 * last layer's output (vLLM's LlamaModel.forward loop never captures it; llama.cpp's llama graph sets no
 * t_h_nextn for it); 2 layers repeat an id.
 */
export function eagle3AuxLayers(spec: ModelSpec): number[] {
  const layers = spec.layers;
  if (layers >= 7) return [2, Math.floor(layers / 2), layers - 3];
  return [0, Math.floor(layers / 2), layers - 1];
}

/** What an EAGLE-3 draft spec resolves to against its target: the checkpoint's config fields. */
export interface Eagle3Options {
  auxLayers: number[];
  normBeforeFc: boolean;
  draftVocab: number;
}

export function eagle3Options(spec: ModelSpec, draft: DraftSpec): Eagle3Options {
  return {
    auxLayers: draft.auxLayers ?? eagle3AuxLayers(spec),
    normBeforeFc: draft.normBeforeFc ?? false,
    draftVocab:
      draft.kind === "eagle3-mirror" || draft.oracle ? spec.vocab : (draft.draftVocab ?? Math.ceil(spec.vocab / 2)),
  };
}

/** Throws SpecError (field "draft.<name>") for EAGLE-3 options the target cannot serve. */
export function validateEagle3Options(spec: ModelSpec, draft: DraftSpec): void {
  if (draft.oracle && draft.kind !== "eagle3")
    throw new SpecError("draft.oracle", "only an eagle3 head can be the oracle");
  if (!isEagle3(draft.kind)) return;
  const options = eagle3Options(spec, draft);
  if (options.auxLayers.length < 1) throw new SpecError("draft.auxLayers", "must name at least one target layer");
  // Id k is the input of layer k; k = layers is the last layer's output, so 0..layers are streams.
  options.auxLayers.forEach((layer) => {
    if (!Number.isInteger(layer) || layer < 0 || layer > spec.layers)
      throw new SpecError(
        "draft.auxLayers",
        `layer ${layer} is not a residual stream of the ${spec.layers}-layer target (0..${spec.layers})`,
      );
  });
  if (draft.kind === "eagle3-mirror" && draft.draftVocab !== undefined && draft.draftVocab !== spec.vocab)
    throw new SpecError("draft.draftVocab", `eagle3-mirror drafts over the whole target vocabulary (${spec.vocab})`);
  if (!Number.isInteger(options.draftVocab) || options.draftVocab < 2 || options.draftVocab > spec.vocab)
    throw new SpecError("draft.draftVocab", `must be an integer in [2, ${spec.vocab}]`);
  if (draft.oracle) validateEagle3Oracle(spec, draft);
}

/** The oracle's fit (model/eagle3-oracle.ts says why each is needed). */
function validateEagle3Oracle(spec: ModelSpec, draft: DraftSpec): void {
  if (!spec.bigram) throw new SpecError("draft.oracle", "the EAGLE-3 oracle drafts for a bigram target (model bigram)");
  if (draft.draftVocab !== undefined && draft.draftVocab !== spec.vocab)
    throw new SpecError(
      "draft.draftVocab",
      `the EAGLE-3 oracle drafts over the whole target vocabulary (${spec.vocab})`,
    );
  if (spec.kvHeads * spec.headDim < spec.vocab)
    throw new SpecError("draft.oracle", `needs kvHeads * headDim >= vocab (${spec.vocab}): a value channel per token`);
}

/** An impossible model spec (exit 2); `field` is the spec's key ("vocab"), the message starts with it. */
export class SpecError extends BadInputError {
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${field}: ${reason}`);
    this.name = "SpecError";
  }
}

/** Throws SpecError naming the first impossible field. */
export function validateModelSpec(spec: ModelSpec): void {
  const positive: (keyof ModelSpec)[] = [
    "vocab",
    "hidden",
    "layers",
    "heads",
    "kvHeads",
    "headDim",
    "intermediate",
    "maxPositions",
  ];
  for (const field of positive) {
    const value = spec[field];
    if (typeof value !== "number" || !Number.isInteger(value) || value < 1)
      throw new SpecError(field, `must be an integer >= 1, got ${JSON.stringify(value)}`);
  }
  if (spec.heads % spec.kvHeads !== 0) throw new SpecError("heads", `must be a multiple of kvHeads (${spec.kvHeads})`);
  if (spec.headDim % 2 !== 0) throw new SpecError("headDim", "must be even (RoPE rotates pairs)");
  if (spec.dtype !== "float32" && spec.dtype !== "float64") throw new SpecError("dtype", `must be float32 or float64`);
  for (const field of ["bosId", "eosId"] as const) {
    if (!Number.isInteger(spec[field]) || spec[field] < 0 || spec[field] >= spec.vocab)
      throw new SpecError(field, `must be a token id below vocab`);
  }
  if (spec.preamble.length < 1 || spec.preamble[0] !== spec.bosId)
    throw new SpecError("preamble", "must start with bosId");
  if (spec.preamble.some((t) => !Number.isInteger(t) || t < 0 || t >= spec.vocab))
    throw new SpecError("preamble", "token ids must be below vocab");
  validateSlidingWindow(spec);
  const bigram = bigramMisfit(spec);
  if (bigram) throw new SpecError(...bigram);
  if (spec.recurrent !== undefined)
    checkRecurrent(spec.recurrent, spec.layers, (field, reason) => {
      throw new SpecError(field, reason);
    });
  if (spec.ropeScaling !== undefined)
    checkRopeScaling(spec.ropeScaling, (field, reason) => {
      throw new SpecError(field, reason);
    });
}

function validateSlidingWindow(spec: ModelSpec): void {
  const window = spec.slidingWindow;
  if (window === undefined) return;
  if (!Number.isInteger(window.size) || window.size < 1)
    throw new SpecError("slidingWindow/size", `must be an integer >= 1, got ${JSON.stringify(window.size)}`);
  if (!Array.isArray(window.layers) || window.layers.length < 1)
    throw new SpecError("slidingWindow/layers", "must name at least one layer");
  window.layers.forEach((layer, i) => {
    if (!Number.isInteger(layer) || layer < 0 || layer >= spec.layers)
      throw new SpecError(
        `slidingWindow/layers/${i}`,
        `layer ${layer} is not a layer of the ${spec.layers}-layer model`,
      );
    if (window.layers.indexOf(layer) !== i)
      throw new SpecError(`slidingWindow/layers/${i}`, `layer ${layer} is listed twice`);
  });
}

/**
 * Issue 29's model families: what an engine declares it runs (capabilities.modelFamilies) beside plain Llama.
 * Each is exported in the architecture that computes it exactly (src/export/hf-families.ts, gguf-families.ts).
 */
export const MODEL_FAMILIES = ["sliding-window", "rope-scaling", "hybrid"] as const;
export type ModelFamily = (typeof MODEL_FAMILIES)[number];

const FAMILY_NAMES: Record<ModelFamily, (spec: ModelSpec) => string> = {
  "sliding-window": () => "sliding-window attention",
  "rope-scaling": (spec) => `${spec.ropeScaling!.type}-scaled RoPE`,
  hybrid: () => "hybrid recurrent (Mamba2) layers",
};

/** The families a spec belongs to (empty: plain Llama). */
export function modelFamiliesOf(spec: ModelSpec): ModelFamily[] {
  const families: ModelFamily[] = [];
  if (spec.recurrent) families.push("hybrid");
  if (spec.slidingWindow) families.push("sliding-window");
  if (spec.ropeScaling) families.push("rope-scaling");
  return families;
}

/** The first family of the spec an engine declaring `declared` does not run, in words (undefined: none). */
export function modelFamilyOutside(spec: ModelSpec, declared: readonly string[] = []): string | undefined {
  const missing = modelFamiliesOf(spec).find((family) => !declared.includes(family));
  return missing && `${FAMILY_NAMES[missing](spec)} (modelFamilies: ${missing} not declared)`;
}

export function kvDim(spec: ModelSpec): number {
  return spec.kvHeads * spec.headDim;
}
