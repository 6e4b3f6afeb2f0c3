// Cache-free K/V references: the K/V rows a model writes for positions [0, length) when it runs over a
// request's tokens with no cache, paging or batching (the prefix-cache draft KV law compares reused KV with
// them). Target: x_0..x_{length-1} at positions 0..length-1. Draft (chain or tree): the extend rows at
// anchors 0..length-1, h_i paired with x_{i+1}. Draft module k: h_i paired with x_{i+k+1}.
import type { ModelSpec } from "../model/spec.ts";
import { markOutsideWindow } from "../model/window.ts";
import type { FloatArray, ModelSession } from "../runtime/ort.ts";
import type { TeacherForcedTarget } from "./cache-free.ts";
import { causalParents, recurrentRowFeeds } from "./recurrent-rows.ts";

export interface KvRows {
  /** [layers, length, kvDim] */
  keys: FloatArray;
  values: FloatArray;
}

async function run(
  session: ModelSession,
  spec: ModelSpec,
  layers: number,
  tokens: readonly number[],
  hiddenIn?: FloatArray,
): Promise<KvRows> {
  const rows = tokens.length;
  const Float = spec.dtype === "float32" ? Float32Array : Float64Array;
  const mask = new Float(rows * rows);
  for (let r = 0; r < rows; r++) for (let c = r + 1; c < rows; c++) mask[r * rows + c] = -1e9;
  const positions = tokens.map((_, i) => i);
  if (session.window !== undefined) markOutsideWindow(mask, positions, positions, session.window);
  const emptyCache = new Float(layers * spec.kvHeads * spec.headDim);
  const result = await session.run({
    tokens: BigInt64Array.from(tokens, BigInt),
    positions: BigInt64Array.from(tokens, (_, i) => BigInt(i)),
    hiddenIn,
    kCache: emptyCache,
    vCache: emptyCache,
    cacheDims: [layers, 1, spec.kvHeads * spec.headDim],
    ctxSlots: new BigInt64Array(0),
    mask,
    ...recurrentRowFeeds(session, causalParents(rows)),
  });
  return { keys: result.kNew, values: result.vNew };
}

/** The target's K/V for positions [0, length) of `tokens`. */
export function targetKv(
  session: ModelSession,
  spec: ModelSpec,
  tokens: readonly number[],
  length: number,
): Promise<KvRows> {
  return run(session, spec, spec.layers, tokens.slice(0, length));
}

/**
 * A draft's K/V for anchors [0, length): h_i (from the teacher-forced target) with x_{i+offset}, offset 1
 * for a chain/tree draft and k + 1 for multi-layer module k.
 */
export function draftKv(
  session: ModelSession,
  spec: ModelSpec,
  layers: number,
  target: TeacherForcedTarget,
  offset: number,
  length: number,
): Promise<KvRows> {
  const tokens = Array.from({ length }, (_, anchor) => target.tokens[anchor + offset]);
  return run(session, spec, layers, tokens, target.hidden.slice(0, length * spec.hidden));
}
