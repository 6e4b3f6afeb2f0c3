// Trace surgery for tests: rebuild events' rows (insert or drop) and re-point every hidden-state
// provenance and batch-row reference at the rows' new indices.
import type { Trace, TraceEvent, TraceRow } from "../../src/trace/schema.ts";

/** `rebuild(event)` returns the event's new rows as [row, old index or undefined for a new row]. */
export function editRows(
  trace: Trace,
  rebuild: (event: TraceEvent, events: readonly TraceEvent[]) => [TraceRow, number | undefined][] | undefined,
): Trace {
  const out = structuredClone(trace);
  const maps = new Map<number, Map<number, number>>();
  for (const event of out.events) {
    const rows = rebuild(event, out.events);
    if (!rows) continue;
    const map = new Map<number, number>();
    rows.forEach(([, old], index) => old !== undefined && map.set(old, index));
    maps.set(event.index, map);
    event.rows = rows.map(([row]) => row);
  }
  for (const event of out.events) {
    const own = maps.get(event.index);
    for (const row of event.rows) {
      const source = row.hidden && maps.get(row.hidden.event);
      if (row.hidden && source?.has(row.hidden.row)) row.hidden = { ...row.hidden, row: source.get(row.hidden.row)! };
      if (own && row.attended?.batchRows)
        row.attended = {
          ...row.attended,
          batchRows: row.attended.batchRows.filter((index) => own.has(index)).map((index) => own.get(index)!),
        };
    }
  }
  return out;
}

/**
 * SGLang spec v2's draft extend after verify: N rows per request, the accepted ones then padding (the
 * rejected verify rows: their tokens, positions and hidden states), per request contiguous.
 */
export function padDraftExtend(trace: Trace): Trace {
  const lastVerify = new Map<number, { event: TraceEvent; acceptLen: number }>();
  return editRows(trace, (event) => {
    if (event.phase === "verify" && event.verify) {
      for (const result of event.verify) lastVerify.set(result.request, { event, acceptLen: result.acceptLen });
      return undefined;
    }
    if (event.phase !== "draft-extend") return undefined;
    const rows: [TraceRow, number | undefined][] = [];
    const order = [...new Set(event.rows.map((row) => row.request))];
    for (const request of order) {
      event.rows.forEach((row, index) => row.request === request && rows.push([row, index]));
      const verify = lastVerify.get(request);
      if (!verify) continue;
      lastVerify.delete(request);
      const verifyRows = verify.event.rows
        .map((row, index) => ({ row, index }))
        .filter(({ row }) => row.request === request);
      for (const { row, index } of verifyRows.slice(verify.acceptLen)) {
        rows.push([
          {
            request,
            token: row.token,
            position: row.position,
            temporary: false,
            hidden: { event: verify.event.index, row: index },
            predict: row.predict,
          },
          undefined,
        ]);
      }
    }
    return rows;
  });
}
