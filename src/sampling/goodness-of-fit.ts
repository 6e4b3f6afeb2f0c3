// Does a set of emitted tokens follow the distributions they were drawn from? Each token comes with its own
// reference distribution (the cache-free processed distribution at its position: positions and prompts
// differ), so the samples are first made identically distributed by the randomized probability integral
// transform over tokens ranked by descending probability (ties to the lower id): u = P(tokens ranked above)
// + v * p(token), v uniform from the test's own seeded stream. Under the null hypothesis every u is an
// independent U(0, 1) exactly, whatever the distributions and even though each token's distribution depends
// on the tokens before it (each u is uniform given the past). Two tests of uniformity then share the
// false-alarm rate (Bonferroni): Pearson's chi-square over equal bins of [0, 1) (bins - 1 degrees of freedom)
// and the mean's z-test; the law rejects at FALSE_ALARM_RATE. Ranking by probability gives
// power against the biases sampling bugs cause: a sharper or flatter distribution (temperature applied twice)
// moves u towards 0 or 1, extra mass on the drafted token (recovery from p) towards 0. A token the reference
// gives probability 0 (masked by min-p, top-k, top-p, a ban) cannot be drawn at all: it is reported on its
// own, tie-aware (its exclusion by a cut within epsilon is a near-tie, and the sample is set aside).
import chisquareCdf from "@stdlib/stats-base-dists-chisquare-cdf";
import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";

/** The law's false-alarm rate: the chance that correct sampling fails it on one run (measured: scripts/). */
export const FALSE_ALARM_RATE = 1e-4;
export const PIT_BINS = 10;
/** Fewer samples than this leave the chi-square approximation loose (5 expected per bin is the usual floor). */
export const MIN_SAMPLES = 10 * PIT_BINS;

export interface TokenSample {
  probs: ArrayLike<number>;
  token: number;
}

/** The randomized PIT of a token in its distribution (ranked by descending probability); undefined at p = 0. */
export function rankedPit(probs: ArrayLike<number>, token: number, jitter: number): number | undefined {
  const p = probs[token];
  if (!(p > 0)) return undefined;
  let above = 0;
  for (let other = 0; other < probs.length; other++) {
    const q = probs[other];
    if (q > p || (q === p && other < token)) above += q;
  }
  return Math.min(above + jitter * p, 1 - Number.EPSILON);
}

export interface UniformityTest {
  samples: number;
  /** Pearson's chi-square over the bins and its degrees of freedom. */
  statistic: number;
  degrees: number;
  /** The PITs' mean in standard units: (mean - 1/2) / sqrt(1 / (12 n)). */
  meanZ: number;
  /** Both tests at once (Bonferroni): 2 * the smaller of their p-values, at most 1. */
  pValue: number;
  counts: number[];
}

/**
 * Values in [0, 1) against the uniform: Pearson's chi-square over `bins` equal bins (any departure), and the
 * two-sided test of their mean (a shift towards 0 or 1, what a sharper or flatter sampler makes: far more
 * powerful there; the mean of n bounded uniforms is closer to normal than the normal's own tails). Pure.
 */
export function uniformityTest(values: readonly number[], bins = PIT_BINS): UniformityTest {
  const counts = new Array<number>(bins).fill(0);
  let sum = 0;
  for (const value of values) {
    counts[Math.min(bins - 1, Math.floor(value * bins))] += 1;
    sum += value;
  }
  const n = values.length;
  const expected = n / bins;
  const statistic = counts.reduce((total, count) => total + (count - expected) ** 2 / expected, 0);
  const degrees = bins - 1;
  const meanZ = n > 0 ? (sum / n - 0.5) / Math.sqrt(1 / (12 * n)) : 0;
  const chiP = 1 - chisquareCdf(statistic, degrees);
  // z^2 is chi-square with 1 degree of freedom: the two-sided p-value of the mean.
  const meanP = 1 - chisquareCdf(meanZ * meanZ, 1);
  return { samples: n, statistic, degrees, meanZ, pValue: Math.min(1, 2 * Math.min(chiP, meanP)), counts };
}

export interface FitResult {
  test: UniformityTest;
  /** The first sample whose token has probability 0 in its distribution (not a near-tie). */
  impossible?: number;
}

/** The PITs of the samples (jitter from a stream seeded with `seed`) and their uniformity. Pure. */
export function goodnessOfFit(samples: readonly TokenSample[], seed: number): FitResult {
  const rng = xoroshiro128plus(seed | 0);
  const pits: number[] = [];
  let impossible: number | undefined;
  samples.forEach((sample, index) => {
    const pit = rankedPit(sample.probs, sample.token, uniformFloat64(rng));
    if (pit === undefined) impossible ??= index;
    else pits.push(pit);
  });
  return { test: uniformityTest(pits), ...(impossible !== undefined ? { impossible } : {}) };
}

/**
 * The negative control's sampler: p sharpened as by a temperature `factor` times the right one
 * (p^(1/factor), renormalized), the bias a temperature applied twice or a mis-scaled logit gives.
 */
export function biased(probs: ArrayLike<number>, factor: number): Float64Array {
  const out = new Float64Array(probs.length);
  let total = 0;
  for (let token = 0; token < probs.length; token++) {
    out[token] = probs[token] > 0 ? Math.pow(probs[token], 1 / factor) : 0;
    total += out[token];
  }
  for (let token = 0; token < out.length; token++) out[token] /= total;
  return out;
}
