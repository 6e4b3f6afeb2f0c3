// The case: the one input format shared by run, replay, golden suites and the external adapter.
import { CloneType, Type, type Static } from "@sinclair/typebox";
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
    name: Type.String({ description: "The model's name (a preset's name, or any label for a custom spec)." }),
    vocab: Type.Integer({ minimum: 2, maximum: INT32_MAX, description: "Vocabulary size: token ids are 0..vocab-1." }),
    hidden: Type.Integer({ minimum: 1, maximum: INT32_MAX, description: "Hidden size (the residual stream's width)." }),
    layers: Type.Integer({ minimum: 1, maximum: INT32_MAX, description: "Number of decoder layers." }),
    heads: Type.Integer({ minimum: 1, maximum: INT32_MAX, description: "Attention (query) heads per layer." }),
    kvHeads: Type.Integer({
      minimum: 1,
      maximum: INT32_MAX,
      description: "Key/value heads per layer (grouped-query attention: heads is a multiple of kvHeads).",
    }),
    headDim: Type.Integer({
      minimum: 2,
      maximum: INT32_MAX,
      description: "Width of one attention head (even: RoPE rotates pairs).",
    }),
    intermediate: Type.Integer({
      minimum: 1,
      maximum: INT32_MAX,
      description: "Width of the SwiGLU MLP's hidden layer.",
    }),
    ropeTheta: Type.Number({ exclusiveMinimum: 0, maximum: 1e12, description: "RoPE base frequency." }),
    maxPositions: Type.Integer({
      minimum: 1,
      maximum: INT32_MAX,
      description: "Largest number of positions a request may reach (prompt + new tokens + verify rows).",
    }),
    dtype: Type.Union([Type.Literal("float32"), Type.Literal("float64")], {
      description: "Arithmetic of the model's graphs and weights: float32 or float64.",
    }),
    seed: CloneType(SEED, {
      description: "Seed of the generated weights: the same spec always yields the same model (and ONNX digest).",
    }),
    bosId: Type.Integer({
      minimum: 0,
      maximum: INT32_MAX,
      description: "Begin-of-sequence token id: every prompt starts with it; position 0 has no draft row.",
    }),
    eosId: Type.Integer({
      minimum: 0,
      maximum: INT32_MAX,
      description: "End-of-sequence token id: emitting it finishes a request (finish reason eos).",
    }),
    preamble: Type.Array(Type.Integer({ minimum: 0, maximum: INT32_MAX }), {
      minItems: 1,
      description:
        "Fixed prompt start (BOS first): generated prompts are preamble ++ a free suffix, so multi-layer mirror modules see fixed x_0..x_{S-1}.",
    }),
    rmsEps: Type.Number({ exclusiveMinimum: 0, maximum: 1, description: "RMSNorm epsilon." }),
    logitStd: Type.Number({
      exclusiveMinimum: 0,
      maximum: 1e4,
      description: "Target standard deviation of the logits the weights are scaled for (healthy top-1 margins).",
    }),
    residualScale: Type.Optional(
      Type.Object(
        {
          fromLayer: Type.Integer({
            minimum: 0,
            maximum: INT32_MAX,
            description: "First layer whose residual contribution is scaled.",
          }),
          factor: Type.Number({
            minimum: 0,
            maximum: 1e4,
            description: "Scale applied to those layers' residual contribution.",
          }),
        },
        {
          additionalProperties: false,
          description: "Scales the residual contribution of the deeper layers (a truncated mirror then accepts more).",
        },
      ),
    ),
    slidingWindow: Type.Optional(
      Type.Object(
        {
          size: Type.Integer({
            minimum: 1,
            maximum: INT32_MAX,
            description:
              "Window size: a windowed layer's row attends the size most recent positions, its own included.",
          }),
          layers: Type.Array(Type.Integer({ minimum: 0, maximum: INT32_MAX }), {
            minItems: 1,
            maxItems: 1024,
            description: "The layers with sliding-window attention (the others attend everything).",
          }),
        },
        {
          additionalProperties: false,
          description:
            "Sliding-window attention: the listed layers attend the `size` most recent positions (their own included).",
        },
      ),
    ),
    recurrent: Type.Optional(
      Type.Object(
        {
          layers: Type.Array(Type.Integer({ minimum: 0, maximum: INT32_MAX }), {
            minItems: 1,
            maxItems: 1024,
            description: "The layers whose mixer is a Mamba2 block (the others attend).",
          }),
          heads: Type.Integer({ minimum: 1, maximum: 4096, description: "mamba_n_heads." }),
          headDim: Type.Integer({ minimum: 1, maximum: 4096, description: "mamba_d_head." }),
          stateSize: Type.Integer({ minimum: 1, maximum: 4096, description: "mamba_d_state (N)." }),
          convKernel: Type.Integer({ minimum: 2, maximum: 64, description: "mamba_d_conv (K)." }),
        },
        {
          additionalProperties: false,
          description:
            "Hybrid models: the listed layers mix with a Mamba2 block (per-request recurrent state, one group) instead of attention, as Bamba and llama.cpp's mamba2 compute it.",
        },
      ),
    ),
    bigram: Type.Optional(
      Type.Boolean({
        description:
          "The bigram family: every attention output projection zero and a one-hot token embedding with a constant channel (the next token depends on the current one only; the EAGLE-3 oracle's target).",
      }),
    ),
    ropeScaling: Type.Optional(
      Type.Union(
        [
          Type.Object(
            {
              type: Type.Literal("linear", { description: "Linear scaling: positions divided by factor." }),
              factor: Type.Number({ minimum: 1, maximum: 1e6, description: "The scaling factor." }),
            },
            { additionalProperties: false },
          ),
          Type.Object(
            {
              type: Type.Literal("yarn", { description: "YaRN scaling, as transformers computes it." }),
              factor: Type.Number({ minimum: 1, maximum: 1e6, description: "The context extension factor." }),
              originalMaxPositions: Type.Integer({
                minimum: 1,
                maximum: INT32_MAX,
                description: "The original context length (rope_scaling.original_max_position_embeddings).",
              }),
              betaFast: Type.Optional(
                Type.Number({ exclusiveMinimum: 0, maximum: 1e6, description: "YaRN's beta_fast (default 32)." }),
              ),
              betaSlow: Type.Optional(
                Type.Number({ exclusiveMinimum: 0, maximum: 1e6, description: "YaRN's beta_slow (default 1)." }),
              ),
            },
            { additionalProperties: false },
          ),
        ],
        {
          description:
            "Scaled RoPE, as transformers' rope_scaling: linear (factor) or YaRN (factor, the original context, betas).",
        },
      ),
    ),
  },
  { additionalProperties: false },
);

export const DraftSpecSchema = Type.Object(
  {
    kind: Type.Union(
      DRAFT_KINDS.map((kind) => Type.Literal(kind)),
      {
        description:
          "Draft kind: mirror, tapped-mirror, noisy-mirror, truncated-mirror (standalone drafts of the mirror family), eagle, eagle3, eagle3-mirror (heads), ngram (prompt lookup, no model).",
      },
    ),
    noiseAlpha: Type.Number({
      minimum: 0,
      maximum: 1e4,
      description: "noisy-mirror: relative perturbation of the mirror's weights (partial acceptance).",
    }),
    tapDelta: Type.Number({
      minimum: 0,
      maximum: 1e4,
      description:
        "tapped-mirror and eagle3-mirror: weight of the tap added to every draft logit (small enough to keep the argmax).",
    }),
    truncatedLayers: Type.Integer({
      minimum: 1,
      maximum: INT32_MAX,
      description: "truncated-mirror: how many of the target's first layers the draft keeps.",
    }),
    seed: CloneType(SEED, {
      description: "Seed of the draft's own generated weights (EAGLE heads, noise, tap vector).",
    }),
    auxLayers: Type.Optional(
      Type.Array(Type.Integer({ minimum: 0, maximum: INT32_MAX }), {
        minItems: 1,
        maxItems: 64,
        description:
          "EAGLE-3 (eagle3, eagle3-mirror): the checkpoint's eagle_aux_hidden_state_layer_ids. Id k names the input of target layer k (its residual stream, layer_hidden[k]); k = the target's layer count names the last layer's output, before the final norm (as vLLM, the EAGLE authors and llama.cpp read it).",
      }),
    ),
    normBeforeFc: Type.Optional(
      Type.Boolean({
        description:
          "EAGLE-3: the checkpoint's norm_before_fc (one RMSNorm over the concatenated auxiliary states before fc).",
      }),
    ),
    draftVocab: Type.Optional(
      Type.Integer({
        minimum: 2,
        maximum: INT32_MAX,
        description:
          "EAGLE-3 head: its draft vocabulary's size (default half the target's; eagle3-mirror: the target's).",
      }),
    ),
    oracle: Type.Optional(
      Type.Boolean({
        description:
          "eagle3: the EAGLE-3 oracle head for a bigram target (greedy drafts that accept every draft, read from every auxiliary state in order); its draft vocabulary is a permutation of the target's.",
      }),
    ),
  },
  { additionalProperties: false },
);

export const CaseRequestSchema = Type.Object(
  {
    id: Type.Integer({
      minimum: 0,
      maximum: INT32_MAX,
      description: "Request id, unique within the case; outputs and trace rows name requests by it.",
    }),
    prompt: Type.Array(Type.Integer({ minimum: 0, maximum: INT32_MAX }), {
      minItems: 1,
      description: "Prompt token ids, BOS first.",
    }),
    maxNewTokens: Type.Integer({
      minimum: 1,
      maximum: INT32_MAX,
      description: "Cap on output tokens (finish reason length when reached).",
    }),
    arrivalStep: Type.Integer({
      minimum: 0,
      maximum: INT32_MAX,
      description: "The step before which the request is added.",
    }),
    sampling: Type.Optional(
      CloneType(SamplingParamsSchema, {
        description:
          "Stop ids, min new tokens, penalties, logit bias, logprobs (src/sampling/params.ts); greedy either way.",
      }),
    ),
    draftSchedule: Type.Optional(
      Type.Array(Type.Integer({ minimum: 0, maximum: INT32_MAX }), {
        maxItems: 4096,
        description:
          "Draft steps of the request's rounds in order (0: speculation off for that round), the engine's numSteps past its end (src/engine/draft-schedule.ts): speculation switched off and on, or resized, mid-request.",
      }),
    ),
  },
  { additionalProperties: false },
);

export const AbortSchema = Type.Object(
  {
    request: Type.Integer({ minimum: 0, maximum: INT32_MAX, description: "The request (id) it acts on." }),
    step: Type.Integer({ minimum: 0, maximum: INT32_MAX, description: "The engine step during which it lands." }),
    beforeForward: Type.Integer({
      minimum: 0,
      maximum: INT32_MAX,
      description:
        "Abort before this forward of the step (0 = before the step's first forward; past the last = after the step).",
    }),
  },
  { additionalProperties: false },
);

export const CaseSchema = Type.Object(
  {
    formatVersion: Type.Literal(CASE_FORMAT_VERSION, { description: "Case format version (1)." }),
    model: Type.Union(
      [
        Type.Object(
          {
            preset: Type.String({ description: "A preset name: tiny, tiny-f64, small-mha, small-gqa, medium, large." }),
          },
          { additionalProperties: false },
        ),
        Type.Object(
          { spec: CloneType(ModelSpecSchema, { description: "The full model spec." }) },
          { additionalProperties: false },
        ),
      ],
      {
        description:
          "The target model: a preset name ({preset}) or a full spec ({spec}); protocol requests and golden files always carry the full spec.",
      },
    ),
    draft: Type.Union([DraftSpecSchema, Type.Null()], { description: "null: no draft (target-only mode only)." }),
    engine: CloneType(EngineConfigSchema, {
      description:
        "The engine config: mode, S, K, N, chunking, paging, budget, pool, faults, scheduling modes, runtime.",
    }),
    workload: Type.Object(
      {
        requests: Type.Array(CaseRequestSchema, { minItems: 1, description: "The workload's requests." }),
        aborts: Type.Array(AbortSchema, {
          description: "Aborts: a request ends (finish reason abort) between two forwards of a step.",
        }),
        retracts: Type.Optional(
          Type.Array(AbortSchema, {
            description: "Retracts (same timing fields as aborts): the request resumes by re-prefilling.",
          }),
        ),
      },
      {
        additionalProperties: false,
        description: "The requests to run and the lifecycle events (aborts, retracts) between forwards.",
      },
    ),
  },
  { additionalProperties: false },
);

export type Case = Static<typeof CaseSchema>;
export type CaseRequest = Static<typeof CaseRequestSchema>;
export type AbortEvent = Static<typeof AbortSchema>;
