// Reads speculative rounds out of a trace: for each verify result, the request's verify rows and the
// draft rows that produced d_1..d_S (the last draft-extend row before it, then the draft-decode rows).
import type { Trace, TraceRow, VerifyResult } from "../trace/schema.ts";

export interface RowRef {
  event: number;
  row: number;
  data: TraceRow;
}

export interface Round {
  event: number;
  request: number;
  result: VerifyResult;
  /** The request's verify rows in order: root first. */
  verifyRows: TraceRow[];
  /** Rows whose predict produced d_1, d_2, ... (missing when the trace lacks draft events). */
  draftRows: RowRef[];
}

export function readRounds(trace: Trace): Round[] {
  const rounds: Round[] = [];
  const lastExtendRow = new Map<number, RowRef>();
  const decodeRows = new Map<number, RowRef[]>();
  for (const event of trace.events) {
    if (event.phase === "draft-extend") {
      event.rows.forEach((data, row) => lastExtendRow.set(data.request, { event: event.index, row, data }));
    } else if (event.phase === "draft-decode") {
      event.rows.forEach((data, row) => {
        const list = decodeRows.get(data.request) ?? [];
        list.push({ event: event.index, row, data });
        decodeRows.set(data.request, list);
      });
    } else if (event.phase === "verify" && event.verify) {
      for (const result of event.verify) {
        const verifyRows = event.rows.filter((row) => row.request === result.request);
        const extend = lastExtendRow.get(result.request);
        rounds.push({ event: event.index, request: result.request, result, verifyRows, draftRows: [...(extend ? [extend] : []), ...(decodeRows.get(result.request) ?? [])] });
        decodeRows.delete(result.request);
      }
    }
  }
  return rounds;
}

export function sequenceOf(trace: Trace, request: number): number[] | undefined {
  const entry = trace.requests?.find((candidate) => candidate.id === request);
  return entry && [...entry.prompt, ...entry.output];
}
