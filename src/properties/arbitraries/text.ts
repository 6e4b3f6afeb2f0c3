// Stop strings for detokenized requests (issue 28's text layer: src/sampling/stop-strings.ts), drawn raw and
// mapped once the preset is known. Each stop string is a piece of the text the target writes: a slice of the
// concatenated pieces (src/model/vocabulary.ts) of one to three tokens drawn mostly among those it emits
// (likely-tokens.ts), so stop strings occur in outputs, often inside an accepted run, across token boundaries or
// ending inside a token; optionally two stop strings one token completes together (textDraws). Shrinking goes to
// no stop string (a detokenized request with no stop), slices of two
// characters, the stop string excluded from the text.
import fc from "fast-check";
import type { ModelSpec } from "../../model/spec.ts";
import { vocabularyOf } from "../../model/vocabulary.ts";
import type { SamplingOption, SamplingParams } from "../../sampling/params.ts";
import { likelyTokens } from "./likely-tokens.ts";
import { promptToken } from "./model.ts";

export interface StopDraw {
  /** Raw token draws: below LIKELY_SHARE of the range a likely token, else any token. */
  tokens: number[];
  /** Where the slice starts in their text (mod its length) and how long it is (cut at the text's end). */
  start: number;
  length: number;
}

/** A stop string cut from the first one: its prefix or suffix `drop` characters shorter, listed first or last. */
export interface OverlapDraw {
  suffix: boolean;
  drop: number;
  first: boolean;
}

export interface TextDraw {
  stops: StopDraw[];
  /** includeStopStrInOutput (where the space allows it). */
  include: boolean;
  /** Spaces with overlapping stop strings only (null: none, the shrink target). */
  overlap?: OverlapDraw | null;
}

const TOKEN_RANGE = 4096;
/** Seven draws in eight pick a likely token: what the target writes is what a stop string must match. */
const LIKELY_SHARE = 3584;
export const MAX_STOPS_DRAWN = 3;

const stopsArbitrary = fc.array(
  fc.record({
    tokens: fc.array(fc.nat({ max: TOKEN_RANGE - 1 }), { minLength: 1, maxLength: 3 }),
    start: fc.nat({ max: 7 }),
    length: fc.integer({ min: 2, max: 6 }),
  }),
  { maxLength: MAX_STOPS_DRAWN },
);

export const textDrawArbitrary: fc.Arbitrary<TextDraw> = fc.record({ stops: stopsArbitrary, include: fc.boolean() });

/**
 * Issue 34 (item 7): with `overlapping`, two draws in three add a stop string cut from the first (a prefix or
 * suffix one or two characters shorter), listed before or after it, so that the token completing one often
 * completes both: which of them ends the request is then the convention (the occurrence ending first; of two
 * ending together, the longer), a corner drawn independently in about 1% of cases. A separate key, so spaces
 * without it draw as they did.
 */
export function textDraws(overlapping: boolean): fc.Arbitrary<TextDraw> {
  if (!overlapping) return textDrawArbitrary;
  return fc.record({
    stops: stopsArbitrary,
    include: fc.boolean(),
    overlap: fc.option(fc.record({ suffix: fc.boolean(), drop: fc.integer({ min: 1, max: 2 }), first: fc.boolean() }), {
      nil: null,
      freq: 3,
    }),
  });
}

function tokenOf(spec: ModelSpec, raw: number): number {
  const likely = likelyTokens(spec);
  return raw < LIKELY_SHARE && likely.length > 0 ? likely[raw % likely.length] : promptToken(spec, raw);
}

/** The text options of a draw: `stop` (possibly empty: detokenized without a stop), and the include flag. */
export function textParamsOf(
  spec: ModelSpec,
  draw: TextDraw,
  options: readonly SamplingOption[],
): Pick<SamplingParams, "stop" | "includeStopStrInOutput"> {
  const pieces = vocabularyOf(spec).pieces;
  const stops = draw.stops.flatMap((stop) => {
    const text = stop.tokens.map((raw) => pieces[tokenOf(spec, raw)]).join("");
    if (text.length === 0) return [];
    const start = stop.start % text.length;
    return [text.slice(start, start + stop.length)];
  });
  const overlap = draw.overlap;
  if (overlap && stops.length > 0 && stops[0].length > overlap.drop) {
    const cut = overlap.suffix ? stops[0].slice(overlap.drop) : stops[0].slice(0, stops[0].length - overlap.drop);
    if (overlap.first) stops.unshift(cut);
    else stops.push(cut);
  }
  return {
    stop: [...new Set(stops)],
    ...(draw.include && options.includes("includeStopStrInOutput") ? { includeStopStrInOutput: true } : {}),
  };
}
