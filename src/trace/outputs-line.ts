// The outputs format another engine produces for `specconf validate`: JSON Lines, one request per line.
// Only case, id and tokens are required; every other field adds a check when present. What an engine
// reports per request (ReportedOutput) is also the adapter protocol's output object, and the finish
// reasons are the one list every format and run result uses.
import { CloneType, Type, type Static } from "@sinclair/typebox";
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

/** One streamed chunk of a detokenized request (issue 28's text layer): what one engine step sent. */
export const TextDeltaSchema = Type.Object(
  {
    text: Type.String({
      description:
        "The text this step released (src/sampling/stop-strings.ts: a tail that may still become a stop string is held back until it cannot).",
    }),
    tokens: Type.Array(Type.Integer({ minimum: 0 }), {
      description: "The output tokens this step emitted (none in a last delta that only releases held-back text).",
    }),
  },
  { additionalProperties: false },
);
export type TextDelta = Static<typeof TextDeltaSchema>;

/** Token counts as servers bill them (OpenAI's usage). */
export const UsageSchema = Type.Object(
  {
    promptTokens: Type.Integer({ minimum: 0, description: "Tokens of the prompt (the case's prompt length)." }),
    completionTokens: Type.Integer({
      minimum: 0,
      description: "Output tokens emitted (after any stop cut): the output's length.",
    }),
  },
  { additionalProperties: false },
);
export type Usage = Static<typeof UsageSchema>;

/** The text layer's output fields (requests with sampling.stop), shared by outputs, protocol and trace. */
export const TextOutputFields = {
  text: Type.Optional(
    Type.String({
      description:
        "Requests with sampling.stop: the detokenized output (src/model/vocabulary.ts), ending where the first stop string starts (or ends: includeStopStrInOutput).",
    }),
  ),
  stopString: Type.Optional(
    Type.String({
      description: 'The stop string whose first occurrence ended the request (finish reason "stop").',
    }),
  ),
  deltas: Type.Optional(
    Type.Array(TextDeltaSchema, {
      description:
        "The streamed chunks in order, one per engine step that emitted tokens: their texts concatenate to `text`.",
    }),
  ),
  usage: Type.Optional(CloneType(UsageSchema, { description: "Prompt and completion token counts." })),
};

/** The text layer's fields an output (or trace request) carries, none invented: those present, copied. */
export function textFieldsOf(output: { text?: string; stopString?: string; deltas?: TextDelta[]; usage?: Usage }): {
  text?: string;
  stopString?: string;
  deltas?: TextDelta[];
  usage?: Usage;
} {
  return {
    ...(output.text !== undefined ? { text: output.text } : {}),
    ...(output.stopString !== undefined ? { stopString: output.stopString } : {}),
    ...(output.deltas !== undefined ? { deltas: output.deltas } : {}),
    ...(output.usage !== undefined ? { usage: output.usage } : {}),
  };
}

/** One request's results, as an engine reports them (also the adapter protocol's output object). */
export const ReportedOutputFields = {
  id: Type.Integer({ minimum: 0, description: "The request id of the case's workload." }),
  tokens: Type.Array(Type.Integer({ minimum: 0 }), {
    description:
      "Generated tokens (greedy), without the prompt, cut at the first EOS or stop id (kept) or max new tokens.",
  }),
  finishReason: Type.Optional(
    CloneType(FinishReasonSchema, {
      description: "How the request ended: length (max new tokens), eos, stop (a stop id), abort, unfinished.",
    }),
  ),
  stopTokenId: Type.Optional(
    Type.Integer({
      minimum: 0,
      description: 'The stop id (one of the request\'s sampling.stopTokenIds) that ended it: finish reason "stop".',
    }),
  ),
  finishedLength: Type.Optional(
    Type.Integer({
      minimum: 0,
      description:
        "Output tokens when the request finished (SGLang's finished_len): the output must hold exactly these.",
    }),
  ),
  logprobs: Type.Optional(
    Type.Array(LogprobEntrySchema, {
      description:
        "Requests asking for logprobs: one entry per output token, the log-softmax of the processed logits (after bias, min-tokens masking and penalties: vLLM's logprobs_mode=processed_logprobs) at the token, with the request's `logprobs` best alternatives.",
    }),
  ),
  acceptLens: Type.Optional(
    Type.Array(Type.Integer({ minimum: 0 }), {
      description:
        "accept_len of every verify round, root included (SGLang v2 accept_lens; profile sglang-v1 reads v1's drafts-only accept_length).",
    }),
  ),
  roundsIncludeFirstToken: Type.Optional(
    Type.Boolean({
      description:
        "true when the engine's first verify round emits the first output token (Hugging Face assisted generation, llama.cpp's predictors: no separate prefill sample); default false: the first token comes from prefill and acceptLens cover the tokens after it (SGLang, vLLM, specconf).",
    }),
  ),
  firstRoundDrafts: Type.Optional(
    Type.Array(Type.Integer({ minimum: 0 }), { description: "The first round's chain drafts d_1..d_S." }),
  ),
  ...TextOutputFields,
};

export const ReportedOutputSchema = Type.Object(ReportedOutputFields, { additionalProperties: false });

export const OutputLineSchema = Type.Object(
  {
    formatVersion: Type.Literal(OUTPUTS_FORMAT_VERSION, { description: "Outputs line format version (1)." }),
    case: Type.String({
      minLength: 1,
      description: "The golden case this request belongs to (its name in the golden file).",
    }),
    ...ReportedOutputFields,
  },
  { additionalProperties: false, description: "one line of an outputs .jsonl file" },
);

export type ReportedOutput = Static<typeof ReportedOutputSchema>;
export type OutputLine = Static<typeof OutputLineSchema>;
