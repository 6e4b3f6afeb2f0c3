// Scaled RoPE (src/model/rope-scaling.ts): linear scaling is position interpolation (a model scaled by f at
// positions f * p computes what the unscaled one does at p), YaRN keeps the fast pairs, interpolates the slow
// ones and scales cos and sin, the float64 graph follows the reference with scaling, and bad parameters are
// refused naming the field.
import { describe, expect, it } from "vitest";
import { buildTarget } from "../../src/model/build.ts";
import { getPreset } from "../../src/model/presets.ts";
import { referenceTarget } from "../../src/model/reference-forward.ts";
import { ropeFrequencies, YARN_BETA_FAST, YARN_BETA_SLOW } from "../../src/model/rope-scaling.ts";
import { SpecError, validateModelSpec, type ModelSpec } from "../../src/model/spec.ts";
import { DEFAULT_RUNTIME, ModelSession } from "../../src/runtime/ort.ts";

const plain: ModelSpec = { ...getPreset("tiny-f64"), name: "rope-plain" };
const tokens = [1, 5, 9, 13, 17, 3, 30, 41, 7];

function maxError(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i] - b[i]));
  return max;
}

describe("RoPE scaling", () => {
  it("linear: a model scaled by f at positions f * p computes the unscaled model at p", () => {
    const factor = 3;
    const linear: ModelSpec = { ...plain, name: "rope-linear", ropeScaling: { type: "linear", factor } };
    const weights = buildTarget(plain).weights;
    const positions = tokens.map((_, i) => i);
    const unscaled = referenceTarget(plain, weights, tokens, positions);
    const scaled = referenceTarget(
      linear,
      weights,
      tokens,
      positions.map((p) => p * factor),
    );
    expect(maxError(scaled.logits, unscaled.logits)).toBeLessThan(1e-9);
    // ...and at the same positions it differs: the scaling is applied.
    expect(maxError(referenceTarget(linear, weights, tokens, positions).logits, unscaled.logits)).toBeGreaterThan(1e-3);
  });

  it("YaRN: pairs turning more than betaFast times over the original context kept, fewer than betaSlow interpolated", () => {
    const spec = getPreset("swa"); // YaRN factor 4 over 16 positions, headDim 8
    const scaling = spec.ropeScaling!;
    if (scaling.type !== "yarn") throw new Error("the swa preset is YaRN-scaled");
    const base = ropeFrequencies({ ...spec, ropeScaling: undefined }).invFreq;
    const { invFreq, attentionFactor } = ropeFrequencies(spec);
    const turns = (freq: number) => (freq * scaling.originalMaxPositions) / (2 * Math.PI);
    base.forEach((freq, i) => {
      if (turns(freq) > YARN_BETA_FAST) expect(invFreq[i]).toBe(freq);
      if (turns(freq) < YARN_BETA_SLOW) expect(invFreq[i]).toBeCloseTo(freq / scaling.factor, 15);
      expect(invFreq[i]).toBeGreaterThanOrEqual(freq / scaling.factor - 1e-18);
      expect(invFreq[i]).toBeLessThanOrEqual(freq);
    });
    // This preset has both kinds: the fastest pair kept (it turns ~2.5 times: inside the ramp's low end), the rest interpolated.
    expect(invFreq[0]).toBe(base[0]);
    expect(invFreq.slice(1)).toEqual(base.slice(1).map((freq) => freq / scaling.factor));
    expect(attentionFactor).toBeCloseTo(0.1 * Math.log(scaling.factor) + 1, 15);
  });

  it("the float64 graph with YaRN scaling matches the reference", async () => {
    const yarn: ModelSpec = {
      ...plain,
      name: "rope-yarn-f64",
      ropeScaling: { type: "yarn", factor: 8, originalMaxPositions: 32 },
    };
    const target = buildTarget(yarn);
    const session = await ModelSession.create(target.graph.bytes, "float64", yarn.hidden, DEFAULT_RUNTIME);
    const rows = tokens.length;
    const mask = new Float64Array(rows * rows);
    for (let r = 0; r < rows; r++) for (let c = r + 1; c < rows; c++) mask[r * rows + c] = -1e9;
    const positions = tokens.map((_, i) => 20 + 3 * i);
    const out = await session.run({
      tokens: BigInt64Array.from(tokens, BigInt),
      positions: BigInt64Array.from(positions, BigInt),
      kCache: new Float64Array(yarn.layers * yarn.kvHeads * yarn.headDim),
      vCache: new Float64Array(yarn.layers * yarn.kvHeads * yarn.headDim),
      cacheDims: [yarn.layers, 1, yarn.kvHeads * yarn.headDim],
      ctxSlots: new BigInt64Array(0),
      mask,
      withLogits: true,
    });
    await session.release();
    const reference = referenceTarget(yarn, target.weights, tokens, positions);
    expect(maxError(out.logits!, reference.logits) / yarn.logitStd).toBeLessThan(1e-9);
    const unscaled = referenceTarget(plain, target.weights, tokens, positions);
    expect(maxError(unscaled.logits, reference.logits)).toBeGreaterThan(1e-3);
  });

  it("refuses parameters transformers would, naming the field", () => {
    const refused = (ropeScaling: ModelSpec["ropeScaling"]) => {
      try {
        validateModelSpec({ ...plain, ropeScaling });
      } catch (error) {
        expect(error).toBeInstanceOf(SpecError);
        return (error as SpecError).field;
      }
      return undefined;
    };
    expect(refused({ type: "linear", factor: 0.5 })).toBe("ropeScaling/factor");
    expect(refused({ type: "yarn", factor: 4, originalMaxPositions: 0 })).toBe("ropeScaling/originalMaxPositions");
    expect(refused({ type: "yarn", factor: 4, originalMaxPositions: 16, betaFast: 1, betaSlow: 2 })).toBe(
      "ropeScaling/betaFast",
    );
    expect(refused({ type: "yarn", factor: 4, originalMaxPositions: 16 })).toBeUndefined();
  });
});
