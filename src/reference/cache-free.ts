// Cache-free references (docs/design.md section 4): one teacher-forced target forward per request over
// prompt + output (no cache, paging or batching; by causality it yields every logit), and a cache-free
// recomputation of the draft chain over the verified sequence. Used by the engine's laws and by
// validation of third-party outputs alike.
import type { ModelSpec } from "../model/spec.ts";
import { markOutsideWindow } from "../model/window.ts";
import type { FloatArray, ModelSession } from "../runtime/ort.ts";
import { rowTop } from "../engine/topk.ts";
import { auxStates, toTargetPrediction, zeros } from "./eagle3-rows.ts";
import type { Eagle3Reading } from "./eagle3-reading.ts";
import { causalParents, recurrentRowFeeds } from "./recurrent-rows.ts";

export interface RowPrediction {
  /** A target id (an EAGLE-3 draft's argmax mapped through the checkpoint's d2t). */
  argmax: number;
  margin: number;
  /** The logit of argmax. */
  topLogit: number;
  /** EAGLE-3 drafts: the argmax over the draft vocabulary (a draft id). */
  draftArgmax?: number;
}

export interface TeacherForcedTarget {
  tokens: readonly number[];
  /** predictions[p]: the target's choice after tokens[0..p]. */
  predictions: RowPrediction[];
  /** [tokens.length, hidden]: the LM-head input at every position. */
  hidden: FloatArray;
  /** Targets built for EAGLE-3 drafts: [layers + 1, tokens.length, hidden], every residual stream. */
  layerHidden?: FloatArray;
  /** [tokens.length, vocab]: every row's logits, when asked for (request processing and logprobs need them). */
  logits?: FloatArray;
}

/** Row r attends rows 0..r; a windowed graph's windowed layers only those within its window (by position). */
function causalMask(positions: readonly number[], dtype: ModelSpec["dtype"], window?: number): FloatArray {
  const rows = positions.length;
  const mask = dtype === "float32" ? new Float32Array(rows * rows) : new Float64Array(rows * rows);
  for (let r = 0; r < rows; r++) for (let c = r + 1; c < rows; c++) mask[r * rows + c] = -1e9;
  if (window !== undefined) markOutsideWindow(mask, positions, positions, window);
  return mask;
}

/** One forward over a whole causal sequence with an empty KV context. */
async function runCacheFree(
  session: ModelSession,
  spec: ModelSpec,
  layers: number,
  tokens: readonly number[],
  positions: readonly number[],
  hiddenIn?: FloatArray,
  withLogits = false,
  auxIn?: FloatArray,
  eagle3?: Eagle3Reading,
) {
  const emptyCache =
    spec.dtype === "float32"
      ? new Float32Array(layers * spec.kvHeads * spec.headDim)
      : new Float64Array(layers * spec.kvHeads * spec.headDim);
  const result = await session.run({
    tokens: BigInt64Array.from(tokens, BigInt),
    positions: BigInt64Array.from(positions, BigInt),
    hiddenIn,
    auxIn,
    kCache: emptyCache,
    vCache: emptyCache,
    cacheDims: [layers, 1, spec.kvHeads * spec.headDim],
    ctxSlots: new BigInt64Array(0),
    mask: causalMask(positions, spec.dtype, session.window),
    ...recurrentRowFeeds(session, causalParents(tokens.length)),
    ...(withLogits ? { withLogits } : {}),
  });
  const predictions: RowPrediction[] = tokens.map((_, row) => {
    const top = rowTop(result, row);
    const prediction = { argmax: top.predict, margin: top.margin, topLogit: top.topLogit };
    return eagle3 ? toTargetPrediction(prediction, eagle3) : prediction;
  });
  return { predictions, hidden: result.hidden, logits: result.logits, layerHidden: result.layerHidden };
}

export async function teacherForcedTarget(
  session: ModelSession,
  spec: ModelSpec,
  tokens: readonly number[],
  withLogits = false,
): Promise<TeacherForcedTarget> {
  const { predictions, hidden, logits, layerHidden } = await runCacheFree(
    session,
    spec,
    spec.layers,
    tokens,
    tokens.map((_, i) => i),
    undefined,
    withLogits,
  );
  return { tokens, predictions, hidden, ...(logits ? { logits } : {}), ...(layerHidden ? { layerHidden } : {}) };
}

export interface DraftRowReference {
  prediction: RowPrediction;
  /** The draft's hidden output at that row: the input of the next row on the path. */
  hidden: FloatArray;
}

/**
 * One draft row recomputed without any cache: the draft over anchors 0..L-1 (target hidden h_i with
 * x_{i+1}, x_L the bonus) followed by the draft-path rows (tokens d_1..d_j, each fed the previous row's
 * draft hidden, teacher-forced on the engine's path). Returns the last row's prediction and hidden.
 * pathHidden[j] is the hidden feeding path row j (from the recomputation of its parent).
 */
export async function recomputeDraftRow(
  session: ModelSession,
  spec: ModelSpec,
  draftLayers: number,
  target: TeacherForcedTarget,
  rootPosition: number,
  pathTokens: readonly number[],
  pathHidden: readonly FloatArray[],
  eagle3?: Eagle3Reading,
): Promise<DraftRowReference> {
  const width = spec.hidden;
  const L = rootPosition;
  const tokens = [...target.tokens.slice(1, L + 1), ...pathTokens];
  // EAGLE-3: anchor rows are fed the auxiliary states the checkpoint names (hidden zero), path rows their
  // parent's draft hidden (aux zero). Other drafts: the target's hidden states, then the path's.
  const anchorHidden = eagle3 ? zeros(spec.dtype, L * width) : target.hidden.slice(0, L * width);
  const hiddenIn = concatRows([anchorHidden, ...pathHidden], spec.dtype);
  const auxIn = eagle3
    ? concatRows(
        [auxStates(spec, target, eagle3, L), zeros(spec.dtype, pathTokens.length * eagle3.auxLayers.length * width)],
        spec.dtype,
      )
    : undefined;
  const out = await runCacheFree(
    session,
    spec,
    draftLayers,
    tokens,
    tokens.map((_, i) => i),
    hiddenIn,
    false,
    auxIn,
    eagle3,
  );
  const last = tokens.length - 1;
  return { prediction: out.predictions[last], hidden: out.hidden.slice(last * width, (last + 1) * width) };
}

/**
 * Multi-layer module k recomputed without a cache: rows at anchors 0..lastAnchor pair the target hidden
 * h_i with token x_{i+k+1} of `extended` (the verified sequence followed by the round's drafts), at
 * anchor positions (the module graph adds k + 1 for RoPE). Returns the last row.
 */
export async function recomputeModuleRow(
  session: ModelSession,
  spec: ModelSpec,
  draftLayers: number,
  target: TeacherForcedTarget,
  module: number,
  lastAnchor: number,
  extended: readonly number[],
): Promise<RowPrediction> {
  const rows = lastAnchor + 1;
  const tokens = Array.from({ length: rows }, (_, anchor) => extended[anchor + module + 1]);
  const out = await runCacheFree(
    session,
    spec,
    draftLayers,
    tokens,
    tokens.map((_, i) => i),
    target.hidden.slice(0, rows * spec.hidden),
  );
  return out.predictions[rows - 1];
}

function concatRows(parts: readonly FloatArray[], dtype: ModelSpec["dtype"]): FloatArray {
  const total = parts.reduce((sum, part) => sum + part.length, 0);
  const out = dtype === "float32" ? new Float32Array(total) : new Float64Array(total);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}
