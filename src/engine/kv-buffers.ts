// K/V pool buffers recycled between runs. A pool holds [layers, slots, kvDim] keys and values (up to
// megabytes each) and a generated case runs the engine three or four times (the case, its baseline, its
// twins): allocating them afresh for every run cost more than many of the runs' forwards, and the external
// memory churn drove the garbage collector. A released buffer is zeroed where it was written and reused,
// so every pool still starts all zeros, as a fresh allocation would.
import type { KvArray, KvDtype } from "./kv-pool.ts";

/** Spare buffers per dtype and length; a few per shape cover a case's runs. */
const spares = new Map<string, KvArray[]>();
const MAX_SPARES_PER_SHAPE = 8;

/** A zeroed buffer of this dtype and length, recycled when one is spare. */
export function takeZeroedBuffer(dtype: KvDtype, length: number): KvArray {
  const spare = spares.get(`${dtype}:${length}`)?.pop();
  if (spare) return spare;
  return dtype === "float32" ? new Float32Array(length) : new Float64Array(length);
}

/**
 * Gives a buffer back after zeroing [start, end) of each of its `dirty` ranges (everything else must
 * already be zero). The caller must not touch it afterwards.
 */
export function giveBackBuffer(buffer: KvArray, dtype: KvDtype, dirty: readonly (readonly [number, number])[]): void {
  for (const [start, end] of dirty) buffer.fill(0, start, end);
  const key = `${dtype}:${buffer.length}`;
  let list = spares.get(key);
  if (!list) spares.set(key, (list = []));
  if (list.length < MAX_SPARES_PER_SHAPE) list.push(buffer);
}
