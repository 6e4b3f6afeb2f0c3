// Collects one trace event per forward. Events are numbered even when tracing is off, so hidden-state
// provenance stays meaningful; building the rows (a scan of every mask row) is skipped then.
import type {
  FutureWrite,
  LifecycleEvent,
  SlotReference,
  TraceEvent,
  TraceRow,
  VerifyResult,
} from "../trace/schema.ts";
import { lifecycleEvent, slotReference } from "../trace/records.ts";

export class TraceRecorder {
  readonly events: TraceEvent[] = [];
  readonly lifecycle: LifecycleEvent[] = [];
  private nextIndex = 0;
  /** Requests whose rows are discarded work as they are recorded (overlap zombies). */
  private readonly discarding = new Set<number>();

  constructor(readonly enabled: boolean) {}

  /** The index the next forward event will get. Pure. */
  get nextEventIndex(): number {
    return this.nextIndex;
  }

  /** Mutates: appends the event `build` makes with its index (called only when enabled); returns the index. */
  record(build: (index: number) => TraceEvent): number {
    const index = this.nextIndex++;
    if (this.enabled) {
      const event = build(index);
      if (this.discarding.size > 0)
        for (const row of event.rows) if (this.discarding.has(row.request)) row.discarded = true;
      this.events.push(event);
    }
    return index;
  }

  /**
   * Mutates: marks the request's rows and verify results from event `fromEvent` on as discarded work (its
   * results were never processed: a round in flight when it finished, was aborted or retracted), and keeps
   * marking its new rows until endDiscard.
   */
  discardFrom(request: number, fromEvent: number, ongoing: boolean): void {
    if (!this.enabled) return;
    for (let i = this.events.length - 1; i >= 0 && this.events[i].index >= fromEvent; i--) {
      const event = this.events[i];
      for (const row of event.rows) if (row.request === request) row.discarded = true;
      for (const result of event.verify ?? []) if (result.request === request) result.discarded = true;
    }
    if (ongoing) this.discarding.add(request);
  }

  /** Mutates: the request's new rows are real work again. */
  endDiscard(request: number): void {
    this.discarding.delete(request);
  }

  /** Mutates: records a future-ring write on the event that produced the value. */
  future(eventIndex: number, write: FutureWrite): void {
    if (!this.enabled) return;
    const event = this.findEvent(eventIndex);
    if (event) (event.futures ??= []).push(write);
  }

  /**
   * Mutates: records a reference change on the last forward event (pools with shared slots): `holder` (a
   * request, or -1 for the prefix cache) took or dropped a reference on slots. Kept in order.
   */
  reference(entry: SlotReference): void {
    const event = this.events[this.events.length - 1];
    if (!this.enabled || !event || entry.slots.length === 0) return;
    const references = (event.references ??= []);
    const last = references[references.length - 1];
    if (
      last &&
      last.pool === entry.pool &&
      last.holder === entry.holder &&
      last.change === entry.change &&
      last.reason === entry.reason
    )
      last.slots.push(...entry.slots);
    else references.push(slotReference(entry));
  }

  private findEvent(index: number): TraceEvent | undefined {
    for (let i = this.events.length - 1; i >= 0; i--) if (this.events[i].index === index) return this.events[i];
    return undefined;
  }

  /** Mutates: records an abort, retract or prefix hit, placed before the next forward event. */
  note(event: Omit<LifecycleEvent, "beforeEvent">): void {
    if (this.enabled) this.lifecycle.push(lifecycleEvent({ ...event, beforeEvent: this.nextIndex }));
  }

  /**
   * Mutates: adds fields to a recorded row that are known only once the forward's outputs are read
   * (tree drafting's children and their scores).
   */
  annotateRow(index: number, row: number, fields: Partial<TraceRow>): void {
    if (!this.enabled) return;
    // Events are pushed in index order while enabled, so the index is the array position.
    const target = this.events[index]?.index === index ? this.events[index] : undefined;
    if (target?.rows[row]) Object.assign(target.rows[row], fields);
  }

  /** Mutates: records slots a pool released, on the last forward event before the release. */
  release(pool: string, slots: readonly number[]): void {
    const event = this.events[this.events.length - 1];
    if (!this.enabled || !event || slots.length === 0) return;
    const released = (event.released ??= []);
    const entry = released.find((candidate) => candidate.pool === pool);
    if (entry) entry.slots.push(...slots);
    else released.push({ pool, slots: [...slots] });
  }

  /** Mutates: attaches verify results to an already recorded event. */
  attachVerify(index: number, results: VerifyResult[]): void {
    if (!this.enabled) return;
    const event = this.findEvent(index);
    if (!event) return;
    for (const result of results) if (this.discarding.has(result.request)) result.discarded = true;
    event.verify = results;
  }
}
