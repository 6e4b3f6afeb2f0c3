// RoPE inside the decoder-stack graphs (graphs.ts): how Q and K are rotated, and which column blocks the
// one Q/K/V projection holds for it. float32 uses the opset-23 RotaryEmbedding operator; float64 (which that
// operator has no kernel for) folds rotate-half into the projection and applies x * cos + swapped * sin.
import type { GraphBuilder } from "./onnx-builder.ts";
import type { ModelSpec } from "./spec.ts";
import { ropeFrequencies } from "./rope-scaling.ts";
import type { LayerWeights } from "./weights.ts";

/** YaRN's attention factor on cos and sin; plain RoPE's tables are not multiplied at all (their bytes stay). */
function scaled(value: number, attentionFactor: number): number {
  return attentionFactor === 1 ? value : value * attentionFactor;
}

/** Positions beyond maxPositions that the RoPE tables still cover (mirror modules run at anchor + k + 1). */
export const ROPE_TABLE_SLACK = 16;

/**
 * RoPE tables laid out per projection width: row p holds cos (and the signed sin of rotate-half) for every
 * head of a [heads * headDim] projection, so one Gather per table serves all heads without reshapes.
 */
function ropeTables(spec: ModelSpec, heads: number): { cos: Float64Array; sinSigned: Float64Array; rows: number } {
  const rows = spec.maxPositions + ROPE_TABLE_SLACK;
  const { invFreq, attentionFactor } = ropeFrequencies(spec);
  const { headDim } = spec;
  const half = headDim / 2;
  const width = heads * headDim;
  const cos = new Float64Array(rows * width);
  const sinSigned = new Float64Array(rows * width);
  for (let p = 0; p < rows; p++) {
    for (let i = 0; i < half; i++) {
      const angle = p * invFreq[i];
      const cosine = scaled(Math.cos(angle), attentionFactor);
      const sine = scaled(Math.sin(angle), attentionFactor);
      for (let h = 0; h < heads; h++) {
        const base = p * width + h * headDim;
        cos[base + i] = cos[base + i + half] = cosine;
        // rotate_half(x) * sin == swap_halves(x) * [-sin, sin].
        sinSigned[base + i] = -sine;
        sinSigned[base + i + half] = sine;
      }
    }
  }
  return { cos, sinSigned, rows };
}

/**
 * [inFeatures, heads * headDim] -> the same columns with each head's halves swapped: x @ swapped(W) is
 * swap_halves(x @ W) column for column (each output column is the same dot product), so RoPE's rotate-half
 * costs no extra node: the projection computes both at once.
 */
function swapHeadHalves(weights: Float64Array, inFeatures: number, heads: number, headDim: number): Float64Array {
  const width = heads * headDim;
  const half = headDim / 2;
  const swapped = new Float64Array(weights.length);
  for (let row = 0; row < inFeatures; row++)
    for (let h = 0; h < heads; h++)
      for (let i = 0; i < headDim; i++) {
        const from = h * headDim + ((i + half) % headDim);
        swapped[row * width + h * headDim + i] = weights[row * width + from];
      }
  return swapped;
}

/** How a graph applies RoPE: the projection's column blocks, and Q, K, V from the Split of that projection. */
export interface RopeWriter {
  /** The width of each column block of the Q/K/V projection, in order. */
  projectionWidths: readonly number[];
  /** A layer's weights for those blocks ([inFeatures, width] each), in the same order. */
  projectionBlocks(layer: LayerWeights, inFeatures: number): Float64Array[];
  apply(parts: readonly string[]): { q: string; k: string; v: string };
}

/**
 * float32: RotaryEmbedding (opset 23) with [rows, hd / 2] tables. The operator reads its input as [batch,
 * sequence, width] and refuses a sequence longer than its tables (ORT: "updating cos_cache ... not supported"),
 * so the T rows go in as T sequences of one ([T, 1, width], positions [T, 1]): a forward may hold more rows
 * than there are positions (a batch of prefills).
 */
export function ropeByOperator(g: GraphBuilder, spec: ModelSpec, positions: string, axis1: string): RopeWriter {
  const { heads, kvHeads, headDim } = spec;
  const rows = spec.maxPositions + ROPE_TABLE_SLACK;
  const half = headDim / 2;
  const cos = new Float64Array(rows * half);
  const sin = new Float64Array(rows * half);
  const { invFreq, attentionFactor } = ropeFrequencies(spec);
  for (let p = 0; p < rows; p++)
    for (let i = 0; i < half; i++) {
      const angle = p * invFreq[i];
      cos[p * half + i] = scaled(Math.cos(angle), attentionFactor);
      sin[p * half + i] = scaled(Math.sin(angle), attentionFactor);
    }
  const cosCache = g.weight("rope_cos", [rows, half], cos);
  const sinCache = g.weight("rope_sin", [rows, half], sin);
  const positionIds = g.op("Unsqueeze", [positions, axis1]); // [T, 1]
  const perRow = g.int64(g.fresh("rows_of_one"), [3], [-1, 1, 0]); // [1, T, w] -> [T, 1, w]
  const batchOfOne = g.int64(g.fresh("batch_of_one"), [3], [1, -1, 0]); // [T, 1, w] -> [1, T, w]
  const rotate = (x: string, numHeads: number) =>
    g.op("Reshape", [
      g.op("RotaryEmbedding", [g.op("Reshape", [x, perRow]), cosCache, sinCache, positionIds], {
        num_heads: numHeads,
        interleaved: 0,
      }),
      batchOfOne,
    ]);
  return {
    projectionWidths: [heads * headDim, kvHeads * headDim, kvHeads * headDim],
    projectionBlocks: (layer) => [layer.wq, layer.wk, layer.wv],
    apply: ([q, k, v]) => ({ q: rotate(q, heads), k: rotate(k, kvHeads), v }),
  };
}

/** float64: x * cos + swap_halves(x) * signed sin, swap_halves(x) computed by the projection itself. */
export function ropeBySwappedWeights(g: GraphBuilder, spec: ModelSpec, positions: string): RopeWriter {
  const { heads, kvHeads, headDim } = spec;
  const tablesFor = (width: number, name: string) => {
    const tables = ropeTables(spec, width / headDim);
    return {
      cos: g.op("Gather", [g.weight(`${name}_cos`, [tables.rows, width], tables.cos), positions]),
      sin: g.op("Gather", [g.weight(`${name}_sin_signed`, [tables.rows, width], tables.sinSigned), positions]),
    };
  };
  const qTables = tablesFor(heads * headDim, "rope_q");
  const kTables = heads === kvHeads ? qTables : tablesFor(kvHeads * headDim, "rope_k");
  const rotate = (x: string, swapped: string, table: { cos: string; sin: string }) =>
    g.op("Add", [g.op("Mul", [x, table.cos]), g.op("Mul", [swapped, table.sin])]);
  return {
    projectionWidths: [heads * headDim, heads * headDim, kvHeads * headDim, kvHeads * headDim, kvHeads * headDim],
    projectionBlocks: (layer, inFeatures) => [
      layer.wq,
      swapHeadHalves(layer.wq, inFeatures, heads, headDim),
      layer.wk,
      swapHeadHalves(layer.wk, inFeatures, kvHeads, headDim),
      layer.wv,
    ],
    apply: ([q, qSwapped, k, kSwapped, v]) => ({
      q: rotate(q, qSwapped, qTables),
      k: rotate(k, kSwapped, kTables),
      v,
    }),
  };
}
