// The distribution a stochastic request samples from, as vLLM V1's sampler builds it (vllm/v1/sample/
// sampler.py, in this order): the processed logits (process-logits.ts: min tokens, bias, penalties) divided
// by the temperature, then min-p (tokens below min_p times the top probability dropped), then top-k (the k
// most likely kept, ties to the lower id) and top-p (the most likely kept until their mass reaches top_p,
// the crossing token kept), renormalized. A token is drawn from it with one uniform by the inverse CDF over
// token ids. Pure; the engine and the laws' cache-free replay both build distributions with it.
//
// Tie-awareness (docs/design.md section 4): logits carry rounding that depends on batch shape, so a decision whose
// boundary lies within epsilon of the uniform (or a cut within epsilon of a token) could go either way. Every
// result carries its margin in logit units (probability distances times the temperature, comparable with
// epsilon like a top-1 margin): below epsilon, a near-tie.
import type { SamplingParams } from "./params.ts";

export interface Distribution {
  /** Probabilities over the vocabulary, summing to 1 (0 outside the kept set). */
  readonly probs: Float64Array;
  /** The smallest margin (logit units) of any top-k / top-p / min-p cut: below epsilon a token's membership is a near-tie. */
  readonly cutMargin: number;
  readonly temperature: number;
}

export interface DistributionOptions {
  /** false: min-p is not applied (with the logits processors, the processing-bonus-only fault's verified rows). */
  minP?: boolean;
  /** How often the temperature divides the logits (2: the temperature-applied-twice fault). */
  temperatureTimes?: number;
}

/** softmax(row / T) with min-p, top-k and top-p applied, renormalized. Pure. */
export function distributionOf(
  row: ArrayLike<number>,
  params: SamplingParams,
  options: DistributionOptions = {},
): Distribution {
  const temperature = params.temperature ?? 0;
  if (!(temperature > 0)) throw new Error("distributionOf needs a temperature above 0");
  const vocab = row.length;
  const scale = Math.pow(temperature, options.temperatureTimes ?? 1);
  const scaled = new Float64Array(vocab);
  let max = -Infinity;
  for (let token = 0; token < vocab; token++) {
    scaled[token] = row[token] / scale;
    if (scaled[token] > max) max = scaled[token];
  }
  const kept = new Uint8Array(vocab);
  for (let token = 0; token < vocab; token++) kept[token] = scaled[token] > -Infinity ? 1 : 0;
  let cutMargin = Infinity;

  const minP = options.minP === false ? 0 : (params.minP ?? 0);
  if (minP > 0) {
    // p_i >= min_p * p_max  <=>  scaled_i - max >= log(min_p); the margin in raw logit units.
    const threshold = Math.log(minP);
    for (let token = 0; token < vocab; token++) {
      if (!kept[token]) continue;
      const gap = scaled[token] - max - threshold;
      cutMargin = Math.min(cutMargin, Math.abs(gap) * temperature);
      if (gap < 0) kept[token] = 0;
    }
  }

  // Kept tokens by descending logit, ties to the lower id.
  const order: number[] = [];
  for (let token = 0; token < vocab; token++) if (kept[token]) order.push(token);
  sortByLogit(order, scaled);

  const topK = params.topK ?? 0;
  if (topK > 0 && topK < order.length) {
    cutMargin = Math.min(cutMargin, (scaled[order[topK - 1]] - scaled[order[topK]]) * temperature);
    for (const token of order.slice(topK)) kept[token] = 0;
    order.length = topK;
  }

  const weights = new Float64Array(vocab);
  let total = 0;
  for (const token of order) {
    weights[token] = Math.exp(scaled[token] - max);
    total += weights[token];
  }

  const topP = params.topP ?? 1;
  if (topP < 1) {
    // Keep a token while the mass of the tokens before it (descending) is below top_p.
    let before = 0;
    let cut = order.length;
    for (let i = 0; i < order.length; i++) {
      const mass = before / total;
      cutMargin = Math.min(cutMargin, Math.abs(mass - topP) * temperature);
      if (i > 0 && mass >= topP) {
        cut = i;
        break;
      }
      before += weights[order[i]];
    }
    for (const token of order.slice(cut)) {
      total -= weights[token];
      weights[token] = 0;
    }
  }

  for (let token = 0; token < vocab; token++) weights[token] /= total;
  return { probs: weights, cutMargin, temperature };
}

/** `before(a, b)`: token a sorts before b, by descending logit with ties to the lower id (a strict order). */
function before(a: number, b: number, scaled: Float64Array): boolean {
  return scaled[a] > scaled[b] || (scaled[a] === scaled[b] && a < b);
}

/**
 * Sorts tokens in place by descending `scaled` logit, ties to the lower id: the order
 * `tokens.sort((a, b) => scaled[b] === scaled[a] ? a - b : scaled[b] - scaled[a])` gives (the order is strict,
 * so any correct sort gives the same one), without a comparator call per comparison: insertion-sorted runs of
 * 8, then bottom-up merges. Every sampled row sorts its vocabulary, so this is on the hot path. Exposed for tests.
 */
export function sortByLogit(tokens: number[], scaled: Float64Array): void {
  const count = tokens.length;
  const RUN = 8;
  for (let start = 0; start < count; start += RUN) {
    const end = Math.min(start + RUN, count);
    for (let i = start + 1; i < end; i++) {
      const token = tokens[i];
      let j = i - 1;
      while (j >= start && before(token, tokens[j], scaled)) {
        tokens[j + 1] = tokens[j];
        j--;
      }
      tokens[j + 1] = token;
    }
  }
  if (count <= RUN) return;
  let from = tokens;
  let to = tokens.slice();
  for (let width = RUN; width < count; width *= 2) {
    for (let low = 0; low < count; low += 2 * width) {
      const middle = Math.min(low + width, count);
      const high = Math.min(low + 2 * width, count);
      let i = low;
      let j = middle;
      let k = low;
      while (i < middle && j < high) to[k++] = before(from[j], from[i], scaled) ? from[j++] : from[i++];
      while (i < middle) to[k++] = from[i++];
      while (j < high) to[k++] = from[j++];
    }
    const swap = from;
    from = to;
    to = swap;
  }
  if (from !== tokens) for (let i = 0; i < count; i++) tokens[i] = from[i];
}

export interface TokenDraw {
  token: number;
  /** Distance of the uniform to the nearer end of the token's CDF interval, times the temperature. */
  margin: number;
}

/** Inverse CDF over token ids: the first token whose cumulative probability exceeds u. Pure. */
export function drawToken(probs: ArrayLike<number>, uniform: number, temperature: number): TokenDraw {
  let cumulative = 0;
  let last = -1;
  let lower = 0;
  for (let token = 0; token < probs.length; token++) {
    const p = probs[token];
    if (p <= 0) continue;
    const upper = cumulative + p;
    if (uniform < upper) {
      // An end shared with another token with mass is a boundary; 0 and the total are not.
      const hasBefore = last >= 0;
      const hasAfter = hasMassAfter(probs, token);
      const distance = Math.min(hasBefore ? uniform - cumulative : Infinity, hasAfter ? upper - uniform : Infinity);
      return { token, margin: distance * temperature };
    }
    last = token;
    lower = cumulative;
    cumulative = upper;
  }
  // Rounding left the total just below 1 and u above it: the last token with mass, at its upper end.
  return { token: last, margin: last >= 0 && lower > 0 ? (uniform - lower) * temperature : Infinity };
}

function hasMassAfter(probs: ArrayLike<number>, token: number): boolean {
  for (let next = token + 1; next < probs.length; next++) if (probs[next] > 0) return true;
  return false;
}

/**
 * One rejection-sampling decision for a draft token d with proposal q: accept when u < min(1, p(d) / q(d)).
 * Returns the decision and its margin (|u - threshold| times the temperature). Pure.
 */
export function acceptTest(
  target: ArrayLike<number>,
  proposal: ArrayLike<number>,
  token: number,
  uniform: number,
  temperature: number,
): { accepted: boolean; margin: number } {
  const q = proposal[token];
  const threshold = q > 0 ? Math.min(1, target[token] / q) : 0;
  return { accepted: uniform < threshold, margin: Math.abs(uniform - threshold) * temperature };
}

/** norm(max(p - q, 0)): what a rejected draft leaves to recover from. Pure. */
export function residualOf(target: ArrayLike<number>, proposal: ArrayLike<number>): Float64Array {
  const residual = new Float64Array(target.length);
  let total = 0;
  for (let token = 0; token < target.length; token++) {
    residual[token] = Math.max(target[token] - proposal[token], 0);
    total += residual[token];
  }
  if (total > 0) for (let token = 0; token < residual.length; token++) residual[token] /= total;
  return residual;
}

/** A greedy drafter's proposal: all its mass on the drafted token (vLLM's draft_probs None, SGLang's target-only). */
export function oneHot(vocab: number, token: number): Float64Array {
  const proposal = new Float64Array(vocab);
  proposal[token] = 1;
  return proposal;
}
