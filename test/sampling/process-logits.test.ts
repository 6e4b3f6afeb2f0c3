// The processing definitions against hand-computed rows (vLLM V1's order: min tokens, logit bias, then
// repetition, frequency and presence penalties), the logprob entries, and the greedy choice's ties.
import { test as propertyTest } from "@fast-check/vitest";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { choose, contextOf, logprobEntry, processLogits, topTokens } from "../../src/sampling/process-logits.ts";
import { activeSamplingOptions, changesLogits, needsLogits } from "../../src/sampling/params.ts";

const EOS = 0;
const RAW = [1, 2, -1, 3, 0.5];

describe("processLogits", () => {
  it("no option leaves the row as it is", () => {
    expect([...processLogits(RAW, 0, 5, {}, contextOf([1], [2]), EOS)]).toEqual(RAW);
  });

  it("reads the row at its offset", () => {
    expect([...processLogits([9, 9, ...RAW], 2, 5, {}, contextOf([], []), EOS)]).toEqual(RAW);
  });

  it("repetition divides positive and multiplies negative logits of tokens in prompt or output", () => {
    // token 1 in the prompt (2 > 0: divided), 2 in the output (-1: multiplied), 3 unseen.
    const row = processLogits(RAW, 0, 5, { repetitionPenalty: 2 }, contextOf([1], [2]), EOS);
    expect([...row]).toEqual([1, 1, -2, 3, 0.5]);
  });

  it("presence subtracts once per output token present, frequency once per occurrence; the prompt does not count", () => {
    const context = contextOf([4], [3, 3, 1]);
    expect([...processLogits(RAW, 0, 5, { presencePenalty: 0.5 }, context, EOS)]).toEqual([1, 1.5, -1, 2.5, 0.5]);
    expect([...processLogits(RAW, 0, 5, { frequencyPenalty: 0.5 }, context, EOS)]).toEqual([1, 1.5, -1, 2, 0.5]);
  });

  it("logit bias adds to the token's logit before the penalties see it", () => {
    // Bias makes token 2 positive (-1 + 3 = 2), then repetition divides it: (2) / 2 = 1.
    const row = processLogits(RAW, 0, 5, { logitBias: { "2": 3 }, repetitionPenalty: 2 }, contextOf([2], []), EOS);
    expect(row[2]).toBe(1);
  });

  it("min new tokens masks EOS and the stop ids while fewer output tokens are committed", () => {
    const params = { minNewTokens: 2, stopTokenIds: [3] };
    const masked = processLogits(RAW, 0, 5, params, contextOf([], [1]), EOS);
    expect(masked[EOS]).toBe(-Infinity);
    expect(masked[3]).toBe(-Infinity);
    expect(choose(masked).predict).toBe(1);
    const open = processLogits(RAW, 0, 5, params, contextOf([], [1, 1]), EOS);
    expect([...open]).toEqual(RAW);
  });

  it("ignores ids outside the vocabulary", () => {
    expect([...processLogits(RAW, 0, 5, { logitBias: { "9": 5 } }, contextOf([9], [9]), EOS)]).toEqual(RAW);
  });
});

describe("choose and logprobs", () => {
  it("argmax with ties to the lower id and a zero margin on a tie", () => {
    expect(choose([1, 3, 3, 2])).toEqual({ predict: 1, margin: 0, topLogit: 3 });
    expect(choose([1, 3, 2])).toEqual({ predict: 1, margin: 1, topLogit: 3 });
  });

  it("logprob entries are log-softmax values with the k best alternatives, masked tokens left out", () => {
    const row = [Math.log(1), Math.log(2), -Infinity, Math.log(1)];
    const entry = logprobEntry(row, 1, 3);
    expect(entry.token).toBe(1);
    expect(entry.logprob).toBeCloseTo(Math.log(0.5), 12);
    expect(entry.top.map((alternative) => alternative.token)).toEqual([1, 0, 3]);
    expect(entry.top[1].logprob).toBeCloseTo(Math.log(0.25), 12);
    expect(logprobEntry(row, 1, 4).top.map((alternative) => alternative.token)).toEqual([1, 0, 3]);
    expect(topTokens([2, 5, 5, 1], 2)).toEqual([1, 2]);
  });

  // The selection against the definition: every id sorted by value, descending, ties to the lower id.
  propertyTest.prop([
    fc.array(fc.oneof(fc.integer({ min: -3, max: 3 }), fc.constant(-Infinity)), { maxLength: 40 }),
    fc.integer({ min: 1, max: 45 }),
  ])("topTokens is the first k of the ids sorted by value (ties to the lower id)", (row, k) => {
    const sorted = row.map((_, id) => id).sort((a, b) => (row[b] === row[a] ? a - b : row[b] > row[a] ? 1 : -1));
    expect(topTokens(row, k)).toEqual(sorted.slice(0, k));
  });
});

describe("option predicates", () => {
  it("neutral values are present but inactive; stop ids and logprobs change no logit", () => {
    const neutral = { repetitionPenalty: 1, presencePenalty: 0, minNewTokens: 0, logitBias: {} };
    expect(activeSamplingOptions(neutral)).toEqual([]);
    expect(changesLogits(neutral)).toBe(false);
    expect(changesLogits({ stopTokenIds: [3], logprobs: 2 })).toBe(false);
    expect(needsLogits({ stopTokenIds: [3] })).toBe(false);
    expect(needsLogits({ logprobs: 0 })).toBe(true);
    expect(changesLogits({ frequencyPenalty: -0.5 })).toBe(true);
  });
});
