// Request sampling options (src/sampling/params.ts), drawn raw and mapped once the preset is known: each
// option shrinks to its neutral value (no stop id, min tokens 0, penalties 1 / 0 / 0, no bias, no
// logprobs, greedy), so a counterexample keeps only the options it needs. Temperature turns stochastic
// sampling on (top-k, top-p, min-p and the seed only with it); the temperatures avoid 1, where a temperature
// applied twice does nothing. Stop ids and biased tokens are drawn
// mostly among the tokens the target emits (likely-tokens.ts): that is what puts a stop inside an
// accepted run, or a bias on a token the draft does not predict, within reach.
import fc from "fast-check";
import type { ModelSpec } from "../../model/spec.ts";
import type { SamplingOption, SamplingParams } from "../../sampling/params.ts";
import { likelyTokens } from "./likely-tokens.ts";
import { promptToken } from "./model.ts";

export interface SamplingSpace {
  /** Options a draw may turn on (an external engine's declared ones). */
  options: readonly SamplingOption[];
  /** Every request draws options (else three in four do). */
  always?: boolean;
  /** Options every drawn request has on (a law's focus: logprobs for logprob parity). */
  required?: readonly SamplingOption[];
}

export interface SamplingDraw {
  /** Raw token draws: below LIKELY_SHARE of the range a likely token, else any token. */
  stops: number[];
  minNewTokens: number;
  /** Indices into the choice lists below; 0 is neutral. */
  repetition: number;
  presence: number;
  frequency: number;
  bias: { token: number; strength: number }[];
  /** 0: no logprobs; else logprobs = value - 1 top alternatives. */
  logprobs: number;
  /** Stochastic sampling: indices into the lists below (0: greedy, all kept); the stream's seed. */
  temperature: number;
  topK: number;
  topP: number;
  minP: number;
  seed: number;
}

const TOKEN_RANGE = 4096;
/** Three draws in four pick a likely token: they are what the target emits, so they land in outputs. */
const LIKELY_SHARE = 3072;
const REPETITION = [1, 1.5, 2, 0.8];
const PRESENCE = [0, 1, 2, -0.5];
const FREQUENCY = [0, 0.5, 1.5, -0.5];
/** +5 and +10 move a likely token to the top, -100 bans it (as OpenAI clients do), +2 nudges. */
const BIAS = [5, 10, -100, 2];
const MAX_LOGPROBS_DRAWN = 3;
/** Never 1: a temperature applied twice is invisible at 1. Below 1 sharpens, above flattens. */
const TEMPERATURE = [0, 0.7, 1.3, 0.5];
const TOP_K = [0, 8, 3];
const TOP_P = [1, 0.9, 0.7];
const MIN_P = [0, 0.1, 0.02];

const token = fc.nat({ max: TOKEN_RANGE - 1 });
/** Off (0, the shrink target) half the time, else one of 1..max: options vary in combination. */
const sometimes = (max: number) => fc.option(fc.integer({ min: 1, max }), { nil: 0, freq: 2 });

export const samplingDrawArbitrary: fc.Arbitrary<SamplingDraw> = fc.record({
  stops: fc.array(token, { maxLength: 4 }),
  minNewTokens: sometimes(4),
  repetition: sometimes(REPETITION.length - 1),
  presence: sometimes(PRESENCE.length - 1),
  frequency: sometimes(FREQUENCY.length - 1),
  bias: fc.array(fc.record({ token, strength: fc.integer({ min: 0, max: BIAS.length - 1 }) }), { maxLength: 2 }),
  logprobs: sometimes(MAX_LOGPROBS_DRAWN + 1),
  temperature: sometimes(TEMPERATURE.length - 1),
  topK: sometimes(TOP_K.length - 1),
  topP: sometimes(TOP_P.length - 1),
  minP: sometimes(MIN_P.length - 1),
  seed: fc.nat({ max: 1 << 20 }),
});

/** A request's sampling draw: always, or null one time in four (null is the shrink target). */
export function requestSamplingArbitrary(space: SamplingSpace): fc.Arbitrary<SamplingDraw | null> {
  if (space.options.length === 0) return fc.constant(null);
  return space.always ? samplingDrawArbitrary : fc.option(samplingDrawArbitrary, { nil: null, freq: 4 });
}

function tokenOf(spec: ModelSpec, raw: number): number {
  const likely = likelyTokens(spec);
  return raw < LIKELY_SHARE && likely.length > 0 ? likely[raw % likely.length] : promptToken(spec, raw);
}

/** The params of a draw within the space's options; undefined when it turns none on. */
export function samplingOf(
  spec: ModelSpec,
  draw: SamplingDraw | null,
  maxNewTokens: number,
  space: SamplingSpace,
): SamplingParams | undefined {
  if (!draw) return undefined;
  const allowed = (option: SamplingOption) => space.options.includes(option);
  const required = (option: SamplingOption) => space.required?.includes(option) === true;
  // A required option takes its first non-neutral value where the draw left it neutral.
  const pick = (index: number, option: SamplingOption) => (required(option) ? Math.max(1, index) : index);
  const params: SamplingParams = {};
  const stops = draw.stops.length === 0 && required("stopTokenIds") ? [0] : draw.stops;
  if (allowed("stopTokenIds") && stops.length > 0)
    params.stopTokenIds = [...new Set(stops.map((raw) => tokenOf(spec, raw)))];
  // 1 to 4 below the cap: a likely stop id then first comes right after min new tokens, in the last rounds,
  // so an accepted run holds both the stop and the cap (sglang 31599's corner).
  const minRaw = pick(draw.minNewTokens, "minNewTokens");
  const minNewTokens = minRaw === 0 ? 0 : Math.max(1, maxNewTokens - 1 - ((minRaw - 1) % 4));
  if (allowed("minNewTokens") && minNewTokens > 0) params.minNewTokens = minNewTokens;
  const repetition = pick(draw.repetition, "repetitionPenalty");
  if (allowed("repetitionPenalty") && repetition > 0) params.repetitionPenalty = REPETITION[repetition];
  const presence = pick(draw.presence, "presencePenalty");
  if (allowed("presencePenalty") && presence > 0) params.presencePenalty = PRESENCE[presence];
  const frequency = pick(draw.frequency, "frequencyPenalty");
  if (allowed("frequencyPenalty") && frequency > 0) params.frequencyPenalty = FREQUENCY[frequency];
  const bias = draw.bias.length === 0 && required("logitBias") ? [{ token: 0, strength: 0 }] : draw.bias;
  if (allowed("logitBias") && bias.length > 0)
    params.logitBias = Object.fromEntries(
      bias.map((entry) => [String(tokenOf(spec, entry.token)), BIAS[entry.strength]]),
    );
  const logprobs = pick(draw.logprobs, "logprobs");
  if (allowed("logprobs") && logprobs > 0) params.logprobs = logprobs - 1;
  const temperature = pick(draw.temperature, "temperature");
  if (allowed("temperature") && temperature > 0) {
    params.temperature = TEMPERATURE[temperature];
    if (allowed("topK") && pick(draw.topK, "topK") > 0) params.topK = TOP_K[pick(draw.topK, "topK")];
    if (allowed("topP") && pick(draw.topP, "topP") > 0) params.topP = TOP_P[pick(draw.topP, "topP")];
    if (allowed("minP") && pick(draw.minP, "minP") > 0) params.minP = MIN_P[pick(draw.minP, "minP")];
    if (allowed("seed")) params.seed = draw.seed;
  }
  return Object.keys(params).length > 0 ? params : undefined;
}
