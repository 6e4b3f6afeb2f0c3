// The engine's text stream (src/engine/text-stream.ts), token by token and in steps of several tokens, against the
// whole-text conventions (src/sampling/stop-strings.ts): it stops at the token holding the first occurrence's last
// character, reports the cut text, and its deltas (one per step) concatenate to it, each a prefix of the final text
// when streamed; its two faults miss a stop before a step's last token and drop a step's earlier tokens.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Faults, type FaultName } from "../../src/case/faults.ts";
import { TextStream } from "../../src/engine/text-stream.ts";
import { PRESETS } from "../../src/model/presets.ts";
import { detokenize, pieceEnds, vocabularyOf } from "../../src/model/vocabulary.ts";
import { finalText, firstStopOccurrence, type TextOptions } from "../../src/sampling/stop-strings.ts";

const vocabulary = vocabularyOf(PRESETS.tiny);

/** Feeds `tokens` in steps of the given sizes as Request.emit does; the tokens kept and the stream. */
function feed(tokens: readonly number[], steps: readonly number[], options: TextOptions, faults: FaultName[] = []) {
  const stream = new TextStream(vocabulary, options, new Faults(faults));
  const kept: number[] = [];
  const streamed: string[] = [];
  let next = 0;
  let finished = false;
  for (const size of steps) {
    if (finished || next >= tokens.length) break;
    const emitted: number[] = [];
    for (const token of tokens.slice(next, next + size)) {
      emitted.push(token);
      kept.push(token);
      if (stream.append(token)) {
        finished = true;
        break;
      }
    }
    next += size;
    if (!finished && faults.includes("stop-string-checked-at-round-end")) finished = stream.checkRoundEnd();
    stream.stream(emitted, finished || next >= tokens.length);
    streamed.push(stream.deltas.map((delta) => delta.text).join(""));
  }
  return { stream, kept, streamed };
}

const caseArbitrary = fc
  .record({
    tokens: fc.array(fc.integer({ min: 0, max: PRESETS.tiny.vocab - 1 }), { minLength: 1, maxLength: 14 }),
    steps: fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 14, maxLength: 14 }),
    slices: fc.array(fc.record({ start: fc.nat(), length: fc.integer({ min: 1, max: 5 }) }), { maxLength: 3 }),
    include: fc.boolean(),
    minNewTokens: fc.nat({ max: 3 }),
  })
  .map(({ tokens, steps, slices, include, minNewTokens }) => {
    const text = detokenize(vocabulary, tokens);
    const stops = slices
      .map(({ start, length }) =>
        text.length > 0 ? text.slice(start % text.length, (start % text.length) + length) : "",
      )
      .filter((stop) => stop.length > 0);
    return { tokens, steps, options: { stops, include, minNewTokens } };
  });

describe("TextStream", () => {
  it("stops at the first occurrence's token, cuts the text, streams it whole (any step sizes)", () => {
    fc.assert(
      fc.property(caseArbitrary, ({ tokens, steps, options }) => {
        const occurrence = firstStopOccurrence(detokenize(vocabulary, tokens), pieceEnds(vocabulary, tokens), options);
        const { stream, kept, streamed } = feed(tokens, steps, options);
        expect(kept).toEqual(occurrence ? tokens.slice(0, occurrence.tokenIndex + 1) : tokens);
        expect(stream.occurrence).toEqual(occurrence);
        const text = finalText(detokenize(vocabulary, kept), occurrence, options.include);
        expect(stream.output).toBe(text);
        expect(
          stream
            .finalDeltas()
            .map((delta) => delta.text)
            .join(""),
        ).toBe(text);
        expect(stream.finalDeltas().flatMap((delta) => delta.tokens)).toEqual(kept);
        for (const prefix of streamed) expect(text.startsWith(prefix)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it("holds back a possible stop string's start until it is decided", () => {
    const piece = (token: number) => vocabulary.pieces[token];
    const [a, b] = [3, 4].map(piece);
    // The stop is a's text plus one character that b's text does not start with: after a, it may still come.
    const other = vocabulary.alphabet.split("").find((character) => !b.startsWith(character))!;
    const { streamed, stream } = feed([3, 4], [1, 1], { stops: [a + other], include: false, minNewTokens: 0 });
    expect(streamed[0]).toBe("");
    expect(stream.output).toBe(a + b);
    expect(streamed[1]).toBe(a + b);
  });

  it("stop-string-checked-at-round-end misses a stop before a step's last token, or cuts the text late", () => {
    // A 4-token step whose tokens 0 and 1 spell a stop string (2 characters across their boundary) that occurs
    // nowhere else: the first such sequence of tokens 3..20.
    const candidates = [3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20];
    const found = candidates
      .flatMap((a) => candidates.map((b) => [a, b, 6, 7]))
      .map((tokens) => {
        const text = detokenize(vocabulary, tokens);
        const ends = pieceEnds(vocabulary, tokens);
        return { tokens, text, stop: text.slice(ends[0] - 1, ends[0] + 1) };
      })
      .find(({ text, stop }) => text.indexOf(stop) === text.lastIndexOf(stop));
    expect(found).toBeDefined();
    const { tokens, text, stop } = found!;
    const options = { stops: [stop], include: false, minNewTokens: 0 };
    expect(feed(tokens, [4], options).kept).toEqual(tokens.slice(0, 2));
    const missed = feed(tokens, [4], options, ["stop-string-checked-at-round-end"]);
    expect(missed.kept).toEqual(tokens);
    expect(missed.stream.output).toBe(text);
    // A stop inside the tail but before the last token: found at the step's end, the text cut, all tokens kept.
    const ends = pieceEnds(vocabulary, tokens);
    const late = feed(tokens, [4], { ...options, stops: [text.slice(ends[1], ends[1] + 1), "!!!!"] }, [
      "stop-string-checked-at-round-end",
    ]);
    expect(late.kept).toEqual(tokens);
    expect(late.stream.occurrence?.tokenIndex).toBe(3);
  });

  it("stop-string-checked-at-round-end ends only at a step's last token", () => {
    fc.assert(
      fc.property(caseArbitrary, ({ tokens, steps, options }) => {
        const { kept } = feed(tokens, steps, options, ["stop-string-checked-at-round-end"]);
        const boundaries = steps.map((_, i) => steps.slice(0, i + 1).reduce((sum, size) => sum + size, 0));
        expect(kept.length === tokens.length || boundaries.includes(kept.length)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it("stream-delta-last-token streams only a step's last token", () => {
    const options = { stops: [], include: false, minNewTokens: 0 };
    const faulty = feed([3, 5, 6], [3], options, ["stream-delta-last-token"]);
    expect(faulty.stream.deltas).toEqual([{ text: vocabulary.pieces[6], tokens: [6] }]);
    expect(feed([3, 5, 6], [3], options).stream.deltas).toEqual([
      { text: detokenize(vocabulary, [3, 5, 6]), tokens: [3, 5, 6] },
    ]);
  });
});
