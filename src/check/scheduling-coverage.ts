// The scheduling corners of a run (issue 13), read from its trace alone: overlap work discarded because a
// request finished, or was aborted or retracted, while its next results were in flight; prefix hits whose
// shared prefix ends inside a page or at its boundary; the prefix cache evicting while a hit's pages are shared;
// padded graph replays that ran padding rows; and a verify forward where one request verifies no draft
// next to one verifying all S (prompt lookup's ragged rounds). coverage.ts turns them into labels.
import { CACHE_HOLDER } from "../engine/kv-pool.ts";
import type { Trace } from "../trace/schema.ts";
import { poolOf } from "../laws/request-view.ts";

export interface SchedulingCorners {
  finishInFlight: boolean;
  abortOrRetractInFlight: boolean;
  prefixHitMidPage: boolean;
  prefixHitAtBoundary: boolean;
  sharedPrefixEvicted: boolean;
  paddingRows: boolean;
  emptyDraftNextToFull: boolean;
}

/** Events (indices) at which each request's rows or verify results were marked discarded. */
function discardedEvents(trace: Trace): Map<number, number[]> {
  const byRequest = new Map<number, number[]>();
  const add = (request: number, event: number) => {
    const events = byRequest.get(request) ?? byRequest.set(request, []).get(request)!;
    if (events[events.length - 1] !== event) events.push(event);
  };
  for (const event of trace.events) {
    for (const row of event.rows) if (row.discarded) add(row.request, event.index);
    for (const result of event.verify ?? []) if (result.discarded) add(result.request, event.index);
  }
  return byRequest;
}

/**
 * Discarded work before an abort or retract (since the request's previous one) was in flight when it landed;
 * discarded work after a request's last abort or retract, of a request that finished by EOS or length, is a
 * zombie round: it finished while its next round was already planned.
 */
function inFlightCorners(trace: Trace): Pick<SchedulingCorners, "finishInFlight" | "abortOrRetractInFlight"> {
  const discarded = discardedEvents(trace);
  const previous = new Map<number, number>();
  let abortOrRetractInFlight = false;
  for (const entry of trace.lifecycle ?? []) {
    if (entry.kind !== "abort" && entry.kind !== "retract") continue;
    const since = previous.get(entry.request) ?? -1;
    if ((discarded.get(entry.request) ?? []).some((event) => event >= since && event < entry.beforeEvent))
      abortOrRetractInFlight = true;
    previous.set(entry.request, entry.beforeEvent);
  }
  const finishInFlight = (trace.requests ?? []).some(
    (request) =>
      (request.finishReason === "length" || request.finishReason === "eos") &&
      (discarded.get(request.id) ?? []).some((event) => event >= (previous.get(request.id) ?? -1)),
  );
  return { finishInFlight, abortOrRetractInFlight };
}

/**
 * The prefix cache evicted while a request held pages shared with another holder (the cache itself, having
 * cached its prefix, or another request, having hit it): eviction had to pass over (or, broken, could take)
 * a shared prefix. Followed through the trace's reference changes.
 */
function evictedWhileShared(trace: Trace): boolean {
  /** Slot ("pool:slot") -> holders by references (a request id or the cache), one entry per reference. */
  const holders = new Map<string, number[]>();
  const sharedByRequest = (list: number[]) => list.length >= 2 && list.some((holder) => holder !== CACHE_HOLDER);
  for (const event of trace.events) {
    for (const row of event.rows)
      if (row.slot !== undefined && !row.temporary) holders.set(`${poolOf(event)}:${row.slot}`, [row.request]);
    for (const change of event.references ?? []) {
      if (change.change === "drop" && change.reason === "evict" && [...holders.values()].some(sharedByRequest))
        return true;
      for (const slot of change.slots) {
        const key = `${change.pool}:${slot}`;
        const list = holders.get(key) ?? [];
        if (change.change === "acquire") holders.set(key, [...list, change.holder]);
        else if (change.change === "write") holders.set(key, [change.holder]);
        else if (change.change === "free") holders.delete(key);
        else {
          const at = list.indexOf(change.holder);
          if (at >= 0) holders.set(key, [...list.slice(0, at), ...list.slice(at + 1)]);
        }
      }
    }
  }
  return false;
}

/** A verify forward of chains where one request has no draft row and another has S. */
function emptyDraftNextToFull(trace: Trace, numSteps: number): boolean {
  return trace.events.some((event) => {
    if (event.phase !== "verify") return false;
    const rows = new Map<number, number>();
    for (const row of event.rows) if (!row.discarded) rows.set(row.request, (rows.get(row.request) ?? 0) + 1);
    const counts = [...rows.values()];
    return counts.includes(1) && counts.includes(numSteps + 1);
  });
}

export function schedulingCorners(trace: Trace, pageSize: number, numSteps: number): SchedulingCorners {
  const hits = (trace.lifecycle ?? []).filter((entry) => entry.kind === "prefix-hit");
  const hitLength = (entry: (typeof hits)[number]) => Math.min(...(entry.pools ?? []).map((pool) => pool.length));
  return {
    ...inFlightCorners(trace),
    prefixHitMidPage: pageSize > 1 && hits.some((entry) => (entry.matched ?? 0) > hitLength(entry)),
    prefixHitAtBoundary: pageSize > 1 && hits.some((entry) => entry.matched === hitLength(entry)),
    sharedPrefixEvicted: evictedWhileShared(trace),
    paddingRows: trace.events.some((event) => (event.paddedRows ?? 0) > 0),
    emptyDraftNextToFull: emptyDraftNextToFull(trace, numSteps),
  };
}
