// The sampling distribution and the rejection rule (src/sampling/stochastic.ts), and the uniform stream: the
// cuts as vLLM's sampler makes them, the inverse CDF, and rejection sampling lossless in exact arithmetic (the
// distribution a node emits, integrated over its uniforms, is p; recovering from p instead is not).
import { fc, test } from "@fast-check/vitest";
import { describe, expect, it } from "vitest";
import {
  acceptTest,
  distributionOf,
  drawToken,
  oneHot,
  residualOf,
  sortByLogit,
  type Distribution,
} from "../../src/sampling/stochastic.ts";
import { UniformStream } from "../../src/sampling/uniform-stream.ts";
import { uniformityTest } from "../../src/sampling/goodness-of-fit.ts";

const logitsArbitrary = fc.array(fc.double({ min: -8, max: 8, noNaN: true }), { minLength: 2, maxLength: 24 });

function softmax(row: readonly number[], temperature: number): number[] {
  const max = Math.max(...row);
  const weights = row.map((value) => Math.exp((value - max) / temperature));
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  return weights.map((weight) => weight / total);
}

/** Token ids by descending logit, ties to the lower id. */
function ranked(row: readonly number[]): number[] {
  return row.map((_, token) => token).sort((a, b) => (row[b] === row[a] ? a - b : row[b] - row[a]));
}

describe("sortByLogit", () => {
  // Values from a small set (ties), signed zeros and infinities, at lengths around the runs of 8 and the merges.
  const valuesArbitrary = fc.array(
    fc.oneof(fc.constantFrom(0, -0, 1, -1, 0.5, Infinity, -Infinity), fc.double({ min: -8, max: 8, noNaN: true })),
    { minLength: 0, maxLength: 70 },
  );
  test.prop([valuesArbitrary, fc.integer({ min: 0, max: 2 ** 31 - 1 })])(
    "orders tokens as the comparator sort does (descending logit, ties to the lower id)",
    (values, seed) => {
      const scaled = Float64Array.from(values);
      // Any subset of token ids, in ascending order as distributionOf passes them.
      const tokens = values.map((_, token) => token).filter((token) => Math.imul(token + 1, seed) >>> 29 !== 0);
      const expected = [...tokens].sort((a, b) => (scaled[b] === scaled[a] ? a - b : scaled[b] - scaled[a]));
      sortByLogit(tokens, scaled);
      expect(tokens).toEqual(expected);
    },
  );
});

describe("distributionOf", () => {
  test.prop([logitsArbitrary, fc.double({ min: 0.2, max: 3, noNaN: true })])(
    "without cuts is softmax(logits / temperature); twice is temperature squared",
    (row, temperature) => {
      const once = distributionOf(row, { temperature });
      softmax(row, temperature).forEach((p, token) => expect(once.probs[token]).toBeCloseTo(p, 12));
      const twice = distributionOf(row, { temperature }, { temperatureTimes: 2 });
      softmax(row, temperature * temperature).forEach((p, token) => expect(twice.probs[token]).toBeCloseTo(p, 12));
    },
  );

  test.prop([logitsArbitrary, fc.integer({ min: 1, max: 30 })])(
    "top-k keeps the k best, ties to the lower id",
    (row, k) => {
      const { probs } = distributionOf(row, { temperature: 1, topK: k });
      const kept = ranked(row).slice(0, k);
      row.forEach((_, token) => expect(probs[token] > 0).toBe(kept.includes(token)));
    },
  );

  test.prop([logitsArbitrary, fc.double({ min: 0.05, max: 1, noNaN: true })])(
    "top-p keeps the best tokens while the mass before them is below p",
    (row, topP) => {
      const { probs } = distributionOf(row, { temperature: 1, topP });
      const full = softmax(row, 1);
      let before = 0;
      for (const [i, token] of ranked(row).entries()) {
        expect(probs[token] > 0).toBe(i === 0 || before < topP);
        before += full[token];
      }
    },
  );

  test.prop([
    logitsArbitrary,
    fc.double({ min: 0.01, max: 1, noNaN: true }),
    fc.double({ min: 0.3, max: 2, noNaN: true }),
  ])(
    "min-p drops tokens below min_p times the top probability (after the temperature); off for the fault",
    (row, minP, temperature) => {
      const full = softmax(row, temperature);
      const top = Math.max(...full);
      const { probs, cutMargin } = distributionOf(row, { temperature, minP });
      full.forEach((p, token) => {
        // Where the comparison sits within rounding the margin says so (a near-tie), and either is fine.
        if (cutMargin > 1e-9) expect(probs[token] > 0).toBe(p >= minP * top);
      });
      const skipped = distributionOf(row, { temperature, minP }, { minP: false });
      full.forEach((p, token) => expect(skipped.probs[token]).toBeCloseTo(p, 12));
    },
  );
});

describe("drawToken", () => {
  test.prop([logitsArbitrary])("the uniforms drawing each token measure its probability", (row) => {
    const { probs } = distributionOf(row, { temperature: 1 });
    const steps = 20_000;
    const counts = new Array<number>(probs.length).fill(0);
    for (let i = 0; i < steps; i++) counts[drawToken(probs, (i + 0.5) / steps, 1).token] += 1;
    probs.forEach((p, token) => expect(Math.abs(counts[token] / steps - p)).toBeLessThanOrEqual(1 / steps + 1e-12));
  });

  it("margins measure the distance to the nearer crossable boundary", () => {
    const probs = [0.25, 0, 0.5, 0.25];
    const first = drawToken(probs, 0.1, 1);
    expect(first.token).toBe(0);
    expect(first.margin).toBeCloseTo(0.15, 12);
    // Token 2 spans [0.25, 0.75): 0.05 from its lower end, times the temperature 2.
    const second = drawToken(probs, 0.3, 2);
    expect(second.token).toBe(2);
    expect(second.margin).toBeCloseTo(0.1, 12);
    expect(drawToken([0, 1, 0], 0.999, 1)).toEqual({ token: 1, margin: Infinity });
  });
});

/** The exact distribution one node emits: its children tested in order, then the final draw (integrated). */
function emitted(target: Distribution, children: readonly number[], recoverFromTarget: boolean): number[] {
  const out = new Array<number>(target.probs.length).fill(0);
  let residual: Float64Array = target.probs;
  let reached = 1; // probability that the walk tests this child
  for (const child of children) {
    const proposal = oneHot(residual.length, child);
    const threshold = Math.min(1, residual[child] / proposal[child]);
    // acceptTest accepts exactly when u < threshold: the threshold is the acceptance probability.
    if (threshold > 0) expect(acceptTest(residual, proposal, child, threshold * (1 - 1e-9), 1).accepted).toBe(true);
    if (threshold < 1) expect(acceptTest(residual, proposal, child, threshold, 1).accepted).toBe(false);
    out[child] += reached * threshold;
    reached *= 1 - threshold;
    residual = residualOf(residual, proposal);
  }
  const final = recoverFromTarget && children.length > 0 ? target.probs : residual;
  final.forEach((p, token) => (out[token] += reached * p));
  return out;
}

describe("rejection sampling", () => {
  const nodeArbitrary = logitsArbitrary.chain((row) =>
    fc.record({
      row: fc.constant(row),
      children: fc.uniqueArray(fc.nat({ max: row.length - 1 }), { maxLength: Math.min(4, row.length) }),
      temperature: fc.double({ min: 0.3, max: 2, noNaN: true }),
      minP: fc.constantFrom(0, 0.05, 0.2),
    }),
  );

  test.prop([nodeArbitrary])(
    "a node emits exactly p, whatever the drafted children",
    ({ row, children, temperature, minP }) => {
      const target = distributionOf(row, { temperature, minP });
      emitted(target, children, false).forEach((p, token) => expect(p).toBeCloseTo(target.probs[token], 12));
    },
  );

  it("recovering from p instead of norm(max(p - q, 0)) is biased towards the rejected draft", () => {
    const target = distributionOf([2, 1, 0, -1], { temperature: 1 });
    const biased = emitted(target, [0], true);
    expect(biased[0]).toBeCloseTo(target.probs[0] + (1 - target.probs[0]) * target.probs[0], 12);
  });
});

describe("UniformStream", () => {
  it("replays from its seed", () => {
    const a = new UniformStream(42);
    const b = new UniformStream(42);
    const drawn = Array.from({ length: 5 }, () => a.next());
    expect(Array.from({ length: 5 }, () => b.next())).toEqual(drawn);
    expect(a.taken).toBe(5);
  });

  it("rewinds to an earlier position: the uniforms after it are drawn again, the same", () => {
    const stream = new UniformStream(7);
    const drawn = Array.from({ length: 6 }, () => stream.next());
    stream.rewind(2);
    expect(stream.taken).toBe(2);
    expect(Array.from({ length: 4 }, () => stream.next())).toEqual(drawn.slice(2));
  });

  it("neighbouring seeds draw independent-looking first uniforms (replicas are seeded s, s + 1, ...)", () => {
    const first = Array.from({ length: 2000 }, (_, seed) => new UniformStream(1000 + seed).next());
    expect(uniformityTest(first).pValue).toBeGreaterThan(1e-4);
    // Lag-1 correlation of n independent uniforms has standard deviation 1/sqrt(n).
    const mean = first.reduce((sum, u) => sum + u, 0) / first.length;
    let covariance = 0;
    let variance = 0;
    for (let i = 0; i < first.length; i++) {
      variance += (first[i] - mean) ** 2;
      if (i > 0) covariance += (first[i] - mean) * (first[i - 1] - mean);
    }
    expect(Math.abs(covariance / variance)).toBeLessThan(4 / Math.sqrt(first.length));
  });
});
