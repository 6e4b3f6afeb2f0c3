// ModelSpec: everything that determines a generated model. Same spec -> same weights -> same ONNX bytes.
import { BadInputError } from "../errors/bad-input.ts";

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
}

export type DraftKind = "mirror" | "tapped-mirror" | "noisy-mirror" | "truncated-mirror" | "eagle" | "ngram";
/** Model drafts (a graph each): what the reference engine runs. */
export const MODEL_DRAFT_KINDS = ["mirror", "tapped-mirror", "noisy-mirror", "truncated-mirror", "eagle"] as const;
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
}

/** Mirror logits are scaled by 2^16: exact in binary floating point, argmax unchanged (DESIGN section 2). */
export const MIRROR_LOGIT_SCALE = 65536;

export function defaultDraftSpec(kind: DraftKind, seed = 1): DraftSpec {
  return { kind, noiseAlpha: 0.2, tapDelta: 0.1, truncatedLayers: 1, seed };
}

/** The factor the draft's logits carry relative to target logit units (tie thresholds scale with it). */
export function draftLogitScale(draft: DraftSpec): number {
  return draft.kind === "eagle" ? 1 : MIRROR_LOGIT_SCALE;
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
}

export function kvDim(spec: ModelSpec): number {
  return spec.kvHeads * spec.headDim;
}
