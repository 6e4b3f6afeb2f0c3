// The engines' stop-string choice (src/profiles/stop-choice.ts) against a brute force over every occurrence, and
// the profile's translation: only an answer that is exactly the engine's rule is read in the reference's terms.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PRESETS } from "../../src/model/presets.ts";
import { detokenize, pieceEnds, vocabularyOf } from "../../src/model/vocabulary.ts";
import { finalText, firstStopOccurrence } from "../../src/sampling/stop-strings.ts";
import {
  engineStopChoice,
  translateStopChoice,
  windowEnds,
  type StopChoiceRule,
} from "../../src/profiles/stop-choice.ts";
import { PROFILES, RelaxationLog } from "../../src/profiles/profiles.ts";
import { RelaxedViews } from "../../src/profiles/relaxed-view.ts";
import type { RequestOutput } from "../../src/trace/run-result.ts";
import { tinyCase } from "../helpers/tiny-case.ts";

const vocabulary = vocabularyOf(PRESETS.tiny);

function bruteForce(
  tokens: readonly number[],
  stops: readonly string[],
  minNewTokens: number,
  windows: readonly number[],
  rule: StopChoiceRule,
) {
  const text = detokenize(vocabulary, tokens);
  const ends = pieceEnds(vocabulary, tokens);
  const after = minNewTokens > 0 ? (ends[Math.min(minNewTokens, ends.length) - 1] ?? 0) : 0;
  const tokenOf = (end: number) => ends.findIndex((tokenEnd) => tokenEnd >= end);
  const windowOf = (token: number) => windows.findIndex((last) => last >= token);
  const occurrences = stops.flatMap((stop, listed) =>
    Array.from({ length: text.length }, (_, start) => start)
      .filter((start) => text.startsWith(stop, start) && start + stop.length > after)
      .map((start) => ({
        stop,
        start,
        end: start + stop.length,
        listed,
        window: windowOf(tokenOf(start + stop.length)),
      })),
  );
  if (occurrences.length === 0) return undefined;
  const window = Math.min(...occurrences.map((occurrence) => occurrence.window));
  const inWindow = occurrences.filter((occurrence) => occurrence.window === window);
  inWindow.sort((a, b) =>
    rule === "earliest-start" ? a.start - b.start || a.listed - b.listed : a.listed - b.listed || a.start - b.start,
  );
  const { stop, start, end } = inWindow[0];
  return { stop, start, end, tokenIndex: tokenOf(end) };
}

/** Tokens, stop strings sliced from their text (so they occur, often several ending in one token), windows. */
const caseArbitrary = fc
  .record({
    tokens: fc.array(fc.integer({ min: 0, max: PRESETS.tiny.vocab - 1 }), { minLength: 1, maxLength: 10 }),
    slices: fc.array(fc.record({ start: fc.nat(), length: fc.integer({ min: 1, max: 6 }) }), { maxLength: 4 }),
    cuts: fc.array(fc.boolean(), { maxLength: 10 }),
    minNewTokens: fc.nat({ max: 3 }),
    rule: fc.constantFrom<StopChoiceRule>("earliest-start", "list-order"),
  })
  .map(({ tokens, slices, cuts, minNewTokens, rule }) => {
    const text = detokenize(vocabulary, tokens);
    const stops = [
      ...new Set(
        slices
          .map(({ start, length }) =>
            text.length > 0 ? text.slice(start % text.length, (start % text.length) + length) : "",
          )
          .filter((stop) => stop.length > 0),
      ),
    ];
    // A window ends after token i when cuts[i] is true, and after the last token always.
    const windows = tokens.map((_, index) => index).filter((index) => cuts[index] || index === tokens.length - 1);
    return { tokens, stops, minNewTokens, windows, rule };
  });

describe("engineStopChoice", () => {
  it("is the rule's pick in the first window holding an occurrence's end (brute force)", () => {
    fc.assert(
      fc.property(caseArbitrary, ({ tokens, stops, minNewTokens, windows, rule }) => {
        const text = detokenize(vocabulary, tokens);
        const ends = pieceEnds(vocabulary, tokens);
        const got = engineStopChoice(text, ends, stops, minNewTokens, windows, rule);
        expect(got).toEqual(bruteForce(tokens, stops, minNewTokens, windows, rule));
      }),
      { numRuns: 400 },
    );
  });

  it("agrees with the reference's first-ending occurrence when it alone ends in its window", () => {
    fc.assert(
      fc.property(caseArbitrary, ({ tokens, stops, minNewTokens, windows, rule }) => {
        const text = detokenize(vocabulary, tokens);
        const ends = pieceEnds(vocabulary, tokens);
        const reference = firstStopOccurrence(text, ends, { stops, minNewTokens });
        const got = engineStopChoice(text, ends, stops, minNewTokens, windows, rule);
        expect(got === undefined).toBe(reference === undefined);
        if (!reference || !got) return;
        // Both end in the same window; when one occurrence ends there, it is the same occurrence.
        const windowOf = (token: number) => windows.findIndex((last) => last >= token);
        expect(windowOf(got.tokenIndex)).toBe(windowOf(reference.tokenIndex));
        const others = bruteForce(
          tokens,
          stops,
          minNewTokens,
          windows,
          rule === "list-order" ? "earliest-start" : "list-order",
        );
        if (others && others.stop === got.stop && others.start === got.start && got.stop === reference.stop)
          expect(got).toEqual(reference);
      }),
      { numRuns: 300 },
    );
  });
});

describe("windowEnds", () => {
  it("reads steps from streamed deltas that cover the output, else one token per window", () => {
    const deltas = [
      { text: "a", tokens: [1, 2] },
      { text: "", tokens: [] },
      { text: "b", tokens: [3] },
    ];
    expect(windowEnds({ tokens: [1, 2, 3], deltas }, "step")).toEqual([1, 2]);
    expect(windowEnds({ tokens: [1, 2, 3], deltas }, "token")).toEqual([0, 1, 2]);
    expect(windowEnds({ tokens: [1, 2, 3, 4], deltas }, "step")).toEqual([0, 1, 2, 3]);
  });
});

/** Tokens where one token completes two stop strings that the two rules tell apart, found by search. */
function twoStopsInOneToken(): { tokens: number[]; stops: string[] } {
  for (let a = 0; a < PRESETS.tiny.vocab; a++)
    for (let b = 0; b < PRESETS.tiny.vocab; b++) {
      const tokens = [a, b];
      const text = detokenize(vocabulary, tokens);
      const ends = pieceEnds(vocabulary, tokens);
      // A short stop ending early in token b, and a longer one starting before it and ending at b's end.
      for (let shortEnd = ends[0] + 1; shortEnd < ends[1]; shortEnd++) {
        const short = text.slice(shortEnd - 1, shortEnd);
        const long = text.slice(Math.max(0, shortEnd - 2), ends[1]);
        if (text.indexOf(short) !== shortEnd - 1 || text.indexOf(long) < 0 || long.length < 3) continue;
        if (text.indexOf(long) >= shortEnd - 1) continue;
        return { tokens, stops: [short, long] };
      }
    }
  throw new Error("no two-token text in the tiny vocabulary has one token complete two stop strings");
}

describe("translateStopChoice", () => {
  const { tokens, stops } = twoStopsInOneToken();
  const testCase = tinyCase(null, 1, [[1, 5, 9, 13, 17]], tokens.length);
  testCase.workload.requests[0].sampling = { stop: stops };
  const text = detokenize(vocabulary, tokens);
  const ends = pieceEnds(vocabulary, tokens);
  const reference = firstStopOccurrence(text, ends, { stops, minNewTokens: 0 })!;
  const engine = engineStopChoice(text, ends, stops, 0, [0, 1], "earliest-start")!;
  const output = (reported: string, stopString: string): RequestOutput => ({
    id: 0,
    tokens,
    finishReason: "stop",
    acceptLens: [],
    cutRounds: 0,
    text: reported,
    stopString,
  });

  it("the rules differ on this text: the engine's stop starts first, the reference's ends first", () => {
    expect(engine.stop).not.toBe(reference.stop);
    expect(engine.start).toBeLessThan(reference.start);
    expect(engine.tokenIndex).toBe(reference.tokenIndex);
  });

  it("reads the engine's exact answer as the reference's, and nothing else", () => {
    const exact = output(finalText(text, engine, false), engine.stop);
    const other = output(text, engine.stop);
    const result = translateStopChoice(testCase, [exact], PRESETS.tiny, { rule: "earliest-start", window: "token" });
    expect(result.applied).toBe(1);
    expect(result.outputs[0].text).toBe(finalText(text, reference, false));
    expect(result.outputs[0].stopString).toBe(reference.stop);
    expect(result.outputs[0].tokens).toBe(tokens);
    const untouched = translateStopChoice(testCase, [other], PRESETS.tiny, { rule: "earliest-start", window: "token" });
    expect(untouched.applied).toBe(0);
    expect(untouched.outputs[0]).toBe(other);
    // vLLM's rule picks the first listed stop: the reference's here, so its exact answer needs no translation.
    const listed = translateStopChoice(testCase, [exact], PRESETS.tiny, { rule: "list-order", window: "step" });
    expect(listed.applied).toBe(0);
  });

  it("the llama-server profile applies it to stop string end and stop trim only, counted once per outputs", () => {
    const log = new RelaxationLog(PROFILES["llama-server"]);
    const views = new RelaxedViews(PROFILES["llama-server"], log);
    const outputs = [output(finalText(text, engine, false), engine.stop)];
    for (const law of ["stop string end", "stop trim", "stop string end"]) {
      const read = views.outputsFor(law, testCase, outputs, PRESETS.tiny);
      expect(read.relaxedBy).toEqual(["stop-string-earliest-start-in-token"]);
      expect(read.outputs[0].text).toBe(finalText(text, reference, false));
    }
    expect(views.outputsFor("stream deltas", testCase, outputs, PRESETS.tiny).outputs).toBe(outputs);
    expect(log.entries()[0].applied).toBe(1);
  });
});
