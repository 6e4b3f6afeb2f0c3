// The distribution law's Monte Carlo p-value (src/sampling/monte-carlo-fit.ts): calibrated on clean samples at
// the sizes the law sees (the share below 0.05 and 0.01 within binomial error, where the asymptotic p-values
// ran high), rejecting the negative control, and cheap on clean data (the sequential rule stops early).
import { describe, expect, it } from "vitest";
import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";
import { biased, goodnessOfFit, type TokenSample } from "../../src/sampling/goodness-of-fit.ts";
import { monteCarloFit } from "../../src/sampling/monte-carlo-fit.ts";
import { distributionOf, drawToken } from "../../src/sampling/stochastic.ts";

/** n positions with skewed distributions (a few likely tokens, a long tail: where the score is least normal). */
function samplesOf(seed: number, n: number, sampler: (probs: Float64Array) => ArrayLike<number>): TokenSample[] {
  const rng = xoroshiro128plus(seed);
  return Array.from({ length: n }, () => {
    const row = Array.from({ length: 32 }, () => 9 * uniformFloat64(rng) ** 3);
    const { probs } = distributionOf(row, { temperature: 0.8 });
    return { probs, token: drawToken(sampler(probs), uniformFloat64(rng), 1).token };
  });
}

describe("monteCarloFit", () => {
  it("clean samples of 100-150 tokens: p-values below 0.05 and 0.01 at their rates (binomial 4 sigma)", () => {
    const tests = 300;
    const pValues = Array.from(
      { length: tests },
      (_, seed) =>
        monteCarloFit(
          samplesOf(seed, 100 + (seed % 51), (p) => p),
          seed,
          { alpha: 0.01, seed },
        ).pValue,
    );
    for (const level of [0.05, 0.01]) {
      const below = pValues.filter((p) => p < level).length;
      const sigma = Math.sqrt(tests * level * (1 - level));
      expect(below).toBeLessThanOrEqual(tests * level + 4 * sigma);
    }
    // Valid and not wildly conservative: some clean p-values are below 0.05.
    expect(pValues.filter((p) => p < 0.05).length).toBeGreaterThan(0);
  });

  it("stops early on clean data (the sequential rule) and runs the full count near the line", () => {
    const clean = monteCarloFit(
      samplesOf(1, 300, (p) => p),
      1,
      { alpha: 1e-3, seed: 1 },
    );
    expect(clean.simulations).toBeLessThan(1000);
    const control = monteCarloFit(
      samplesOf(2, 600, (p) => biased(p, 0.7)),
      2,
      { alpha: 1e-3, seed: 2 },
    );
    expect(control.simulations).toBe(Math.ceil(4 / 1e-3) - 1);
    expect(control.pValue).toBeLessThan(1e-3);
  });

  it("rejects the negative control (0.7 times the temperature) at 1e-3 in every run of 600 samples", () => {
    for (let seed = 10; seed < 13; seed++)
      expect(
        monteCarloFit(
          samplesOf(seed, 600, (p) => biased(p, 0.7)),
          seed,
          { alpha: 1e-3, seed },
        ).pValue,
      ).toBeLessThan(1e-3);
  });

  it("a p-value at the smaller statistic's level: a flatter sampler (score far off, PIT bins less so) rejects", () => {
    const samples = samplesOf(21, 400, (p) => biased(p, 1.25));
    // The PIT chi-square alone is far from rejecting; the score is what the p-value must follow.
    expect(goodnessOfFit(samples, 21).test.pValue).toBeGreaterThan(0.01);
    const fit = monteCarloFit(samples, 21, { alpha: 1e-3, seed: 21 });
    expect(fit.pValue).toBeLessThan(1e-3);
  });

  it("refuses a sample of probability 0 (the law reports those before testing)", () => {
    expect(() => monteCarloFit([{ probs: [1, 0], token: 1 }], 1, { alpha: 0.01, seed: 1 })).toThrow(/probability 0/);
  });
});
