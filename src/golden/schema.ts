// The golden file: a suite of cases with the reference's expected results, written only by
// `specconf golden update` and read by `golden verify` and `validate`. Models are identified by their
// full spec (so a changed preset cannot silently change a golden file) and the sha256 of the ONNX bytes
// that spec builds; every margin comes from the cache-free, teacher-forced reference.
import { CloneType, Type, type Static } from "@sinclair/typebox";
import { CaseSchema, DraftSpecSchema, ModelSpecSchema } from "../case/case.ts";
import { LogprobSchema } from "../sampling/params.ts";

export const GOLDEN_FORMAT_VERSION = 1;

const Digest = Type.String({
  pattern: "^[0-9a-f]{64}$",
  description: "sha256 of the model's ONNX bytes (specconf export --format onnx writes them)",
});

export const GoldenRoundSchema = Type.Object(
  {
    acceptLen: Type.Integer({
      minimum: 1,
      description: "accept_len of the round, root included (SGLang v2 accept_lens).",
    }),
    drafts: Type.Array(Type.Integer({ minimum: 0 }), {
      description:
        "Chain drafts d_1..d_S of the round, as the reference draft predicts them (teacher-forced on d_1..d_{j-1}).",
    }),
    draftMargins: Type.Array(Type.Number({ minimum: 0 }), {
      description: "The cache-free draft's top-1 margin at each draft, in the draft's logit units.",
    }),
  },
  { additionalProperties: false },
);

/** One output token's expected logprob (the cache-free rescore of the processed logits) and top alternatives. */
export const GoldenLogprobSchema = Type.Object(
  {
    logprob: Type.Number({ description: "Its log-probability under the processed logits." }),
    top: Type.Array(LogprobSchema, { description: "The request's `logprobs` best tokens, descending." }),
    next: Type.Union([Type.Number(), Type.Null()], {
      description:
        "The best logprob outside `top` (null: none): a top-k set may differ where it is within epsilon of the k-th.",
    }),
  },
  { additionalProperties: false },
);

export const GoldenRequestSchema = Type.Object(
  {
    id: Type.Integer({ minimum: 0, description: "The request's id in the case." }),
    tokens: Type.Array(Type.Integer({ minimum: 0 }), {
      description: "Target greedy tokens (target-only mode), cut at EOS or max new tokens.",
    }),
    margins: Type.Array(Type.Number({ minimum: 0 }), {
      description: "margins[i]: the cache-free target's top-1 margin where it predicts tokens[i] (logit units).",
    }),
    finishReason: Type.Union([Type.Literal("length"), Type.Literal("eos"), Type.Literal("stop")], {
      description: "How the request ended: length, eos or stop.",
    }),
    stopTokenId: Type.Optional(
      Type.Integer({ minimum: 0, description: 'The stop id that ended the request (finish reason "stop").' }),
    ),
    logprobs: Type.Optional(
      Type.Array(GoldenLogprobSchema, { description: "Requests asking for logprobs: one per token." }),
    ),
    rounds: Type.Array(GoldenRoundSchema, {
      description: "The speculative run's rounds (chain drafting only; empty in target-only cases).",
    }),
  },
  { additionalProperties: false },
);

export const GoldenCaseSchema = Type.Object(
  {
    name: Type.String({
      pattern: "^[a-z0-9][a-z0-9-]*$",
      description: "The case's name within the suite (outputs lines name it).",
    }),
    description: Type.String({ description: "What the case exercises." }),
    case: CloneType(CaseSchema, {
      description: "The case as run: model given as the full spec, speculative mode, no faults.",
    }),
    expected: Type.Object(
      {
        requests: Type.Array(GoldenRequestSchema, {
          minItems: 1,
          description: "One expected result per request of the case.",
        }),
      },
      { additionalProperties: false, description: "What the reference engine computed for the case." },
    ),
  },
  { additionalProperties: false },
);

export const GoldenSchema = Type.Object(
  {
    formatVersion: Type.Literal(GOLDEN_FORMAT_VERSION, { description: "Golden format version (1)." }),
    suite: Type.String({
      pattern: "^[a-z0-9][a-z0-9-]*$",
      description: "The suite's name (the file's name without .json).",
    }),
    description: Type.String({ description: "What the suite covers." }),
    metadata: Type.Object(
      {
        generator: Type.String({ description: "The specconf version that wrote the file." }),
        ortVersion: Type.String({ description: "ONNX Runtime version the reference ran on." }),
        ep: Type.String({ description: "Execution provider the reference ran on." }),
        dtype: Type.Union([Type.Literal("float32"), Type.Literal("float64")], {
          description: "The models' arithmetic: float32 or float64.",
        }),
        threads: Type.Integer({ minimum: 1, description: "Intra-op threads." }),
        graphOptimizationLevel: Type.String({ description: "ONNX Runtime graph optimization level." }),
      },
      { additionalProperties: false, description: "Where and how the expected values were computed." },
    ),
    epsilon: Type.Object(
      {
        target: Type.Number({
          exclusiveMinimum: 0,
          description: "Tie threshold for target tokens, in target logit units.",
        }),
        draft: Type.Number({
          exclusiveMinimum: 0,
          description: "Tie threshold for draft tokens, in draft logit units.",
        }),
      },
      {
        additionalProperties: false,
        description:
          "Tie thresholds: target in logit units, draft in the draft's logit units (the mirror's carry 2^16).",
      },
    ),
    models: Type.Object(
      {
        target: Type.Object(
          {
            preset: Type.Optional(Type.String({ description: "The preset it was built from." })),
            spec: CloneType(ModelSpecSchema, { description: "The full model spec." }),
            digest: CloneType(Digest, { description: "sha256 of the model's ONNX bytes." }),
          },
          { additionalProperties: false, description: "The target model." },
        ),
        draft: Type.Union(
          [
            Type.Object(
              {
                spec: CloneType(DraftSpecSchema, { description: "The full draft spec." }),
                digest: CloneType(Digest, { description: "sha256 of the draft's ONNX bytes." }),
                logitScale: Type.Number({
                  exclusiveMinimum: 0,
                  description: "The draft's logit scale relative to the target's (the mirror's 2^16).",
                }),
              },
              { additionalProperties: false },
            ),
            Type.Null(),
          ],
          { description: "The draft model (null: none, target-only suites)." },
        ),
      },
      { additionalProperties: false, description: "The models by full spec and ONNX digest." },
    ),
    stats: Type.Object(
      {
        tokens: Type.Integer({ minimum: 0, description: "Expected tokens in the suite." }),
        minMargin: Type.Number({ description: "Smallest top-1 margin among them." }),
        medianMargin: Type.Number({ description: "Median top-1 margin." }),
        ties: Type.Integer({ minimum: 0, description: "Tokens whose margin is below epsilon (ties)." }),
        meanAcceptLen: Type.Number({ description: "Mean accept length over the suite's speculative rounds." }),
      },
      {
        additionalProperties: false,
        description: "Numbers to eyeball in review: margins near epsilon make golden files fragile.",
      },
    ),
    cases: Type.Array(GoldenCaseSchema, { minItems: 1, description: "The suite's cases with their expected results." }),
  },
  { additionalProperties: false },
);

export type Golden = Static<typeof GoldenSchema>;
export type GoldenCase = Static<typeof GoldenCaseSchema>;
export type GoldenRequest = Static<typeof GoldenRequestSchema>;
export type GoldenRound = Static<typeof GoldenRoundSchema>;
export type GoldenLogprob = Static<typeof GoldenLogprobSchema>;
