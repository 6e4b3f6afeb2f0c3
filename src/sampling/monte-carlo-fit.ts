// The distribution law's p-value by simulation instead of asymptotics (issue 25). The chi-square and normal
// approximations goodness-of-fit.ts names were anti-conservative at the law's sample sizes (p < 0.01 in 2% of
// clean runs; the temperature score's terms are skewed: a rare token's log p is far below its mean), and the
// law's rejections rest on the far tail where the approximations are worst. But the null distribution is known
// exactly: each sample's reference distribution. So the statistic (the smaller of the two approximate p-values,
// used only as a statistic) is simulated under the null: each position's token drawn from its own distribution
// by inverse CDF over the ranked tokens with a uniform u, whose PIT is u itself (the randomized PIT of a token
// drawn this way is uniform within its interval, as the observed one is). The Monte Carlo p-value
// (k + 1) / (m + 1), k of m simulations at least as extreme, is valid at any sample size; Besag and Clifford's
// sequential rule (Biometrika 1991) stops after `hits` extreme simulations, so clean runs cost a few dozen
// simulations and only runs near the rejection line pay for the full count.
import chisquareCdf from "@stdlib/stats-base-dists-chisquare-cdf";
import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";
import { PIT_BINS, rankedPit, type TokenSample } from "./goodness-of-fit.ts";

/** One position's null model: cumulative probabilities in rank order and each rank's centred log p. */
interface PositionModel {
  cumulative: Float64Array;
  centredLog: Float64Array;
  variance: number;
}

function positionModel(probs: ArrayLike<number>): PositionModel {
  const tokens: number[] = [];
  for (let token = 0; token < probs.length; token++) if (probs[token] > 0) tokens.push(token);
  // Ranked by descending probability, ties to the lower id: rankedPit's order.
  tokens.sort((a, b) => probs[b] - probs[a] || a - b);
  const cumulative = new Float64Array(tokens.length);
  const centredLog = new Float64Array(tokens.length);
  let total = 0;
  let mean = 0;
  let second = 0;
  tokens.forEach((token, rank) => {
    const p = probs[token];
    total += p;
    cumulative[rank] = total;
    const log = Math.log(p);
    centredLog[rank] = log;
    mean += p * log;
    second += p * log * log;
  });
  for (let rank = 0; rank < centredLog.length; rank++) centredLog[rank] -= mean;
  return { cumulative, centredLog, variance: second - mean * mean };
}

/** The first rank whose cumulative probability exceeds u (the last one if rounding leaves u above them all). */
function rankOf(cumulative: Float64Array, u: number): number {
  let low = 0;
  let high = cumulative.length - 1;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (cumulative[middle] > u) high = middle;
    else low = middle + 1;
  }
  return low;
}

function chiSquareOf(counts: ArrayLike<number>, samples: number): number {
  const expected = samples / PIT_BINS;
  let chi = 0;
  for (let bin = 0; bin < PIT_BINS; bin++) chi += (counts[bin] - expected) ** 2 / expected;
  return chi;
}

/** The x with P(chi-square_degrees >= x) = tail, by bisection (once per test, not per simulation). */
function upperQuantile(tail: number, degrees: number): number {
  let low = 0;
  let high = 1;
  while (1 - chisquareCdf(high, degrees) > tail) high *= 2;
  for (let step = 0; step < 200 && high - low > 1e-12 * high; step++) {
    const middle = (low + high) / 2;
    if (1 - chisquareCdf(middle, degrees) > tail) low = middle;
    else high = middle;
  }
  return low;
}

export interface MonteCarloFit {
  /** (k + 1) / (m + 1), or k / m where the sequential rule stopped early: valid at any sample size. */
  pValue: number;
  simulations: number;
  /** The observed statistic (the smaller approximate p-value), for messages. */
  observed: number;
}

export interface MonteCarloOptions {
  /** The rejection level the caller uses: the simulation count is enough to reject below it. */
  alpha: number;
  /** Stop after this many simulations at least as extreme (Besag-Clifford); default 20. */
  hits?: number;
  seed: number;
}

/**
 * The Monte Carlo p-value of samples whose tokens are not impossible (the caller reports those first), with
 * jitter for the observed PITs from `jitterSeed` as goodnessOfFit draws it. Enough simulations (4 / alpha) that
 * a run with at most 2 extreme ones rejects at `alpha`. Pure (seeded).
 */
export function monteCarloFit(
  samples: readonly TokenSample[],
  jitterSeed: number,
  options: MonteCarloOptions,
): MonteCarloFit {
  const models = samples.map((sample) => positionModel(sample.probs));
  const variance = models.reduce((total, model) => total + model.variance, 0);
  const jitter = xoroshiro128plus(jitterSeed | 0);
  const counts = new Float64Array(PIT_BINS);
  let score = 0;
  samples.forEach((sample, index) => {
    const pit = rankedPit(sample.probs, sample.token, uniformFloat64(jitter));
    if (pit === undefined) throw new Error(`monteCarloFit: sample ${index} has probability 0`);
    counts[Math.min(PIT_BINS - 1, Math.floor(pit * PIT_BINS))] += 1;
    // Centred the same way as the simulated scores: log p(token) minus its mean under p.
    score += models[index].centredLog[rankOfToken(sample)];
  });
  // The combining statistic: the smaller of the PIT chi-square's and the temperature score's approximate
  // p-values. A simulation is at least as extreme when either of its statistics passes the value at which
  // that approximate p-value equals the observed one: two thresholds, computed once.
  const chi = chiSquareOf(counts, samples.length);
  const z2 = variance > 0 ? score ** 2 / variance : 0;
  const chiP = 1 - chisquareCdf(chi, PIT_BINS - 1);
  const zP = 1 - chisquareCdf(z2, 1);
  const observed = Math.min(chiP, zP);
  // The statistic that set the minimum keeps its own value (no round trip through the quantile).
  const chiThreshold = chiP === observed ? chi : upperQuantile(observed, PIT_BINS - 1);
  const z2Threshold = zP === observed ? z2 : upperQuantile(observed, 1);

  const hits = options.hits ?? 20;
  const maxSimulations = Math.ceil(4 / options.alpha) - 1;
  const rng = xoroshiro128plus((options.seed ^ 0x5bd1e995) | 0);
  let extreme = 0;
  let simulations = 0;
  while (simulations < maxSimulations) {
    counts.fill(0);
    let simulated = 0;
    for (const model of models) {
      // 53 random bits from two of the generator's 32-bit outputs (uniformFloat64's construction, inlined: this
      // loop is the law's cost when a run is near its rejection line).
      const u = ((rng.next() >>> 0) * 2 ** 21 + (rng.next() >>> 11)) / 2 ** 53;
      counts[Math.min(PIT_BINS - 1, Math.floor(u * PIT_BINS))] += 1;
      simulated += model.centredLog[rankOf(model.cumulative, u)];
    }
    simulations += 1;
    const simulatedZ2 = variance > 0 ? simulated ** 2 / variance : 0;
    if (chiSquareOf(counts, samples.length) >= chiThreshold || simulatedZ2 >= z2Threshold) {
      extreme += 1;
      if (extreme >= hits) return { pValue: extreme / simulations, simulations, observed };
    }
  }
  return { pValue: (extreme + 1) / (simulations + 1), simulations, observed };
}

/** The rank of a sample's token in its ranked distribution (rankedPit's order). */
function rankOfToken({ probs, token }: TokenSample): number {
  const p = probs[token];
  let rank = 0;
  for (let other = 0; other < probs.length; other++) {
    const q = probs[other];
    if (q > p || (q === p && other < token && q > 0)) rank += 1;
  }
  return rank;
}
