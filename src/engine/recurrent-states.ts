// Hybrid models' recurrent state pool, one per KV pool (target, draft): per request slot the committed state
// (the state after the request's persisted positions, as vLLM's and SGLang's mamba pools hold one state per
// request), and the states temporary rows left (draft decode, verify: one per draft position), keyed by the
// temporary KV slot the row wrote, until the request's round is done.
//
// A forward's rows read their state from (model/mamba2-graph.ts's rec_src): the row of the same forward one
// position before (a chunk's previous row, a verify node's parent), else the temporary row one position before
// that an earlier forward left (a draft decode step's previous step), else the committed state. Rows of the
// forward that persist commit the last one's state; verify commits the accepted position's (phases/verify.ts).
//
// Retract: a retract frees the state with the request's pages, and the resume recomputes it from the first token
// (the re-prefill every pool gets). The prefix cache: a page's K/V holds no recurrent state, so, as vLLM's and
// SGLang's mamba caches do, the pool keeps checkpoints: the state a persisted row (or an accepted verify node) left
// at a page boundary, which the cache node of that page takes on insert and a prefix hit restores
// (prefix-cache.ts); a hit only ends at a node that holds one. docs/laws.md's "recurrent state" law reads what each
// row read.
import type { FloatArray } from "../runtime/ort.ts";

/** A recurrent state with what it absorbed: the request whose tokens, and how many (positions [0, length)). */
export interface RecurrentState {
  values: FloatArray;
  request: number;
  length: number;
}

export class RecurrentStates {
  private readonly committed = new Map<number, RecurrentState>();
  private readonly temporary = new Map<number, RecurrentState>();
  /** Request -> states at page boundaries (length -> state), kept only with the prefix cache. */
  private readonly checkpoints = new Map<number, Map<number, RecurrentState>>();

  constructor(
    readonly width: number,
    /** A request's state before its first row (zeros; a mirror's: after the prefix its graph skips). */
    private readonly initial: Float64Array,
    private readonly dtype: "float32" | "float64",
    /** The prefix cache's page size: states at multiples of it are kept as checkpoints; undefined keeps none. */
    private readonly checkpointEvery?: number,
  ) {}

  get dtypeOf(): "float32" | "float64" {
    return this.dtype;
  }

  /** The request's committed state; a request without one (new, or retracted) starts from the initial state. */
  committedOf(request: number): RecurrentState {
    let state = this.committed.get(request);
    if (!state) {
      const values = this.dtype === "float32" ? Float32Array.from(this.initial) : Float64Array.from(this.initial);
      state = { values, request, length: 0 };
      this.committed.set(request, state);
    }
    return state;
  }

  /** Mutates: the request's committed state becomes `state` (a copy of its values: row `row` of `rows`). */
  commit(request: number, rows: FloatArray, row: number, absorbed: { request: number; length: number }): void {
    this.committed.set(request, { values: this.rowOf(rows, row), ...absorbed });
  }

  /**
   * Mutates: keeps row `row` of `rows` as the request's checkpoint when the state it holds ends at a page boundary
   * (the prefix cache's nodes take them, prefix-cache.ts); a no-op without the prefix cache.
   */
  checkpoint(request: number, rows: FloatArray, row: number, absorbed: { request: number; length: number }): void {
    if (!this.checkpointEvery || absorbed.length % this.checkpointEvery !== 0) return;
    let own = this.checkpoints.get(request);
    if (!own) this.checkpoints.set(request, (own = new Map()));
    own.set(absorbed.length, { values: this.rowOf(rows, row), ...absorbed });
  }

  /** The request's checkpoint after its first `length` positions, if one was kept. */
  checkpointOf(request: number, length: number): RecurrentState | undefined {
    return this.checkpoints.get(request)?.get(length);
  }

  /** Mutates: a prefix hit's state (another request's checkpoint of the same tokens) becomes the committed one. */
  restore(request: number, state: RecurrentState): void {
    this.committed.set(request, { values: state.values.slice(), request: state.request, length: state.length });
  }

  temporaryOf(slot: number): RecurrentState | undefined {
    return this.temporary.get(slot);
  }

  /** Mutates: the state a temporary row written to `slot` left. */
  setTemporary(slot: number, rows: FloatArray, row: number, absorbed: { request: number; length: number }): void {
    this.temporary.set(slot, { values: this.rowOf(rows, row), ...absorbed });
  }

  /** Mutates: drops the request's committed state (finish, abort, retract); its temporary states go with slots. */
  free(request: number): void {
    this.committed.delete(request);
    this.checkpoints.delete(request);
  }

  /** Mutates: drops the states of freed temporary slots. */
  freeTemporary(slots: readonly number[]): void {
    for (const slot of slots) this.temporary.delete(slot);
  }

  private rowOf(rows: FloatArray, row: number): FloatArray {
    return rows.slice(row * this.width, (row + 1) * this.width);
  }
}

/** What the rec_src rule reads of a row (forward.ts's RowPlan). */
interface RecurrentRow {
  request: number;
  position: number;
  writeSlot: number;
  temporary: boolean;
  attendTemporary: readonly number[];
  attendBatchRows: readonly number[];
}

export interface RecurrentFeeds {
  recInit: FloatArray;
  recSrc: BigInt64Array;
  /** What each row's state had absorbed (the trace's `recurrent`), read from the entry fed to it. */
  read: { request: number; length: number }[];
}

/**
 * rec_init and rec_src of a forward: each row's state from the row one position before in this forward, else the
 * temporary row one position before an earlier forward left, else the request's committed state.
 */
export function recurrentFeeds(
  states: RecurrentStates,
  rows: readonly RecurrentRow[],
  positionOfSlot: (slot: number) => number | undefined,
): RecurrentFeeds {
  const table: RecurrentState[] = [];
  const tableIndex = new Map<RecurrentState, number>();
  const entryOf = (state: RecurrentState) => {
    let index = tableIndex.get(state);
    if (index === undefined) {
      index = table.length;
      table.push(state);
      tableIndex.set(state, index);
    }
    return index;
  };
  const sources: ({ row: number } | { state: RecurrentState })[] = rows.map((row, r) => {
    const parent = row.attendBatchRows.find(
      (other) => other !== r && rows[other].request === row.request && rows[other].position === row.position - 1,
    );
    if (parent !== undefined) return { row: parent };
    const slot = row.attendTemporary.find((candidate) => positionOfSlot(candidate) === row.position - 1);
    const temporary = slot === undefined ? undefined : states.temporaryOf(slot);
    return { state: temporary ?? states.committedOf(row.request) };
  });
  for (const source of sources) if ("state" in source) entryOf(source.state);
  const recInit =
    states.dtypeOf === "float32"
      ? new Float32Array(table.length * states.width)
      : new Float64Array(table.length * states.width);
  table.forEach((state, i) => recInit.set(state.values, i * states.width));
  const recSrc = new BigInt64Array(rows.length);
  const read = sources.map((source, r) => {
    if ("row" in source) {
      recSrc[r] = BigInt(table.length + source.row);
      const parent = rows[source.row];
      return { request: parent.request, length: parent.position + 1 };
    }
    recSrc[r] = BigInt(tableIndex.get(source.state)!);
    return { request: source.state.request, length: source.state.length };
  });
  return { recInit, recSrc, read };
}

/**
 * After a forward: temporary rows leave their states (by slot); persisted rows at page boundaries leave
 * checkpoints; each request's last persisted row commits its state (a prefill chunk, a draft extend, a
 * target-only decode). Verify's rows are temporary: it commits the
 * accepted position's state itself (phases/verify.ts). Mutates.
 */
export function keepRecurrentStates(states: RecurrentStates, rows: readonly RecurrentRow[], recOut: FloatArray): void {
  const lastPersisted = new Map<number, number>();
  rows.forEach((row, r) => {
    const absorbed = { request: row.request, length: row.position + 1 };
    if (row.temporary) {
      states.setTemporary(row.writeSlot, recOut, r, absorbed);
      return;
    }
    states.checkpoint(row.request, recOut, r, absorbed);
    if (row.position >= (rows[lastPersisted.get(row.request) ?? r].position ?? -1)) lastPersisted.set(row.request, r);
  });
  for (const [request, r] of lastPersisted)
    states.commit(request, recOut, r, { request: rows[r].request, length: rows[r].position + 1 });
}
