// The graphs' log-softmax normalizer (writeLogNormalizer: max + log(sum(exp(logits - max)))) on rows of
// 2^16-scale logits, the mirror family's scale, on every EP this machine can create a session on (the CPU
// here; scripts/gpu/ep-numerics.ts runs the same check on CUDA and WebGPU). A single ReduceLogSumExp over
// such rows was non-finite on the WebGPU EP (issue 23): a naive exp overflows at logits above ~88 (float32)
// or ~709 (float64), and underflows to log(0) for rows far below zero.
import { afterAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { writeLogNormalizer } from "../../src/model/graphs.ts";
import { GraphBuilder } from "../../src/model/onnx-builder.ts";
import { MIRROR_LOGIT_SCALE, type Dtype } from "../../src/model/spec.ts";
import {
  DEFAULT_RUNTIME,
  EXECUTION_PROVIDERS,
  RuntimeError,
  runGraph,
  type ExecutionProvider,
} from "../../src/runtime/ort.ts";

const TOP_K = 2;

/** logits [T, V] -> TopK -> the normalizer: the same nodes the model graphs end with (or the naive one). */
function normalizerGraph(dtype: Dtype, vocab: number, naive = false): Uint8Array {
  const g = new GraphBuilder(dtype);
  g.input("logits", dtype, ["T", vocab]);
  g.node("TopK", ["logits", g.int64("k", [1], [TOP_K])], { axis: -1, largest: 1, sorted: 1 }, [
    "top_values",
    "top_indices",
  ]);
  if (naive) {
    const sum = g.op("ReduceSum", [g.op("Exp", ["logits"]), g.int64("axis", [1], [-1])], { keepdims: 1 });
    g.op("Log", [sum], {}, "log_normalizer");
  } else writeLogNormalizer(g, "logits", "top_values", "log_normalizer");
  g.output("log_normalizer", dtype, ["T", 1]);
  return g.toBytes("log-normalizer");
}

/** The float64 reference: max-shifted log-sum-exp of the row as the graph received it. */
function logSumExp(row: ArrayLike<number>): number {
  let max = -Infinity;
  for (let i = 0; i < row.length; i++) max = Math.max(max, row[i]);
  let sum = 0;
  for (let i = 0; i < row.length; i++) sum += Math.exp(row[i] - max);
  return max + Math.log(sum);
}

/**
 * float32: the final Add rounds to the row max's precision (2^-24 relative) and the sum of up to V terms
 * carries ~V * 2^-24 relative, which log turns into an absolute error of the same size. float64: the same
 * with 2^-53.
 */
function tolerance(dtype: Dtype, reference: number, vocab: number): number {
  const unit = dtype === "float32" ? 2 ** -24 : 2 ** -53;
  return 4 * unit * Math.max(1, Math.abs(reference)) + 4 * vocab * unit;
}

const tested: string[] = [];
const absent: string[] = [];
afterAll(() => {
  console.log(`log normalizer checked on: ${tested.join(", ")}; no session on: ${absent.join(", ") || "none"}`);
});

/** Rows of `vocab` logits at the mirror's scale. */
function makeRow(dtype: Dtype, values: readonly number[], shift = 0): Float32Array | Float64Array {
  const row = dtype === "float32" ? new Float32Array(values.length) : new Float64Array(values.length);
  values.forEach((value, i) => (row[i] = (value + shift) * MIRROR_LOGIT_SCALE));
  return row;
}

const VOCAB = 64;
/** The corners a naive exp gets wrong: every logit far above exp's range, far below it, one far above the rest. */
const CORNERS = [
  new Array(VOCAB).fill(30),
  new Array(VOCAB).fill(-30),
  Array.from({ length: VOCAB }, (_, i) => (i === 7 ? 40 : -40)),
];

async function normalizerOf(bytes: Uint8Array, ep: ExecutionProvider, row: Float32Array | Float64Array) {
  const out = await runGraph(bytes, { ...DEFAULT_RUNTIME, ep }, { logits: { data: row, dims: [1, row.length] } }, [
    "log_normalizer",
  ]);
  return out.log_normalizer.data[0] as number;
}

describe.each(["float32", "float64"] as const)("log normalizer (%s)", (dtype) => {
  it("the corners break a naive log(sum(exp)) (they test what they are meant to)", async () => {
    const naive = normalizerGraph(dtype, VOCAB, true);
    for (const values of CORNERS)
      expect(Number.isFinite(await normalizerOf(naive, "cpu", makeRow(dtype, values)))).toBe(false);
  });

  for (const ep of EXECUTION_PROVIDERS) {
    if (ep === "webgpu" && dtype === "float64") continue; // no float64 kernels on WebGPU (docs/gpu.md)
    it(`is finite and equals the max-shifted log-sum-exp on 2^16-scale rows (${ep})`, async () => {
      const bytes = normalizerGraph(dtype, VOCAB);
      // A GPU EP this machine lacks is reported, not failed (the CPU always runs).
      try {
        await normalizerOf(bytes, ep, makeRow(dtype, new Array(VOCAB).fill(0)));
      } catch (error) {
        if (ep !== "cpu" && error instanceof RuntimeError) {
          absent.push(`${ep} ${dtype}`);
          return;
        }
        throw error;
      }
      tested.push(`${ep} ${dtype}`);
      const check = async (row: Float32Array | Float64Array) => {
        const got = await normalizerOf(bytes, ep, row);
        const expected = logSumExp(row);
        expect(Number.isFinite(got), `normalizer ${got} on ${ep}`).toBe(true);
        expect(Math.abs(got - expected)).toBeLessThanOrEqual(tolerance(dtype, expected, row.length));
      };
      for (const values of CORNERS) await check(makeRow(dtype, values));
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.double({ min: -40, max: 40, noNaN: true }), { minLength: VOCAB, maxLength: VOCAB }),
          fc.double({ min: -60, max: 60, noNaN: true }),
          async (values, shift) => check(makeRow(dtype, values, shift)),
        ),
        { numRuns: 40 },
      );
    });
  }
});
