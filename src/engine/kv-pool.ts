/**
 * Paged token-to-KV pool for ONE model (target, draft, or draft module k), together with that
 * pool's req_to_token table (docs/design.md section 3, "Pools").
 *
 * Slots are grouped in pages of `pageSize` consecutive slots. A request's persisted position q
 * lives in the request's page number floor(q / pageSize) at offset q % pageSize, as in SGLang's
 * paged allocator. Temporary rows (draft decode, tree verify scratch) live in separate pages owned
 * by one request. Sizes are counted in slots everywhere, but allocation is page-granular: a partly
 * used page counts as used.
 *
 * Persisted pages are reference-counted: the prefix cache holds pages of cached prefixes, and a prefix
 * hit maps them into another request's table (same positions, same slots). A page is freed when its
 * last holder lets go. With `tracksReferences` on, every take and drop of a reference is reported
 * (onReference) so the trace can follow each slot's holders.
 */
import type { RecurrentStates } from "./recurrent-states.ts";
import { giveBackBuffer, takeZeroedBuffer } from "./kv-buffers.ts";
import { findIntegrityViolations } from "./kv-integrity.ts";
import type { IntegrityViolation } from "../trace/run-result.ts";

export type KvDtype = "float32" | "float64";

/** Rows a block of content ids covers: a forward's K/V row r has content id block base + r. */
export const ROWS_PER_CONTENT_BLOCK = 1 << 16;
let nextContentBlock = 1;

/** A block of content ids never handed out before in this process. */
export function freshContentBlock(): number {
  return nextContentBlock++ * ROWS_PER_CONTENT_BLOCK;
}
export type KvArray = Float32Array | Float64Array;

export interface KvPoolOptions {
  name: string;
  numSlots: number;
  pageSize: number;
  layers: number;
  kvDim: number;
  dtype: KvDtype;
}

/** Who holds a slot. Temporary slots have position -1 until setTemporaryPosition. */
export interface SlotOwner {
  request: number;
  position: number;
  temporary: boolean;
}

/** Thrown when an allocation needs more free pages than exist; the pool is left unchanged. */
export class KvPoolExhaustedError extends Error {
  /** @param requested slots the allocation needed (whole pages); @param free slots in free pages. */
  constructor(
    readonly pool: string,
    readonly requested: number,
    readonly free: number,
  ) {
    super(`KV pool "${pool}" exhausted: needs ${requested} slots, ${free} free`);
    this.name = "KvPoolExhaustedError";
  }
}

/** Page ownership as seen from the page (the reverse of the per-request page lists). */
export interface PageOwner {
  request: number;
  temporary: boolean;
}

/** One request's req_to_token table in this pool. */
export interface RequestTable {
  /** persistedPages[i] holds positions [i * pageSize, (i + 1) * pageSize). */
  persistedPages: number[];
  persistedLength: number;
  /** Pages reserved for this request's temporary rows, ascending. */
  temporaryPages: number[];
  temporarySlots: Set<number>;
}

/** The mutable state, exposed only so tests can corrupt it and prove checkIntegrity notices. */
export interface KvPoolInternals {
  /** Free pages sorted descending, so the lowest-numbered page pops off the end in O(1). */
  freePages: number[];
  /** The writer of each page (shared pages keep their first owner). */
  pageOwners: (PageOwner | undefined)[];
  slotOwners: (Readonly<SlotOwner> | undefined)[];
  tables: Map<number, RequestTable>;
  /** References per page: its tables plus the prefix cache (0: free). */
  pageRefs: number[];
  /** Pages the prefix cache holds references on, with how many (one per cache node mapping the page). */
  cachePages: Map<number, number>;
}

/** The prefix cache's holder id in reference reports. */
export const CACHE_HOLDER = -1;

/** A reference change, as onReference reports it. */
export interface ReferenceChange {
  holder: number;
  change: "acquire" | "drop" | "write" | "free";
  slots: readonly number[];
  reason?: "evict" | "flush";
}

export class KvPool {
  readonly name: string;
  readonly numSlots: number;
  readonly pageSize: number;
  readonly layers: number;
  readonly kvDim: number;
  readonly dtype: KvDtype;
  private readonly keyBuffer: KvArray;
  private readonly valueBuffer: KvArray;
  /**
   * What each slot's K/V bytes are: 0 never written, else the content id of the forward output row written
   * there (copied along by copySlot). Equal ids mean equal bytes: the forward memo keys on them.
   */
  private readonly contentIds: Float64Array;
  /** Slots [0, writtenSlots) may hold non-zero K/V (what release() zeroes); pages are taken lowest first. */
  private writtenSlots = 0;
  private released = false;

  private readonly numPages: number;
  private readonly state: KvPoolInternals;
  /** Hybrid models: the per-request recurrent states of this pool's model, freed with the request's slots. */
  recurrent: RecurrentStates | undefined;

  constructor(options: KvPoolOptions) {
    const { name, numSlots, pageSize, layers, kvDim, dtype } = options;
    const positiveInteger = (value: number, what: string): void => {
      if (!Number.isSafeInteger(value) || value < 1) {
        throw new Error(`KvPool "${name}": ${what} must be a positive integer, got ${value}`);
      }
    };
    positiveInteger(pageSize, "pageSize");
    positiveInteger(numSlots, "numSlots");
    positiveInteger(layers, "layers");
    positiveInteger(kvDim, "kvDim");
    if (numSlots % pageSize !== 0) {
      throw new Error(`KvPool "${name}": numSlots (${numSlots}) must be a multiple of pageSize (${pageSize})`);
    }
    if (dtype !== "float32" && dtype !== "float64") {
      throw new Error(`KvPool "${name}": dtype must be "float32" or "float64", got ${String(dtype)}`);
    }
    this.name = name;
    this.numSlots = numSlots;
    this.pageSize = pageSize;
    this.layers = layers;
    this.kvDim = kvDim;
    this.dtype = dtype;
    this.keyBuffer = takeZeroedBuffer(dtype, layers * numSlots * kvDim);
    this.valueBuffer = takeZeroedBuffer(dtype, layers * numSlots * kvDim);
    this.contentIds = new Float64Array(numSlots);
    this.numPages = numSlots / pageSize;
    this.state = {
      freePages: Array.from({ length: this.numPages }, (_, i) => this.numPages - 1 - i),
      pageOwners: new Array<PageOwner | undefined>(this.numPages).fill(undefined),
      slotOwners: new Array<SlotOwner | undefined>(numSlots).fill(undefined),
      tables: new Map(),
      pageRefs: new Array<number>(this.numPages).fill(0),
      cachePages: new Map(),
    };
  }

  /** [layers, numSlots, kvDim] row-major; handed to ONNX Runtime as-is, so never reallocated. */
  get keys(): KvArray {
    this.checkNotReleased();
    return this.keyBuffer;
  }

  get values(): KvArray {
    this.checkNotReleased();
    return this.valueBuffer;
  }

  /**
   * Hands the K/V buffers back for reuse by a later pool (zeroed where written) once the run is over.
   * The pool's keys and values are unusable afterwards. Mutates.
   */
  release(): void {
    if (this.released) return;
    this.released = true;
    const dirty: [number, number][] = [];
    for (let layer = 0; layer < this.layers; layer++) {
      const start = layer * this.numSlots * this.kvDim;
      dirty.push([start, start + this.writtenSlots * this.kvDim]);
    }
    giveBackBuffer(this.keyBuffer, this.dtype, dirty);
    giveBackBuffer(this.valueBuffer, this.dtype, dirty);
  }

  // --- queries (pure) ---

  /** Persisted slot for (request, position), or undefined. Pure. */
  slotOf(request: number, position: number): number | undefined {
    const table = this.state.tables.get(request);
    if (!table || !Number.isInteger(position) || position < 0 || position >= table.persistedLength) {
      return undefined;
    }
    return this.persistedSlot(table, position);
  }

  /**
   * Appends the persisted slots of positions [0, length) to `out`, straight from the page table (the hot
   * path of building a forward's context). Throws when a position has no slot. Pure (for the pool).
   */
  persistedSlotsInto(request: number, length: number, out: number[]): void {
    const table = this.state.tables.get(request);
    if (length > 0 && (!table || length > table.persistedLength)) {
      throw new Error(
        `KvPool "${this.name}": request ${request} has ${table?.persistedLength ?? 0} persisted positions, ${length} asked`,
      );
    }
    const pageSize = this.pageSize;
    for (let position = 0; position < length; position++) {
      const slot = table!.persistedPages[Math.floor(position / pageSize)] * pageSize + (position % pageSize);
      out.push(slot);
    }
  }

  /** The content ids of these slots' K/V, in order (see contentIds). Pure. */
  contentOf(slots: readonly number[]): Float64Array {
    return Float64Array.from(slots, (slot) => this.contentIds[slot]);
  }

  /** Number of persisted positions; they are always 0..length-1. Pure. */
  persistedLength(request: number): number {
    return this.state.tables.get(request)?.persistedLength ?? 0;
  }

  /** Owner of a slot, or undefined when the slot holds no row. Pure (the object is frozen). */
  ownerOf(slot: number): SlotOwner | undefined {
    return this.state.slotOwners[slot];
  }

  /** The request's temporary slots, ascending (a fresh array). Pure. */
  temporarySlots(request: number): readonly number[] {
    const table = this.state.tables.get(request);
    return table ? [...table.temporarySlots].sort((a, b) => a - b) : [];
  }

  /** Slots in free pages. Pure. */
  numFreeSlots(): number {
    return this.state.freePages.length * this.pageSize;
  }

  /** Slots in owned pages, including the unused tail of partly filled pages. Pure. */
  numUsedSlots(): number {
    return this.numSlots - this.numFreeSlots();
  }

  /** The page holding the request's persisted positions [index * pageSize, (index + 1) * pageSize). Pure. */
  persistedPage(request: number, index: number): number | undefined {
    return this.state.tables.get(request)?.persistedPages[index];
  }

  /** Whether the request's table maps `slot` to a persisted position (its own or a shared prefix's). Pure. */
  holdsPersisted(request: number, slot: number): boolean {
    const owner = this.state.slotOwners[slot];
    const table = this.state.tables.get(request);
    if (!owner || owner.temporary || !table || owner.position >= table.persistedLength) return false;
    return table.persistedPages[Math.floor(owner.position / this.pageSize)] === Math.floor(slot / this.pageSize);
  }

  /** References on a page (0: free). Pure. */
  referencesOf(page: number): number {
    return this.state.pageRefs[page] ?? 0;
  }

  /** Only the prefix cache holds the page (no request). Pure. */
  cacheOnly(page: number): boolean {
    const held = this.state.cachePages.get(page) ?? 0;
    return held > 0 && this.state.pageRefs[page] === held;
  }

  /** Pages only the prefix cache holds (evictable). Pure. */
  cacheOnlyPages(): number {
    let count = 0;
    for (const [page, held] of this.state.cachePages) if (this.state.pageRefs[page] === held) count += 1;
    return count;
  }

  /** Pages in the pool. Pure. */
  get pages(): number {
    return this.numPages;
  }

  /** Requests that own at least one page, ascending. Pure. */
  requests(): number[] {
    return [...this.state.tables.keys()].sort((a, b) => a - b);
  }

  /**
   * Recomputes ownership from the request tables and the free list and compares it with the
   * page and slot reverse maps. Returns [] when healthy. Pure.
   */
  checkIntegrity(): IntegrityViolation[] {
    return findIntegrityViolations(this.name, this.pageSize, this.numPages, this.state);
  }

  // --- mutations ---

  /**
   * Makes positions [old length, newLength) persisted, allocating pages as needed, and returns
   * their slots in position order. Atomic on exhaustion. Mutates.
   */
  extendPersisted(request: number, newLength: number): number[] {
    checkRequest(request);
    const oldLength = this.persistedLength(request);
    if (!Number.isSafeInteger(newLength) || newLength < oldLength) {
      throw new Error(`KvPool "${this.name}": extendPersisted(${request}, ${newLength}) below length ${oldLength}`);
    }
    if (newLength === oldLength) return [];
    const newPages = Math.ceil(newLength / this.pageSize) - Math.ceil(oldLength / this.pageSize);
    this.reservePages(newPages);
    const table = this.tableFor(request);
    for (let i = 0; i < newPages; i++) table.persistedPages.push(this.takePage(request, false));
    const slots: number[] = [];
    for (let position = oldLength; position < newLength; position++) {
      const slot = this.persistedSlot(table, position);
      this.state.slotOwners[slot] = Object.freeze({ request, position, temporary: false });
      slots.push(slot);
    }
    table.persistedLength = newLength;
    return slots;
  }

  /** Told the slots each free releases (owned before, free after): the trace records them. */
  onRelease: ((slots: readonly number[]) => void) | undefined;

  /** Reports reference changes (set when slots can be shared: the prefix cache is on). */
  onReference: ((change: ReferenceChange) => void) | undefined;

  /**
   * Called with the pages an allocation needs when fewer are free (the prefix cache evicts until they are);
   * then the allocation retries.
   */
  onPressure: ((pagesWanted: number) => void) | undefined;

  /**
   * Drops positions >= newLength and lets go of pages that become empty: a page the request shared with
   * other holders (the prefix cache, other requests) loses one reference, the others are freed. Mutates.
   */
  truncatePersisted(request: number, newLength: number): void {
    checkRequest(request);
    const table = this.state.tables.get(request);
    const oldLength = table?.persistedLength ?? 0;
    if (!Number.isSafeInteger(newLength) || newLength < 0 || newLength > oldLength) {
      throw new Error(`KvPool "${this.name}": truncatePersisted(${request}, ${newLength}) outside 0..${oldLength}`);
    }
    if (!table || newLength === oldLength) return;
    const keptPages = Math.ceil(newLength / this.pageSize);
    const partial: number[] = [];
    // Positions past the new length inside the last kept page (never a shared page: prefixes are whole pages).
    for (let position = newLength; position < Math.min(oldLength, keptPages * this.pageSize); position++) {
      const slot = this.persistedSlot(table, position);
      this.state.slotOwners[slot] = undefined;
      partial.push(slot);
    }
    table.persistedLength = newLength;
    const held: number[] = [];
    const freed: number[] = [];
    table.persistedPages.splice(keptPages).forEach((page, i) => {
      const first = (keptPages + i) * this.pageSize;
      for (let position = first; position < Math.min(oldLength, first + this.pageSize); position++)
        held.push(page * this.pageSize + (position % this.pageSize));
      if (this.dropReference(page)) freed.push(...this.clearPage(page));
    });
    this.onReference?.({ holder: request, change: "drop", slots: [...partial, ...held] });
    this.onReference?.({ holder: request, change: "free", slots: [...partial, ...freed] });
    this.onRelease?.([...partial, ...freed]);
    this.dropIfEmpty(request, table);
  }

  /**
   * Allocates `count` temporary slots (not position-mapped): first the free slots of the
   * request's partly used temporary pages, then the lowest free pages. Returns them in that
   * order. Atomic on exhaustion. Mutates.
   */
  allocateTemporary(request: number, count: number): number[] {
    checkRequest(request);
    if (!Number.isSafeInteger(count) || count < 0) {
      throw new Error(`KvPool "${this.name}": allocateTemporary count must be a non-negative integer, got ${count}`);
    }
    if (count === 0) return [];
    const existing = this.state.tables.get(request);
    const spare = existing ? existing.temporaryPages.length * this.pageSize - existing.temporarySlots.size : 0;
    const newPages = Math.max(0, Math.ceil((count - spare) / this.pageSize));
    this.reservePages(newPages);
    const table = this.tableFor(request);
    const pagesInFillOrder = [...table.temporaryPages];
    for (let i = 0; i < newPages; i++) {
      const page = this.takePage(request, true);
      pagesInFillOrder.push(page);
      insertAscending(table.temporaryPages, page);
    }
    const slots: number[] = [];
    for (const page of pagesInFillOrder) {
      for (let slot = page * this.pageSize; slot < (page + 1) * this.pageSize && slots.length < count; slot++) {
        if (this.state.slotOwners[slot] !== undefined) continue;
        this.state.slotOwners[slot] = Object.freeze({ request, position: -1, temporary: true });
        table.temporarySlots.add(slot);
        slots.push(slot);
      }
    }
    return slots;
  }

  /** Records the position a temporary row was written at, for traces and integrity. Mutates. */
  setTemporaryPosition(slot: number, position: number): void {
    const owner = this.state.slotOwners[slot];
    if (!owner?.temporary) throw new Error(`KvPool "${this.name}": slot ${slot} is not a temporary slot`);
    if (!Number.isSafeInteger(position) || position < 0) {
      throw new Error(`KvPool "${this.name}": temporary position must be a non-negative integer, got ${position}`);
    }
    this.state.slotOwners[slot] = Object.freeze({ ...owner, position });
  }

  /**
   * Frees the given temporary slots (default: all of the request's); a temporary page returns to
   * the free list once all its slots are free. Throws, changing nothing, if any slot is not a
   * temporary slot of the request. Mutates.
   */
  freeTemporary(request: number, slots?: readonly number[]): void {
    const table = this.state.tables.get(request);
    if (!table) {
      if (slots && slots.length > 0) {
        throw new Error(`KvPool "${this.name}": request ${request} owns no temporary slots`);
      }
      return;
    }
    const toFree = slots ?? [...table.temporarySlots];
    if (new Set(toFree).size !== toFree.length) {
      throw new Error(`KvPool "${this.name}": duplicate slots in freeTemporary`);
    }
    const stranger = toFree.find((slot) => !table.temporarySlots.has(slot));
    if (stranger !== undefined) {
      throw new Error(`KvPool "${this.name}": slot ${stranger} is not a temporary slot of request ${request}`);
    }
    for (const slot of toFree) {
      table.temporarySlots.delete(slot);
      this.state.slotOwners[slot] = undefined;
    }
    this.recurrent?.freeTemporary(toFree);
    if (toFree.length > 0) {
      this.onReference?.({ holder: request, change: "drop", slots: toFree });
      this.onReference?.({ holder: request, change: "free", slots: toFree });
      this.onRelease?.(toFree);
    }
    table.temporaryPages = table.temporaryPages.filter((page) => {
      const start = page * this.pageSize;
      for (let slot = start; slot < start + this.pageSize; slot++) {
        if (table.temporarySlots.has(slot)) return true;
      }
      this.state.pageRefs[page] = 0;
      this.releasePage(page);
      return false;
    });
    this.dropIfEmpty(request, table);
  }

  /** Frees everything the request owns, persisted and temporary; unknown request: no-op. Mutates. */
  freeRequest(request: number): void {
    this.recurrent?.free(request);
    if (!this.state.tables.has(request)) return;
    this.freeTemporary(request);
    this.truncatePersisted(request, 0);
  }

  /**
   * A prefix hit: the request (holding nothing persisted yet) maps positions [0, length) onto `pages`, which
   * other holders wrote, taking one reference on each. `length` is a multiple of the page size, except
   * under the prefix-draft-kv-unaligned fault. Mutates.
   */
  sharePersisted(request: number, pages: readonly number[], length: number): void {
    checkRequest(request);
    const table = this.tableFor(request);
    if (table.persistedLength !== 0 || table.persistedPages.length !== 0)
      throw new Error(`KvPool "${this.name}": request ${request} already holds persisted KV`);
    if (pages.length !== Math.ceil(length / this.pageSize))
      throw new Error(`KvPool "${this.name}": ${pages.length} pages for a shared length of ${length}`);
    const slots: number[] = [];
    pages.forEach((page, i) => {
      if (this.state.pageRefs[page] < 1) throw new Error(`KvPool "${this.name}": shared page ${page} is free`);
      this.state.pageRefs[page] += 1;
      table.persistedPages.push(page);
      for (let position = i * this.pageSize; position < Math.min(length, (i + 1) * this.pageSize); position++)
        slots.push(page * this.pageSize + (position % this.pageSize));
    });
    table.persistedLength = length;
    this.onReference?.({ holder: request, change: "acquire", slots });
  }

  /** The prefix cache takes a reference on a page some request wrote (a persisted page). Mutates. */
  cacheAcquire(page: number): void {
    if (this.state.pageRefs[page] < 1)
      throw new Error(`KvPool "${this.name}": the cache cannot take free page ${page}`);
    this.state.pageRefs[page] += 1;
    this.state.cachePages.set(page, (this.state.cachePages.get(page) ?? 0) + 1);
    this.onReference?.({ holder: CACHE_HOLDER, change: "acquire", slots: this.pageSlots(page) });
  }

  /** The prefix cache lets go of a page (eviction, or the flush at the end); freed if it was the last holder. Mutates. */
  cacheDrop(page: number, reason: "evict" | "flush"): void {
    const held = this.state.cachePages.get(page) ?? 0;
    if (held === 0) throw new Error(`KvPool "${this.name}": the cache holds no page ${page}`);
    if (held === 1) this.state.cachePages.delete(page);
    else this.state.cachePages.set(page, held - 1);
    const slots = this.pageSlots(page);
    this.onReference?.({ holder: CACHE_HOLDER, change: "drop", slots, reason });
    if (!this.dropReference(page)) return;
    const freed = this.clearPage(page);
    this.onReference?.({ holder: CACHE_HOLDER, change: "free", slots: freed, reason });
    this.onRelease?.(freed);
  }

  /**
   * Writes row (rowOffset + i) of newKeys/newValues ([layers, numRows, kvDim]) to slots[i] in
   * every layer. Slots must be owned (writing a free slot is an engine bug). The rows' content ids are
   * contentBase + row (the forward's, when the forward memo names it; else a fresh block). Mutates.
   */
  writeRows(
    slots: readonly number[],
    newKeys: KvArray,
    newValues: KvArray,
    numRows: number,
    rowOffset = 0,
    contentBase = freshContentBlock(),
  ): void {
    const { name, layers, kvDim, numSlots } = this;
    const expected = layers * numRows * kvDim;
    for (const [label, source] of [
      ["keys", newKeys],
      ["values", newValues],
    ] as const) {
      // A silent float64 -> float32 downcast would hide a dtype mismatch between model and pool.
      if (source.constructor !== this.keyBuffer.constructor) {
        throw new Error(`KvPool "${name}": new ${label} dtype differs from pool dtype ${this.dtype}`);
      }
      if (source.length !== expected) {
        throw new Error(`KvPool "${name}": new ${label} has length ${source.length}, expected ${expected}`);
      }
    }
    if (!Number.isSafeInteger(rowOffset) || rowOffset < 0 || rowOffset + slots.length > numRows) {
      throw new Error(`KvPool "${name}": rows [${rowOffset}, ${rowOffset + slots.length}) exceed numRows ${numRows}`);
    }
    for (const slot of slots) this.checkOwnedSlot(slot);
    this.checkNotReleased();
    slots.forEach((slot, i) => {
      this.writtenSlots = Math.max(this.writtenSlots, slot + 1);
      this.contentIds[slot] = contentBase + rowOffset + i;
    });
    // Element by element: a row is a few dozen values, and a subarray view per row and layer was most of
    // this method's allocation (the dtypes are equal, checked above, so the copy is exact).
    const keyBuffer = this.keyBuffer;
    const valueBuffer = this.valueBuffer;
    for (let layer = 0; layer < layers; layer++) {
      for (let i = 0; i < slots.length; i++) {
        const from = (layer * numRows + rowOffset + i) * kvDim;
        const to = (layer * numSlots + slots[i]) * kvDim;
        for (let d = 0; d < kvDim; d++) {
          keyBuffer[to + d] = newKeys[from + d];
          valueBuffer[to + d] = newValues[from + d];
        }
      }
    }
  }

  /**
   * Zeroes these slots' K/V in every layer without any ownership check: what a never-written buffer holds
   * (the prefix-hit-uninitialized-draft-kv fault's cached draft KV). Mutates.
   */
  forgetContentsUnchecked(slots: readonly number[]): void {
    this.checkNotReleased();
    for (const slot of slots) {
      this.contentIds[slot] = freshContentBlock();
      for (let layer = 0; layer < this.layers; layer++) {
        const at = (layer * this.numSlots + slot) * this.kvDim;
        this.keyBuffer.fill(0, at, at + this.kvDim);
        this.valueBuffer.fill(0, at, at + this.kvDim);
      }
    }
  }

  /**
   * Writes row `row` of newKeys/newValues ([layers, numRows, kvDim]) to `slot` in every layer without any
   * ownership check: what a stray device-side write does (padded graph replay's stale-padding-slot fault).
   * Mutates.
   */
  writeRowUnchecked(slot: number, newKeys: KvArray, newValues: KvArray, numRows: number, row: number): void {
    const { layers, kvDim, numSlots } = this;
    this.checkNotReleased();
    // New bytes, new content: a forward memo must not take the slot for what it held before.
    this.writtenSlots = Math.max(this.writtenSlots, slot + 1);
    this.contentIds[slot] = freshContentBlock();
    for (let layer = 0; layer < layers; layer++) {
      const from = (layer * numRows + row) * kvDim;
      const to = (layer * numSlots + slot) * kvDim;
      this.keyBuffer.set(newKeys.subarray(from, from + kvDim), to);
      this.valueBuffer.set(newValues.subarray(from, from + kvDim), to);
    }
  }

  /** Copies one slot's keys and values in every layer; both slots must be owned. Mutates. */
  copySlot(fromSlot: number, toSlot: number): void {
    this.checkOwnedSlot(fromSlot);
    this.checkOwnedSlot(toSlot);
    this.checkNotReleased();
    this.writtenSlots = Math.max(this.writtenSlots, toSlot + 1);
    this.contentIds[toSlot] = this.contentIds[fromSlot];
    for (let layer = 0; layer < this.layers; layer++) {
      const from = (layer * this.numSlots + fromSlot) * this.kvDim;
      const to = (layer * this.numSlots + toSlot) * this.kvDim;
      this.keyBuffer.copyWithin(to, from, from + this.kvDim);
      this.valueBuffer.copyWithin(to, from, from + this.kvDim);
    }
  }

  /** TEST ONLY: the live mutable state, so tests can corrupt it. Never call from engine code. */
  internalsForTest(): KvPoolInternals {
    return this.state;
  }

  // --- private helpers ---

  private persistedSlot(table: RequestTable, position: number): number {
    return table.persistedPages[Math.floor(position / this.pageSize)] * this.pageSize + (position % this.pageSize);
  }

  private tableFor(request: number): RequestTable {
    let table = this.state.tables.get(request);
    if (!table) {
      table = { persistedPages: [], persistedLength: 0, temporaryPages: [], temporarySlots: new Set() };
      this.state.tables.set(request, table);
    }
    return table;
  }

  /** Checks before any change so a failed allocation leaves the pool untouched (the cache may evict first). */
  private reservePages(count: number): void {
    if (count > this.state.freePages.length && this.onPressure) this.onPressure(count);
    if (count > this.state.freePages.length) {
      throw new KvPoolExhaustedError(this.name, count * this.pageSize, this.numFreeSlots());
    }
  }

  private takePage(request: number, temporary: boolean): number {
    const page = this.state.freePages.pop()!;
    this.state.pageOwners[page] = { request, temporary };
    this.state.pageRefs[page] = 1;
    return page;
  }

  /** One holder lets go; true when that was the last reference (the page must then be cleared and freed). */
  private dropReference(page: number): boolean {
    this.state.pageRefs[page] -= 1;
    return this.state.pageRefs[page] <= 0;
  }

  /** Frees a page nobody holds: its slots lose their owners. Returns the slots that had one. */
  private clearPage(page: number): number[] {
    const released: number[] = [];
    for (const slot of this.pageSlots(page)) {
      if (this.state.slotOwners[slot] === undefined) continue;
      this.state.slotOwners[slot] = undefined;
      released.push(slot);
    }
    this.state.pageRefs[page] = 0;
    this.releasePage(page);
    return released;
  }

  private pageSlots(page: number): number[] {
    return Array.from({ length: this.pageSize }, (_, i) => page * this.pageSize + i);
  }

  private releasePage(page: number): void {
    if (this.state.pageOwners[page] === undefined) throw new Error(`KvPool "${this.name}": page ${page} freed twice`);
    this.state.pageOwners[page] = undefined;
    const free = this.state.freePages;
    // Binary search in the descending list keeps "lowest page first" without a full sort.
    let low = 0;
    let high = free.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (free[mid] > page) low = mid + 1;
      else high = mid;
    }
    free.splice(low, 0, page);
  }

  /** Keeps requests() equal to "requests owning anything". */
  private dropIfEmpty(request: number, table: RequestTable): void {
    if (table.persistedPages.length === 0 && table.temporaryPages.length === 0) {
      this.state.tables.delete(request);
    }
  }

  private checkNotReleased(): void {
    if (this.released) throw new Error(`KvPool "${this.name}": used after release()`);
  }

  private checkOwnedSlot(slot: number): void {
    if (!Number.isInteger(slot) || slot < 0 || slot >= this.numSlots) {
      throw new Error(`KvPool "${this.name}": slot ${slot} out of range`);
    }
    if (this.state.slotOwners[slot] === undefined) {
      throw new Error(`KvPool "${this.name}": slot ${slot} is not owned`);
    }
  }
}

function checkRequest(request: number): void {
  if (!Number.isSafeInteger(request)) throw new Error(`KvPool: request id must be an integer, got ${request}`);
}

function insertAscending(sorted: number[], value: number): void {
  let index = sorted.length;
  while (index > 0 && sorted[index - 1] > value) index--;
  sorted.splice(index, 0, value);
}
