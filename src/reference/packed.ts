// One cache-free forward over a packed batch of rows with explicit attention: the references' way of
// computing many independent rows in one ONNX Runtime call. Per-call dispatch dominates these tiny
// graphs (ECOSYSTEM.md: ~0.2 ms a run, a few us per extra row), so one forward over a hundred rows
// costs about what two single-row forwards do. No KV cache is involved: every attended row is a row of
// the same forward, and the mask (built here, independently of the engine's) says which.
import type { ModelSpec } from "../model/spec.ts";
import { markOutsideWindow } from "../model/window.ts";
import type { FloatArray, ModelSession } from "../runtime/ort.ts";
import { rowTop } from "../engine/topk.ts";
import type { RowPrediction } from "./cache-free.ts";
import { recurrentRowFeeds } from "./recurrent-rows.ts";

/** Additive mask value for "not attended" (the engine's value: finite, so mirror prefix columns stay exact). */
const MASKED = -1e9;

/** Rows above this go to further forwards: attention is quadratic in the packed rows. */
export const MAX_PACKED_ROWS = 192;

export interface PackedRow {
  token: number;
  position: number;
  /** Rows [from, to) of this batch the row attends (its causal prefix), besides `attendRows` and itself. */
  attendRange: readonly [number, number];
  /** Further rows of this batch the row attends (tree ancestors). */
  attendRows?: readonly number[];
  /** Draft graphs: the row's hidden input ([hidden]); EAGLE-3 rows fed auxiliary states have none (zeros). */
  hidden?: FloatArray;
  /** EAGLE-3 drafts: the row's auxiliary states ([auxLayers * hidden]); zeros when absent. */
  aux?: FloatArray;
}

export interface PackedResult {
  predictions: RowPrediction[];
  /** [rows, hidden] */
  hidden: FloatArray;
  /** Targets built for EAGLE-3 drafts: [layers + 1, rows, hidden], every residual stream. */
  layerHidden?: FloatArray;
}

/** The additive [rows, rows] mask of a packed batch (windowed: sliding-window columns marked). Exposed for tests. */
export function packedMask(rows: readonly PackedRow[], dtype: ModelSpec["dtype"], window?: number): FloatArray {
  return runInputs([rows], dtype, 0, 0, window).mask;
}

/** The inputs of one forward over these segments, end to end (each segment's indices offset by its start). */
function runInputs(
  segments: readonly (readonly PackedRow[])[],
  dtype: ModelSpec["dtype"],
  width: number,
  auxWidth: number,
  /** The graph's sliding window: attended rows before a row's window are marked (model/window.ts). */
  window?: number,
) {
  const FloatCtor = dtype === "float32" ? Float32Array : Float64Array;
  const count = segments.reduce((sum, segment) => sum + segment.length, 0);
  const tokens = new BigInt64Array(count);
  const positions = new BigInt64Array(count);
  const hiddenIn = width > 0 ? new FloatCtor(count * width) : undefined;
  const auxIn = auxWidth > 0 ? new FloatCtor(count * auxWidth) : undefined;
  const mask = new FloatCtor(count * count).fill(MASKED);
  // Hybrid models: a row's recurrence continues the attended row one position before it (-1: none).
  const parents: number[] = new Array(count).fill(-1);
  let r = 0;
  for (const segment of segments) {
    const offset = r;
    for (const row of segment) {
      const [first, last] = row.attendRange;
      for (const other of [...(row.attendRows ?? []), ...Array.from({ length: last - first }, (_, i) => first + i)])
        if (segment[other].position === row.position - 1) parents[r] = offset + other;
      tokens[r] = BigInt(row.token);
      positions[r] = BigInt(row.position);
      if (auxIn && row.aux) {
        if (row.aux.length !== auxWidth) throw new Error(`packed row ${r}: ${row.aux.length} auxiliary values`);
        auxIn.set(row.aux, r * auxWidth);
      }
      if (hiddenIn && !(auxIn && row.aux)) {
        if (!row.hidden || row.hidden.length !== width) throw new Error(`packed row ${r} has no hidden input`);
        hiddenIn.set(row.hidden, r * width);
      }
      const base = r * count + offset;
      const [from, to] = row.attendRange;
      if (from < to) mask.fill(0, base + from, base + to);
      for (const other of row.attendRows ?? []) mask[base + other] = 0;
      mask[r * count + r] = 0;
      r++;
    }
  }
  if (window !== undefined) {
    const rowPositions = Array.from(positions, Number);
    markOutsideWindow(mask, rowPositions, rowPositions, window);
  }
  return { tokens, positions, hiddenIn, auxIn, mask, count, parents };
}

/** One forward over segments packed end to end, with an empty KV context: every row sees only its mask's rows. */
async function runPacked(
  session: ModelSession,
  spec: ModelSpec,
  layers: number,
  segments: readonly (readonly PackedRow[])[],
  auxWidth: number,
): Promise<PackedResult> {
  const FloatCtor = spec.dtype === "float32" ? Float32Array : Float64Array;
  const emptyCache = new FloatCtor(layers * spec.kvHeads * spec.headDim);
  if (session.hasAuxInput && auxWidth === 0) throw new Error("an EAGLE-3 draft's packed rows need the aux width");
  const { tokens, positions, hiddenIn, auxIn, mask, count, parents } = runInputs(
    segments,
    spec.dtype,
    session.hasHiddenInput ? spec.hidden : 0,
    session.hasAuxInput ? auxWidth : 0,
    session.window,
  );
  const result = await session.run({
    tokens,
    positions,
    hiddenIn,
    auxIn,
    kCache: emptyCache,
    vCache: emptyCache,
    cacheDims: [layers, 1, spec.kvHeads * spec.headDim],
    ctxSlots: new BigInt64Array(0),
    mask,
    ...recurrentRowFeeds(session, parents),
  });
  const predictions: RowPrediction[] = new Array(count);
  for (let r = 0; r < count; r++) {
    const top = rowTop(result, r);
    predictions[r] = { argmax: top.predict, margin: top.margin, topLogit: top.topLogit };
  }
  return { predictions, hidden: result.hidden, layerHidden: result.layerHidden };
}

/**
 * Packs independent segments (each a list of rows whose attention indices are relative to the segment)
 * into as few forwards as the row cap allows, in order, and returns each segment's results. A segment
 * over the cap runs alone.
 */
export async function runSegments(
  session: ModelSession,
  spec: ModelSpec,
  layers: number,
  segments: readonly (readonly PackedRow[])[],
  /** EAGLE-3 drafts: the width of a row's auxiliary states. */
  auxWidth = 0,
): Promise<PackedResult[]> {
  const results: PackedResult[] = new Array(segments.length);
  const width = spec.hidden;
  let start = 0;
  while (start < segments.length) {
    let end = start + 1;
    let total = segments[start].length;
    while (end < segments.length && total + segments[end].length <= MAX_PACKED_ROWS) total += segments[end++].length;
    const out = await runPacked(session, spec, layers, segments.slice(start, end), auxWidth);
    let offset = 0;
    for (let s = start; s < end; s++) {
      const count = segments[s].length;
      results[s] = {
        predictions: out.predictions.slice(offset, offset + count),
        hidden: out.hidden.slice(offset * width, (offset + count) * width),
        ...(out.layerHidden ? { layerHidden: segmentStreams(out.layerHidden, total, offset, count, width) } : {}),
      };
      offset += count;
    }
    start = end;
  }
  return results;
}

/** One segment's rows [offset, offset + count) of every residual stream of a packed forward of `rows` rows. */
function segmentStreams(streams: FloatArray, rows: number, offset: number, count: number, width: number): FloatArray {
  const layers = streams.length / (rows * width);
  const out = new (streams.constructor as { new (n: number): FloatArray })(layers * count * width);
  for (let j = 0; j < layers; j++)
    out.set(streams.subarray((j * rows + offset) * width, (j * rows + offset + count) * width), j * count * width);
  return out;
}
