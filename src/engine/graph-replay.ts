// Graph replay for draft decode, as CUDA graphs do it: static input buffers captured once per batch
// shape (rows, context bucket) and replayed by copying the inputs in. Capture mutates the real batch's
// positions in place (as multi-step draft capture does) and must restore them afterwards: the
// "positions-not-restored-after-capture" fault skips the restore (sglang PR 25015's other half).
import type { FloatArray, ForwardFeeds, ModelSession } from "../runtime/ort.ts";
import type { Faults } from "../case/faults.ts";
import { MASKED } from "./forward.ts";
import type { ReplayOutput } from "./padded-replay.ts";

/** Context columns are padded up to a multiple of this, so shapes repeat and graphs are replayed. */
export const CONTEXT_BUCKET = 16;

interface CapturedGraph {
  tokens: BigInt64Array;
  positions: BigInt64Array;
  hiddenIn: FloatArray;
  ctxSlots: BigInt64Array;
  mask: FloatArray;
}

export interface ReplayStats {
  captures: number;
  replays: number;
}

export class GraphReplay {
  private readonly graphs = new Map<string, CapturedGraph>();
  readonly stats: ReplayStats = { captures: 0, replays: 0 };

  constructor(
    private readonly session: ModelSession,
    private readonly faults: Faults,
    private readonly hiddenSize: number,
  ) {}

  /** Mutates the captured buffers (and, during a capture, the caller's positions, restored after). */
  async run(feeds: ForwardFeeds): Promise<ReplayOutput> {
    const rows = feeds.tokens.length;
    const bucket = Math.max(CONTEXT_BUCKET, Math.ceil(feeds.ctxSlots.length / CONTEXT_BUCKET) * CONTEXT_BUCKET);
    const key = `${rows}x${bucket}`;
    let graph = this.graphs.get(key);
    if (!graph) {
      graph = this.allocate(rows, bucket, feeds.mask);
      this.graphs.set(key, graph);
      this.capture(graph, feeds);
    }
    this.copyIn(graph, feeds);
    this.stats.replays += 1;
    const result = await this.session.run({
      ...feeds,
      tokens: graph.tokens,
      positions: graph.positions,
      hiddenIn: graph.hiddenIn,
      ctxSlots: graph.ctxSlots,
      mask: graph.mask,
    });
    return { result, paddedRows: 0 };
  }

  private allocate(rows: number, bucket: number, like: FloatArray): CapturedGraph {
    const Float = like.constructor as { new (length: number): FloatArray };
    return {
      tokens: new BigInt64Array(rows),
      positions: new BigInt64Array(rows),
      hiddenIn: new Float(rows * this.hiddenSize),
      ctxSlots: new BigInt64Array(bucket),
      mask: new Float(rows * (bucket + rows)),
    };
  }

  /**
   * Capture on the static buffers. Multi-step draft capture lays the batch out for the next step by
   * advancing positions in place; they must be put back before the real forward reads them. The warm-up
   * forward a real capture records is not run: nothing reads its outputs and it writes no KV, so only the
   * in-place layout is observable (and it is what the fault leaves behind).
   */
  private capture(graph: CapturedGraph, feeds: ForwardFeeds): void {
    this.stats.captures += 1;
    for (let i = 0; i < feeds.positions.length; i++) feeds.positions[i] += 1n;
    this.copyIn(graph, feeds);
    if (!this.faults.has("positions-not-restored-after-capture")) {
      for (let i = 0; i < feeds.positions.length; i++) feeds.positions[i] -= 1n;
    }
  }

  /** Copies the batch into the static buffers; padded context columns point at slot 0 and are masked. */
  private copyIn(graph: CapturedGraph, feeds: ForwardFeeds): void {
    graph.tokens.set(feeds.tokens);
    graph.positions.set(feeds.positions);
    if (feeds.hiddenIn) graph.hiddenIn.set(feeds.hiddenIn);
    copyContextIn(graph, feeds, feeds.tokens.length);
  }
}

/**
 * Lays a batch's context slots and mask out in a captured graph's static buffers: the context padded to
 * `buffers.ctxSlots.length` columns, the batch to `batchColumns` (the batch's rows or more). The real rows keep
 * their mask values in the same columns; padded context columns point at slot 0; everything else is masked.
 * Mutates `buffers`.
 */
export function copyContextIn(
  buffers: { ctxSlots: BigInt64Array; mask: FloatArray },
  feeds: ForwardFeeds,
  batchColumns: number,
): void {
  const rows = feeds.tokens.length;
  const numCtx = feeds.ctxSlots.length;
  const ctxBucket = buffers.ctxSlots.length;
  buffers.ctxSlots.fill(0n);
  buffers.ctxSlots.set(feeds.ctxSlots);
  buffers.mask.fill(MASKED);
  const width = ctxBucket + batchColumns;
  const sourceWidth = numCtx + rows;
  for (let r = 0; r < rows; r++) {
    buffers.mask.set(feeds.mask.subarray(r * sourceWidth, r * sourceWidth + numCtx), r * width);
    buffers.mask.set(feeds.mask.subarray(r * sourceWidth + numCtx, (r + 1) * sourceWidth), r * width + ctxBucket);
  }
}
