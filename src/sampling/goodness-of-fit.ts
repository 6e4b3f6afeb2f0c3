// Does a set of emitted tokens follow the distributions they were drawn from? Each token comes with its own
// reference distribution (the cache-free processed distribution at its position: positions and prompts
// differ), so the samples are first made identically distributed by the randomized probability integral
// transform over tokens ranked by descending probability (ties to the lower id): u = P(tokens ranked above)
// + v * p(token), v uniform from the test's own seeded stream. Under the null hypothesis every u is an
// independent U(0, 1) exactly, whatever the distributions and even though each token's distribution depends
// on the tokens before it (each u is uniform given the past); Pearson's chi-square over equal bins of [0, 1)
// (bins - 1 degrees of freedom) sees any departure. The biases sampling bugs cause are mostly a sharper or
// flatter sampler (temperature applied twice, extra mass on the drafted token after a recovery from p): the
// temperature's score test sees those with far fewer samples. The two share the false-alarm rate
// (Bonferroni). These p-values are asymptotic and ran anti-conservative at the law's sizes: the law itself uses
// them only as a statistic whose p-value monte-carlo-fit.ts simulates under the exact null. A token the reference
// gives probability 0 (masked by min-p, top-k, top-p, a ban) cannot be drawn at all: it is reported on its
// own, tie-aware (its exclusion by a cut within epsilon is a near-tie, and the sample is set aside).
import chisquareCdf from "@stdlib/stats-base-dists-chisquare-cdf";
import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";

/** The single-look level the asymptotic test was used at before issue 25 (scripts/sampling-power.ts' "today"). */
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
  /** Pearson's chi-square of the PITs over the bins and its degrees of freedom. */
  statistic: number;
  degrees: number;
  /** P(chi-square >= statistic) under the null hypothesis. */
  pValue: number;
  counts: number[];
}

/** Pearson's chi-square of values in [0, 1) against the uniform, over `bins` equal bins. Pure. */
export function uniformityTest(values: readonly number[], bins = PIT_BINS): UniformityTest {
  const counts = new Array<number>(bins).fill(0);
  for (const value of values) counts[Math.min(bins - 1, Math.floor(value * bins))] += 1;
  const expected = values.length / bins;
  const statistic = counts.reduce((total, count) => total + (count - expected) ** 2 / expected, 0);
  const degrees = bins - 1;
  return { samples: values.length, statistic, degrees, pValue: 1 - chisquareCdf(statistic, degrees), counts };
}

export interface TemperatureScore {
  /** Sum over samples of log p(token) - E_p[log p], divided by the square root of the summed variances. */
  z: number;
  /** Two-sided: P(|N(0, 1)| >= |z|). */
  pValue: number;
}

/**
 * The score test of the temperature: under p^beta (renormalized) the score at beta = 1 is log p(token) minus its
 * mean under p, so a sampler sharper than p (a temperature applied twice below 1, extra mass on the drafted
 * token) makes z positive, a flatter one negative. Each term has mean 0 given the past and a bounded third
 * moment (p |log p|^3 <= 1.3), so z is close to N(0, 1) from a hundred samples on: measured, not assumed
 * (scripts/sampling-power.ts). Samples of probability 0 are left out (the law reports them on their own). Pure.
 */
export function temperatureScore(samples: readonly TokenSample[]): TemperatureScore {
  let score = 0;
  let variance = 0;
  for (const { probs, token } of samples) {
    if (!(probs[token] > 0)) continue;
    let mean = 0;
    let second = 0;
    for (let other = 0; other < probs.length; other++) {
      const q = probs[other];
      if (!(q > 0)) continue;
      const log = Math.log(q);
      mean += q * log;
      second += q * log * log;
    }
    score += Math.log(probs[token]) - mean;
    variance += second - mean * mean;
  }
  const z = variance > 0 ? score / Math.sqrt(variance) : 0;
  // z^2 is chi-square with 1 degree of freedom: the two-sided p-value.
  return { z, pValue: 1 - chisquareCdf(z * z, 1) };
}

export interface FitResult {
  /** The PITs' uniformity (any departure). */
  test: UniformityTest;
  /** The temperature score (sharper or flatter: where sampling bugs push). */
  score: TemperatureScore;
  /** Both at once (Bonferroni): 2 * the smaller p-value, at most 1; the law rejects below FALSE_ALARM_RATE. */
  pValue: number;
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
  const test = uniformityTest(pits);
  const score = temperatureScore(samples);
  return {
    test,
    score,
    pValue: Math.min(1, 2 * Math.min(test.pValue, score.pValue)),
    ...(impossible !== undefined ? { impossible } : {}),
  };
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
