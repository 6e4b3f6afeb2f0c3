// A memo of forwards for the runs of one generated case (its run, its target-only baseline, its twins):
// a forward whose inputs are exactly those of an earlier forward of the same session gets that
// forward's outputs instead of running again. About a quarter of a case's forwards repeat exactly: the
// eager twin of a graph-replay run repeats every forward but the replayed draft decodes, a baseline
// repeats the prefill of the run, a case that is already canonical repeats itself.
//
// It is a cache of a pure function, not a shortcut: a session's outputs depend only on its inputs, and
// repeated runs on the same inputs are bitwise identical (ECOSYSTEM.md, CPU). The key is every input the
// graph reads: tokens, positions, hidden rows, the mask, and the K/V rows it gathers. Those rows are named
// by content ids the pool keeps per slot (the forward and row that wrote the slot, or zero for a slot
// never written), so an equal id means equal bytes. A hit compares the inputs exactly, not by hash, and
// returns copies of the outputs. Everything around the forward (slots, masks, K/V writes, the trace) still
// happens in every run; only ONNX Runtime's arithmetic on identical inputs is not repeated.
import type { ForwardFeeds, ForwardResult, ModelSession } from "../runtime/ort.ts";
import { freshContentBlock } from "./kv-pool.ts";

interface Entry {
  inputs: Int32Array[];
  result: ForwardResult;
  contentBase: number;
}

function words(array: ArrayBufferView): Int32Array {
  return new Int32Array(array.buffer, array.byteOffset, array.byteLength >> 2);
}

function hashInto(hash: [number, number], data: Int32Array): void {
  let [a, b] = hash;
  for (let i = 0; i < data.length; i++) {
    a = Math.imul(a ^ data[i], 0x01000193);
    b = Math.imul(b ^ data[i], 0x5bd1e995) ^ (b >>> 13);
  }
  hash[0] = Math.imul(a ^ data.length, 0x01000193);
  hash[1] = b ^ data.length;
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
    const inputs = [feeds.tokens, feeds.positions, feeds.mask, ctxContent, feeds.hiddenIn ?? new Int32Array(0)].map(
      (array) => words(array),
    );
    inputs.push(Int32Array.of(feeds.withLogits ? 1 : 0));
    const hash: [number, number] = [0x811c9dc5, 0x12345678];
    for (const input of inputs) hashInto(hash, input);
    const key = `${hash[0]}:${hash[1]}`;
    let bySession = this.entries.get(session);
    if (!bySession) this.entries.set(session, (bySession = new Map()));
    const candidates = bySession.get(key) ?? [];
    const hit = candidates.find((entry) => entry.inputs.every((input, i) => sameWords(input, inputs[i])));
    if (hit) {
      this.hits += 1;
      return { result: copyResult(hit.result), contentBase: hit.contentBase };
    }
    this.misses += 1;
    const result = await session.run(feeds);
    const entry = { inputs: inputs.map((input) => input.slice()), result: copyResult(result), contentBase: 0 };
    entry.contentBase = freshContentBlock();
    bySession.set(key, [...candidates, entry]);
    return { result, contentBase: entry.contentBase };
  }
}
