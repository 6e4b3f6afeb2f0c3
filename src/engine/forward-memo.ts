// A memo of forwards for the runs of one generated case (its run, its target-only baseline, its twins):
// a forward whose inputs are exactly those of an earlier forward of the same session gets that
// forward's outputs instead of running again. About a quarter of a case's forwards repeat exactly: the
// eager twin of a graph-replay run repeats every forward but the replayed draft decodes, a baseline
// repeats the prefill of the run, a case that is already canonical repeats itself.
//
// It is a cache of a pure function, not a shortcut: a session's outputs depend only on its inputs, and
// repeated runs on the same inputs are bitwise identical (ECOSYSTEM.md, CPU). The key is every input the
// graph reads: tokens, positions, hidden rows (and EAGLE-3 auxiliary rows), the mask, and the K/V rows it gathers. Those rows are named
// by content ids the pool keeps per slot (the forward and row that wrote the slot, or zero for a slot
// never written), so an equal id means equal bytes. A hit compares the inputs exactly, not by hash, and
// returns copies of the outputs. Everything around the forward (slots, masks, K/V writes, the trace) still
// happens in every run; only ONNX Runtime's arithmetic on identical inputs is not repeated.
import type { ForwardFeeds, ForwardResult, ModelSession } from "../runtime/ort.ts";
import { freshContentBlock } from "./kv-pool.ts";

interface Entry {
  /** Every input, as 32-bit words, end to end (with their lengths, so no two layouts collide). */
  key: Int32Array;
  result: ForwardResult;
  contentBase: number;
}

/** The inputs as one run of 32-bit words: each array's length, then its bytes. */
function keyOf(arrays: readonly ArrayBufferView[]): Int32Array {
  let total = 0;
  for (const array of arrays) total += 1 + (array.byteLength >> 2);
  const key = new Int32Array(total);
  let offset = 0;
  for (const array of arrays) {
    const words = array.byteLength >> 2;
    key[offset++] = words;
    key.set(new Int32Array(array.buffer, array.byteOffset, words), offset);
    offset += words;
  }
  return key;
}

function hashOf(key: Int32Array): string {
  let a = 0x811c9dc5;
  let b = 0x12345678;
  for (let i = 0; i < key.length; i++) {
    a = Math.imul(a ^ key[i], 0x01000193);
    b = Math.imul(b ^ key[i], 0x5bd1e995) ^ (b >>> 13);
  }
  return `${a}:${b}`;
}

function sameWords(left: Int32Array, right: Int32Array): boolean {
  if (left.length !== right.length) return false;
  for (let i = 0; i < left.length; i++) if (left[i] !== right[i]) return false;
  return true;
}

function copyResult(result: ForwardResult): ForwardResult {
  return {
    logits: result.logits?.slice(),
    topValues: result.topValues.slice(),
    topIndices: result.topIndices.slice(),
    topK: result.topK,
    logNormalizer: result.logNormalizer.slice(),
    hidden: result.hidden.slice(),
    kNew: result.kNew.slice(),
    vNew: result.vNew.slice(),
    ...(result.layerHidden ? { layerHidden: result.layerHidden.slice() } : {}),
  };
}

export class ForwardMemo {
  private readonly entries = new WeakMap<ModelSession, Map<string, Entry[]>>();
  hits = 0;
  misses = 0;

  /**
   * The forward's outputs (computed, or an exact earlier forward's) and the content base of its K/V
   * rows. `ctxContent` holds the content ids of the slots in feeds.ctxSlots, in order.
   */
  async run(
    session: ModelSession,
    feeds: ForwardFeeds,
    ctxContent: Float64Array,
  ): Promise<{ result: ForwardResult; contentBase: number }> {
    const key = keyOf([
      feeds.tokens,
      feeds.positions,
      feeds.mask,
      ctxContent,
      feeds.hiddenIn ?? new Float32Array(0),
      feeds.auxIn ?? new Float32Array(0),
      Int32Array.of(feeds.withLogits ? 1 : 0),
    ]);
    const hash = hashOf(key);
    let bySession = this.entries.get(session);
    if (!bySession) this.entries.set(session, (bySession = new Map()));
    const candidates = bySession.get(hash) ?? [];
    const hit = candidates.find((entry) => sameWords(entry.key, key));
    if (hit) {
      this.hits += 1;
      return { result: copyResult(hit.result), contentBase: hit.contentBase };
    }
    this.misses += 1;
    // Kept as is, not copied: the engine only reads a forward's outputs (hits get copies of them).
    const result = await session.run(feeds);
    const entry = { key, result, contentBase: freshContentBlock() };
    bySession.set(hash, [...candidates, entry]);
    return { result, contentBase: entry.contentBase };
  }
}
