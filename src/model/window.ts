// Sliding-window attention (spec.slidingWindow): which layers of a graph attend a window, and how one additive
// mask tells them apart from the full-attention layers. Real engines pass window metadata next to the KV
// indices (FlashInfer's window_left, SGLang's SWA pool); here the mask carries a third value: a column marked
// OUTSIDE_WINDOW is attended by the full-attention layers only. The graphs read the mask as is in windowed
// layers (OUTSIDE_WINDOW is as good as masked to a softmax) and with OUTSIDE_WINDOW turned into 0 in the
// others, so every consumer of the mask (memo, graph replay, padded replay) carries the window unchanged.
import type { DraftKind, ModelSpec } from "./spec.ts";

/**
 * Mask value of a column the row's full-attention layers attend and its windowed layers do not. Finite and
 * exact in float32 and float64, far from 0 and from the "not attended" value (-1e9): exp() of it underflows
 * to 0 as a masked column's does.
 */
export const OUTSIDE_WINDOW = -(2 ** 29);

/** Each layer's window (undefined: full attention) for a stack of the spec's first `layerCount` layers. */
export function layerWindows(spec: ModelSpec, layerCount = spec.layers): (number | undefined)[] {
  const window = spec.slidingWindow;
  return Array.from({ length: layerCount }, (_, layer) => (window?.layers.includes(layer) ? window.size : undefined));
}

/** The window of a graph whose layers are the spec's first `layerCount`: undefined when none is windowed. */
export function stackWindow(spec: ModelSpec, layerCount = spec.layers): number | undefined {
  return layerWindows(spec, layerCount).find((window) => window !== undefined);
}

/** Whether some layer of the stack attends everything (the graph then tells OUTSIDE_WINDOW columns apart). */
export function hasFullLayer(windows: readonly (number | undefined)[]): boolean {
  return windows.some((window) => window === undefined);
}

/**
 * The window of a draft's graph: the mirror family runs the target's layers (the first `truncatedLayers` for
 * the truncated mirror) and inherits their windows; trained heads (EAGLE, EAGLE-3) have layers of their own.
 */
export function draftWindow(
  spec: ModelSpec,
  draft: { kind: DraftKind; truncatedLayers: number } | null | undefined,
): number | undefined {
  if (!draft || draft.kind === "eagle" || draft.kind === "eagle3" || draft.kind === "ngram") return undefined;
  return stackWindow(
    spec,
    draft.kind === "truncated-mirror" ? Math.min(draft.truncatedLayers, spec.layers) : spec.layers,
  );
}

/** The first position a row at `position` attends in a window of `window` positions (its own included). */
export function windowStart(position: number, window: number): number {
  return Math.max(0, position - window + 1);
}

/**
 * Marks, in an additive [rows, width] mask of 0 (attended) and negative (not) entries, every attended column
 * whose position lies before its row's window as OUTSIDE_WINDOW: what a windowed graph reads. For masks built
 * from positions (the cache-free references); the engine marks its own from its window bookkeeping.
 */
export function markOutsideWindow(
  mask: Float32Array | Float64Array,
  rowPositions: ArrayLike<number>,
  columnPositions: ArrayLike<number>,
  window: number,
): void {
  const width = columnPositions.length;
  for (let r = 0; r < rowPositions.length; r++) {
    const first = rowPositions[r] - window + 1;
    for (let c = 0; c < width; c++)
      if (mask[r * width + c] === 0 && columnPositions[c] < first) mask[r * width + c] = OUTSIDE_WINDOW;
  }
}
