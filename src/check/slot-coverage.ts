// Coverage corners of slot history (engine.requestSlots, src/engine/slot-drafter.ts), read from a trace's
// requests (`slot`) and the order they first ran in: a request on a slot another request used, and one taking a
// slot after a request that ended longer than its prompt (llama.cpp#27852's corner: its prompt never passes
// the stale watermark). Only spaces reusing slots reach them (properties/dimensions.ts).
import type { Trace } from "../trace/schema.ts";

export const SLOT_COVERAGE_LABELS = [
  /** A request ran on a slot an earlier request of the run had used. */
  "request on a reused slot",
  /** ... and that earlier request ended with more tokens (prompt + output) than the later one's prompt. */
  "slot reused after a longer request",
] as const;

export type SlotCoverageLabel = (typeof SLOT_COVERAGE_LABELS)[number];

export function slotCoverageLabels(trace: Trace): SlotCoverageLabel[] {
  const requests = (trace.requests ?? []).filter((request) => request.slot !== undefined);
  if (requests.length < 2) return [];
  const firstEvent = new Map<number, number>();
  for (const event of trace.events)
    for (const row of event.rows) if (!firstEvent.has(row.request)) firstEvent.set(row.request, event.index);
  const ordered = requests
    .filter((request) => firstEvent.has(request.id))
    .sort((a, b) => firstEvent.get(a.id)! - firstEvent.get(b.id)!);
  const found = new Set<SlotCoverageLabel>();
  const lastOn = new Map<number, number>();
  for (const request of ordered) {
    const before = lastOn.get(request.slot!);
    if (before !== undefined) {
      found.add("request on a reused slot");
      if (before > request.prompt.length) found.add("slot reused after a longer request");
    }
    lastOn.set(request.slot!, request.prompt.length + request.output.length);
  }
  return [...found];
}
