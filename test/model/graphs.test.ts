// Proves every ONNX graph writer against the independent float64 TypeScript forward
// (src/model/reference-forward.ts), for the presets and for custom specs that vary the attention
// layout (grouped-query, multi-head, headDim 16), depth and RoPE theta.
//
// Graph calling convention (src/model/graphs.ts): tokens [T], positions [T], hidden_in [T, H] (draft
// graphs), k_cache/v_cache [layers, slots, kvDim], ctx_slots [C], mask [T, C + T] additive; outputs
// logits [T, V], hidden [T, H], k_new/v_new [layers, T, kvDim].
import { afterAll, describe, expect, it } from "vitest";
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";
import { uniformInt } from "pure-rand/distribution/uniformInt";
import { buildDraft, buildTarget, digestOf, type DraftModel, type TargetModel } from "../../src/model/build.ts";
import { writeEagleGraph, writeMirrorGraph, writeTargetGraph } from "../../src/model/graphs.ts";
import { ROPE_TABLE_SLACK } from "../../src/model/rope-graph.ts";
import { getPreset } from "../../src/model/presets.ts";
import { referenceEagle, referenceMirror, referenceTarget, runLayers } from "../../src/model/reference-forward.ts";
import {
  defaultDraftSpec,
  kvDim,
  MIRROR_LOGIT_SCALE,
  type DraftKind,
  type DraftSpec,
  type ModelSpec,
} from "../../src/model/spec.ts";
import { Gaussian, generateEagleWeights, generateTargetWeights } from "../../src/model/weights.ts";
import { DEFAULT_RUNTIME, ModelSession, type FloatArray, type ForwardResult } from "../../src/runtime/ort.ts";

// ---------------------------------------------------------------------------------------------
// Tolerances. Errors are measured in units of the tensor's scale: for logits, the target's logit
// scale (spec.logitStd; times MIRROR_LOGIT_SCALE for the mirror family, whose logits carry 2^16);
// for hidden states and K/V, the RMS of the reference tensor (at least 1).
// ---------------------------------------------------------------------------------------------

/**
 * float32 graphs vs the float64 reference: absolute error <= 1e-4 per unit of logit scale. This is
 * docs/design.md's starting float32 CPU epsilon (section 4); the observed error is about 1e-6 (see the log
 * printed by afterAll), so the bound has ~50x headroom yet catches any real math difference (a wrong
 * RoPE position, a dropped KV column or a wrong layer changes logits by O(1) units of scale).
 */
const FLOAT32_TOLERANCE = 1e-4;
/** float64 graphs vs the float64 reference: only summation order differs (observed ~1e-15). */
const FLOAT64_TOLERANCE = 1e-9;
/** Additive mask value for "not attended" (finite: the mirror derives its prefix columns by * 0). */
const MASKED = -1e9;

function tolerance(spec: ModelSpec): number {
  return spec.dtype === "float32" ? FLOAT32_TOLERANCE : FLOAT64_TOLERANCE;
}

/** Largest relative error seen per dtype and check, printed at the end for the report. */
const observed = new Map<string, number>();

function record(spec: ModelSpec, what: string, relError: number): void {
  const key = `${spec.dtype} ${what}`;
  observed.set(key, Math.max(observed.get(key) ?? 0, relError));
}

afterAll(() => {
  const lines = [...observed.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, value]) => `  ${key.padEnd(34)} ${value.toExponential(2)}`);
  console.log(`max observed error / scale:\n${lines.join("\n")}`);
});

function maxAbsDiff(actual: ArrayLike<number>, expected: ArrayLike<number>): number {
  expect(actual.length).toBe(expected.length);
  let max = 0;
  for (let i = 0; i < expected.length; i++) {
    const diff = Math.abs(actual[i] - expected[i]);
    if (!(diff <= max)) max = Number.isNaN(diff) ? Infinity : diff;
  }
  return max;
}

function rms(values: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += values[i] ** 2;
  return Math.sqrt(sum / Math.max(1, values.length));
}

/** Asserts |actual - expected| <= tolerance * scale everywhere, records the relative error. */
function expectClose(
  spec: ModelSpec,
  what: string,
  actual: ArrayLike<number>,
  expected: ArrayLike<number>,
  scale: number,
): void {
  const relError = maxAbsDiff(actual, expected) / scale;
  record(spec, what, relError);
  expect(relError, `${spec.name} ${what}: max |error| / scale`).toBeLessThanOrEqual(tolerance(spec));
}

function logitScale(spec: ModelSpec, mirror = false): number {
  return spec.logitStd * (mirror ? MIRROR_LOGIT_SCALE : 1);
}

function tensorScale(reference: ArrayLike<number>): number {
  return Math.max(1, rms(reference));
}

function argmaxRows(logits: ArrayLike<number>, vocab: number): number[] {
  const rows = logits.length / vocab;
  return Array.from({ length: rows }, (_, r) => {
    let best = 0;
    for (let c = 1; c < vocab; c++) if (logits[r * vocab + c] > logits[r * vocab + best]) best = c;
    return best;
  });
}

/** Smallest gap between the top-1 and top-2 logit of any row. */
function minTopMargin(logits: ArrayLike<number>, vocab: number): number {
  let min = Infinity;
  for (let r = 0; r < logits.length / vocab; r++) {
    let first = -Infinity;
    let second = -Infinity;
    for (let c = 0; c < vocab; c++) {
      const v = logits[r * vocab + c];
      if (v > first) [first, second] = [v, first];
      else if (v > second) second = v;
    }
    min = Math.min(min, first - second);
  }
  return min;
}

// ---------------------------------------------------------------------------------------------
// Specs and deterministic inputs.
// ---------------------------------------------------------------------------------------------

const SPECS: ModelSpec[] = [
  getPreset("tiny"),
  getPreset("tiny-f64"),
  // Grouped-query attention (4 query heads per KV head), heads * headDim (64) != hidden (32),
  // three layers and a small RoPE theta (so position changes rotate fast).
  {
    ...getPreset("tiny"),
    name: "custom-gqa8x2-l3-theta500",
    heads: 8,
    kvHeads: 2,
    headDim: 8,
    layers: 3,
    ropeTheta: 500,
    seed: 23,
  },
  // Multi-head attention (kvHeads = heads), headDim 16, float64, theta 500, other vocab.
  {
    ...getPreset("tiny-f64"),
    name: "custom-mha-hd16-f64",
    vocab: 48,
    heads: 4,
    kvHeads: 4,
    headDim: 16,
    ropeTheta: 500,
    seed: 29,
  },
  // Multi-head, headDim 16, hidden 48 (not a power of two), three layers, float32.
  {
    ...getPreset("tiny"),
    name: "custom-mha-hd16-l3-f32",
    hidden: 48,
    heads: 2,
    kvHeads: 2,
    headDim: 16,
    intermediate: 80,
    layers: 3,
    ropeTheta: 2000,
    seed: 31,
  },
];

function randomTokens(seed: number, count: number, vocab: number): number[] {
  const rng = xoroshiro128plus(seed);
  return Array.from({ length: count }, () => uniformInt(rng, 0, vocab - 1));
}

/** Gaussian rows, rounded to the spec's dtype so the graph and the reference see identical inputs. */
function randomHidden(spec: ModelSpec, seed: number, rows: number, std = 1): Float64Array {
  const values = new Gaussian(seed).fill(rows * spec.hidden, std);
  if (spec.dtype === "float32") for (let i = 0; i < values.length; i++) values[i] = Math.fround(values[i]);
  return values;
}

function floatArray(spec: ModelSpec, values: ArrayLike<number> | number): FloatArray {
  if (typeof values === "number") return spec.dtype === "float32" ? new Float32Array(values) : new Float64Array(values);
  return spec.dtype === "float32" ? Float32Array.from(values) : Float64Array.from(values);
}

const range = (start: number, count: number) => Array.from({ length: count }, (_, i) => start + i);

// ---------------------------------------------------------------------------------------------
// Graph runs.
// ---------------------------------------------------------------------------------------------

interface GraphUnderTest {
  session: ModelSession;
  /** Layers of the graph's own KV (k_cache's first dimension). */
  layers: number;
}

/** The K/V pool a run gathers from: [layers, slots, kvDim]. */
interface Cache {
  keys: FloatArray;
  values: FloatArray;
  slots: number;
}

function emptyCache(spec: ModelSpec, layers: number, slots = 1): Cache {
  return {
    keys: floatArray(spec, layers * slots * kvDim(spec)),
    values: floatArray(spec, layers * slots * kvDim(spec)),
    slots,
  };
}

/** A cache full of large garbage: any slot the graph gathers without the mask hiding it shows. */
function garbageCache(spec: ModelSpec, layers: number, slots: number, seed: number): Cache {
  const size = layers * slots * kvDim(spec);
  const gauss = new Gaussian(seed);
  return { keys: floatArray(spec, gauss.fill(size, 5)), values: floatArray(spec, gauss.fill(size, 5)), slots };
}

interface RunInput {
  tokens: readonly number[];
  positions: readonly number[];
  hiddenIn?: ArrayLike<number>;
  cache?: Cache;
  ctxSlots?: readonly number[];
  /** mask[t][c] for c < C: does row t attend context column c. Default: every column. */
  attendsContext?: (row: number, column: number) => boolean;
}

/** One forward; the batch's own rows attend causally (row t sees rows 0..t). */
async function runGraph(
  spec: ModelSpec,
  graph: GraphUnderTest,
  input: RunInput,
): Promise<ForwardResult & { logits: FloatArray }> {
  const rows = input.tokens.length;
  const ctxSlots = input.ctxSlots ?? [];
  const numCtx = ctxSlots.length;
  const cache = input.cache ?? emptyCache(spec, graph.layers);
  const mask = floatArray(spec, rows * (numCtx + rows));
  for (let t = 0; t < rows; t++) {
    for (let c = 0; c < numCtx; c++)
      mask[t * (numCtx + rows) + c] = (input.attendsContext?.(t, c) ?? true) ? 0 : MASKED;
    for (let s = 0; s < rows; s++) mask[t * (numCtx + rows) + numCtx + s] = s <= t ? 0 : MASKED;
  }
  const result = await graph.session.run({
    tokens: BigInt64Array.from(input.tokens, BigInt),
    positions: BigInt64Array.from(input.positions, BigInt),
    hiddenIn: input.hiddenIn && floatArray(spec, input.hiddenIn),
    kCache: cache.keys,
    vCache: cache.values,
    cacheDims: [graph.layers, cache.slots, kvDim(spec)],
    ctxSlots: BigInt64Array.from(ctxSlots, BigInt),
    mask,
    withLogits: true,
  });
  checkTopOutputs(result, spec.vocab);
  return { ...result, logits: result.logits! };
}

/** The graph's TopK and log-softmax normalizer outputs agree with its full logits (ties to the lower id). */
function checkTopOutputs(result: ForwardResult, vocab: number): void {
  const logits = result.logits!;
  const rows = logits.length / vocab;
  for (let r = 0; r < rows; r++) {
    const row = Array.from(logits.subarray(r * vocab, (r + 1) * vocab));
    const order = row.map((value, token) => ({ value, token })).sort((a, b) => b.value - a.value || a.token - b.token);
    for (let i = 0; i < result.topK; i++) {
      expect(Number(result.topIndices[r * result.topK + i])).toBe(order[i].token);
      expect(result.topValues[r * result.topK + i]).toBe(order[i].value);
    }
    const max = order[0].value;
    const logNormalizer = max + Math.log(row.reduce((sum, value) => sum + Math.exp(value - max), 0));
    expect(Math.abs(result.logNormalizer[r] - logNormalizer)).toBeLessThanOrEqual(
      1e-4 * Math.max(1, Math.abs(logNormalizer)),
    );
  }
}

/** Rows [from, to) of a [layers, T, kvDim] tensor, per layer, concatenated as [layers, to - from, kvDim]. */
function kvRows(
  spec: ModelSpec,
  kv: ArrayLike<number>,
  layers: number,
  total: number,
  from: number,
  to: number,
): Float64Array {
  const dim = kvDim(spec);
  const out = new Float64Array(layers * (to - from) * dim);
  for (let l = 0; l < layers; l++) {
    for (let r = from; r < to; r++) {
      for (let d = 0; d < dim; d++) out[(l * (to - from) + (r - from)) * dim + d] = kv[(l * total + r) * dim + d];
    }
  }
  return out;
}

/** The reference's per-layer [T, kvDim] K/V as one [layers, T, kvDim] tensor. */
function stackLayers(perLayer: readonly Float64Array[]): Float64Array {
  const out = new Float64Array(perLayer.reduce((n, layer) => n + layer.length, 0));
  let offset = 0;
  for (const layer of perLayer) {
    out.set(layer, offset);
    offset += layer.length;
  }
  return out;
}

/** A deterministic shuffle of 0..n-1 (Fisher-Yates over a seeded generator). */
function shuffled(n: number, seed: number): number[] {
  const rng = xoroshiro128plus(seed);
  const out = range(0, n);
  for (let i = n - 1; i > 0; i--) {
    const j = uniformInt(rng, 0, i);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/**
 * Runs a sequence in chunks through the KV path, as the engine does: each chunk's k_new/v_new rows are
 * written into a garbage-filled pool at shuffled, non-contiguous slots, and the next chunk attends to
 * them through ctx_slots (listed in a scrambled order, interleaved with decoy slots that the mask
 * hides). Returns the concatenated logits, hidden states and the K/V read back from the pool.
 */
async function runChunked(
  spec: ModelSpec,
  graph: GraphUnderTest,
  input: { tokens: readonly number[]; positions: readonly number[]; hiddenIn?: Float64Array },
  chunkSizes: readonly number[],
  seed: number,
): Promise<{ logits: Float64Array; hidden: Float64Array; keys: Float64Array; values: Float64Array }> {
  const total = input.tokens.length;
  expect(chunkSizes.reduce((a, b) => a + b, 0)).toBe(total);
  const dim = kvDim(spec);
  const numSlots = 2 * total + 5;
  const cache = garbageCache(spec, graph.layers, numSlots, seed);
  const slotOrder = shuffled(numSlots, seed + 1);
  const slotOfRow = slotOrder.slice(0, total); // row i's K/V lives at slotOfRow[i]
  const decoys = slotOrder.slice(total, total + 4); // never written: garbage the mask must hide
  const logits = new Float64Array(total * spec.vocab);
  const hidden = new Float64Array(total * spec.hidden);
  let start = 0;
  for (const size of chunkSizes) {
    // Context: rows 0..start-1 plus decoys, in a scrambled column order.
    const columns = [
      ...range(0, start).map((row) => ({ slot: slotOfRow[row], real: true })),
      ...decoys.map((slot) => ({ slot, real: false })),
    ];
    const order = shuffled(columns.length, seed + start + 7);
    const ctx = order.map((i) => columns[i]);
    const out = await runGraph(spec, graph, {
      tokens: input.tokens.slice(start, start + size),
      positions: input.positions.slice(start, start + size),
      hiddenIn: input.hiddenIn?.subarray(start * spec.hidden, (start + size) * spec.hidden),
      cache,
      ctxSlots: ctx.map((c) => c.slot),
      attendsContext: (_row, column) => ctx[column].real,
    });
    logits.set(out.logits, start * spec.vocab);
    hidden.set(out.hidden, start * spec.hidden);
    for (let l = 0; l < graph.layers; l++) {
      for (let r = 0; r < size; r++) {
        const slot = slotOfRow[start + r];
        cache.keys.set(out.kNew.subarray((l * size + r) * dim, (l * size + r + 1) * dim), (l * numSlots + slot) * dim);
        cache.values.set(
          out.vNew.subarray((l * size + r) * dim, (l * size + r + 1) * dim),
          (l * numSlots + slot) * dim,
        );
      }
    }
    start += size;
  }
  // Read the pool back in position order: [layers, total, kvDim].
  const keys = new Float64Array(graph.layers * total * dim);
  const values = new Float64Array(graph.layers * total * dim);
  for (let l = 0; l < graph.layers; l++) {
    for (let r = 0; r < total; r++) {
      keys.set(
        cache.keys.subarray((l * numSlots + slotOfRow[r]) * dim, (l * numSlots + slotOfRow[r] + 1) * dim),
        (l * total + r) * dim,
      );
      values.set(
        cache.values.subarray((l * numSlots + slotOfRow[r]) * dim, (l * numSlots + slotOfRow[r] + 1) * dim),
        (l * total + r) * dim,
      );
    }
  }
  return { logits, hidden, keys, values };
}

// ---------------------------------------------------------------------------------------------
// Models and sessions, built once per spec.
// ---------------------------------------------------------------------------------------------

interface Models {
  target: TargetModel;
  targetGraph: GraphUnderTest;
  drafts: Map<DraftKind, { model: DraftModel; spec: DraftSpec; graph: GraphUnderTest }>;
}

function draftSpecFor(spec: ModelSpec, kind: DraftKind): DraftSpec {
  const draft = defaultDraftSpec(kind, 3);
  // A truncated mirror that keeps a strict, non-trivial subset of the layers where there are 3.
  if (kind === "truncated-mirror") draft.truncatedLayers = spec.layers >= 3 ? 2 : 1;
  return draft;
}

const sessions: ModelSession[] = [];
const modelCache = new Map<string, Promise<Models>>();

async function session(spec: ModelSpec, bytes: Uint8Array): Promise<ModelSession> {
  const created = await ModelSession.create(bytes, spec.dtype, spec.hidden, DEFAULT_RUNTIME);
  sessions.push(created);
  return created;
}

function modelsFor(spec: ModelSpec): Promise<Models> {
  let models = modelCache.get(spec.name);
  if (!models) {
    models = (async () => {
      const target = buildTarget(spec);
      const targetGraph = { session: await session(spec, target.graph.bytes), layers: spec.layers };
      const drafts: Models["drafts"] = new Map();
      for (const kind of ["mirror", "tapped-mirror", "noisy-mirror", "truncated-mirror", "eagle"] as const) {
        const draftSpec = draftSpecFor(spec, kind);
        const model = buildDraft(target, draftSpec);
        drafts.set(kind, {
          model,
          spec: draftSpec,
          graph: { session: await session(spec, model.graphs[0].bytes), layers: model.graphs[0].layers },
        });
      }
      return { target, targetGraph, drafts };
    })();
    modelCache.set(spec.name, models);
  }
  return models;
}

afterAll(async () => {
  await Promise.all(sessions.map((s) => s.release()));
});

const SEQUENCE_LENGTH = 9;
const ROPE_OFFSET = 37;

// ---------------------------------------------------------------------------------------------
// The tests.
// ---------------------------------------------------------------------------------------------

describe.each(SPECS.map((spec) => [spec.name, spec] as const))("graphs of %s", (_name, spec) => {
  const tokens = [spec.bosId, ...randomTokens(spec.seed + 100, SEQUENCE_LENGTH - 1, spec.vocab)];

  it("target: logits, hidden and K/V of a causal run at positions 0..T-1 match referenceTarget", async () => {
    const { target, targetGraph } = await modelsFor(spec);
    const out = await runGraph(spec, targetGraph, { tokens, positions: range(0, tokens.length) });
    const reference = referenceTarget(spec, target.weights, tokens);
    expectClose(spec, "target logits", out.logits, reference.logits, logitScale(spec));
    expectClose(spec, "target hidden", out.hidden, reference.hidden, tensorScale(reference.hidden));
    const refKeys = stackLayers(reference.keys);
    const refValues = stackLayers(reference.values);
    expectClose(spec, "target k_new", out.kNew, refKeys, tensorScale(refKeys));
    expectClose(spec, "target v_new", out.vNew, refValues, tensorScale(refValues));
    // Healthy margins: the preset's argmax is well defined, so the tolerance is far below any tie.
    expect(argmaxRows(out.logits, spec.vocab)).toEqual(argmaxRows(reference.logits, spec.vocab));
  });

  it("target: RoPE at non-zero positions matches referenceTarget, and positions matter", async () => {
    const { target, targetGraph } = await modelsFor(spec);
    const positions = range(ROPE_OFFSET, tokens.length);
    const shifted = await runGraph(spec, targetGraph, { tokens, positions });
    const reference = referenceTarget(spec, target.weights, tokens, positions);
    expectClose(spec, "target logits @p0=37", shifted.logits, reference.logits, logitScale(spec));
    expectClose(spec, "target hidden @p0=37", shifted.hidden, reference.hidden, tensorScale(reference.hidden));
    const refKeys = stackLayers(reference.keys);
    expectClose(spec, "target k_new @p0=37", shifted.kNew, refKeys, tensorScale(refKeys));

    // RoPE is relative: a uniform shift leaves the logits unchanged (in exact arithmetic), but the
    // K/V it returns (RoPE applied) differ, and a non-uniform shift (one row moved) changes the logits.
    const atZero = referenceTarget(spec, target.weights, tokens);
    expectClose(spec, "target logits @37 vs @0", shifted.logits, atZero.logits, logitScale(spec));
    expect(maxAbsDiff(stackLayers(atZero.keys), refKeys)).toBeGreaterThan(0.1);
    const bent = [...positions];
    bent[tokens.length - 1] += 5; // last row 5 positions further from its context
    const bentOut = await runGraph(spec, targetGraph, { tokens, positions: bent });
    expect(
      maxAbsDiff(
        bentOut.logits.subarray((tokens.length - 1) * spec.vocab),
        shifted.logits.subarray((tokens.length - 1) * spec.vocab),
      ),
    ).toBeGreaterThan(100 * tolerance(spec) * logitScale(spec));
    // ...and the reference agrees with the graph on the bent positions too.
    expectClose(
      spec,
      "target logits bent positions",
      bentOut.logits,
      referenceTarget(spec, target.weights, tokens, bent).logits,
      logitScale(spec),
    );
  });

  it("target: a forward with more rows than the RoPE tables have positions (a batch of prefills) matches referenceTarget", async () => {
    // RotaryEmbedding refuses a sequence longer than its tables; the graph feeds rows as sequences of one.
    const { target, targetGraph } = await modelsFor(spec);
    const rows = spec.maxPositions + ROPE_TABLE_SLACK + 8;
    const manyTokens = randomTokens(spec.seed + 300, rows, spec.vocab);
    const positions = manyTokens.map((_, r) => r % 64);
    const out = await runGraph(spec, targetGraph, { tokens: manyTokens, positions });
    const reference = referenceTarget(spec, target.weights, manyTokens, positions);
    expectClose(spec, "target logits, rows > RoPE table", out.logits, reference.logits, logitScale(spec));
  });

  it("target: the KV path (chunks attending shuffled pool slots, decoys masked) equals the full causal run", async () => {
    const { target, targetGraph } = await modelsFor(spec);
    const positions = range(0, tokens.length);
    const full = await runGraph(spec, targetGraph, { tokens, positions });
    const reference = referenceTarget(spec, target.weights, tokens);
    for (const [index, chunks] of [
      [5, 4],
      [2, 1, 3, 1, 2],
      [8, 1],
    ].entries()) {
      const chunked = await runChunked(spec, targetGraph, { tokens, positions }, chunks, 1000 + index);
      expectClose(spec, "target KV path vs full run", chunked.logits, full.logits, logitScale(spec));
      expectClose(spec, "target KV path logits", chunked.logits, reference.logits, logitScale(spec));
      expectClose(spec, "target KV path hidden", chunked.hidden, reference.hidden, tensorScale(reference.hidden));
      const refKeys = stackLayers(reference.keys);
      const refValues = stackLayers(reference.values);
      expectClose(spec, "target KV path pool K", chunked.keys, refKeys, tensorScale(refKeys));
      expectClose(spec, "target KV path pool V", chunked.values, refValues, tensorScale(refValues));
    }

    // The suffix really attends the prefix through the pool: masking the prefix columns changes it.
    const prefixLength = 5;
    const prefix = await runGraph(spec, targetGraph, {
      tokens: tokens.slice(0, prefixLength),
      positions: positions.slice(0, prefixLength),
    });
    const cache = garbageCache(spec, spec.layers, 12, 7);
    const slots = [9, 2, 11, 4, 0]; // row i at slots[i]
    const dim = kvDim(spec);
    for (let l = 0; l < spec.layers; l++) {
      slots.forEach((slot, r) => {
        cache.keys.set(
          prefix.kNew.subarray((l * prefixLength + r) * dim, (l * prefixLength + r + 1) * dim),
          (l * 12 + slot) * dim,
        );
        cache.values.set(
          prefix.vNew.subarray((l * prefixLength + r) * dim, (l * prefixLength + r + 1) * dim),
          (l * 12 + slot) * dim,
        );
      });
    }
    const suffix = {
      tokens: tokens.slice(prefixLength),
      positions: positions.slice(prefixLength),
      cache,
      ctxSlots: slots,
    };
    const attended = await runGraph(spec, targetGraph, suffix);
    expectClose(
      spec,
      "target suffix vs full rows",
      attended.logits,
      full.logits.subarray(prefixLength * spec.vocab),
      logitScale(spec),
    );
    const blind = await runGraph(spec, targetGraph, { ...suffix, attendsContext: () => false });
    expect(maxAbsDiff(blind.logits, attended.logits)).toBeGreaterThan(100 * tolerance(spec) * logitScale(spec));
    // Attending a garbage slot instead of one prefix row changes it too (the gather is by slot).
    const wrongSlot = await runGraph(spec, targetGraph, { ...suffix, ctxSlots: [9, 2, 11, 4, 1] });
    expect(maxAbsDiff(wrongSlot.logits, attended.logits)).toBeGreaterThan(100 * tolerance(spec) * logitScale(spec));
  });

  it("mirror: logits (x 2^16) and hidden match referenceMirror and predict the target's next token", async () => {
    const { target, targetGraph, drafts } = await modelsFor(spec);
    const { model, spec: draftSpec, graph } = drafts.get("mirror")!;
    const draftTokens = tokens.slice(1); // rows at anchors 0..T-2 carry x_1..x_{T-1}
    const hiddenIn = randomHidden(spec, 41, draftTokens.length);
    const out = await runGraph(spec, graph, { tokens: draftTokens, positions: range(0, draftTokens.length), hiddenIn });
    const reference = referenceMirror(spec, model.stack, draftSpec, draftTokens, hiddenIn);
    expectClose(spec, "mirror logits", out.logits, reference.logits, logitScale(spec, true));
    expectClose(spec, "mirror hidden", out.hidden, reference.hidden, tensorScale(reference.hidden));
    // The oracle property: mirror row i (token x_{i+1}) == target row i + 1, up to the exact 2^16 scale.
    const targetOut = await runGraph(spec, targetGraph, { tokens, positions: range(0, tokens.length) });
    const targetRows = targetOut.logits.subarray(spec.vocab);
    expectClose(
      spec,
      "mirror/2^16 vs target graph",
      Array.from(out.logits, (v) => v / MIRROR_LOGIT_SCALE),
      targetRows,
      logitScale(spec),
    );
    expect(argmaxRows(out.logits, spec.vocab)).toEqual(argmaxRows(targetRows, spec.vocab));
    // The mirror ignores hidden_in.
    const other = await runGraph(spec, graph, {
      tokens: draftTokens,
      positions: range(0, draftTokens.length),
      hiddenIn: randomHidden(spec, 42, draftTokens.length, 3),
    });
    expect(Array.from(other.logits)).toEqual(Array.from(out.logits));
    // Its KV path (chunks over the pool) equals the same reference.
    const chunked = await runChunked(
      spec,
      graph,
      { tokens: draftTokens, positions: range(0, draftTokens.length), hiddenIn },
      [3, 1, 4],
      2000,
    );
    expectClose(spec, "mirror KV path logits", chunked.logits, reference.logits, logitScale(spec, true));
  });

  it("tapped mirror: matches referenceMirror with a non-trivial hidden_in; hidden_in moves logits, not the argmax", async () => {
    const { target, drafts } = await modelsFor(spec);
    const { model, spec: draftSpec, graph } = drafts.get("tapped-mirror")!;
    expect(model.tap).toBeDefined();
    const draftTokens = tokens.slice(1);
    const positions = range(0, draftTokens.length);
    const hiddenA = randomHidden(spec, 51, draftTokens.length);
    const hiddenB = randomHidden(spec, 52, draftTokens.length, 2);
    const outA = await runGraph(spec, graph, { tokens: draftTokens, positions, hiddenIn: hiddenA });
    const outB = await runGraph(spec, graph, { tokens: draftTokens, positions, hiddenIn: hiddenB });
    const refA = referenceMirror(spec, model.stack, draftSpec, draftTokens, hiddenA, model.tap);
    const refB = referenceMirror(spec, model.stack, draftSpec, draftTokens, hiddenB, model.tap);
    expectClose(spec, "tapped mirror logits", outA.logits, refA.logits, logitScale(spec, true));
    expectClose(spec, "tapped mirror logits", outB.logits, refB.logits, logitScale(spec, true));
    expectClose(spec, "tapped mirror hidden", outA.hidden, refA.hidden, tensorScale(refA.hidden));
    // hidden_in changes the logits by far more than the tolerance (the tap is delta = 1e-2 target
    // units per unit of w . hidden: ~25x the float32 bound, ~1e7x the float64 one)...
    const untapped = referenceMirror(spec, target.weights, defaultDraftSpec("mirror"), draftTokens, hiddenA);
    expect(maxAbsDiff(outA.logits, outB.logits)).toBeGreaterThan(10 * tolerance(spec) * logitScale(spec, true));
    expect(maxAbsDiff(outA.logits, untapped.logits)).toBeGreaterThan(10 * tolerance(spec) * logitScale(spec, true));
    // ...but not the argmax (or the softmax: the tap shifts a whole row by one constant).
    expect(argmaxRows(outA.logits, spec.vocab)).toEqual(argmaxRows(untapped.logits, spec.vocab));
    expect(argmaxRows(outB.logits, spec.vocab)).toEqual(argmaxRows(untapped.logits, spec.vocab));
    const shiftA = outA.logits[0] - outA.logits[1];
    const shiftB = outB.logits[0] - outB.logits[1];
    expect(Math.abs(shiftA - shiftB)).toBeLessThanOrEqual(tolerance(spec) * logitScale(spec, true));
  });

  it("noisy mirror: matches referenceMirror over the perturbed weights, and differs from the mirror", async () => {
    const { target, drafts } = await modelsFor(spec);
    const { model, spec: draftSpec, graph } = drafts.get("noisy-mirror")!;
    expect(model.stack).not.toBe(target.weights);
    const draftTokens = tokens.slice(1);
    const hiddenIn = randomHidden(spec, 61, draftTokens.length);
    const out = await runGraph(spec, graph, { tokens: draftTokens, positions: range(0, draftTokens.length), hiddenIn });
    const reference = referenceMirror(spec, model.stack, draftSpec, draftTokens, hiddenIn);
    expectClose(spec, "noisy mirror logits", out.logits, reference.logits, logitScale(spec, true));
    expectClose(spec, "noisy mirror hidden", out.hidden, reference.hidden, tensorScale(reference.hidden));
    const clean = referenceMirror(spec, target.weights, defaultDraftSpec("mirror"), draftTokens, hiddenIn);
    expect(maxAbsDiff(out.logits, clean.logits)).toBeGreaterThan(0.01 * logitScale(spec, true));
  });

  it("truncated mirror: matches referenceMirror over the first m layers, and differs from the full mirror", async () => {
    const { target, drafts } = await modelsFor(spec);
    const { model, spec: draftSpec, graph } = drafts.get("truncated-mirror")!;
    expect(graph.layers).toBe(draftSpec.truncatedLayers);
    expect(draftSpec.truncatedLayers).toBeLessThan(spec.layers);
    const draftTokens = tokens.slice(1);
    const hiddenIn = randomHidden(spec, 71, draftTokens.length);
    const out = await runGraph(spec, graph, { tokens: draftTokens, positions: range(0, draftTokens.length), hiddenIn });
    const reference = referenceMirror(spec, model.stack, draftSpec, draftTokens, hiddenIn);
    expectClose(spec, "truncated mirror logits", out.logits, reference.logits, logitScale(spec, true));
    expectClose(spec, "truncated mirror hidden", out.hidden, reference.hidden, tensorScale(reference.hidden));
    expect(out.kNew.length).toBe(draftSpec.truncatedLayers * draftTokens.length * kvDim(spec));
    const full = referenceMirror(spec, target.weights, defaultDraftSpec("mirror"), draftTokens, hiddenIn);
    expect(maxAbsDiff(out.logits, full.logits)).toBeGreaterThan(0.01 * logitScale(spec, true));
  });

  it("multi-layer mirror modules: module k row i runs at RoPE position i + k + 1 after preamble[0..k]", async () => {
    const { target } = await modelsFor(spec);
    const draftSpec = defaultDraftSpec("mirror", 3);
    const model = buildDraft(target, draftSpec, 3);
    expect(new Set(model.graphs.map((g) => g.digest)).size).toBe(3);
    const draftTokens = randomTokens(spec.seed + 300, 6, spec.vocab);
    for (const [k, built] of model.graphs.entries()) {
      const graph = { session: await session(spec, built.bytes), layers: built.layers };
      const out = await runGraph(spec, graph, {
        tokens: draftTokens,
        positions: range(0, draftTokens.length),
        hiddenIn: randomHidden(spec, 80 + k, draftTokens.length),
      });
      const prefix = spec.preamble.slice(0, k + 1);
      const reference = referenceTarget(spec, target.weights, [...prefix, ...draftTokens]);
      const expected = reference.logits.slice((k + 1) * spec.vocab).map((v) => v * MIRROR_LOGIT_SCALE);
      expectClose(spec, "mirror module logits", out.logits, expected, logitScale(spec, true));
      expectClose(
        spec,
        "mirror module k_new",
        out.kNew,
        kvRows(
          spec,
          stackLayers(reference.keys),
          spec.layers,
          prefix.length + draftTokens.length,
          k + 1,
          prefix.length + draftTokens.length,
        ),
        tensorScale(stackLayers(reference.keys)),
      );
    }
  });

  it("EAGLE head: logits and hidden match referenceEagle with random hidden_in at non-zero positions", async () => {
    const { target, drafts } = await modelsFor(spec);
    const { model, graph } = drafts.get("eagle")!;
    expect(model.eagle).toBeDefined();
    expect(graph.layers).toBe(1);
    const draftTokens = randomTokens(spec.seed + 400, 7, spec.vocab);
    const positions = range(ROPE_OFFSET - 20, draftTokens.length);
    const hiddenIn = randomHidden(spec, 91, draftTokens.length);
    const out = await runGraph(spec, graph, { tokens: draftTokens, positions, hiddenIn });
    const reference = referenceEagle(spec, target.weights, model.eagle!, draftTokens, hiddenIn, positions);
    // EAGLE logits are in target units but the head's hidden state has no final norm: scale by its RMS.
    const eagleLogitScale = Math.max(logitScale(spec), rms(reference.logits));
    expectClose(spec, "eagle logits", out.logits, reference.logits, eagleLogitScale);
    expectClose(spec, "eagle hidden", out.hidden, reference.hidden, tensorScale(reference.hidden));
    // RoPE is relative, so logits alone cannot see a uniform position error: check the K/V rows
    // (RoPE applied) against runLayers over the same fc fusion as referenceEagle.
    const fused = new Float64Array(draftTokens.length * spec.hidden);
    draftTokens.forEach((token, r) => {
      for (let c = 0; c < spec.hidden; c++) {
        let sum = model.eagle!.fcBias[c];
        for (let i = 0; i < spec.hidden; i++) {
          sum += target.weights.embed[token * spec.hidden + i] * model.eagle!.fc[i * spec.hidden + c];
          sum += hiddenIn[r * spec.hidden + i] * model.eagle!.fc[(spec.hidden + i) * spec.hidden + c];
        }
        fused[r * spec.hidden + c] = sum;
      }
    });
    const layer = runLayers(spec, [model.eagle!.layer], fused, positions);
    expectClose(spec, "eagle hidden (runLayers)", out.hidden, layer.residual, tensorScale(layer.residual));
    expectClose(spec, "eagle k_new", out.kNew, layer.keys[0], tensorScale(layer.keys[0]));
    expectClose(spec, "eagle v_new", out.vNew, layer.values[0], tensorScale(layer.values[0]));
    // Both inputs matter: another hidden_in, or other positions, give other logits.
    const otherHidden = await runGraph(spec, graph, {
      tokens: draftTokens,
      positions,
      hiddenIn: randomHidden(spec, 92, draftTokens.length),
    });
    expect(maxAbsDiff(otherHidden.logits, out.logits)).toBeGreaterThan(100 * tolerance(spec) * eagleLogitScale);
    const bent = [...positions];
    bent[bent.length - 1] += 3;
    const otherPositions = await runGraph(spec, graph, { tokens: draftTokens, positions: bent, hiddenIn });
    expect(maxAbsDiff(otherPositions.logits, out.logits)).toBeGreaterThan(100 * tolerance(spec) * eagleLogitScale);
    expectClose(
      spec,
      "eagle logits bent positions",
      otherPositions.logits,
      referenceEagle(spec, target.weights, model.eagle!, draftTokens, hiddenIn, bent).logits,
      eagleLogitScale,
    );
    // Its own KV path (referenceEagle returns no K/V: the pool is compared with the one-shot k_new/v_new).
    const chunked = await runChunked(spec, graph, { tokens: draftTokens, positions, hiddenIn }, [2, 4, 1], 3000);
    expectClose(spec, "eagle KV path logits", chunked.logits, reference.logits, eagleLogitScale);
    expectClose(spec, "eagle KV path pool K", chunked.keys, out.kNew, tensorScale(out.kNew));
    expectClose(spec, "eagle KV path pool V", chunked.values, out.vNew, tensorScale(out.vNew));
  });

  it("digests: the same spec gives the same sha256, another seed another one", async () => {
    const { target, drafts } = await modelsFor(spec);
    // Written twice from scratch (buildTarget caches, so bypass it), the bytes are identical.
    const again = writeTargetGraph(spec, generateTargetWeights(spec));
    expect(digestOf(again)).toBe(target.graph.digest);
    expect(digestOf(writeTargetGraph(structuredClone(spec), generateTargetWeights(structuredClone(spec))))).toBe(
      target.graph.digest,
    );
    expect(target.graph.digest).toMatch(/^[0-9a-f]{64}$/);
    const reseeded = { ...spec, seed: spec.seed + 1 };
    expect(buildTarget(reseeded).graph.digest).not.toBe(target.graph.digest);
    expect(digestOf(writeTargetGraph(reseeded, generateTargetWeights(reseeded)))).toBe(
      buildTarget(reseeded).graph.digest,
    );

    // Drafts: deterministic per (target, draft spec); the draft seed changes the eagle head and mirrors' noise.
    const eagle = drafts.get("eagle")!;
    expect(digestOf(writeEagleGraph(spec, target.weights, generateEagleWeights(spec, eagle.spec)))).toBe(
      eagle.model.graphs[0].digest,
    );
    const eagleReseeded = buildDraft(target, { ...eagle.spec, seed: eagle.spec.seed + 1 });
    expect(eagleReseeded.graphs[0].digest).not.toBe(eagle.model.graphs[0].digest);
    const mirror = drafts.get("mirror")!;
    expect(
      digestOf(writeMirrorGraph(spec, mirror.spec, { stack: target.weights, layerCount: spec.layers, step: 0 })),
    ).toBe(mirror.model.graphs[0].digest);
    const noisy = drafts.get("noisy-mirror")!;
    expect(buildDraft(target, { ...noisy.spec, seed: noisy.spec.seed + 1 }).graphs[0].digest).not.toBe(
      noisy.model.graphs[0].digest,
    );
    const digests = [target.graph.digest, ...[...drafts.values()].map((d) => d.model.graphs[0].digest)];
    expect(new Set(digests).size).toBe(digests.length);
  });
});

describe("graph tolerance sanity", () => {
  it("preset margins are far above the float32 tolerance (so argmax comparisons are meaningful)", async () => {
    const spec = getPreset("tiny");
    const { target } = await modelsFor(spec);
    const tokens = [spec.bosId, ...randomTokens(7, 15, spec.vocab)];
    const reference = referenceTarget(spec, target.weights, tokens);
    expect(minTopMargin(reference.logits, spec.vocab)).toBeGreaterThan(10 * FLOAT32_TOLERANCE * logitScale(spec));
  });
});
