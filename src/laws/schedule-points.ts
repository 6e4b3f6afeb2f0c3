// Where the case's aborts and retracts land in a trace, read from the case (what was asked), never from the
// engine's lifecycle record (what the engine says it did): an engine that drops an abort records nothing of
// it (issue 25). A point is (step, beforeForward): before the step's forward of that number, or after the
// step when the step ran fewer forwards (the case schema's contract). Every forward emits one event, so the
// step's forward f is its f-th event; the trace must number events by step (events[].step) for a point to be
// found at all.
import type { AbortEvent } from "../case/case.ts";
import type { Trace, TraceEvent } from "../trace/schema.ts";

export interface SchedulePoint extends AbortEvent {
  /** The index of the first forward event at or after the point (one past the last event when none follows). */
  beforeEvent: number;
}

/** Why the trace cannot place the schedule's points (the missing field), or undefined. Pure. */
export function unplaceable(trace: Trace): string | undefined {
  if (trace.events.some((event) => event.step === undefined))
    return "the trace's forward events carry no step (events[].step), so the case's abort and retract points cannot be placed";
  // No events at all, yet tokens came out: the engine recorded none of its forwards (an external engine that
  // observes only its speculative rounds, and ran none), so there are no steps to place a point among.
  if (trace.events.length === 0 && (trace.requests ?? []).some((request) => request.output.length > 0))
    return "the trace records none of the forwards that produced its outputs (no events), so the case's abort and retract points cannot be placed";
  return undefined;
}

/** The schedule's points located in the trace (events carry their step: check unplaceable first). Pure. */
export function placePoints(points: readonly AbortEvent[], trace: Trace): SchedulePoint[] {
  // Each event's ordinal within its step.
  const ordinal: number[] = [];
  const seen = new Map<number, number>();
  for (const event of trace.events) {
    const count = seen.get(event.step!) ?? 0;
    ordinal.push(count);
    seen.set(event.step!, count + 1);
  }
  return points.map((point) => {
    const at = trace.events.findIndex(
      (event, i) => event.step! > point.step || (event.step === point.step && ordinal[i] >= point.beforeForward),
    );
    const end = trace.events.length > 0 ? trace.events[trace.events.length - 1].index + 1 : 0;
    return { ...point, beforeEvent: at < 0 ? end : trace.events[at].index };
  });
}

/** The request's forward events (rows of it, discarded or not), in order. Pure. */
export function eventsOf(trace: Trace, request: number): TraceEvent[] {
  return trace.events.filter((event) => event.rows.some((row) => row.request === request));
}

/**
 * Tokens the request's forwards before `beforeEvent` produced: the prefill's sample, each decode row, each
 * verify's emitted tokens (discarded work excluded). Pure.
 */
export function producedBefore(trace: Trace, request: number, beforeEvent: number): number {
  let produced = 0;
  for (const event of trace.events) {
    if (event.index >= beforeEvent) break;
    const rows = event.rows.filter((row) => row.request === request && !row.discarded);
    if (event.phase === "prefill" && rows.length > 0 && produced === 0) produced = 1;
    if (event.phase === "decode") produced += rows.length;
    for (const result of event.verify ?? [])
      if (result.request === request && !result.discarded) produced += result.emitted?.length ?? result.acceptLen;
  }
  return produced;
}

/**
 * The request had finished before the point: it ended on its own (not aborted, not unfinished) and forwards
 * before the point produced its whole output. An overlap engine may still run it once more as a zombie (a
 * forward planned before its finish was processed); an abort or retract there has nothing left to act on. Pure.
 */
export function doneBefore(trace: Trace, request: number, beforeEvent: number): boolean {
  const entry = trace.requests?.find((candidate) => candidate.id === request);
  if (
    !entry ||
    entry.finishReason === undefined ||
    entry.finishReason === "abort" ||
    entry.finishReason === "unfinished"
  )
    return false;
  return entry.output.length <= producedBefore(trace, request, beforeEvent);
}
