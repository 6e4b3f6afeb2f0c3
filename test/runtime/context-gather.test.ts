// The host-side context gather (src/runtime/context-gather.ts): it must pick exactly the pool rows ctx_slots
// names, in column order, for every layer; a forward fed the gathered rows must return bit for bit what the
// same graph returns fed the whole pool and the slots (the CPU EP's feed, and every EP's before issue 23, item
// 5); and a whole run of every graph kind must have the same trace either way. CI has only the CPU EP, which
// keeps the pool feed, so these tests switch the gather on (ModelSession.gathersContext) to prove it.
import { fc, test } from "@fast-check/vitest";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import type { Case } from "../../src/case/case.ts";
import { defaultCase } from "../../src/case/default-case.ts";
import { runCase } from "../../src/engine/run-case.ts";
import type { DraftKind } from "../../src/model/spec.ts";
import { buildTarget } from "../../src/model/build.ts";
import { getPreset } from "../../src/model/presets.ts";
import { ContextGather, ContextSlotError } from "../../src/runtime/context-gather.ts";
import {
  DEFAULT_RUNTIME,
  ENGINE_OUTPUTS,
  ModelSession,
  runGraph,
  type FloatArray,
  type ProbeTensor,
} from "../../src/runtime/ort.ts";
import { MASKED } from "../../src/engine/forward.ts";

/** Pool value of (layer, slot, d): distinct for every element, so a wrong row, layer or offset shows. */
const poolValue = (layer: number, slot: number, d: number) => layer * 1e6 + slot * 1e3 + d + 0.5;

function pool(layers: number, numSlots: number, kvDim: number, Float: typeof Float32Array | typeof Float64Array) {
  const keys = new Float(layers * numSlots * kvDim);
  const values = new Float(layers * numSlots * kvDim);
  for (let l = 0; l < layers; l++)
    for (let s = 0; s < numSlots; s++)
      for (let d = 0; d < kvDim; d++) {
        keys[(l * numSlots + s) * kvDim + d] = poolValue(l, s, d);
        values[(l * numSlots + s) * kvDim + d] = -poolValue(l, s, d);
      }
  return { keys, values };
}

const shape = fc.record({
  layers: fc.integer({ min: 1, max: 3 }),
  numSlots: fc.integer({ min: 1, max: 12 }),
  kvDim: fc.integer({ min: 1, max: 5 }),
  float64: fc.boolean(),
});
/** Slot lists with repeats, runs of consecutive slots and scrambled orders, over a pool of numSlots. */
const slotLists = (numSlots: number) =>
  fc.array(
    fc.oneof(
      fc.array(fc.nat({ max: numSlots - 1 }), { maxLength: 6 }),
      fc
        .tuple(fc.nat({ max: numSlots - 1 }), fc.integer({ min: 1, max: numSlots }))
        .map(([first, length]) => Array.from({ length: Math.min(length, numSlots - first) }, (_, i) => first + i)),
    ),
    { maxLength: 4 },
  );

describe("ContextGather", () => {
  test.prop([
    shape.chain((s) =>
      fc.tuple(
        fc.constant(s),
        fc.array(
          slotLists(s.numSlots).map((parts) => parts.flat()),
          { maxLength: 4 },
        ),
      ),
    ),
  ])("gathers the named pool rows of every layer, in column order, across reused buffers", ([s, forwards]) => {
    const Float = s.float64 ? Float64Array : Float32Array;
    const { keys, values } = pool(s.layers, s.numSlots, s.kvDim, Float);
    const gather = new ContextGather();
    // Several forwards on one gather: later, smaller contexts must not read the earlier ones' rows.
    for (const slots of forwards) {
      const out = gather.gather(keys, values, [s.layers, s.numSlots, s.kvDim], BigInt64Array.from(slots, BigInt));
      const rowsFed = Math.max(slots.length, 1);
      expect(out.dims).toEqual([s.layers, rowsFed, s.kvDim]);
      expect(out.keys).toBeInstanceOf(Float);
      expect(out.keys.length).toBe(s.layers * rowsFed * s.kvDim);
      expect(Array.from(out.slots, Number)).toEqual(slots.map((_, column) => column));
      for (let l = 0; l < s.layers; l++)
        slots.forEach((slot, column) => {
          for (let d = 0; d < s.kvDim; d++) {
            const at = (l * rowsFed + column) * s.kvDim + d;
            expect(out.keys[at]).toBe(keys[(l * s.numSlots + slot) * s.kvDim + d]);
            expect(out.values[at]).toBe(values[(l * s.numSlots + slot) * s.kvDim + d]);
          }
        });
    }
  });

  it("refuses a slot outside the pool, naming the column and the slot", () => {
    const { keys, values } = pool(2, 4, 3, Float32Array);
    const gather = new ContextGather();
    for (const bad of [4n, -1n]) {
      const attempt = () => gather.gather(keys, values, [2, 4, 3], BigInt64Array.of(1n, 2n, bad));
      expect(attempt).toThrow(ContextSlotError);
      expect(attempt).toThrow(`ctx_slots[2] is ${bad}, outside the pool's 4 slots`);
    }
  });
});

/** Feeds gathered contexts on the CPU EP too, and counts the gathers (so a test sees the path was taken). */
function gatherOnCpu() {
  vi.spyOn(ModelSession, "gathersContext").mockReturnValue(true);
  return vi.spyOn(ContextGather.prototype, "gather");
}

describe("a forward fed the gathered context", () => {
  const sessions: ModelSession[] = [];
  afterAll(async () => {
    for (const session of sessions) await session.release();
  });
  afterEach(() => vi.restoreAllMocks());

  for (const preset of ["tiny", "tiny-f64"]) {
    it(`returns bit for bit what the graph returns fed the whole pool (${preset})`, async () => {
      const model = buildTarget(getPreset(preset));
      const spec = model.spec;
      const layers = spec.layers;
      const kvDim = spec.kvHeads * spec.headDim;
      const numSlots = 40;
      const Float = spec.dtype === "float32" ? Float32Array : Float64Array;
      // A pool of random K/V: rows the mask hides are garbage too, as in the engine's pool.
      let state = 12345;
      const random = () => ((state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32 - 0.5) * 4;
      const keys = new Float(layers * numSlots * kvDim).map(random);
      const values = new Float(layers * numSlots * kvDim).map(random);
      // Context columns: a run of consecutive slots, a scrambled tail, a repeat, a decoy the mask hides.
      const slots = [3, 4, 5, 6, 7, 31, 12, 30, 2, 12, 19];
      const decoy = slots.length - 1;
      const rows = 3;
      const width = slots.length + rows;
      const mask = new Float(rows * width).fill(0);
      for (let r = 0; r < rows; r++) {
        mask[r * width + decoy] = MASKED;
        for (let other = r + 1; other < rows; other++) mask[r * width + slots.length + other] = MASKED;
      }
      const tokens = BigInt64Array.of(5n, 9n, 2n);
      const positions = BigInt64Array.of(11n, 12n, 13n);
      const ctxSlots = BigInt64Array.from(slots, BigInt);
      const session = await ModelSession.create(model.graph.bytes, spec.dtype, spec.hidden, DEFAULT_RUNTIME);
      sessions.push(session);
      const gathers = gatherOnCpu();
      // A first, larger forward leaves other rows in the session's gather buffers.
      await session.run({
        tokens,
        positions,
        kCache: keys,
        vCache: values,
        cacheDims: [layers, numSlots, kvDim],
        ctxSlots: BigInt64Array.from({ length: 30 }, (_, i) => BigInt(39 - i)),
        mask: new Float(rows * (30 + rows)),
      });
      const gathered = await session.run({
        tokens,
        positions,
        kCache: keys,
        vCache: values,
        cacheDims: [layers, numSlots, kvDim],
        ctxSlots,
        mask,
        withLogits: true,
      });
      expect(gathers).toHaveBeenCalledTimes(2);
      const whole: Record<string, ProbeTensor> = await runGraph(
        model.graph.bytes,
        DEFAULT_RUNTIME,
        {
          tokens: { data: tokens, dims: [rows] },
          positions: { data: positions, dims: [rows] },
          k_cache: { data: keys, dims: [layers, numSlots, kvDim] },
          v_cache: { data: values, dims: [layers, numSlots, kvDim] },
          ctx_slots: { data: ctxSlots, dims: [slots.length] },
          mask: { data: mask, dims: [rows, width] },
        },
        [...ENGINE_OUTPUTS, "logits"],
      );
      const outputs: [string, FloatArray | BigInt64Array][] = [
        ["top_values", gathered.topValues],
        ["top_indices", gathered.topIndices],
        ["log_normalizer", gathered.logNormalizer],
        ["hidden", gathered.hidden],
        ["k_new", gathered.kNew],
        ["v_new", gathered.vNew],
        ["logits", gathered.logits!],
      ];
      for (const [name, data] of outputs) {
        // Bit for bit: compared as bytes, so -0 and +0 (or two NaNs) would differ too.
        const expected = whole[name].data;
        expect(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), name).toEqual(
          new Uint8Array(expected.buffer, expected.byteOffset, expected.byteLength),
        );
      }
      // The decoy is hidden and garbage: had the gather picked another row than slot 12 for column 6 (or
      // misplaced any column), the outputs could not be equal. Check they depend on the context at all.
      const shifted = await session.run({
        tokens,
        positions,
        kCache: keys,
        vCache: values,
        cacheDims: [layers, numSlots, kvDim],
        ctxSlots: BigInt64Array.from(slots, (slot) => BigInt((slot + 1) % numSlots)),
        mask,
      });
      expect(Array.from(shifted.hidden)).not.toEqual(Array.from(gathered.hidden));
    });
  }
});

describe("a run fed gathered contexts", () => {
  afterEach(() => vi.restoreAllMocks());

  /** Every graph kind that reads the pool, and the engine paths that lay contexts out differently. */
  const cases: [string, Case][] = [
    ["target and mirror, chunked and paged", engineCase("tiny", "mirror", { chunkSize: 3, pageSize: 4 })],
    ["float64, tapped mirror", engineCase("tiny-f64", "tapped-mirror", { pageSize: 2 })],
    ["EAGLE head, tree, padded graph replay", engineCase("tiny", "eagle", treeReplay())],
    ["EAGLE-3 draft", engineCase("tiny", "eagle3-mirror", { chunkSize: 4 })],
    ["multi-layer drafts, graph replay", engineCase("tiny", "mirror", { multiLayer: true, graphReplay: true })],
    ["sliding windows", engineCase("swa", "mirror", { chunkSize: 5, pageSize: 2 })],
    ["hybrid (recurrent) layers, prefix cache", engineCase("hybrid", "mirror", { chunkSize: 3, prefixCache: true })],
    ["prefix cache and overlap", engineCase("tiny", "noisy-mirror", { prefixCache: true, overlap: true })],
  ];
  for (const [name, testCase] of cases) {
    it(`has the trace and outputs of a run fed the pool: ${name}`, async () => {
      const pooled = await runCase(testCase);
      const gathers = gatherOnCpu();
      const gathered = await runCase(testCase);
      expect(gathers.mock.calls.length).toBeGreaterThan(0);
      expect(gathered.outputs).toEqual(pooled.outputs);
      expect(gathered.trace).toEqual(pooled.trace);
    });
  }
});

function treeReplay(): Partial<Case["engine"]> {
  return { numSteps: 3, topk: 2, numDraftTokens: 6, graphReplay: true, graphBuckets: [2, 4, 8], paddingPoisonSeed: 9 };
}

function engineCase(preset: string, draft: DraftKind, engine: Partial<Case["engine"]>): Case {
  return defaultCase({
    preset,
    draft,
    seed: 3,
    numRequests: 3,
    maxNewTokens: 10,
    engine: { numSteps: 3, numDraftTokens: 4, ...engine },
  });
}
