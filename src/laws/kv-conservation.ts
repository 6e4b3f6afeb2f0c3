// Law "KV conservation": every pool passes checkIntegrity() after every step, holds no temporary slot
// between steps and nothing for finished requests, and is empty once every request is done. The reference
// engine shows it through its own per-step pool checks; any engine whose trace records the slots each row
// wrote and the slots each pool released shows it through the trace: every slot's owner is followed write
// by write and release by release (a slot written while another request holds it, a temporary slot held
// into the next step, a slot still held by a retracted, aborted or finished request all fail).
import type { PoolCheck } from "../engine/engine.ts";
import type { EngineInternals, RunResult } from "../engine/run-case.ts";
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
  request: number;
  position: number;
  temporary: boolean;
  event: number;
}

/** Follows every written slot from its write to its release, per pool. */
export function checkSlotLifetimes(trace: Trace): LawResult {
  const tally = new LawTally(KV_CONSERVATION);
  const owners = new Map<string, Map<number, Owner>>();
  const ownersOf = (pool: string) => owners.get(pool) ?? owners.set(pool, new Map()).get(pool)!;
  const describe = (pool: string, slot: number, owner: Owner) =>
    `pool ${pool} slot ${slot} (request ${owner.request}, ${owner.temporary ? "temporary row" : `position ${owner.position}`}, written in event ${owner.event})`;
  const held = (request: number) =>
    [...owners.entries()].flatMap(([pool, slots]) =>
      [...slots.entries()]
        .filter(([, owner]) => owner.request === request)
        .map(([slot, owner]) => ({ pool, slot, owner })),
    );
  const lifecycle = trace.lifecycle ?? [];
  for (const [index, event] of trace.events.entries()) {
    // Aborts and retracts land before this event: the request must hold nothing in any pool by now.
    for (const entry of lifecycle.filter((candidate) => candidate.beforeEvent === event.index)) {
      const left = held(entry.request)[0];
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
      if (owner && owner.request !== row.request)
        tally.fail({
          message: `event ${event.index} row ${rowIndex} (request ${row.request}) writes ${describe(pool, row.slot, owner)}, which that request still holds`,
          request: row.request,
          event: event.index,
          index: rowIndex,
        });
      slots.set(row.slot, {
        request: row.request,
        position: row.position,
        temporary: row.temporary === true,
        event: event.index,
      });
    }
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
              request: owner.request,
              event: event.index,
            });
    }
  }
  // Once every request finished or was aborted, every pool must be empty.
  const requests = trace.requests ?? [];
  if (requests.length > 0 && requests.every((request) => request.finishReason !== "unfinished")) {
    for (const request of requests) {
      const left = held(request.id)[0];
      if (left)
        tally.fail({
          message: `${describe(left.pool, left.slot, left.owner)} is still held after the run`,
          request: request.id,
        });
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
