// Law "phase contracts": every hidden-state input row carries its provenance. Draft-extend rows come
// from the target forward (prefill or verify) of the same request and position; draft-decode rows from
// the previous draft step of the same request (multi-layer modules: the target at the row's anchor).
// Draft decode runs topk rows per request (from the trace's config when present), k at module step k.
import type { Trace, TraceEvent } from "../trace/schema.ts";
import { LawTally, notCheckable, type LawResult } from "./law.ts";
import type { Law } from "./definition.ts";

export const PHASE_CONTRACTS = "phase contracts";

export function checkPhaseContracts(trace: Trace): LawResult {
  const draftEvents = trace.events.filter((event) => event.phase === "draft-extend" || event.phase === "draft-decode");
  if (draftEvents.length === 0) return notCheckable(PHASE_CONTRACTS, "the trace has no draft events");
  if (!draftEvents.some((event) => event.rows.some((row) => row.hidden)))
    return notCheckable(PHASE_CONTRACTS, "draft rows carry no hidden-state provenance");
  const byIndex = new Map<number, TraceEvent>(trace.events.map((event) => [event.index, event]));
  const tally = new LawTally(PHASE_CONTRACTS);
  for (const event of draftEvents) {
    const perRequest = new Map<number, number>();
    event.rows.forEach((row, rowIndex) => {
      perRequest.set(row.request, (perRequest.get(row.request) ?? 0) + 1);
      if (!row.hidden) return;
      tally.checked += 1;
      const where = { request: row.request, event: event.index, index: rowIndex };
      const source = byIndex.get(row.hidden.event);
      const sourceRow = source?.rows[row.hidden.row];
      if (!source || !sourceRow) {
        tally.fail({
          ...where,
          message: `hidden input of event ${event.index} row ${rowIndex} points at missing event ${row.hidden.event} row ${row.hidden.row}`,
        });
        return;
      }
      // Multi-layer modules read the target's hidden state at their anchor in every draft phase.
      const wantTarget = event.phase === "draft-extend" || event.module !== undefined;
      const sourceIsTarget = source.phase === "prefill" || source.phase === "verify" || source.phase === "decode";
      const expectedPosition = wantTarget ? row.position : row.position - 1;
      if (
        sourceIsTarget !== wantTarget ||
        sourceRow.request !== row.request ||
        sourceRow.position !== expectedPosition
      ) {
        tally.fail({
          ...where,
          message: `${event.phase} row ${rowIndex} (request ${row.request}, position ${row.position}) takes its hidden state from ${source.phase} event ${source.index} row ${row.hidden.row} (request ${sourceRow.request}, position ${sourceRow.position}); expected a ${wantTarget ? "target" : "draft"} row of the same request at position ${expectedPosition}`,
        });
      }
    });
    // Rows per request: topk in chain/tree drafting, k at multi-layer step k.
    const expectedRows = event.module ?? trace.config?.topk;
    if (event.phase === "draft-decode" && typeof expectedRows === "number") {
      const what = event.module !== undefined ? `module ${event.module}'s step` : "topk";
      for (const [request, rows] of perRequest)
        if (rows !== expectedRows)
          tally.fail({
            request,
            event: event.index,
            message: `draft decode event ${event.index} has ${rows} rows for request ${request}, expected ${what} = ${expectedRows}`,
          });
    }
  }
  return tally.result();
}

export const law: Law = {
  name: PHASE_CONTRACTS,
  summary: "hidden-state inputs come from the right phase, request and position; rows per request per phase",
  appliesTo: (testCase) => testCase.engine.mode === "speculative",
  needs: {},
  check: ({ run }) => checkPhaseContracts(run.trace),
};
