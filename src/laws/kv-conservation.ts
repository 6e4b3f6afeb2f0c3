// Law "KV conservation": every pool passes checkIntegrity() after every step, holds no temporary slot
// between steps and nothing for finished requests, and is empty once every request is done. The reference
// engine shows it through its own per-step pool checks; any engine whose trace records the slots each row
// wrote and the slots each pool released shows it through the trace: every slot's owner is followed write
// by write and release by release (a slot written while another request holds it, a temporary slot held
// into the next step, a slot still held by a retracted, aborted or finished request all fail). With shared
// slots (a prefix cache) the trace records, in order, every reference taken and dropped, every write
// without a row and every free, and each slot's count is checked against its holders: taken only on
// written slots, dropped only by a holder, freed only when no holder is left, and at the end held by no
// request (the cache may keep pages; the reference engine flushes it, and its own checks want every pool empty).
import type { PoolCheck } from "../trace/run-result.ts";
import type { EngineInternals, RunResult } from "../trace/run-result.ts";
import { CACHE_HOLDER } from "../engine/kv-pool.ts";
import type { LifecycleEvent, SlotReference, Trace, TraceEvent, TraceRequest } from "../trace/schema.ts";
import { poolOf } from "./request-view.ts";
import type { Law } from "./definition.ts";
import { combine, LawTally, type LawResult } from "./law.ts";

export const KV_CONSERVATION = "KV conservation";

export function checkKvConservation(
  poolChecks: readonly PoolCheck[],
  steps: number,
  slotsInUseAtEnd: number,
): LawResult {
  const tally = new LawTally(KV_CONSERVATION);
  tally.checked = steps;
  const first = poolChecks[0];
  if (first) {
    const violation = first.violations[0];
    tally.fail({
      message: `after step ${first.step}, pool ${first.pool}: ${violation.message}`,
      request: violation.request,
    });
  }
  if (slotsInUseAtEnd > 0)
    tally.fail({ message: `${slotsInUseAtEnd} slots still in use after every request finished` });
  return tally.result();
}

/** The trace records slot releases (`released` on its events): slot lifetimes can be followed. */
export function recordsReleases(trace: Trace): boolean {
  return trace.events.some((event) => event.released !== undefined);
}

interface Owner {
  /**
   * Who holds the slot, with how many references: its writer, and with shared slots every request (or -1,
   * the prefix cache, which holds one reference per cache node mapping the slot) that took one.
   */
  holders: Map<number, number>;
  /** The row's position; NaN for a copy without a row (verify compaction's writes). */
  position: number;
  temporary: boolean;
  event: number;
}

/** One shape for every owner record (the ledger's loops stay monomorphic). */
function owner(holder: number, position: number, temporary: boolean, event: number): Owner {
  return { holders: new Map([[holder, 1]]), position, temporary, event };
}

const holderName = (holder: number) => (holder === CACHE_HOLDER ? "the prefix cache" : `request ${holder}`);

/** The first holder other than `holder`, if any. */
function otherHolder(owner: Owner | undefined, holder: number): number | undefined {
  if (owner) for (const other of owner.holders.keys()) if (other !== holder) return other;
  return undefined;
}

const afterEvent = (eventIndex: number, holder: number) => `after event ${eventIndex}, ${holderName(holder)}`;

function describe(pool: string, slot: number, owner: Owner): string {
  const holders = [...owner.holders.keys()].map(holderName).join(", ") || "no holder";
  const row = owner.temporary
    ? "temporary row"
    : Number.isNaN(owner.position)
      ? "a copy without a row"
      : `position ${owner.position}`;
  return `pool ${pool} slot ${slot} (${holders}, ${row}, written in event ${owner.event})`;
}

/**
 * Every written slot's owner per pool, followed event by event. Each kind of record (rows, reference
 * changes, releases, lifecycle entries, step ends) is its own method: a law that reads every trace meets
 * many of them only in some cases, and a small method recompiled for a new one costs little.
 */
class SlotLedger {
  readonly tally = new LawTally(KV_CONSERVATION);
  private readonly owners = new Map<string, Map<number, Owner>>();
  /** Aborts and retracts by the event they land before, in trace order. */
  private readonly leavingBefore = new Map<number, LifecycleEvent[]>();

  constructor(
    /** The trace records holders (`references`): slots are freed in that stream, not by `released`. */
    private readonly counted: boolean,
    private readonly lifecycle: readonly LifecycleEvent[],
  ) {
    for (const entry of lifecycle) {
      if (entry.kind !== "abort" && entry.kind !== "retract") continue;
      const before = this.leavingBefore.get(entry.beforeEvent);
      if (before) before.push(entry);
      else this.leavingBefore.set(entry.beforeEvent, [entry]);
    }
  }

  private ownersOf(pool: string): Map<number, Owner> {
    let slots = this.owners.get(pool);
    if (!slots) this.owners.set(pool, (slots = new Map()));
    return slots;
  }

  /** Mutates: follows one event; `next` is the event after it (a step boundary ends temporary rows). */
  follow(event: Readonly<TraceEvent>, next: Readonly<TraceEvent> | undefined): void {
    const leaving = this.leavingBefore.get(event.index);
    if (leaving) for (const entry of leaving) this.checkLeft(entry, event.index);
    this.writeRows(event);
    if (event.references) for (const reference of event.references) this.followReference(reference, event.index);
    // Engines that record holders free slots in that stream; `released` is followed where they do not.
    if (!this.counted && event.released)
      for (const released of event.released) {
        const releasing = this.ownersOf(released.pool);
        for (const slot of released.slots) releasing.delete(slot);
      }
    // Between steps no temporary row's slot may stay held (draft decode and verify free theirs each round).
    if (event.step !== undefined && next?.step !== undefined && next.step !== event.step)
      this.checkTemporaries(event.step, event.index);
  }

  /**
   * Positions per pool that a prefix hit of the same request, landing after this entry and before the same
   * event, takes again: the trace's references put the hit's acquisitions next to the retract's drops, so
   * at the event the retracted request legitimately holds the cached prefix it resumed from.
   */
  private rehit(entry: LifecycleEvent): Map<string, number> {
    const resumed = new Map<string, number>();
    for (let i = this.lifecycle.indexOf(entry) + 1; i < this.lifecycle.length; i++) {
      const later = this.lifecycle[i];
      if (later.kind !== "prefix-hit" || later.request !== entry.request || later.beforeEvent !== entry.beforeEvent)
        continue;
      for (const { pool, length } of later.pools ?? []) resumed.set(pool, length);
      break;
    }
    return resumed;
  }

  /** An abort or retract landed before event `index`: the request must hold nothing in any pool by now. */
  private checkLeft(entry: LifecycleEvent, index: number): void {
    const resumed = this.rehit(entry);
    for (const [pool, slots] of this.owners)
      for (const [slot, owner] of slots) {
        if (!owner.holders.has(entry.request) || owner.position < (resumed.get(pool) ?? 0)) continue;
        this.tally.fail({
          message: `${describe(pool, slot, owner)} is still held after the request's ${entry.kind} before event ${index}`,
          request: entry.request,
          event: index,
        });
        return;
      }
  }

  private writeRows(event: Readonly<TraceEvent>): void {
    const pool = poolOf(event);
    const slots = this.ownersOf(pool);
    const rows = event.rows;
    for (let rowIndex = 0; rowIndex < rows.length; rowIndex++) {
      const row = rows[rowIndex];
      if (row.slot === undefined) continue;
      this.tally.checked += 1;
      const previous = slots.get(row.slot);
      const other = otherHolder(previous, row.request);
      if (other !== undefined)
        this.tally.fail({
          message: `event ${event.index} row ${rowIndex} (request ${row.request}) writes ${describe(pool, row.slot, previous!)}, which ${holderName(other)} still holds`,
          request: row.request,
          event: event.index,
          index: rowIndex,
        });
      slots.set(row.slot, owner(row.request, row.position, row.temporary === true, event.index));
    }
  }

  private followReference(reference: Readonly<SlotReference>, eventIndex: number): void {
    const referenced = this.ownersOf(reference.pool);
    const holder = reference.holder;
    for (const slot of reference.slots) {
      this.tally.checked += 1;
      const current = referenced.get(slot);
      const where = { request: holder >= 0 ? holder : undefined, event: eventIndex };
      if (reference.change === "write") {
        // A write without a row (verify compaction's copy into the accepted path's persisted slots).
        const other = otherHolder(current, holder);
        if (other !== undefined)
          this.tally.fail({
            ...where,
            message: `${afterEvent(eventIndex, holder)} writes ${describe(reference.pool, slot, current!)}, which ${holderName(other)} still holds`,
          });
        referenced.set(slot, owner(holder, Number.NaN, false, eventIndex));
      } else if (reference.change === "acquire") {
        if (!current || current.holders.size === 0)
          this.tally.fail({
            ...where,
            message: `${afterEvent(eventIndex, holder)} takes a reference on pool ${reference.pool} slot ${slot}, which holds nothing written (free)`,
          });
        else if (current.holders.has(holder) && holder !== CACHE_HOLDER)
          this.tally.fail({
            ...where,
            message: `${afterEvent(eventIndex, holder)} takes a second reference on ${describe(reference.pool, slot, current)}`,
          });
        else current.holders.set(holder, (current.holders.get(holder) ?? 0) + 1);
      } else if (reference.change === "drop") {
        const count = current?.holders.get(holder) ?? 0;
        if (count > 1) current!.holders.set(holder, count - 1);
        else if (count === 1) current!.holders.delete(holder);
        else
          this.tally.fail({
            ...where,
            message: `${afterEvent(eventIndex, holder)} drops pool ${reference.pool} slot ${slot}, which it does not hold${current ? "" : " (nothing was written to it since it was last free: uninitialized KV)"}`,
          });
      } else {
        if (current && current.holders.size > 0)
          this.tally.fail({
            ...where,
            message: `${afterEvent(eventIndex, holder)} frees ${describe(reference.pool, slot, current)} while it is still held`,
          });
        referenced.delete(slot);
      }
    }
  }

  private checkTemporaries(step: number, eventIndex: number): void {
    for (const [pool, slots] of this.owners)
      for (const [slot, held] of slots)
        if (held.temporary)
          this.tally.fail({
            message: `${describe(pool, slot, held)} is still held after step ${step}`,
            request: [...held.holders.keys()][0],
            event: eventIndex,
          });
  }

  /**
   * Once every request finished or was aborted, no slot is held by a request, and none is left held by no
   * one without being freed. A prefix cache may keep pages (the reference engine flushes it; its pool checks
   * then require every pool empty).
   */
  checkEnd(requests: readonly TraceRequest[]): void {
    if (requests.length === 0 || requests.some((request) => request.finishReason === "unfinished")) return;
    for (const [pool, slots] of this.owners)
      for (const [slot, held] of slots) {
        const holders = [...held.holders.keys()];
        if (holders.length > 0 && holders.every((holder) => holder === CACHE_HOLDER)) continue;
        this.tally.fail({
          message:
            holders.length === 0
              ? `pool ${pool} slot ${slot} was let go by every holder but never freed`
              : `${describe(pool, slot, held)} is still held after the run`,
          request: holders.find((holder) => holder !== CACHE_HOLDER),
        });
        return;
      }
  }
}

/**
 * Follows every written slot from its write to its release, per pool. Where the trace records reference
 * changes (`references`: shared slots, the prefix cache), each slot's holders are followed too: a holder
 * takes a reference only on a slot that is written and held, drops only one it holds, and a slot is
 * released only once no holder is left (its count equals its holders at every point).
 */
export function checkSlotLifetimes(trace: Trace): LawResult {
  const events = trace.events;
  const ledger = new SlotLedger(
    events.some((event) => event.references !== undefined),
    trace.lifecycle ?? [],
  );
  for (let index = 0; index < events.length; index++) ledger.follow(events[index], events[index + 1]);
  ledger.checkEnd(trace.requests ?? []);
  return ledger.tally.result();
}

const checkInternals = ({ poolChecks, steps, slotsInUseAtEnd }: EngineInternals) =>
  checkKvConservation(poolChecks, steps, slotsInUseAtEnd);

/** What a run shows: its engine's own pool checks, and the slot lifetimes its trace records. */
function checkRun(run: Readonly<RunResult>): LawResult {
  const fromInternals = run.internals ? checkInternals(run.internals) : undefined;
  const fromTrace = recordsReleases(run.trace) ? checkSlotLifetimes(run.trace) : undefined;
  if (fromInternals && fromTrace) return combine(fromInternals, fromTrace, "slot lifetimes in the trace");
  return fromInternals ?? fromTrace!;
}

const shows = (run: Readonly<RunResult>) => run.internals !== undefined || recordsReleases(run.trace);

export const law: Law = {
  name: KV_CONSERVATION,
  summary: "no slot leaked or written while another request holds it; pools empty at the end",
  appliesTo: () => true,
  needs: { baseline: "also-check" },
  // A leak seen by a step's pool check before the run crashed (the leaked slots exhausted the pool).
  checkCrashed: ({ poolChecks, steps }) =>
    poolChecks.length > 0 ? checkKvConservation(poolChecks, steps, 0) : undefined,
  unavailable: ({ run }) =>
    shows(run) ? undefined : "the trace records no slot releases, and the engine's own pool checks are not exposed",
  check: ({ run, baseline }) => {
    const own = checkRun(run);
    return baseline && shows(baseline) ? combine(own, checkRun(baseline), "target-only run") : own;
  },
};
