// The case: the one input format shared by run, replay, golden suites and the external adapter.
import { Type, type Static } from "@sinclair/typebox";
import { EngineConfigSchema } from "./engine-config.ts";
import { DRAFT_KINDS } from "../model/spec.ts";
import { SamplingParamsSchema } from "../sampling/params.ts";

export const CASE_FORMAT_VERSION = 1;

/**
 * Every count, id, step and size is a 32-bit integer, every seed a safe integer: JSON allows 1e300, which
 * is an "integer" to JSON Schema but nothing an engine can index with. Semantic limits (sizes against the
 * model, the pool, the machine) are src/case/limits.ts.
 */
export const INT32_MAX = 2 ** 31 - 1;
const SEED = Type.Integer({ minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER });

export const ModelSpecSchema = Type.Object(
  {
    name: Type.String(),
    vocab: Type.Integer({ minimum: 2, maximum: INT32_MAX }),
    hidden: Type.Integer({ minimum: 1, maximum: INT32_MAX }),
    layers: Type.Integer({ minimum: 1, maximum: INT32_MAX }),
    heads: Type.Integer({ minimum: 1, maximum: INT32_MAX }),
    kvHeads: Type.Integer({ minimum: 1, maximum: INT32_MAX }),
    headDim: Type.Integer({ minimum: 2, maximum: INT32_MAX }),
    intermediate: Type.Integer({ minimum: 1, maximum: INT32_MAX }),
    ropeTheta: Type.Number({ exclusiveMinimum: 0, maximum: 1e12 }),
    maxPositions: Type.Integer({ minimum: 1, maximum: INT32_MAX }),
    dtype: Type.Union([Type.Literal("float32"), Type.Literal("float64")]),
    seed: SEED,
    bosId: Type.Integer({ minimum: 0, maximum: INT32_MAX }),
    eosId: Type.Integer({ minimum: 0, maximum: INT32_MAX }),
    preamble: Type.Array(Type.Integer({ minimum: 0, maximum: INT32_MAX }), { minItems: 1 }),
    rmsEps: Type.Number({ exclusiveMinimum: 0, maximum: 1 }),
    logitStd: Type.Number({ exclusiveMinimum: 0, maximum: 1e4 }),
    residualScale: Type.Optional(
      Type.Object(
        {
          fromLayer: Type.Integer({ minimum: 0, maximum: INT32_MAX }),
          factor: Type.Number({ minimum: 0, maximum: 1e4 }),
        },
        { additionalProperties: false },
      ),
    ),
    /** Sliding-window attention: the listed layers attend the `size` most recent positions (their own included). */
    slidingWindow: Type.Optional(
      Type.Object(
        {
          size: Type.Integer({ minimum: 1, maximum: INT32_MAX }),
          layers: Type.Array(Type.Integer({ minimum: 0, maximum: INT32_MAX }), { minItems: 1, maxItems: 1024 }),
        },
        { additionalProperties: false },
      ),
    ),
    /** Scaled RoPE, as transformers' rope_scaling: linear (factor) or YaRN (factor, the original context, betas). */
    ropeScaling: Type.Optional(
      Type.Union([
        Type.Object(
          { type: Type.Literal("linear"), factor: Type.Number({ minimum: 1, maximum: 1e6 }) },
          { additionalProperties: false },
        ),
        Type.Object(
          {
            type: Type.Literal("yarn"),
            factor: Type.Number({ minimum: 1, maximum: 1e6 }),
            originalMaxPositions: Type.Integer({ minimum: 1, maximum: INT32_MAX }),
            betaFast: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 1e6 })),
            betaSlow: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 1e6 })),
          },
          { additionalProperties: false },
        ),
      ]),
    ),
  },
  { additionalProperties: false },
);

export const DraftSpecSchema = Type.Object(
  {
    kind: Type.Union(DRAFT_KINDS.map((kind) => Type.Literal(kind))),
    noiseAlpha: Type.Number({ minimum: 0, maximum: 1e4 }),
    tapDelta: Type.Number({ minimum: 0, maximum: 1e4 }),
    truncatedLayers: Type.Integer({ minimum: 1, maximum: INT32_MAX }),
    seed: SEED,
    /** EAGLE-3 (eagle3, eagle3-mirror): the checkpoint's eagle_aux_hidden_state_layer_ids, each naming a target layer's output. */
    auxLayers: Type.Optional(
      Type.Array(Type.Integer({ minimum: 0, maximum: INT32_MAX }), { minItems: 1, maxItems: 64 }),
    ),
    /** EAGLE-3: the checkpoint's norm_before_fc (one RMSNorm over the concatenated auxiliary states before fc). */
    normBeforeFc: Type.Optional(Type.Boolean()),
    /** EAGLE-3 head: its draft vocabulary's size (default half the target's; eagle3-mirror: the target's). */
    draftVocab: Type.Optional(Type.Integer({ minimum: 2, maximum: INT32_MAX })),
  },
  { additionalProperties: false },
);

export const CaseRequestSchema = Type.Object(
  {
    id: Type.Integer({ minimum: 0, maximum: INT32_MAX }),
    prompt: Type.Array(Type.Integer({ minimum: 0, maximum: INT32_MAX }), { minItems: 1 }),
    maxNewTokens: Type.Integer({ minimum: 1, maximum: INT32_MAX }),
    /** The step before which the request is added. */
    arrivalStep: Type.Integer({ minimum: 0, maximum: INT32_MAX }),
    /** Stop ids, min new tokens, penalties, logit bias, logprobs (src/sampling/params.ts); greedy either way. */
    sampling: Type.Optional(SamplingParamsSchema),
  },
  { additionalProperties: false },
);

export const AbortSchema = Type.Object(
  {
    request: Type.Integer({ minimum: 0, maximum: INT32_MAX }),
    step: Type.Integer({ minimum: 0, maximum: INT32_MAX }),
    /** Abort before this forward of the step (0 = before the step's first forward; past the last = after the step). */
    beforeForward: Type.Integer({ minimum: 0, maximum: INT32_MAX }),
  },
  { additionalProperties: false },
);

export const CaseSchema = Type.Object(
  {
    formatVersion: Type.Literal(CASE_FORMAT_VERSION),
    model: Type.Union([
      Type.Object({ preset: Type.String() }, { additionalProperties: false }),
      Type.Object({ spec: ModelSpecSchema }, { additionalProperties: false }),
    ]),
    /** null: no draft (target-only mode only). */
    draft: Type.Union([DraftSpecSchema, Type.Null()]),
    engine: EngineConfigSchema,
    workload: Type.Object(
      {
        requests: Type.Array(CaseRequestSchema, { minItems: 1 }),
        aborts: Type.Array(AbortSchema),
        /** Retracts (same timing fields as aborts): the request resumes by re-prefilling. */
        retracts: Type.Optional(Type.Array(AbortSchema)),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export type Case = Static<typeof CaseSchema>;
export type CaseRequest = Static<typeof CaseRequestSchema>;
export type AbortEvent = Static<typeof AbortSchema>;
