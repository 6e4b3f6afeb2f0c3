// Proves the EAGLE-3 graphs against the independent float64 forward (src/model/reference-forward.ts): the
// target's residual streams (what the auxiliary states are read from), the EAGLE-3 head in both fc input
// variants (norm_before_fc off and on), and the EAGLE-3 mirror (its draft argmax maps through d2t to the
// target's greedy token; its logits move with every auxiliary state, its argmax does not).
import { afterAll, describe, expect, it } from "vitest";
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";
import { uniformInt } from "pure-rand/distribution/uniformInt";
import { buildDraft, buildTarget } from "../../src/model/build.ts";
import { getPreset } from "../../src/model/presets.ts";
import { referenceEagle3, referenceEagle3Mirror } from "../../src/model/eagle3-reference.ts";
import { referenceTarget } from "../../src/model/reference-forward.ts";
import {
  defaultDraftSpec,
  eagle3Options,
  MIRROR_LOGIT_SCALE,
  type DraftSpec,
  type ModelSpec,
} from "../../src/model/spec.ts";
import { draftToTarget, Gaussian } from "../../src/model/weights.ts";
import { DEFAULT_RUNTIME, ModelSession, type FloatArray, type ForwardResult } from "../../src/runtime/ort.ts";

/** float32 graphs vs the float64 reference, per unit of scale (graphs.test.ts states why); float64: order only. */
const tolerance = (spec: ModelSpec) => (spec.dtype === "float32" ? 1e-4 : 1e-9);
const MASKED = -1e9;

const SPECS: ModelSpec[] = [
  getPreset("tiny"),
  getPreset("tiny-f64"),
  getPreset("small-gqa"),
  { ...getPreset("tiny"), name: "custom-mha-l4", layers: 4, heads: 4, kvHeads: 4, seed: 37 },
];

const sessions: ModelSession[] = [];
afterAll(async () => {
  await Promise.all(sessions.map((s) => s.release()));
});

async function session(spec: ModelSpec, bytes: Uint8Array): Promise<ModelSession> {
  const created = await ModelSession.create(bytes, spec.dtype, spec.hidden, DEFAULT_RUNTIME);
  sessions.push(created);
  return created;
}

function floats(spec: ModelSpec, values: ArrayLike<number> | number): FloatArray {
  if (typeof values === "number") return spec.dtype === "float32" ? new Float32Array(values) : new Float64Array(values);
  return spec.dtype === "float32" ? Float32Array.from(values) : Float64Array.from(values);
}

function randomTokens(seed: number, count: number, vocab: number): number[] {
  const rng = xoroshiro128plus(seed);
  return Array.from({ length: count }, () => uniformInt(rng, 0, vocab - 1));
}

/** Gaussian values rounded to the spec's dtype, so the graph and the reference see identical inputs. */
function gaussian(spec: ModelSpec, seed: number, count: number): Float64Array {
  const values = new Gaussian(seed).fill(count, 1);
  if (spec.dtype === "float32") for (let i = 0; i < values.length; i++) values[i] = Math.fround(values[i]);
  return values;
}

/** One causal forward with an empty KV context. */
async function run(
  spec: ModelSpec,
  graph: ModelSession,
  layers: number,
  tokens: readonly number[],
  positions: readonly number[],
  inputs: { hiddenIn?: Float64Array; auxIn?: Float64Array } = {},
): Promise<ForwardResult & { logits: FloatArray }> {
  const rows = tokens.length;
  const mask = floats(spec, rows * rows);
  for (let r = 0; r < rows; r++) for (let c = r + 1; c < rows; c++) mask[r * rows + c] = MASKED;
  const cache = floats(spec, layers * spec.kvHeads * spec.headDim);
  const result = await graph.run({
    tokens: BigInt64Array.from(tokens, BigInt),
    positions: BigInt64Array.from(positions, BigInt),
    hiddenIn: inputs.hiddenIn && floats(spec, inputs.hiddenIn),
    auxIn: inputs.auxIn && floats(spec, inputs.auxIn),
    kCache: cache,
    vCache: cache,
    cacheDims: [layers, 1, spec.kvHeads * spec.headDim],
    ctxSlots: new BigInt64Array(0),
    mask,
    withLogits: true,
  });
  return result as ForwardResult & { logits: FloatArray };
}

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i] - b[i]));
  return max;
}

function rms(values: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += values[i] ** 2;
  return Math.sqrt(sum / Math.max(1, values.length));
}

function expectClose(spec: ModelSpec, what: string, actual: ArrayLike<number>, expected: ArrayLike<number>) {
  const scale = Math.max(1, rms(expected));
  expect(maxAbsDiff(actual, expected) / scale, what).toBeLessThanOrEqual(tolerance(spec));
}

function argmaxRows(logits: ArrayLike<number>, vocab: number): number[] {
  return Array.from({ length: logits.length / vocab }, (_, r) => {
    let best = 0;
    for (let c = 1; c < vocab; c++) if (logits[r * vocab + c] > logits[r * vocab + best]) best = c;
    return best;
  });
}

const range = (start: number, count: number) => Array.from({ length: count }, (_, i) => start + i);

/** Rows 0..split-1 are fed auxiliary states (hidden zero), the rest hidden inputs (aux zero): both paths at once. */
function mixedInputs(spec: ModelSpec, auxWidth: number, rows: number, split: number, seed: number) {
  const auxIn = gaussian(spec, seed, rows * auxWidth);
  const hiddenIn = gaussian(spec, seed + 1, rows * spec.hidden);
  auxIn.fill(0, split * auxWidth);
  hiddenIn.fill(0, 0, split * spec.hidden);
  return { auxIn, hiddenIn };
}

describe.each(SPECS.map((spec) => [spec.name, spec] as const))("EAGLE-3 graphs of %s", (_name, spec) => {
  const tokens = [spec.bosId, ...randomTokens(spec.seed + 500, 8, spec.vocab)];

  it("target with layer streams: layer_hidden is every residual stream; logits and hidden equal the plain target's", async () => {
    const plain = buildTarget(spec);
    const streamed = buildTarget(spec, true);
    expect(streamed.graph.digest).not.toBe(plain.graph.digest);
    expect(streamed.weights).toBe(plain.weights);
    const withStreams = await session(spec, streamed.graph.bytes);
    expect(withStreams.hasLayerStreams).toBe(true);
    const positions = range(0, tokens.length);
    const out = await run(spec, withStreams, spec.layers, tokens, positions);
    const reference = referenceTarget(spec, plain.weights, tokens);
    expect(reference.streams.length).toBe(spec.layers + 1);
    const rows = tokens.length * spec.hidden;
    reference.streams.forEach((stream, j) =>
      expectClose(spec, `stream ${j}`, out.layerHidden!.subarray(j * rows, (j + 1) * rows), stream),
    );
    // The last stream is the final norm's input, not the hidden output (the other side of the norm).
    expect(maxAbsDiff(out.layerHidden!.subarray(spec.layers * rows), out.hidden)).toBeGreaterThan(0.1);
    const base = await run(spec, await session(spec, plain.graph.bytes), spec.layers, tokens, positions);
    expect(Array.from(out.topIndices)).toEqual(Array.from(base.topIndices));
    expectClose(spec, "streamed target logits", out.logits, base.logits);
  });

  for (const normBeforeFc of [false, true]) {
    it(`EAGLE-3 head (norm_before_fc ${normBeforeFc}): matches referenceEagle3 on aux rows and hidden rows; every aux layer matters`, async () => {
      const target = buildTarget(spec, true);
      const draftSpec: DraftSpec = defaultDraftSpec("eagle3", 3, { normBeforeFc });
      const model = buildDraft(target, draftSpec);
      const head = model.eagle3Head!;
      const options = eagle3Options(spec, draftSpec);
      expect(head.inputNorm !== undefined).toBe(normBeforeFc);
      const graph = await session(spec, model.graphs[0].bytes);
      expect(graph.hasAuxInput).toBe(true);
      const auxWidth = options.auxLayers.length * spec.hidden;
      const draftTokens = tokens.slice(1);
      const rows = draftTokens.length;
      const positions = range(5, rows);
      const inputs = mixedInputs(spec, auxWidth, rows, 5, 700);
      const out = await run(spec, graph, 1, draftTokens, positions, inputs);
      const reference = referenceEagle3(
        spec,
        target.weights,
        head,
        draftTokens,
        inputs.auxIn,
        inputs.hiddenIn,
        positions,
      );
      expect(out.logits.length).toBe(rows * options.draftVocab);
      expectClose(spec, "eagle3 logits", out.logits, reference.logits);
      expectClose(spec, "eagle3 hidden (before the norm)", out.hidden, reference.hidden);
      expect(Number(out.topIndices[0])).toBe(argmaxRows(reference.logits, options.draftVocab)[0]);
      // Each auxiliary layer's chunk moves the logits of an aux row far beyond the tolerance.
      for (let chunk = 0; chunk < options.auxLayers.length; chunk++) {
        const bent = Float64Array.from(inputs.auxIn);
        bent.set(gaussian(spec, 900 + chunk, spec.hidden), chunk * spec.hidden);
        const moved = await run(spec, graph, 1, draftTokens, positions, { ...inputs, auxIn: bent });
        expect(
          maxAbsDiff(moved.logits.subarray(0, options.draftVocab), out.logits.subarray(0, options.draftVocab)),
        ).toBeGreaterThan(100 * tolerance(spec) * Math.max(1, rms(reference.logits)));
      }
    });
  }

  it("EAGLE-3 mirror: argmax through d2t is the target's greedy token; logits match the reference and move with every aux layer", async () => {
    const target = buildTarget(spec, true);
    const draftSpec = defaultDraftSpec("eagle3-mirror", 3, { normBeforeFc: true });
    const model = buildDraft(target, draftSpec);
    const mirror = model.eagle3Mirror!;
    const options = eagle3Options(spec, draftSpec);
    const targets = draftToTarget(mirror.d2t);
    // A permutation of the whole vocabulary that is not the identity: an identity map drafts wrong ids.
    expect([...targets].sort((a, b) => a - b)).toEqual(range(0, spec.vocab));
    expect(targets.some((id, draftId) => id !== draftId)).toBe(true);
    const graph = await session(spec, model.graphs[0].bytes);
    const auxWidth = options.auxLayers.length * spec.hidden;
    const draftTokens = tokens.slice(1);
    const rows = draftTokens.length;
    const inputs = mixedInputs(spec, auxWidth, rows, 4, 800);
    const out = await run(spec, graph, spec.layers, draftTokens, range(0, rows), inputs);
    const reference = referenceEagle3Mirror(
      spec,
      target.weights,
      draftSpec,
      mirror,
      draftTokens,
      inputs.auxIn,
      inputs.hiddenIn,
    );
    const scale = spec.logitStd * MIRROR_LOGIT_SCALE;
    expect(maxAbsDiff(out.logits, reference.logits) / scale).toBeLessThanOrEqual(tolerance(spec));
    const greedy = argmaxRows(referenceTarget(spec, target.weights, tokens).logits, spec.vocab).slice(1);
    const drafted = argmaxRows(out.logits, spec.vocab).map((draftId) => targets[draftId]);
    expect(drafted).toEqual(greedy);
    // Another state in any one auxiliary chunk moves the logits by far more than the laws' draft tolerance
    // (epsilon x 2^16), and leaves the argmax alone.
    for (let chunk = 0; chunk < options.auxLayers.length; chunk++) {
      const bent = Float64Array.from(inputs.auxIn);
      bent.set(gaussian(spec, 900 + chunk, spec.hidden), chunk * spec.hidden);
      const moved = await run(spec, graph, spec.layers, draftTokens, range(0, rows), { ...inputs, auxIn: bent });
      expect(maxAbsDiff(moved.logits.subarray(0, spec.vocab), out.logits.subarray(0, spec.vocab))).toBeGreaterThan(
        10 * tolerance(spec) * MIRROR_LOGIT_SCALE,
      );
      expect(Number(moved.topIndices[0])).toBe(Number(out.topIndices[0]));
    }
  });

  it("EAGLE-3 head vocabulary: a sorted subset of target ids (d2t offsets), t2d marks exactly its image", () => {
    const target = buildTarget(spec, true);
    const model = buildDraft(target, defaultDraftSpec("eagle3", 3));
    const { d2t, t2d } = model.eagle3!.input;
    const targets = [...draftToTarget(d2t)];
    expect(targets.length).toBe(model.eagle3!.options.draftVocab);
    expect(targets).toEqual([...targets].sort((a, b) => a - b));
    expect(new Set(targets).size).toBe(targets.length);
    expect(range(0, spec.vocab).filter((id) => t2d[id] === 1)).toEqual(targets);
    expect(targets.some((id, draftId) => id !== draftId)).toBe(true);
  });
});
