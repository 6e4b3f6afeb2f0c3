// The distribution law's test (src/sampling/goodness-of-fit.ts): the randomized PIT is exactly uniform under
// the null (its intervals tile [0, 1)), the temperature score is standard normal, clean samples pass at about
// the stated rates, and the negative control (a sampler at 0.7 times the temperature) fails.
import { fc, test } from "@fast-check/vitest";
import { describe, expect, it } from "vitest";
import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";
import {
  biased,
  FALSE_ALARM_RATE,
  goodnessOfFit,
  rankedPit,
  temperatureScore,
  uniformityTest,
  type TokenSample,
} from "../../src/sampling/goodness-of-fit.ts";
import { distributionOf, drawToken } from "../../src/sampling/stochastic.ts";

/** n positions, each with its own distribution (softmax of seeded logits at temperature 0.7), the token drawn from `sampler`. */
function samplesOf(seed: number, n: number, sampler: (probs: Float64Array) => ArrayLike<number>): TokenSample[] {
  const rng = xoroshiro128plus(seed);
  return Array.from({ length: n }, () => {
    const row = Array.from({ length: 16 }, () => 4 * uniformFloat64(rng) * uniformFloat64(rng));
    const { probs } = distributionOf(row, { temperature: 0.7 });
    return { probs, token: drawToken(sampler(probs), uniformFloat64(rng), 1).token };
  });
}

describe("rankedPit", () => {
  test.prop([fc.array(fc.double({ min: -5, max: 5, noNaN: true }), { minLength: 1, maxLength: 12 })])(
    "the tokens' PIT intervals tile [0, 1) (so u is uniform when the token is drawn from p)",
    (row) => {
      const { probs } = distributionOf(row, { temperature: 1 });
      const intervals = Array.from(probs.keys())
        .filter((token) => probs[token] > 0)
        .map((token) => [rankedPit(probs, token, 0)!, rankedPit(probs, token, 0)! + probs[token]])
        .sort((a, b) => a[0] - b[0]);
      expect(intervals[0][0]).toBe(0);
      for (let i = 1; i < intervals.length; i++) expect(intervals[i][0]).toBeCloseTo(intervals[i - 1][1], 12);
      expect(intervals[intervals.length - 1][1]).toBeCloseTo(1, 12);
    },
  );

  it("has no value for a token of probability 0", () => {
    expect(rankedPit([0.5, 0, 0.5], 1, 0.3)).toBeUndefined();
  });
});

describe("goodnessOfFit", () => {
  it("clean samples: no false alarm in 100 runs, p-values below 0.05 about 5% of the time", () => {
    const pValues = Array.from(
      { length: 100 },
      (_, seed) =>
        goodnessOfFit(
          samplesOf(seed, 400, (p) => p),
          7,
        ).test.pValue,
    );
    expect(pValues.filter((p) => p < FALSE_ALARM_RATE)).toEqual([]);
    const below = pValues.filter((p) => p < 0.05).length;
    // Bonferroni over two tests: at most 5% in expectation; 12 of 100 would be a 1-in-1000 excess.
    expect(below).toBeLessThanOrEqual(12);
  });

  it("the negative control (0.7 times the temperature) fails in every run of 600 samples", () => {
    for (let seed = 0; seed < 10; seed++) {
      const fit = goodnessOfFit(
        samplesOf(seed, 600, (p) => biased(p, 0.7)),
        7,
      );
      expect(fit.pValue).toBeLessThan(FALSE_ALARM_RATE);
      expect(fit.score.z).toBeGreaterThan(0); // sharper: drawn tokens likelier than p says
    }
  });

  it("a flatter sampler gives a negative score", () => {
    const fit = goodnessOfFit(
      samplesOf(3, 600, (p) => biased(p, 1.5)),
      7,
    );
    expect(fit.pValue).toBeLessThan(FALSE_ALARM_RATE);
    expect(fit.score.z).toBeLessThan(0);
  });

  it("the temperature score of clean samples is standard normal: mean 0, variance 1 over 200 runs", () => {
    const zs = Array.from({ length: 200 }, (_, seed) => temperatureScore(samplesOf(1000 + seed, 200, (p) => p)).z);
    const mean = zs.reduce((sum, z) => sum + z, 0) / zs.length;
    const variance = zs.reduce((sum, z) => sum + (z - mean) ** 2, 0) / (zs.length - 1);
    expect(Math.abs(mean)).toBeLessThan(4 / Math.sqrt(zs.length));
    expect(variance).toBeGreaterThan(0.7);
    expect(variance).toBeLessThan(1.35);
  });

  it("reports the first token drawn where its distribution gives it probability 0", () => {
    const samples = samplesOf(1, 10, (p) => p);
    samples.push({ probs: [1, 0], token: 1 });
    expect(goodnessOfFit(samples, 7).impossible).toBe(10);
  });

  it("uniformityTest: exact bins pass, one bin holding everything fails", () => {
    expect(uniformityTest(Array.from({ length: 200 }, (_, i) => (i + 0.5) / 200)).pValue).toBeGreaterThan(0.99);
    expect(uniformityTest(Array.from({ length: 200 }, () => 0.05)).pValue).toBeLessThan(1e-12);
  });
});
