// A request's sampling options: those that matter under greedy decoding (stop token ids besides EOS, min new
// tokens, repetition / presence / frequency penalties, logit bias, logprobs) and stochastic sampling
// (temperature, top-k, top-p, min-p, seed). Names and ranges follow vLLM's SamplingParams (stop_token_ids,
// min_tokens, repetition_penalty, presence_penalty, frequency_penalty, logit_bias, logprobs, temperature,
// top_k, top_p, min_p, seed) and SGLang's sampling_params; the definitions are in process-logits.ts and
// stochastic.ts. Absent options are the neutral ones (no stop id, 0, 1, 0, 0, none, no logprobs, greedy).
import { CloneType, Type, type Static } from "@sinclair/typebox";
import { GrammarSchema } from "./grammar.ts";

/** Integers of a case fit 32 bits (as everywhere in the case schema). */
const INT32_MAX = 2 ** 31 - 1;

/** vLLM's default max_logprobs: the most top alternatives one emitted token may ask for. */
export const MAX_LOGPROBS = 20;

export const SamplingParamsSchema = Type.Object(
  {
    stopTokenIds: Type.Optional(
      Type.Array(Type.Integer({ minimum: 0, maximum: INT32_MAX }), {
        maxItems: 64,
        description:
          'Tokens that end the request besides EOS (finish reason "stop", the token kept as the last output).',
      }),
    ),
    minNewTokens: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: INT32_MAX,
        description: "EOS and the stop ids are masked (logit -inf) while fewer output tokens than this are committed.",
      }),
    ),
    repetitionPenalty: Type.Optional(
      Type.Number({
        exclusiveMinimum: 0,
        description:
          "> 1 discourages tokens seen in prompt or output: positive logits divided by it, others multiplied.",
      }),
    ),
    presencePenalty: Type.Optional(
      Type.Number({
        minimum: -2,
        maximum: 2,
        description: "Subtracted once from the logit of every token present in the output so far.",
      }),
    ),
    frequencyPenalty: Type.Optional(
      Type.Number({
        minimum: -2,
        maximum: 2,
        description: "Subtracted from a token's logit once per occurrence in the output so far.",
      }),
    ),
    logitBias: Type.Optional(
      Type.Record(Type.Integer({ minimum: 0 }), Type.Number({ minimum: -100, maximum: 100 }), {
        additionalProperties: false,
        description: "Token id (a decimal string, as in OpenAI's and vLLM's logit_bias) to an additive logit bias.",
      }),
    ),
    logprobs: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_LOGPROBS,
        description: "Return a logprob per emitted token with this many top alternatives (0: the chosen token's only).",
      }),
    ),
    temperature: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 100,
        description:
          "> 0 samples from softmax(processed logits / temperature); absent or 0 is greedy (top-k/p, min-p, seed unused).",
      }),
    ),
    topK: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: INT32_MAX,
        description: "Sampling keeps the k most likely tokens (ties to the lower id); absent or 0 keeps all.",
      }),
    ),
    topP: Type.Optional(
      Type.Number({
        exclusiveMinimum: 0,
        maximum: 1,
        description:
          "Sampling keeps the most likely tokens until their mass reaches top_p (the crossing token kept); 1 keeps all.",
      }),
    ),
    minP: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 1,
        description: "Sampling drops tokens whose probability is below min_p times the top probability; 0 keeps all.",
      }),
    ),
    seed: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: INT32_MAX,
        description:
          "Seeds the request's own stream of uniforms (absent: the request id), one uniform per sampling decision.",
      }),
    ),
    stop: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
        maxItems: 16,
        description:
          "Stop strings (vLLM's and llama.cpp's `stop`) matched in the detokenized output text (src/sampling/stop-strings.ts): the first occurrence ends the request (finish reason \"stop\"), its text ends where the occurrence starts (or ends: includeStopStrInOutput), its tokens at the token holding the occurrence's last character. Present (even empty): the request's outputs carry text, deltas and usage.",
      }),
    ),
    includeStopStrInOutput: Type.Optional(
      Type.Boolean({
        description:
          "true: the output text keeps the stop string that ended it (vLLM's include_stop_str_in_output); default false: it ends where the stop string starts (vLLM's and llama.cpp's default).",
      }),
    ),
    grammar: Type.Optional(
      CloneType(GrammarSchema, {
        description:
          "A token-level grammar (src/sampling/grammar.ts) masking every target row and the drafts; greedy only.",
      }),
    ),
  },
  { additionalProperties: false },
);

export type SamplingParams = Static<typeof SamplingParamsSchema>;

/** The options, as an engine declares them in its handshake (capabilities.sampling). */
export const GREEDY_SAMPLING_OPTIONS = [
  "stopTokenIds",
  "minNewTokens",
  "repetitionPenalty",
  "presencePenalty",
  "frequencyPenalty",
  "logitBias",
  "logprobs",
  "grammar",
  "stop",
  "includeStopStrInOutput",
] as const satisfies readonly (keyof SamplingParams)[];

/** The options of stochastic sampling (temperature > 0): the target's processed distribution and its stream. */
export const STOCHASTIC_SAMPLING_OPTIONS = [
  "temperature",
  "topK",
  "topP",
  "minP",
  "seed",
] as const satisfies readonly (keyof SamplingParams)[];

export const SAMPLING_OPTIONS = [...GREEDY_SAMPLING_OPTIONS, ...STOCHASTIC_SAMPLING_OPTIONS] as const;

export type SamplingOption = (typeof SAMPLING_OPTIONS)[number];

export const LogprobSchema = Type.Object(
  {
    token: Type.Integer({ minimum: 0, description: "The token id." }),
    logprob: Type.Number({ description: "Its log-probability under the processed logits." }),
  },
  { additionalProperties: false },
);

/** One emitted token's logprob and its top alternatives (descending, ties to the lower id). */
export const LogprobEntrySchema = Type.Object(
  {
    token: Type.Integer({ minimum: 0, description: "The emitted token id." }),
    logprob: Type.Number({
      description: "log-softmax of the processed logits (after bias, min-tokens masking and penalties) at the token.",
    }),
    top: Type.Array(LogprobSchema, { description: "The `logprobs` best tokens of the same distribution." }),
  },
  { additionalProperties: false },
);

export type Logprob = Static<typeof LogprobSchema>;
export type LogprobEntry = Static<typeof LogprobEntrySchema>;

/** Options present in the params (a neutral value still counts: the engine must accept the field). */
export function samplingOptionsOf(params: SamplingParams | undefined): SamplingOption[] {
  if (!params) return [];
  return SAMPLING_OPTIONS.filter((option) => params[option] !== undefined);
}

/** Options whose value does something (a stop id, min tokens > 0, a penalty off its neutral value, ...). */
export function activeSamplingOptions(params: SamplingParams | undefined): SamplingOption[] {
  if (!params) return [];
  const active: Record<SamplingOption, boolean> = {
    stopTokenIds: (params.stopTokenIds?.length ?? 0) > 0,
    minNewTokens: (params.minNewTokens ?? 0) > 0,
    repetitionPenalty: (params.repetitionPenalty ?? 1) !== 1,
    presencePenalty: (params.presencePenalty ?? 0) !== 0,
    frequencyPenalty: (params.frequencyPenalty ?? 0) !== 0,
    logitBias: Object.keys(params.logitBias ?? {}).length > 0,
    logprobs: params.logprobs !== undefined,
    grammar: params.grammar !== undefined,
    stop: params.stop !== undefined,
    includeStopStrInOutput: params.includeStopStrInOutput === true,
    temperature: (params.temperature ?? 0) > 0,
    topK: isStochastic(params) && (params.topK ?? 0) > 0,
    topP: isStochastic(params) && (params.topP ?? 1) < 1,
    minP: isStochastic(params) && (params.minP ?? 0) > 0,
    seed: isStochastic(params) && params.seed !== undefined,
  };
  return SAMPLING_OPTIONS.filter((option) => active[option]);
}

const PENALTIES: readonly SamplingOption[] = ["repetitionPenalty", "presencePenalty", "frequencyPenalty"];

/** Penalties in effect: they change the greedy token with what was generated. */
export function hasPenalties(params: SamplingParams | undefined): boolean {
  return activeSamplingOptions(params).some((option) => PENALTIES.includes(option));
}

/** The request samples (temperature > 0): its tokens are drawn, not the argmax. */
export function isStochastic(params: SamplingParams | undefined): boolean {
  return (params?.temperature ?? 0) > 0;
}

const LOGITS_PROCESSORS: readonly SamplingOption[] = [
  "minNewTokens",
  "repetitionPenalty",
  "presencePenalty",
  "frequencyPenalty",
  "logitBias",
  "grammar",
];

/** The logits processors (min tokens, penalties, bias) can move the greedy token away from the raw argmax. */
export function changesLogits(params: SamplingParams | undefined): boolean {
  return activeSamplingOptions(params).some((option) => LOGITS_PROCESSORS.includes(option));
}

/** Sampling a row for these options needs the full logits row (processing, logprobs or a draw). */
export function needsLogits(params: SamplingParams | undefined): boolean {
  return changesLogits(params) || params?.logprobs !== undefined || isStochastic(params);
}

/** The greedy laws (equal tokens to the argmax or across modes) judge this request: it does not sample. */
export function isGreedy(params: SamplingParams | undefined): boolean {
  return !isStochastic(params);
}

/** The request is detokenized (a `stop` list, even empty): its outputs carry text, deltas and usage. */
export function hasText(params: SamplingParams | undefined): boolean {
  return params?.stop !== undefined;
}

export function stopTokenIdsOf(params: SamplingParams | undefined): ReadonlySet<number> {
  return new Set(params?.stopTokenIds ?? []);
}

/** The bias entries as numbers, in token order. */
export function logitBiasEntries(params: SamplingParams | undefined): [number, number][] {
  return Object.entries(params?.logitBias ?? {})
    .map(([token, bias]): [number, number] => [Number(token), bias])
    .sort((a, b) => a[0] - b[0]);
}

/** A request's sampling as the oracle needs it: the options and where the prompt ends. */
export interface RequestSampling {
  params: SamplingParams;
  promptLength: number;
}

/** A case's workload as far as sampling reads it (a Case is one; this folder sits below case/). */
export interface SampledWorkload {
  readonly workload: {
    readonly requests: readonly { id: number; prompt: readonly number[]; sampling?: SamplingParams }[];
  };
}

/** Request `id` of the case samples (temperature > 0): the greedy laws leave its tokens to the sampling laws. */
export function isStochasticRequest(testCase: SampledWorkload, id: number): boolean {
  return isStochastic(testCase.workload.requests.find((candidate) => candidate.id === id)?.sampling);
}

/** The sampling of request `id` in the case, when it has any option; undefined otherwise. */
export function requestSampling(testCase: SampledWorkload, id: number): RequestSampling | undefined {
  const request = testCase.workload.requests.find((candidate) => candidate.id === id);
  if (!request?.sampling || samplingOptionsOf(request.sampling).length === 0) return undefined;
  return { params: request.sampling, promptLength: request.prompt.length };
}
