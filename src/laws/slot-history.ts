// Law "slot history" (issue 28): a request's tokens, drafts, accept lengths and positions do not depend on which
// requests used its slot before. Engines keep state per slot (llama.cpp's server slots with their drafter
// contexts, SGLang's req_to_token rows); a slot that a request takes must hold nothing of the request before it
// (llama.cpp#27852: the n-gram cache's begin() a no-op, so a request drafts from its slot's previous request's
// tokens; the class of llama.cpp#22105 and #26741). The twin runs the same requests each on a fresh slot of its
// own (engine.requestSlots unset), without aborts or retracts; compared request by request, tie-aware, as the
// other invariance laws compare (invariance.ts). Applies to cases with request slots and 2+ requests.
import type { Case } from "../case/case.ts";
import type { Trace } from "../trace/schema.ts";
import { checkInvariance, type Tolerance } from "./invariance.ts";
import { notCheckable, type LawResult } from "./law.ts";
import type { Law } from "./definition.ts";

export const SLOT_HISTORY = "slot history";

/** The twin: every request on a fresh slot (no request slots), no aborts or retracts. */
export function freshSlotsTwin(testCase: Readonly<Case>): Case {
  const { requestSlots, ...engine } = testCase.engine;
  void requestSlots;
  return {
    ...testCase,
    engine,
    workload: {
      ...testCase.workload,
      aborts: [],
      ...(testCase.workload.retracts ? { retracts: [] } : {}),
    },
  };
}

/** Requests that ran on a slot an earlier request of the trace had used (the trace's `slot`), in order. */
export function reusedSlots(trace: Readonly<Trace>): number[] {
  const firstUse = new Map<number, number>();
  const reused: number[] = [];
  // A request's first row says when it took its slot: a slot is reused by every later first-taker.
  const firstEvent = new Map<number, number>();
  for (const event of trace.events)
    for (const row of event.rows) if (!firstEvent.has(row.request)) firstEvent.set(row.request, event.index);
  const requests = [...(trace.requests ?? [])]
    .filter((request) => request.slot !== undefined && firstEvent.has(request.id))
    .sort((a, b) => firstEvent.get(a.id)! - firstEvent.get(b.id)!);
  for (const request of requests) {
    if (firstUse.has(request.slot!)) reused.push(request.id);
    else firstUse.set(request.slot!, request.id);
  }
  return reused;
}

const NO_REUSE = "no request ran on a slot another request had used";

export function checkSlotHistory(run: Trace, fresh: Trace, tolerance?: Tolerance): LawResult {
  if (run.requests?.some((request) => request.slot !== undefined) && reusedSlots(run).length === 0)
    return notCheckable(SLOT_HISTORY, NO_REUSE);
  return checkInvariance(run, fresh, {
    law: SLOT_HISTORY,
    subject: "the run on reused slots",
    baseline: "the run on fresh slots",
    tolerance,
  });
}

export const law: Law = {
  name: SLOT_HISTORY,
  summary: "a request's tokens, drafts, accept lengths and positions do not depend on who used its slot before",
  appliesTo: (testCase) => testCase.engine.requestSlots !== undefined && testCase.workload.requests.length > 1,
  needs: { twin: { kind: "fresh slots", describe: "the run on fresh slots", of: freshSlotsTwin, composable: true } },
  unavailable: ({ run }) =>
    run.trace.requests?.some((request) => request.slot !== undefined) && reusedSlots(run.trace).length === 0
      ? NO_REUSE
      : undefined,
  check: ({ run, twin }) => checkSlotHistory(run.trace, twin!.trace),
};
