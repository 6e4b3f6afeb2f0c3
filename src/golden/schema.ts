// The golden file: a suite of cases with the reference's expected results, written only by
// `specconf golden update` and read by `golden verify` and `validate`. Models are identified by their
// full spec (so a changed preset cannot silently change a golden file) and the sha256 of the ONNX bytes
// that spec builds; every margin comes from the cache-free, teacher-forced reference.
import { Type, type Static } from "@sinclair/typebox";
import { CaseSchema, DraftSpecSchema, ModelSpecSchema } from "../case/case.ts";
import { LogprobSchema } from "../sampling/params.ts";

export const GOLDEN_FORMAT_VERSION = 1;

const Digest = Type.String({
  pattern: "^[0-9a-f]{64}$",
  description: "sha256 of the model's ONNX bytes (specconf export --format onnx writes them)",
});

export const GoldenRoundSchema = Type.Object(
  {
    /** accept_len of the round, root included (SGLang v2 accept_lens). */
    acceptLen: Type.Integer({ minimum: 1 }),
    /** Chain drafts d_1..d_S of the round, as the reference draft predicts them (teacher-forced on d_1..d_{j-1}). */
    drafts: Type.Array(Type.Integer({ minimum: 0 })),
    /** The cache-free draft's top-1 margin at each draft, in the draft's logit units. */
    draftMargins: Type.Array(Type.Number({ minimum: 0 })),
  },
  { additionalProperties: false },
);

/** One output token's expected logprob (the cache-free rescore of the processed logits) and top alternatives. */
export const GoldenLogprobSchema = Type.Object(
  {
    logprob: Type.Number(),
    /** The request's `logprobs` best tokens, descending. */
    top: Type.Array(LogprobSchema),
    /** The best logprob outside `top` (null: none): a top-k set may differ where it is within epsilon of the k-th. */
    next: Type.Union([Type.Number(), Type.Null()]),
  },
  { additionalProperties: false },
);

export const GoldenRequestSchema = Type.Object(
  {
    id: Type.Integer({ minimum: 0 }),
    /** Target greedy tokens (target-only mode), cut at EOS or max new tokens. */
    tokens: Type.Array(Type.Integer({ minimum: 0 })),
    /** margins[i]: the cache-free target's top-1 margin where it predicts tokens[i] (logit units). */
    margins: Type.Array(Type.Number({ minimum: 0 })),
    finishReason: Type.Union([Type.Literal("length"), Type.Literal("eos"), Type.Literal("stop")]),
    /** The stop id that ended the request (finish reason "stop"). */
    stopTokenId: Type.Optional(Type.Integer({ minimum: 0 })),
    /** Requests asking for logprobs: one per token. */
    logprobs: Type.Optional(Type.Array(GoldenLogprobSchema)),
    /** The speculative run's rounds (chain drafting only; empty in target-only cases). */
    rounds: Type.Array(GoldenRoundSchema),
  },
  { additionalProperties: false },
);

export const GoldenCaseSchema = Type.Object(
  {
    name: Type.String({ pattern: "^[a-z0-9][a-z0-9-]*$" }),
    description: Type.String(),
    /** The case as run: model given as the full spec, speculative mode, no faults. */
    case: CaseSchema,
    expected: Type.Object(
      { requests: Type.Array(GoldenRequestSchema, { minItems: 1 }) },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export const GoldenSchema = Type.Object(
  {
    formatVersion: Type.Literal(GOLDEN_FORMAT_VERSION),
    suite: Type.String({ pattern: "^[a-z0-9][a-z0-9-]*$" }),
    description: Type.String(),
    /** Where and how the expected values were computed. */
    metadata: Type.Object(
      {
        generator: Type.String(),
        ortVersion: Type.String(),
        ep: Type.String(),
        dtype: Type.Union([Type.Literal("float32"), Type.Literal("float64")]),
        threads: Type.Integer({ minimum: 1 }),
        graphOptimizationLevel: Type.String(),
      },
      { additionalProperties: false },
    ),
    /** Tie thresholds: target in logit units, draft in the draft's logit units (the mirror's carry 2^16). */
    epsilon: Type.Object(
      { target: Type.Number({ exclusiveMinimum: 0 }), draft: Type.Number({ exclusiveMinimum: 0 }) },
      { additionalProperties: false },
    ),
    models: Type.Object(
      {
        target: Type.Object(
          { preset: Type.Optional(Type.String()), spec: ModelSpecSchema, digest: Digest },
          { additionalProperties: false },
        ),
        draft: Type.Union([
          Type.Object(
            { spec: DraftSpecSchema, digest: Digest, logitScale: Type.Number({ exclusiveMinimum: 0 }) },
            { additionalProperties: false },
          ),
          Type.Null(),
        ]),
      },
      { additionalProperties: false },
    ),
    /** Numbers to eyeball in review: margins near epsilon make golden files fragile. */
    stats: Type.Object(
      {
        tokens: Type.Integer({ minimum: 0 }),
        minMargin: Type.Number(),
        medianMargin: Type.Number(),
        ties: Type.Integer({ minimum: 0 }),
        meanAcceptLen: Type.Number(),
      },
      { additionalProperties: false },
    ),
    cases: Type.Array(GoldenCaseSchema, { minItems: 1 }),
  },
  { additionalProperties: false },
);

export type Golden = Static<typeof GoldenSchema>;
export type GoldenCase = Static<typeof GoldenCaseSchema>;
export type GoldenRequest = Static<typeof GoldenRequestSchema>;
export type GoldenRound = Static<typeof GoldenRoundSchema>;
export type GoldenLogprob = Static<typeof GoldenLogprobSchema>;
