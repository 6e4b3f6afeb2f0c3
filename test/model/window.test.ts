// Sliding-window attention in the graphs (src/model/graphs.ts, model/window.ts) against the independent
// TypeScript reference (reference-forward.ts): the swa presets' target and mirror-family graphs over
// sequences that cross the window, through one causal forward and through the KV path (context columns
// marked OUTSIDE_WINDOW by position), and the window's effect (the same weights without it differ).
import { afterAll, describe, expect, it } from "vitest";
import { buildDraft, buildTarget } from "../../src/model/build.ts";
import { getPreset } from "../../src/model/presets.ts";
import { referenceMirror, referenceTarget } from "../../src/model/reference-forward.ts";
import { defaultDraftSpec, kvDim, MIRROR_LOGIT_SCALE, type DraftKind, type ModelSpec } from "../../src/model/spec.ts";
import {
  draftWindow,
  layerWindows,
  markOutsideWindow,
  OUTSIDE_WINDOW,
  stackWindow,
  windowStart,
} from "../../src/model/window.ts";
import { DEFAULT_RUNTIME, ModelSession, type FloatArray } from "../../src/runtime/ort.ts";

const MASKED = -1e9;
/** float32 graphs vs the float64 reference per unit of logit scale (graphs.test.ts's bound); float64: 1e-9. */
const tolerance = (spec: ModelSpec) => (spec.dtype === "float32" ? 1e-4 : 1e-9);
const sessions: ModelSession[] = [];
afterAll(async () => Promise.all(sessions.map((session) => session.release())));

async function sessionOf(spec: ModelSpec, graph: { bytes: Uint8Array; window?: number }): Promise<ModelSession> {
  const session = await ModelSession.create(graph.bytes, spec.dtype, spec.hidden, DEFAULT_RUNTIME, graph.window);
  sessions.push(session);
  return session;
}

function floats(spec: ModelSpec, length: number): FloatArray {
  return spec.dtype === "float32" ? new Float32Array(length) : new Float64Array(length);
}

function maxError(actual: ArrayLike<number>, expected: ArrayLike<number>): number {
  expect(actual.length).toBe(expected.length);
  let max = 0;
  for (let i = 0; i < expected.length; i++) max = Math.max(max, Math.abs(actual[i] - expected[i]));
  return max;
}

/**
 * Runs `tokens` at positions 0.. in chunks through the KV path: each chunk attends the earlier rows' K/V as
 * context columns (in reverse order, so column and position differ) and itself causally, windowed layers' columns
 * before the row's window marked OUTSIDE_WINDOW.
 */
async function runChunks(
  spec: ModelSpec,
  session: ModelSession,
  layers: number,
  tokens: readonly number[],
  chunk: number,
  hidden?: Float64Array,
): Promise<Float64Array> {
  const dim = kvDim(spec);
  const slots = tokens.length;
  const keys = floats(spec, layers * slots * dim);
  const values = floats(spec, layers * slots * dim);
  const logits = new Float64Array(tokens.length * spec.vocab);
  for (let start = 0; start < tokens.length; start += chunk) {
    const end = Math.min(tokens.length, start + chunk);
    const rows = end - start;
    const context = Array.from({ length: start }, (_, i) => start - 1 - i); // slot = position, reversed
    const width = context.length + rows;
    const mask = floats(spec, rows * width);
    const rowPositions = Array.from({ length: rows }, (_, r) => start + r);
    for (let r = 0; r < rows; r++) for (let s = r + 1; s < rows; s++) mask[r * width + context.length + s] = MASKED;
    if (session.window !== undefined)
      markOutsideWindow(mask, rowPositions, [...context, ...rowPositions], session.window);
    const out = await session.run({
      tokens: BigInt64Array.from(tokens.slice(start, end), BigInt),
      positions: BigInt64Array.from(rowPositions, BigInt),
      hiddenIn: session.hasHiddenInput
        ? (spec.dtype === "float32" ? Float32Array : Float64Array).from(
            hidden!.subarray(start * spec.hidden, end * spec.hidden),
          )
        : undefined,
      kCache: keys,
      vCache: values,
      cacheDims: [layers, slots, dim],
      ctxSlots: BigInt64Array.from(context, BigInt),
      mask,
      withLogits: true,
    });
    logits.set(out.logits!, start * spec.vocab);
    for (let l = 0; l < layers; l++)
      for (let r = 0; r < rows; r++) {
        keys.set(out.kNew.subarray((l * rows + r) * dim, (l * rows + r + 1) * dim), (l * slots + start + r) * dim);
        values.set(out.vNew.subarray((l * rows + r) * dim, (l * rows + r + 1) * dim), (l * slots + start + r) * dim);
      }
  }
  return logits;
}

describe.each(["swa", "swa-f64"])("sliding-window graphs of %s", (preset) => {
  const spec = getPreset(preset);
  const window = spec.slidingWindow!.size;
  // Three windows long: most rows see only part of the sequence in their windowed layers.
  const tokens = [spec.bosId, ...Array.from({ length: 3 * window + 2 }, (_, i) => 3 + ((i * 7) % (spec.vocab - 3)))];

  it("the preset windows some or all layers with a window its prompts cross", () => {
    expect(stackWindow(spec)).toBe(window);
    expect(layerWindows(spec).filter((size) => size !== undefined).length).toBe(spec.slidingWindow!.layers.length);
    expect(window).toBeLessThan(spec.preamble.length);
  });

  it("target: chunked KV-path logits match the windowed reference, which differs from the unwindowed model", async () => {
    const target = buildTarget(spec);
    expect(target.graph.window).toBe(window);
    const session = await sessionOf(spec, target.graph);
    const reference = referenceTarget(spec, target.weights, tokens);
    for (const chunk of [tokens.length, 3, 1]) {
      const logits = await runChunks(spec, session, spec.layers, tokens, chunk);
      expect(maxError(logits, reference.logits) / spec.logitStd, `chunk ${chunk}`).toBeLessThanOrEqual(tolerance(spec));
    }
    // The window matters: the same weights attending everything give other logits past the first window.
    const unwindowed = referenceTarget({ ...spec, slidingWindow: undefined }, target.weights, tokens);
    expect(
      maxError(unwindowed.logits.subarray(0, window * spec.vocab), reference.logits.subarray(0, window * spec.vocab)),
    ).toBe(0);
    expect(maxError(unwindowed.logits, reference.logits) / spec.logitStd).toBeGreaterThan(1e-2);
  });

  it.each(["mirror", "truncated-mirror", "eagle3-mirror"] as DraftKind[])(
    "%s: the draft graph inherits the target's windows, its BOS prefix windowed in-graph",
    async (kind) => {
      const target = buildTarget(spec, kind === "eagle3-mirror");
      const draftSpec = { ...defaultDraftSpec(kind, 3), truncatedLayers: 1 };
      const draft = buildDraft(target, draftSpec);
      expect(draft.graphs[0].window).toBe(draftWindow(spec, draftSpec));
      if (kind === "eagle3-mirror") return; // its graph takes aux_in: the engine's property runs cover it
      const session = await sessionOf(spec, draft.graphs[0]);
      const layers = draft.graphs[0].layers;
      // Mirror anchor i runs token x_{i+1}: its logits are the target's at position i + 1, times 2^16.
      const drafted = tokens.slice(1);
      const hidden = new Float64Array(drafted.length * spec.hidden);
      const reference = referenceMirror(spec, target.weights, draftSpec, drafted, hidden);
      const logits = await runChunks(spec, session, layers, drafted, 2, hidden);
      expect(maxError(logits, reference.logits) / (spec.logitStd * MIRROR_LOGIT_SCALE)).toBeLessThanOrEqual(
        tolerance(spec),
      );
      if (draft.graphs[0].window === undefined) return;
      const truncated = kind === "truncated-mirror" ? 1 : spec.layers;
      const full = referenceTarget(spec, target.weights, tokens, undefined, truncated);
      const rows = drafted.length;
      for (let r = 0; r < rows * spec.vocab; r++)
        expect(Math.abs(logits[r] / MIRROR_LOGIT_SCALE - full.logits[spec.vocab + r])).toBeLessThanOrEqual(
          tolerance(spec) * spec.logitStd,
        );
    },
  );
});

describe("window helpers", () => {
  it("markOutsideWindow marks attended columns before each row's window only", () => {
    // Rows at positions 5 and 6, columns at positions 2..6, window 3: rows see 3..5 and 4..6.
    const mask = new Float64Array(2 * 5);
    mask[4] = MASKED; // row 5 does not attend position 6
    markOutsideWindow(mask, [5, 6], [2, 3, 4, 5, 6], 3);
    expect(Array.from(mask)).toEqual([OUTSIDE_WINDOW, 0, 0, 0, MASKED, OUTSIDE_WINDOW, OUTSIDE_WINDOW, 0, 0, 0]);
    expect(windowStart(1, 4)).toBe(0);
    expect(windowStart(9, 4)).toBe(6);
  });

  it("trained heads keep their own (full) attention; mirrors inherit the kept layers' windows", () => {
    const spec = getPreset("swa"); // window on layer 0 of 2
    expect(draftWindow(spec, defaultDraftSpec("eagle"))).toBeUndefined();
    expect(draftWindow(spec, defaultDraftSpec("eagle3"))).toBeUndefined();
    expect(draftWindow(spec, { ...defaultDraftSpec("truncated-mirror"), truncatedLayers: 1 })).toBe(4);
    const upper = { ...spec, slidingWindow: { size: 4, layers: [1] } };
    expect(draftWindow(upper, { ...defaultDraftSpec("truncated-mirror"), truncatedLayers: 1 })).toBeUndefined();
    expect(stackWindow(getPreset("tiny"))).toBeUndefined();
  });
});
