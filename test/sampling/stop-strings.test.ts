// Stop strings over detokenized text (src/sampling/stop-strings.ts) against a brute-force reading of the
// conventions: every occurrence of every stop string enumerated, the one ending first (past the text of the first
// minNewTokens tokens) taken, ties to the one starting first; and held-back text as the longest proper prefix of
// a stop string the text ends with.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PRESETS } from "../../src/model/presets.ts";
import { detokenize, pieceEnds, vocabularyOf } from "../../src/model/vocabulary.ts";
import { finalText, firstStopOccurrence, heldBack } from "../../src/sampling/stop-strings.ts";

const vocabulary = vocabularyOf(PRESETS.tiny);
const tokenArbitrary = fc.integer({ min: 0, max: PRESETS.tiny.vocab - 1 });

function bruteForce(tokens: readonly number[], stops: readonly string[], minNewTokens: number) {
  const text = detokenize(vocabulary, tokens);
  const ends = pieceEnds(vocabulary, tokens);
  const after = minNewTokens > 0 ? (ends[Math.min(minNewTokens, ends.length) - 1] ?? 0) : 0;
  const occurrences = stops.flatMap((stop) =>
    Array.from({ length: text.length }, (_, start) => start)
      .filter((start) => text.startsWith(stop, start) && start + stop.length > after)
      .map((start) => ({ stop, start, end: start + stop.length })),
  );
  occurrences.sort((a, b) => a.end - b.end || a.start - b.start);
  const first = occurrences[0];
  if (!first) return undefined;
  // The token holding the last character: the first whose text reaches past it.
  let tokenIndex = 0;
  while (ends[tokenIndex] < first.end) tokenIndex += 1;
  return { ...first, tokenIndex };
}

/** Stop strings sliced from the tokens' own text (so they occur), plus one that may not. */
const caseArbitrary = fc
  .record({
    tokens: fc.array(tokenArbitrary, { minLength: 1, maxLength: 12 }),
    slices: fc.array(fc.record({ start: fc.nat(), length: fc.integer({ min: 1, max: 6 }) }), { maxLength: 3 }),
    extra: fc.stringMatching(/^[xYc;]{1,4}$/),
    minNewTokens: fc.nat({ max: 4 }),
  })
  .map(({ tokens, slices, extra, minNewTokens }) => {
    const text = detokenize(vocabulary, tokens);
    const stops = slices
      .map(({ start, length }) =>
        text.length > 0 ? text.slice(start % text.length, (start % text.length) + length) : "",
      )
      .filter((stop) => stop.length > 0);
    return { tokens, stops: [...stops, extra], minNewTokens };
  });

describe("firstStopOccurrence", () => {
  it("is the occurrence ending first past min new tokens (brute force)", () => {
    fc.assert(
      fc.property(caseArbitrary, ({ tokens, stops, minNewTokens }) => {
        const text = detokenize(vocabulary, tokens);
        const got = firstStopOccurrence(text, pieceEnds(vocabulary, tokens), { stops, minNewTokens });
        expect(got).toEqual(bruteForce(tokens, stops, minNewTokens));
      }),
      { numRuns: 300 },
    );
  });

  it("takes the longer of two stop strings ending at one character", () => {
    const text = "abcab";
    expect(firstStopOccurrence(text, [2, 5], { stops: ["cab", "ab", "bca"], minNewTokens: 0 })).toEqual({
      stop: "ab",
      start: 0,
      end: 2,
      tokenIndex: 0,
    });
    expect(firstStopOccurrence(text, [2, 5], { stops: ["b", "ab"], minNewTokens: 0 })?.stop).toBe("ab");
    // Past min new tokens (1: the first token's text "ab" does not count): "cab" and "ab" end at 5, "cab" is longer.
    expect(firstStopOccurrence(text, [2, 5], { stops: ["cab", "ab"], minNewTokens: 1 })?.stop).toBe("cab");
  });
});

describe("finalText and heldBack", () => {
  it("cut at the occurrence's start, or its end when included", () => {
    const occurrence = { stop: "ca", start: 2, end: 4, tokenIndex: 1 };
    expect(finalText("abcab", occurrence, false)).toBe("ab");
    expect(finalText("abcab", occurrence, true)).toBe("abca");
    expect(finalText("abcab", undefined, false)).toBe("abcab");
  });

  it("holds back the longest proper prefix of a stop string the text ends with", () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[ab]{0,8}$/),
        fc.array(fc.stringMatching(/^[ab]{1,4}$/), { maxLength: 3 }),
        (text, stops) => {
          const held = heldBack(text, { stops, include: false });
          const candidates = stops.flatMap((stop) =>
            Array.from({ length: stop.length }, (_, length) => length).filter(
              (length) => length <= text.length && text.endsWith(stop.slice(0, length)),
            ),
          );
          expect(held).toBe(Math.max(0, ...candidates));
          expect(heldBack(text, { stops, include: true })).toBe(0);
        },
      ),
      { numRuns: 300 },
    );
  });
});
