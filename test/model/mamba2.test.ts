// Hybrid models' Mamba2 blocks (src/model/mamba2.ts, mamba2-graph.ts) in the ONNX graphs against the float64
// TypeScript reference: whole sequences on both presets (logits and the state after the last row), and the
// calling convention a packed ragged forward needs: rows of two requests interleaved, one starting from a
// committed state (rec_init) instead of zeros, and two siblings of one parent (a verify tree) each continuing
// their parent's state. Also the spec's checks (SpecError naming the field) and what the state is made of.
import { afterAll, describe, expect, it } from "vitest";
import { buildTarget } from "../../src/model/build.ts";
import { getPreset } from "../../src/model/presets.ts";
import { referenceTarget } from "../../src/model/reference-forward.ts";
import { kvDim, SpecError, validateModelSpec, type ModelSpec } from "../../src/model/spec.ts";
import { mambaDims, recurrentLayers, recurrentWidth } from "../../src/model/mamba2.ts";
import { DEFAULT_RUNTIME, ModelSession, type FloatArray } from "../../src/runtime/ort.ts";

const MASKED = -1e9;
const tolerance = (spec: ModelSpec) => (spec.dtype === "float32" ? 1e-4 : 1e-9);
const sessions: ModelSession[] = [];
afterAll(async () => Promise.all(sessions.map((session) => session.release())));

async function targetSession(spec: ModelSpec): Promise<ModelSession> {
  const graph = buildTarget(spec).graph;
  const session = await ModelSession.create(
    graph.bytes,
    spec.dtype,
    spec.hidden,
    DEFAULT_RUNTIME,
    graph.window,
    graph.recurrentInitial,
  );
  sessions.push(session);
  return session;
}

function floats(spec: ModelSpec, values: ArrayLike<number> | number): FloatArray {
  return spec.dtype === "float32" ? new Float32Array(values as number[]) : new Float64Array(values as number[]);
}

function maxError(actual: ArrayLike<number>, expected: ArrayLike<number>): number {
  expect(actual.length).toBe(expected.length);
  let max = 0;
  for (let i = 0; i < expected.length; i++) max = Math.max(max, Math.abs(actual[i] - expected[i]));
  return max;
}

interface Row {
  token: number;
  position: number;
  /** Rows of this forward the row attends (itself added). */
  attends: number[];
  /** rec_src: a row of rec_init (`init`) or this forward's row `parent`. */
  source: { init: number } | { parent: number };
}

async function runRows(spec: ModelSpec, session: ModelSession, rows: Row[], init: Float64Array[]) {
  const count = rows.length;
  const mask = floats(spec, count * count).fill(MASKED);
  rows.forEach((row, r) => [...row.attends, r].forEach((column) => (mask[r * count + column] = 0)));
  const width = recurrentWidth(spec);
  const table = floats(spec, init.length * width);
  init.forEach((state, i) => table.set(state, i * width));
  const empty = floats(spec, spec.layers * kvDim(spec));
  return session.run({
    tokens: BigInt64Array.from(rows, (row) => BigInt(row.token)),
    positions: BigInt64Array.from(rows, (row) => BigInt(row.position)),
    kCache: empty,
    vCache: empty,
    cacheDims: [spec.layers, 1, kvDim(spec)],
    ctxSlots: new BigInt64Array(0),
    mask,
    withLogits: true,
    recInit: table,
    recSrc: BigInt64Array.from(rows, (row) =>
      BigInt("init" in row.source ? row.source.init : init.length + row.source.parent),
    ),
  });
}

const causal = (tokens: number[], from = 0): Row[] =>
  tokens.map((token, i) => ({
    token,
    position: i,
    attends: Array.from({ length: i }, (_, j) => from + j),
    source: i === 0 ? { init: 0 } : { parent: from + i - 1 },
  }));

describe("Mamba2 blocks: graphs against the reference", () => {
  for (const name of ["hybrid", "hybrid-f64"]) {
    it(`${name}: a whole sequence's logits and final state`, async () => {
      const spec = getPreset(name);
      const session = await targetSession(spec);
      const tokens = [1, 5, 9, 13, 17, 30, 4, 22, 41, 7];
      const result = await runRows(spec, session, causal(tokens), [new Float64Array(recurrentWidth(spec))]);
      const reference = referenceTarget(spec, buildTarget(spec).weights, tokens);
      const scale = Math.max(...reference.logits.map(Math.abs));
      expect(maxError(result.logits!, reference.logits) / scale).toBeLessThan(tolerance(spec));
      const width = recurrentWidth(spec);
      const last = result.recOut!.subarray((tokens.length - 1) * width, tokens.length * width);
      expect(maxError(last, reference.recurrentState)).toBeLessThan(tolerance(spec));
      // The recurrent layers matter: the same tokens from another state give other logits.
      const shifted = await runRows(spec, session, causal(tokens), [reference.recurrentState]);
      expect(maxError(shifted.logits!, reference.logits)).toBeGreaterThan(1e-3);
    });
  }

  it("hybrid-f64: interleaved requests, one from a committed state, and siblings of a verify tree", async () => {
    // hybrid-f64's only Mamba2 block is layer 0: its state depends on the tokens alone, so a request's suffix
    // run from the state after its prefix must end on the reference's state after prefix ++ suffix.
    const spec = getPreset("hybrid-f64");
    expect(recurrentLayers(spec)).toEqual([0]);
    const session = await targetSession(spec);
    const weights = buildTarget(spec).weights;
    const a = [1, 5, 9, 13];
    const prefix = [1, 5, 9, 13, 17, 8];
    const suffix = [33, 2, 40];
    const committed = referenceTarget(spec, weights, prefix).recurrentState;
    const rows: Row[] = [];
    const aRows: number[] = [];
    const bRows: number[] = [];
    for (let i = 0; i < Math.max(a.length, suffix.length); i++) {
      if (i < a.length) {
        rows.push({
          token: a[i],
          position: i,
          attends: [...aRows],
          source: i === 0 ? { init: 0 } : { parent: aRows[i - 1] },
        });
        aRows.push(rows.length - 1);
      }
      if (i < suffix.length) {
        rows.push({
          token: suffix[i],
          position: prefix.length + i,
          attends: [...bRows],
          source: i === 0 ? { init: 1 } : { parent: bRows[i - 1] },
        });
        bRows.push(rows.length - 1);
      }
    }
    // Two children of a's last row (two draft candidates at one depth), each attending a's rows and itself.
    const children = [21, 44];
    for (const token of children)
      rows.push({ token, position: a.length, attends: [...aRows], source: { parent: aRows[aRows.length - 1] } });
    const result = await runRows(spec, session, rows, [new Float64Array(recurrentWidth(spec)), committed]);
    const width = recurrentWidth(spec);
    const stateOf = (row: number) => result.recOut!.subarray(row * width, (row + 1) * width);
    const vocab = spec.vocab;
    const logitsOf = (row: number) => result.logits!.subarray(row * vocab, (row + 1) * vocab);
    const referenceA = referenceTarget(spec, weights, a);
    expect(maxError(stateOf(aRows[a.length - 1]), referenceA.recurrentState)).toBeLessThan(1e-9);
    expect(maxError(logitsOf(aRows[a.length - 1]), referenceA.logits.subarray((a.length - 1) * vocab))).toBeLessThan(
      1e-9,
    );
    const referenceB = referenceTarget(spec, weights, [...prefix, ...suffix]);
    expect(maxError(stateOf(bRows[suffix.length - 1]), referenceB.recurrentState)).toBeLessThan(1e-9);
    children.forEach((token, i) => {
      const path = referenceTarget(spec, weights, [...a, token]);
      expect(maxError(stateOf(rows.length - children.length + i), path.recurrentState)).toBeLessThan(1e-9);
      expect(
        maxError(logitsOf(rows.length - children.length + i), path.logits.subarray(a.length * vocab)),
      ).toBeLessThan(1e-9);
    });
  });
});

describe("recurrent specs", () => {
  it("a layer's state is the conv window (K - 1 inputs of I + 2N) and the SSM state (I x N)", () => {
    const spec = getPreset("hybrid");
    const dims = mambaDims(spec.recurrent!);
    expect(dims.inner).toBe(spec.recurrent!.heads * spec.recurrent!.headDim);
    expect(dims.width).toBe(
      (spec.recurrent!.convKernel - 1) * (dims.inner + 2 * spec.recurrent!.stateSize) +
        dims.inner * spec.recurrent!.stateSize,
    );
    expect(recurrentWidth(spec)).toBe(spec.recurrent!.layers.length * dims.width);
    expect(recurrentWidth(getPreset("tiny"))).toBe(0);
  });

  it("impossible recurrent specs name the field", () => {
    const base = getPreset("hybrid");
    const fieldOf = (recurrent: Partial<NonNullable<ModelSpec["recurrent"]>>): string | undefined => {
      try {
        validateModelSpec({ ...base, recurrent: { ...base.recurrent!, ...recurrent } });
        return undefined;
      } catch (error) {
        if (error instanceof SpecError) return error.field;
        throw error;
      }
    };
    expect(fieldOf({})).toBeUndefined();
    expect(fieldOf({ layers: [3] })).toBe("recurrent/layers/0");
    expect(fieldOf({ layers: [0, 0] })).toBe("recurrent/layers/1");
    expect(fieldOf({ layers: [] })).toBe("recurrent/layers");
    expect(fieldOf({ stateSize: 0 })).toBe("recurrent/stateSize");
    expect(fieldOf({ convKernel: 1 })).toBe("recurrent/convKernel");
  });
});
