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
import type { PoolCheck } from "../engine/engine.ts";
import type { EngineInternals, RunResult } from "../engine/run-case.ts";
import { CACHE_HOLDER } from "../engine/kv-pool.ts";
import type { Trace } from "../trace/schema.ts";
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
  position: number;
  temporary: boolean;
  event: number;
}

const holderName = (holder: number) => (holder === CACHE_HOLDER ? "the prefix cache" : `request ${holder}`);

/**
 * Follows every written slot from its write to its release, per pool. Where the trace records reference
 * changes (`references`: shared slots, the prefix cache), each slot's holders are followed too: a holder
 * takes a reference only on a slot that is written and held, drops only one it holds, and a slot is
 * released only once no holder is left (its count equals its holders at every point).
 */
export function checkSlotLifetimes(trace: Trace): LawResult {
  const tally = new LawTally(KV_CONSERVATION);
  const counted = trace.events.some((event) => event.references !== undefined);
  const owners = new Map<string, Map<number, Owner>>();
  const ownersOf = (pool: string) => owners.get(pool) ?? owners.set(pool, new Map()).get(pool)!;
  const describe = (pool: string, slot: number, owner: Owner) =>
    `pool ${pool} slot ${slot} (${[...owner.holders.keys()].map(holderName).join(", ") || "no holder"}, ${owner.temporary ? "temporary row" : Number.isNaN(owner.position) ? "a copy without a row" : `position ${owner.position}`}, written in event ${owner.event})`;
  const held = (request: number) =>
    [...owners.entries()].flatMap(([pool, slots]) =>
      [...slots.entries()]
        .filter(([, owner]) => owner.holders.has(request))
        .map(([slot, owner]) => ({ pool, slot, owner })),
    );
  const entries = trace.lifecycle ?? [];
  /**
   * Positions per pool that a prefix hit of the same request, landing after this entry and before the same
   * event, takes again: the trace's references put the hit's acquisitions next to the retract's drops, so
   * at the event the retracted request legitimately holds the cached prefix it resumed from.
   */
  const rehit = (entry: (typeof entries)[number]) => {
    const hit = entries
      .slice(entries.indexOf(entry) + 1)
      .find(
        (later) =>
          later.kind === "prefix-hit" && later.request === entry.request && later.beforeEvent === entry.beforeEvent,
      );
    return new Map((hit?.pools ?? []).map(({ pool, length }) => [pool, length]));
  };
  const lifecycle = entries.filter((entry) => entry.kind === "abort" || entry.kind === "retract");
  for (const [index, event] of trace.events.entries()) {
    // Aborts and retracts land before this event: the request must hold nothing in any pool by now.
    for (const entry of lifecycle.filter((candidate) => candidate.beforeEvent === event.index)) {
      const resumed = rehit(entry);
      const left = held(entry.request).find(({ pool, owner }) => !(owner.position < (resumed.get(pool) ?? 0)));
      if (left)
        tally.fail({
          message: `${describe(left.pool, left.slot, left.owner)} is still held after the request's ${entry.kind} before event ${event.index}`,
          request: entry.request,
          event: event.index,
        });
    }
    const pool = poolOf(event);
    const slots = ownersOf(pool);
    for (const [rowIndex, row] of event.rows.entries()) {
      if (row.slot === undefined) continue;
      tally.checked += 1;
      const owner = slots.get(row.slot);
      const other = owner && [...owner.holders.keys()].find((holder) => holder !== row.request);
      if (owner && other !== undefined)
        tally.fail({
          message: `event ${event.index} row ${rowIndex} (request ${row.request}) writes ${describe(pool, row.slot, owner)}, which ${holderName(other)} still holds`,
          request: row.request,
          event: event.index,
          index: rowIndex,
        });
      slots.set(row.slot, {
        holders: new Map([[row.request, 1]]),
        position: row.position,
        temporary: row.temporary === true,
        event: event.index,
      });
    }
    for (const reference of event.references ?? []) {
      const referenced = ownersOf(reference.pool);
      for (const slot of reference.slots) {
        tally.checked += 1;
        const owner = referenced.get(slot);
        const where = { request: reference.holder >= 0 ? reference.holder : undefined, event: event.index };
        const after = `after event ${event.index}, ${holderName(reference.holder)}`;
        if (reference.change === "write") {
          // A write without a row (verify compaction's copy into the accepted path's persisted slots).
          const other = owner && [...owner.holders.keys()].find((holder) => holder !== reference.holder);
          if (owner && other !== undefined)
            tally.fail({
              ...where,
              message: `${after} writes ${describe(reference.pool, slot, owner)}, which ${holderName(other)} still holds`,
            });
          referenced.set(slot, {
            holders: new Map([[reference.holder, 1]]),
            position: Number.NaN, // a copy without a row: its position is not recorded
            temporary: false,
            event: event.index,
          });
        } else if (reference.change === "acquire") {
          if (!owner || owner.holders.size === 0)
            tally.fail({
              ...where,
              message: `${after} takes a reference on pool ${reference.pool} slot ${slot}, which holds nothing written (free)`,
            });
          else if (owner.holders.has(reference.holder) && reference.holder !== CACHE_HOLDER)
            tally.fail({
              ...where,
              message: `${after} takes a second reference on ${describe(reference.pool, slot, owner)}`,
            });
          else owner.holders.set(reference.holder, (owner.holders.get(reference.holder) ?? 0) + 1);
        } else if (reference.change === "drop") {
          const count = owner?.holders.get(reference.holder) ?? 0;
          if (count > 1) owner!.holders.set(reference.holder, count - 1);
          else if (count === 1) owner!.holders.delete(reference.holder);
          else
            tally.fail({
              ...where,
              message: `${after} drops pool ${reference.pool} slot ${slot}, which it does not hold${owner ? "" : " (nothing was written to it since it was last free: uninitialized KV)"}`,
            });
        } else {
          if (owner && owner.holders.size > 0)
            tally.fail({
              ...where,
              message: `${after} frees ${describe(reference.pool, slot, owner)} while it is still held`,
            });
          referenced.delete(slot);
        }
      }
    }
    // Engines that record holders free slots in that stream; `released` is followed where they do not.
    if (!counted)
      for (const released of event.released ?? []) {
        const releasing = ownersOf(released.pool);
        for (const slot of released.slots) releasing.delete(slot);
      }
    // Between steps no temporary row's slot may stay held (draft decode and verify free theirs each round).
    const next = trace.events[index + 1];
    if (event.step !== undefined && next?.step !== undefined && next.step !== event.step) {
      for (const [poolName, poolSlots] of owners)
        for (const [slot, owner] of poolSlots)
          if (owner.temporary)
            tally.fail({
              message: `${describe(poolName, slot, owner)} is still held after step ${event.step}`,
              request: [...owner.holders.keys()][0],
              event: event.index,
            });
    }
  }
  // Once every request finished or was aborted, no slot is held by a request, and none is left held by no one
  // without being freed. A prefix cache may keep pages (the reference engine flushes it; its pool checks then
  // require every pool empty).
  const requests = trace.requests ?? [];
  if (requests.length > 0 && requests.every((request) => request.finishReason !== "unfinished")) {
    search: for (const [pool, slots] of owners)
      for (const [slot, owner] of slots) {
        const holders = [...owner.holders.keys()];
        if (holders.length > 0 && holders.every((holder) => holder === CACHE_HOLDER)) continue;
        tally.fail({
          message:
            holders.length === 0
              ? `pool ${pool} slot ${slot} was let go by every holder but never freed`
              : `${describe(pool, slot, owner)} is still held after the run`,
          request: holders.find((holder) => holder !== CACHE_HOLDER),
        });
        break search;
      }
  }
  return tally.result();
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
  unavailable: ({ run }) =>
    shows(run) ? undefined : "the trace records no slot releases, and the engine's own pool checks are not exposed",
  check: ({ run, baseline }) => {
    const own = checkRun(run);
    return baseline && shows(baseline) ? combine(own, checkRun(baseline), "target-only run") : own;
  },
};
