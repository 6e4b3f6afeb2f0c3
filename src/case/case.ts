// The case: the one input format shared by run, replay, golden suites and the external adapter.
import { Type, type Static } from "@sinclair/typebox";
import { EngineConfigSchema } from "../engine/config.ts";
import { DRAFT_KINDS } from "../model/spec.ts";
import { SamplingParamsSchema } from "../sampling/params.ts";

export const CASE_FORMAT_VERSION = 1;

export const ModelSpecSchema = Type.Object(
  {
    name: Type.String(),
    vocab: Type.Integer({ minimum: 2 }),
    hidden: Type.Integer({ minimum: 1 }),
    layers: Type.Integer({ minimum: 1 }),
    heads: Type.Integer({ minimum: 1 }),
    kvHeads: Type.Integer({ minimum: 1 }),
    headDim: Type.Integer({ minimum: 2 }),
    intermediate: Type.Integer({ minimum: 1 }),
    ropeTheta: Type.Number({ exclusiveMinimum: 0 }),
    maxPositions: Type.Integer({ minimum: 1 }),
    dtype: Type.Union([Type.Literal("float32"), Type.Literal("float64")]),
    seed: Type.Integer(),
    bosId: Type.Integer({ minimum: 0 }),
    eosId: Type.Integer({ minimum: 0 }),
    preamble: Type.Array(Type.Integer({ minimum: 0 }), { minItems: 1 }),
    rmsEps: Type.Number({ exclusiveMinimum: 0 }),
    logitStd: Type.Number({ exclusiveMinimum: 0 }),
    residualScale: Type.Optional(
      Type.Object(
        { fromLayer: Type.Integer({ minimum: 0 }), factor: Type.Number({ minimum: 0 }) },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export const DraftSpecSchema = Type.Object(
  {
    kind: Type.Union(DRAFT_KINDS.map((kind) => Type.Literal(kind))),
    noiseAlpha: Type.Number({ minimum: 0 }),
    tapDelta: Type.Number({ minimum: 0 }),
    truncatedLayers: Type.Integer({ minimum: 1 }),
    seed: Type.Integer(),
  },
  { additionalProperties: false },
);

export const CaseRequestSchema = Type.Object(
  {
    id: Type.Integer({ minimum: 0 }),
    prompt: Type.Array(Type.Integer({ minimum: 0 }), { minItems: 1 }),
    maxNewTokens: Type.Integer({ minimum: 1 }),
    /** The step before which the request is added. */
    arrivalStep: Type.Integer({ minimum: 0 }),
    /** Stop ids, min new tokens, penalties, logit bias, logprobs (src/sampling/params.ts); greedy either way. */
    sampling: Type.Optional(SamplingParamsSchema),
  },
  { additionalProperties: false },
);

export const AbortSchema = Type.Object(
  {
    request: Type.Integer({ minimum: 0 }),
    step: Type.Integer({ minimum: 0 }),
    /** Abort before this forward of the step (0 = before the step's first forward; past the last = after the step). */
    beforeForward: Type.Integer({ minimum: 0 }),
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
