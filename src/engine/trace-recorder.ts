// Collects one trace event per forward. Events are numbered even when tracing is off, so hidden-state
// provenance stays meaningful; building the rows (a scan of every mask row) is skipped then.
import type { LifecycleEvent, TraceEvent, TraceRow, VerifyResult } from "../trace/schema.ts";

export class TraceRecorder {
  readonly events: TraceEvent[] = [];
  readonly lifecycle: LifecycleEvent[] = [];
  private nextIndex = 0;

  constructor(readonly enabled: boolean) {}

  /** Mutates: appends the event built by `build` (called only when enabled); returns its index. */
  record(build: () => Omit<TraceEvent, "index">): number {
    const index = this.nextIndex++;
    if (this.enabled) this.events.push({ index, ...build() });
    return index;
  }

  /** Mutates: records an abort or retract, placed before the next forward event. */
  note(event: Omit<LifecycleEvent, "beforeEvent">): void {
    if (this.enabled) this.lifecycle.push({ ...event, beforeEvent: this.nextIndex });
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
    const event = this.events.find((candidate) => candidate.index === index);
    if (event) event.verify = results;
  }
}
