// The future-token ring of overlap scheduling (SGLang's FutureMap, vLLM's async output placeholders). Step
// t + 1 is planned before step t's results are known, so each request that produces inputs in step t (the
// next root token, the next draft root) gets a ring entry when step t is planned; step t + 1's plan holds
// the placeholder -(entry + 1) where a token is not yet known, and launch resolves it from the entry, which
// step t's forwards wrote. An entry stays pending from its allocation until launch consumes it (or its
// request leaves), and a correct ring never hands out a pending entry: it grows instead. The
// "future-ring-wrap" fault sizes the ring once, for the batch running when it was created, and wraps a
// counter over it without looking (sglang-jax issue 1487): a later producer then overwrites a pending entry.
import type { HiddenRows } from "./hidden-rows.ts";
import type { TopK } from "./topk.ts";

export interface FutureEntry {
  /** The request the entry was allocated for. */
  request: number;
  /** What the producing step writes: the next root token, the next draft root. */
  expects: { token: boolean; draft: boolean };
  /** Values as last written (a wrapped ring may hold another request's). */
  token?: number;
  draftRoot?: TopK;
  draftHidden?: HiddenRows;
  /** Who wrote each value last. */
  tokenWriter?: number;
  draftWriter?: number;
  pending: boolean;
}

/** The placeholder standing for an entry in a plan's token slot (negative, so it is never a real token). */
export function placeholderOf(entry: number): number {
  return -(entry + 1);
}

export class FutureRing {
  private readonly entries: FutureEntry[] = [];
  private counter = 0;
  private capacity: number;

  /** @param initialCapacity entries to start with (the fault keeps exactly these). */
  constructor(
    initialCapacity: number,
    private readonly wraps: boolean,
  ) {
    this.capacity = Math.max(1, initialCapacity);
  }

  get size(): number {
    return this.capacity;
  }

  /** Mutates: an entry for `request`'s outputs of the step being planned. */
  allocate(request: number, expects: { token: boolean; draft: boolean }): number {
    let index: number;
    if (this.wraps) {
      index = this.counter % this.capacity;
      this.counter += 1;
    } else {
      // The next entry not pending, in ring order; none free: the ring grows.
      let found = -1;
      for (let k = 0; k < this.capacity && found < 0; k++) {
        const candidate = (this.counter + k) % this.capacity;
        if (!this.entries[candidate]?.pending) found = candidate;
      }
      if (found < 0) {
        found = this.capacity;
        this.capacity += 1;
      }
      index = found;
      this.counter = index + 1;
    }
    // The values stay as they were (a real ring's memory is not cleared): a wrapped read finds the last writer's.
    const entry = this.entries[index];
    if (entry) Object.assign(entry, { request, expects, pending: true });
    else this.entries[index] = { request, expects, pending: true };
    return index;
  }

  /** Mutates: step t's forward writes a value into the entry (whoever holds it now). */
  writeToken(index: number, request: number, token: number): void {
    const entry = this.entries[index];
    if (!entry) return;
    entry.token = token;
    entry.tokenWriter = request;
  }

  writeDraft(index: number, request: number, draftRoot: TopK, draftHidden: HiddenRows): void {
    const entry = this.entries[index];
    if (!entry) return;
    entry.draftRoot = draftRoot;
    entry.draftHidden = draftHidden;
    entry.draftWriter = request;
  }

  /** The entry as launch finds it. Pure. */
  read(index: number): FutureEntry | undefined {
    return this.entries[index];
  }

  /** Mutates: launch consumed the entry, or its request left (finished, aborted, retracted). */
  release(index: number | undefined): void {
    if (index === undefined) return;
    const entry = this.entries[index];
    if (entry) entry.pending = false;
  }
}
