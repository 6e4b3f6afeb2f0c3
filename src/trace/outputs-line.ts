// The outputs format another engine produces for `specconf validate`: JSON Lines, one request per line.
// Only case, id and tokens are required; every other field adds a check when present. What an engine
// reports per request (ReportedOutput) is also the adapter protocol's output object, and the finish
// reasons are the one list every format and run result uses.
import { Type, type Static } from "@sinclair/typebox";
import { LogprobEntrySchema } from "../sampling/params.ts";

export const OUTPUTS_FORMAT_VERSION = 1;

/** Why a request ended: every trace, outputs line, protocol response and run result names it this way. */
export const FinishReasonSchema = Type.Union([
  Type.Literal("length"),
  Type.Literal("eos"),
  Type.Literal("stop"),
  Type.Literal("abort"),
  Type.Literal("unfinished"),
]);
export type FinishReason = Static<typeof FinishReasonSchema>;

/** One request's results, as an engine reports them (also the adapter protocol's output object). */
export const ReportedOutputFields = {
  /** The request id of the case's workload. */
  id: Type.Integer({ minimum: 0 }),
  /** Generated tokens (greedy), without the prompt, cut at the first EOS or stop id (kept) or max new tokens. */
  tokens: Type.Array(Type.Integer({ minimum: 0 })),
  finishReason: Type.Optional(FinishReasonSchema),
  /** The stop id (one of the request's sampling.stopTokenIds) that ended it: finish reason "stop". */
  stopTokenId: Type.Optional(Type.Integer({ minimum: 0 })),
  /** Output tokens when the request finished (SGLang's finished_len): the output must hold exactly these. */
  finishedLength: Type.Optional(Type.Integer({ minimum: 0 })),
  /**
   * Requests asking for logprobs: one entry per output token, the log-softmax of the processed logits
   * (after bias, min-tokens masking and penalties: vLLM's logprobs_mode=processed_logprobs) at the token,
   * with the request's `logprobs` best alternatives.
   */
  logprobs: Type.Optional(Type.Array(LogprobEntrySchema)),
  /** accept_len of every verify round, root included (SGLang v2 accept_lens; profile sglang-v1 reads v1's drafts-only accept_length). */
  acceptLens: Type.Optional(Type.Array(Type.Integer({ minimum: 0 }))),
  /**
   * true when the engine's first verify round emits the first output token (Hugging Face assisted
   * generation, llama.cpp's predictors: no separate prefill sample); default false: the first token comes
   * from prefill and acceptLens cover the tokens after it (SGLang, vLLM, specconf).
   */
  roundsIncludeFirstToken: Type.Optional(Type.Boolean()),
  /** The first round's chain drafts d_1..d_S. */
  firstRoundDrafts: Type.Optional(Type.Array(Type.Integer({ minimum: 0 }))),
};

export const ReportedOutputSchema = Type.Object(ReportedOutputFields, { additionalProperties: false });

export const OutputLineSchema = Type.Object(
  {
    formatVersion: Type.Literal(OUTPUTS_FORMAT_VERSION),
    /** The golden case this request belongs to (its name in the golden file). */
    case: Type.String({ minLength: 1 }),
    ...ReportedOutputFields,
  },
  { additionalProperties: false, description: "one line of an outputs .jsonl file" },
);

export type ReportedOutput = Static<typeof ReportedOutputSchema>;
export type OutputLine = Static<typeof OutputLineSchema>;
