// Reads speculative rounds out of a trace: for each verify result, the request's verify rows. Discarded
// rounds (overlap: run while their request had finished, or in flight when it was aborted or retracted)
// emitted nothing and are left out.
import type { Trace, TraceRow, VerifyResult } from "../trace/schema.ts";

export interface Round {
  event: number;
  request: number;
  result: VerifyResult;
  /** The request's verify rows in order: root first. */
  verifyRows: TraceRow[];
}

export function readRounds(trace: Trace): Round[] {
  const rounds: Round[] = [];
  for (const event of trace.events) {
    if (event.phase !== "verify" || !event.verify) continue;
    for (const result of event.verify) {
      if (result.discarded) continue;
      rounds.push({
        event: event.index,
        request: result.request,
        result,
        verifyRows: event.rows.filter((row) => row.request === result.request),
      });
    }
  }
  return rounds;
}

export function sequenceOf(trace: Trace, request: number): number[] | undefined {
  const entry = trace.requests?.find((candidate) => candidate.id === request);
  return entry && [...entry.prompt, ...entry.output];
}
