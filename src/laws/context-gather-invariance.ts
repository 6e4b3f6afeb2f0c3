// Law "context-gather invariance" (issue 34, item 7): on GPU EPs every forward is fed the context K/V rows
// gathered out of the pool on the host, with ctx_slots 0..C-1 (src/runtime/context-gather.ts, issue 23); the CPU
// EP reads the pool in place. The gather is engine code the CPU check would never run, so a case may set
// `engine.runtime.gatherContext`, which gathers on the CPU EP too. Attention then computes on identical values in
// identical shapes, so the run must equal the pool-fed run of the same case bit for bit: every event's rows and
// verify results, every request's outputs. Any difference is the gather feeding other rows (a run of slots cut
// short, a layer's offset, a stale row from a recycled buffer, columns out of order), not floating point.
import type { Case } from "../case/case.ts";
import type { Trace } from "../trace/schema.ts";
import { LawTally, type LawResult } from "./law.ts";
import type { Law } from "./definition.ts";

export const CONTEXT_GATHER_INVARIANCE = "context-gather invariance";

/** The twin: the same case fed the pool, as the CPU EP is by default. */
export function poolFedTwin(testCase: Readonly<Case>): Case {
  const { gatherContext: _gathered, ...runtime } = testCase.engine.runtime;
  return { ...testCase, engine: { ...testCase.engine, runtime } };
}

/**
 * Exact: JSON prints every double in its shortest round-trip form, so equal text is equal bits (up to the sign of
 * zero). Rows and verify results are compared per event, outputs per request.
 */
export function checkContextGatherInvariance(gathered: Trace, pooled: Trace): LawResult {
  const tally = new LawTally(CONTEXT_GATHER_INVARIANCE);
  const count = Math.min(gathered.events.length, pooled.events.length);
  for (let e = 0; e < count && !tally.violation; e++) {
    const a = gathered.events[e];
    const b = pooled.events[e];
    tally.checked += 1;
    if (a.phase !== b.phase || a.rows.length !== b.rows.length) {
      tally.fail({
        event: a.index,
        message: `event ${a.index}: ${a.phase} with ${a.rows.length} rows fed the gathered context, ${b.phase} with ${b.rows.length} fed the pool`,
      });
      break;
    }
    const row = a.rows.findIndex((rowA, r) => JSON.stringify(rowA) !== JSON.stringify(b.rows[r]));
    if (row >= 0) {
      tally.fail({
        event: a.index,
        index: row,
        request: a.rows[row].request,
        message: `event ${a.index} row ${row} (${a.phase}, request ${a.rows[row].request}, position ${a.rows[row].position}): ${JSON.stringify(a.rows[row])} fed the gathered context, ${JSON.stringify(b.rows[row])} fed the pool`,
      });
      break;
    }
    if (JSON.stringify(a.verify ?? []) !== JSON.stringify(b.verify ?? []))
      tally.fail({
        event: a.index,
        message: `verify event ${a.index}: results ${JSON.stringify(a.verify)} fed the gathered context, ${JSON.stringify(b.verify)} fed the pool`,
      });
  }
  if (!tally.violation && gathered.events.length !== pooled.events.length)
    tally.fail({
      message: `${gathered.events.length} forwards fed the gathered context, ${pooled.events.length} fed the pool`,
    });
  const pooledRequests = new Map((pooled.requests ?? []).map((request) => [request.id, request]));
  for (const request of gathered.requests ?? []) {
    if (tally.violation) break;
    const other = pooledRequests.get(request.id);
    tally.checked += 1;
    if (JSON.stringify(request) !== JSON.stringify(other))
      tally.fail({
        request: request.id,
        message: `request ${request.id}: output ${JSON.stringify(request.output)} (${request.finishReason}) fed the gathered context, ${JSON.stringify(other?.output)} (${other?.finishReason}) fed the pool`,
      });
  }
  return tally.result();
}

export const law: Law = {
  name: CONTEXT_GATHER_INVARIANCE,
  summary: "forwards fed the host-gathered context (the GPU EPs' feed) equal the pool-fed run bit for bit",
  appliesTo: (testCase) => testCase.engine.runtime.gatherContext === true,
  // Event for event and bit for bit: it cannot be composed into the canonical twin (that differs elsewhere too).
  needs: { twin: { kind: "pool-fed", describe: "the pool-fed run", of: poolFedTwin, composable: false } },
  // A GPU EP gathers in both runs (its feed is always the gathered context): nothing would be compared.
  unavailable: ({ run }) =>
    (run.trace.engine.ep ?? "cpu") === "cpu"
      ? undefined
      : `the run is on EP ${run.trace.engine.ep}, which gathers the context in both runs (the pool feed is the CPU EP's)`,
  check: ({ run, twin }) => checkContextGatherInvariance(run.trace, twin!.trace),
};
