// The K/V rows a forward attends, gathered out of the pool on the host, so that only they cross to the device
// (issue 23, item 5). A graph takes k_cache / v_cache [layers, S, kvDim] and ctx_slots [C] and gathers the
// context inside. Fed the whole pool, every forward on a GPU EP copied the whole pool host to device
// (onnxruntime-node has no device-resident inputs for CUDA, and a CPU tensor fed to a GPU session is copied in
// full on every run): a forward's cost grew with the pool, not with its context, and a one-row draft forward
// cost about what a verify forward did. Fed [layers, C, kvDim] (the context rows in column order) with
// ctx_slots 0..C-1 instead, the graph's Gather reads the same values into the same [layers, C, kvDim] tensor,
// so attention computes on identical values in identical shapes: outputs are bit-identical, the graphs (and
// their digests) are unchanged, and the copy is C rows, not the pool. The CPU EP reads the pool in place, so it
// keeps the pool feed (ModelSession.gathersContext).
//
// The gathered rows live in buffers the session keeps and reuses (grown, never shrunk): a forward's tensors are
// consumed by the synchronous native run before the next forward gathers, and allocating a few megabytes per
// forward drove the garbage collector (as the pools' own buffers did: engine/kv-buffers.ts).
import type { FloatArray } from "./ort.ts";

/** The context as the graph is fed it: [layers, max(C, 1), kvDim] keys and values, and ctx_slots 0..C-1. */
export interface GatheredContext {
  keys: FloatArray;
  values: FloatArray;
  dims: readonly [number, number, number];
  slots: BigInt64Array;
}

/** A ctx_slots entry outside the pool: the graph's Gather would have failed on it too. */
export class ContextSlotError extends Error {
  constructor(
    readonly column: number,
    readonly slot: bigint,
    readonly numSlots: number,
  ) {
    super(`ctx_slots[${column}] is ${slot}, outside the pool's ${numSlots} slots`);
    this.name = "ContextSlotError";
  }
}

export class ContextGather {
  private keys: FloatArray | undefined;
  private values: FloatArray | undefined;
  private identity = new BigInt64Array(0);

  /**
   * Gathers pool rows `ctxSlots` of [layers, numSlots, kvDim] `poolKeys` / `poolValues`. The result views this
   * object's buffers: valid until its next gather.
   */
  gather(
    poolKeys: FloatArray,
    poolValues: FloatArray,
    poolDims: readonly [number, number, number],
    ctxSlots: BigInt64Array,
  ): GatheredContext {
    const [layers, numSlots, kvDim] = poolDims;
    const numCtx = ctxSlots.length;
    // At least one row: a forward without context (a first prefill) keeps a non-empty k_cache, as the pool was.
    const rowsFed = Math.max(numCtx, 1);
    const length = layers * rowsFed * kvDim;
    const keys = (this.keys = this.fit(this.keys, poolKeys, length));
    const values = (this.values = this.fit(this.values, poolValues, length));
    // Runs of consecutive slots (a request's persisted positions usually are: pages are handed out in order)
    // are copied with one set() per layer.
    for (let column = 0; column < numCtx;) {
      const first = checkedSlot(ctxSlots, column, numSlots);
      let runLength = 1;
      while (column + runLength < numCtx && checkedSlot(ctxSlots, column + runLength, numSlots) === first + runLength)
        runLength++;
      for (let layer = 0; layer < layers; layer++) {
        const from = (layer * numSlots + first) * kvDim;
        const to = (layer * rowsFed + column) * kvDim;
        keys.set(poolKeys.subarray(from, from + runLength * kvDim), to);
        values.set(poolValues.subarray(from, from + runLength * kvDim), to);
      }
      column += runLength;
    }
    if (this.identity.length < numCtx) {
      this.identity = new BigInt64Array(Math.max(numCtx, 2 * this.identity.length));
      for (let column = 0; column < this.identity.length; column++) this.identity[column] = BigInt(column);
    }
    return {
      keys: keys.subarray(0, length),
      values: values.subarray(0, length),
      dims: [layers, rowsFed, kvDim],
      slots: this.identity.subarray(0, numCtx),
    };
  }

  /** `buffer` if it is of `like`'s type and holds `length`; otherwise a new one, with room to grow. */
  private fit(buffer: FloatArray | undefined, like: FloatArray, length: number): FloatArray {
    if (buffer && buffer.constructor === like.constructor && buffer.length >= length) return buffer;
    const Float = like.constructor as { new (length: number): FloatArray };
    return new Float(Math.max(length, 2 * (buffer?.length ?? 0)));
  }
}

function checkedSlot(ctxSlots: BigInt64Array, column: number, numSlots: number): number {
  const slot = ctxSlots[column];
  if (slot < 0n || slot >= BigInt(numSlots)) throw new ContextSlotError(column, slot, numSlots);
  return Number(slot);
}
