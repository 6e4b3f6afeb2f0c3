// Padded graph replay, as SGLang's CUDA graph runner does it: graphs are captured per row bucket (1, 2, 4,
// 8 ...) and a batch of n rows runs on the smallest bucket >= n, its bucket - n padding rows filled with
// poison on every replay (garbage tokens, positions, hidden or auxiliary rows and context slots, drawn from a seeded
// PRNG). Padding rows attend only their own poison column and themselves; real rows never see them, so real
// rows must not change with the poison (the padding-poison invariance law). Batches above the largest
// bucket run eagerly (SGLang falls back when bs exceeds the largest captured batch).
//
// The static buffers follow the CUDA graph runner: the write-slot buffer (out_cache_loc) is one array sized
// for the largest bucket, shared by every graph of the session; padding entries are reset to "no write" on
// every replay. Two faults live here: "stale-padding-slot" skips that reset (padding rows write their poison
// K/V into slots an earlier, larger batch left there: sglang PR 22958), and "padded-seq-lens-sum" lays the
// padding rows' context entries out from the unpadded seq_lens_sum, over the tail of the real rows' entries
// (sglang PR 26880).
import {
  forwardResult,
  type FloatArray,
  type ForwardFeeds,
  type ForwardResult,
  type ModelSession,
} from "../runtime/ort.ts";
import type { Faults } from "../case/faults.ts";
import { CONTEXT_BUCKET, copyContextIn } from "./graph-replay.ts";
import type { KvPool } from "./kv-pool.ts";

export interface PaddedReplayOptions {
  buckets: readonly number[];
  poisonSeed: number;
  vocab: number;
  /** Positions the graph's RoPE table covers (poison positions stay below it). */
  maxPositions: number;
  hiddenSize: number;
}

export interface ReplayWrites {
  pool: KvPool;
  /** The real rows' write slots, in row order. */
  slots: readonly number[];
}

export interface ReplayOutput {
  result: ForwardResult;
  /** Padding rows the forward ran (0: exact shape or eager). */
  paddedRows: number;
}

interface PaddedGraph {
  tokens: BigInt64Array;
  positions: BigInt64Array;
  hiddenIn: FloatArray | undefined;
  /** EAGLE-3 draft extends: [bucket, auxWidth] auxiliary states. */
  auxIn: FloatArray | undefined;
  ctxSlots: BigInt64Array;
  mask: FloatArray;
}

/** mulberry32: a small seeded PRNG for the poison (deterministic per seed and replay). */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class PaddedReplay {
  private readonly graphs = new Map<string, PaddedGraph>();
  /** out_cache_loc: one buffer for every graph of the session (entries past a batch's rows are padding). */
  private readonly writeSlots: Int32Array;
  private readonly random: () => number;
  readonly stats = { captures: 0, replays: 0, eager: 0, paddedRows: 0 };

  constructor(
    private readonly session: ModelSession,
    private readonly faults: Faults,
    private readonly options: PaddedReplayOptions,
  ) {
    this.writeSlots = new Int32Array(options.buckets[options.buckets.length - 1]).fill(-1);
    this.random = mulberry32(options.poisonSeed * 2654435761 + 97);
  }

  private bucketFor(rows: number): number | undefined {
    return this.options.buckets.find((bucket) => bucket >= rows);
  }

  /** Mutates the static buffers, the pool (the stale-padding-slot fault) and, during a capture, feeds.positions. */
  async run(feeds: ForwardFeeds, writes: ReplayWrites): Promise<ReplayOutput> {
    const rows = feeds.tokens.length;
    const bucket = this.bucketFor(rows);
    if (bucket === undefined) {
      this.stats.eager += 1;
      return { result: await this.session.run(feeds), paddedRows: 0 };
    }
    const padding = bucket - rows;
    const numCtx = feeds.ctxSlots.length;
    const ctxBucket = Math.max(CONTEXT_BUCKET, Math.ceil((numCtx + padding) / CONTEXT_BUCKET) * CONTEXT_BUCKET);
    const key = `${bucket}x${ctxBucket}`;
    let graph = this.graphs.get(key);
    if (!graph) {
      graph = this.allocate(bucket, ctxBucket, feeds);
      this.graphs.set(key, graph);
      this.capture(graph, feeds, bucket);
    }
    this.copyIn(graph, feeds, bucket);
    this.writeSlots.set(writes.slots);
    if (!this.faults.has("stale-padding-slot")) this.writeSlots.fill(-1, rows, bucket);
    this.stats.replays += 1;
    this.stats.paddedRows += padding;
    const padded = await this.session.run(this.graphFeeds(feeds, graph));
    // Padding rows write their K/V where out_cache_loc points: nowhere, unless an entry was left stale.
    for (let row = rows; row < bucket; row++) {
      const slot = this.writeSlots[row];
      if (slot >= 0 && slot < writes.pool.numSlots)
        writes.pool.writeRowUnchecked(slot, padded.kNew, padded.vNew, bucket, row);
    }
    return {
      result: sliceRows(padded, rows, bucket, this.options.hiddenSize, writes.pool.layers),
      paddedRows: padding,
    };
  }

  /** The forward's feeds with the graph's static buffers in place of the real rows' ones. */
  private graphFeeds(feeds: ForwardFeeds, graph: PaddedGraph): ForwardFeeds {
    return {
      ...feeds,
      tokens: graph.tokens,
      positions: graph.positions,
      ctxSlots: graph.ctxSlots,
      mask: graph.mask,
      hiddenIn: graph.hiddenIn ?? feeds.hiddenIn,
      auxIn: graph.auxIn ?? feeds.auxIn,
    };
  }

  private allocate(bucket: number, ctxBucket: number, like: ForwardFeeds): PaddedGraph {
    const Float = like.mask.constructor as { new (length: number): FloatArray };
    const rows = like.tokens.length;
    return {
      tokens: new BigInt64Array(bucket),
      positions: new BigInt64Array(bucket),
      hiddenIn: like.hiddenIn ? new Float(bucket * this.options.hiddenSize) : undefined,
      auxIn: like.auxIn && rows > 0 ? new Float(bucket * (like.auxIn.length / rows)) : undefined,
      ctxSlots: new BigInt64Array(ctxBucket),
      mask: new Float(bucket * (ctxBucket + bucket)),
    };
  }

  /**
   * Capture on the static buffers: it advances positions in place and must restore them. The warm-up forward
   * is not run (its outputs are never read and it writes no KV; graph-replay.ts says why).
   */
  private capture(graph: PaddedGraph, feeds: ForwardFeeds, bucket: number): void {
    this.stats.captures += 1;
    for (let i = 0; i < feeds.positions.length; i++) feeds.positions[i] += 1n;
    this.copyIn(graph, feeds, bucket);
    if (!this.faults.has("positions-not-restored-after-capture")) {
      for (let i = 0; i < feeds.positions.length; i++) feeds.positions[i] -= 1n;
    }
  }

  /**
   * Real rows first (their context columns, mask rows and batch columns as the eager forward has them), then
   * poison in every padding row: a garbage token, position and hidden row, and one garbage context slot
   * that only that row attends. Unused context columns point at slot 0 and are masked everywhere.
   */
  private copyIn(graph: PaddedGraph, feeds: ForwardFeeds, bucket: number): void {
    const rows = feeds.tokens.length;
    const padding = bucket - rows;
    const numCtx = feeds.ctxSlots.length;
    const ctxBucket = graph.ctxSlots.length;
    const hiddenSize = this.options.hiddenSize;
    const numSlots = feeds.cacheDims[1];
    graph.tokens.set(feeds.tokens);
    graph.positions.set(feeds.positions);
    if (graph.hiddenIn && feeds.hiddenIn) graph.hiddenIn.set(feeds.hiddenIn);
    if (graph.auxIn && feeds.auxIn) graph.auxIn.set(feeds.auxIn);
    const auxWidth = graph.auxIn ? graph.auxIn.length / bucket : 0;
    copyContextIn(graph, feeds, bucket);
    const width = ctxBucket + bucket;
    // Where the padding rows' context entries start: after the real entries (seq_lens_sum padded), or, with
    // the fault, at an offset computed from the unpadded sum, over the real rows' last entries.
    const paddingStart = this.faults.has("padded-seq-lens-sum") ? Math.max(0, numCtx - padding) : numCtx;
    for (let p = 0; p < padding; p++) {
      const row = rows + p;
      graph.tokens[row] = BigInt(Math.floor(this.random() * this.options.vocab));
      graph.positions[row] = BigInt(Math.floor(this.random() * this.options.maxPositions));
      if (graph.hiddenIn)
        for (let h = 0; h < hiddenSize; h++) graph.hiddenIn[row * hiddenSize + h] = (this.random() - 0.5) * 8;
      if (graph.auxIn) for (let a = 0; a < auxWidth; a++) graph.auxIn[row * auxWidth + a] = (this.random() - 0.5) * 8;
      const column = paddingStart + p;
      graph.ctxSlots[column] = BigInt(Math.floor(this.random() * numSlots));
      graph.mask[row * width + column] = 0;
      graph.mask[row * width + ctxBucket + row] = 0;
    }
  }
}

/** The first `rows` rows of a padded forward's outputs ([bucket, ...] -> [rows, ...]; K/V per layer). */
function sliceRows(
  result: ForwardResult,
  rows: number,
  bucket: number,
  hiddenSize: number,
  layers: number,
): ForwardResult {
  return forwardResult({
    logits: result.logits ? result.logits.subarray(0, (rows * result.logits.length) / bucket) : undefined,
    topValues: result.topValues.subarray(0, rows * result.topK),
    topIndices: result.topIndices.subarray(0, rows * result.topK),
    topK: result.topK,
    logNormalizer: result.logNormalizer.subarray(0, rows),
    hidden: result.hidden.subarray(0, rows * hiddenSize),
    kNew: firstRows(result.kNew, rows, bucket, layers),
    vNew: firstRows(result.vNew, rows, bucket, layers),
    // EAGLE-3 targets: [layers + 1, bucket, hidden] residual streams.
    layerHidden: result.layerHidden
      ? firstRows(result.layerHidden, rows, bucket, result.layerHidden.length / (bucket * hiddenSize))
      : undefined,
  });
}

/** [layers, bucket, kvDim] -> [layers, rows, kvDim] (a copy). */
function firstRows(values: FloatArray, rows: number, bucket: number, layers: number): FloatArray {
  const kvDim = values.length / (layers * bucket);
  const Float = values.constructor as { new (length: number): FloatArray };
  const out = new Float(layers * rows * kvDim);
  for (let layer = 0; layer < layers; layer++)
    out.set(values.subarray(layer * bucket * kvDim, (layer * bucket + rows) * kvDim), layer * rows * kvDim);
  return out;
}
