// Stop strings for detokenized requests (issue 28's text layer: src/sampling/stop-strings.ts), drawn raw and
// mapped once the preset is known. Each stop string is a piece of the text the target writes: a slice of the
// concatenated pieces (src/model/vocabulary.ts) of one to three tokens drawn mostly among those it emits
// (likely-tokens.ts), so stop strings occur in outputs, often inside an accepted run, across token boundaries or
// ending inside a token. Shrinking goes to no stop string (a detokenized request with no stop), slices of two
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

export interface TextDraw {
  stops: StopDraw[];
  /** includeStopStrInOutput (where the space allows it). */
  include: boolean;
}

const TOKEN_RANGE = 4096;
/** Seven draws in eight pick a likely token: what the target writes is what a stop string must match. */
const LIKELY_SHARE = 3584;
export const MAX_STOPS_DRAWN = 3;

export const textDrawArbitrary: fc.Arbitrary<TextDraw> = fc.record({
  stops: fc.array(
    fc.record({
      tokens: fc.array(fc.nat({ max: TOKEN_RANGE - 1 }), { minLength: 1, maxLength: 3 }),
      start: fc.nat({ max: 7 }),
      length: fc.integer({ min: 2, max: 6 }),
    }),
    { maxLength: MAX_STOPS_DRAWN },
  ),
  include: fc.boolean(),
});

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
  return {
    stop: [...new Set(stops)],
    ...(draw.include && options.includes("includeStopStrInOutput") ? { includeStopStrInOutput: true } : {}),
  };
}
