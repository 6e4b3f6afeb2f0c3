// Law "positions": per request and pool, persisted KV positions are written contiguously (no gap, no
// repeat); every row attends exactly to the request's positions below its own (persisted, its
// ancestors' temporary rows, earlier rows of its forward) plus itself, and to nothing of another request.
// Draft decode continuing the KV it extends, and verify rows at L + depth, are special cases.
import type { Trace } from "../trace/schema.ts";
import { combine, LawTally, notCheckable, type LawResult } from "./law.ts";
import type { Law } from "./definition.ts";
import { compressRanges } from "./request-view.ts";

export const POSITIONS = "positions";

export function checkPositions(trace: Trace): LawResult {
  const hasAttention = trace.events.some((event) => event.rows.some((row) => row.attended));
  if (!hasAttention) return notCheckable(POSITIONS, "trace rows carry no attended positions");
  const tally = new LawTally(POSITIONS);
  const persistedLength = new Map<string, number>();
  // A retract frees the request's KV in every pool; resume rewrites it from position 0, or from the end of
  // a prefix hit (whose positions the request holds without writing them).
  const lifecycleBefore = new Map<number, NonNullable<Trace["lifecycle"]>>();
  for (const entry of trace.lifecycle ?? []) {
    if (entry.kind === "retract" || entry.kind === "prefix-hit")
      lifecycleBefore.set(entry.beforeEvent, [...(lifecycleBefore.get(entry.beforeEvent) ?? []), entry]);
  }
  for (const event of trace.events) {
    for (const entry of lifecycleBefore.get(event.index) ?? []) {
      if (entry.kind === "retract") {
        for (const key of [...persistedLength.keys()])
          if (key.endsWith(`:${entry.request}`)) persistedLength.delete(key);
      } else for (const hit of entry.pools ?? []) persistedLength.set(`${hit.pool}:${entry.request}`, hit.length);
    }
    const pool = event.pool ?? event.model ?? (event.phase.startsWith("draft") ? "draft" : "target");
    event.rows.forEach((row, rowIndex) => {
      tally.checked += 1;
      const where = { request: row.request, event: event.index, index: rowIndex };
      if (row.temporary === false) {
        const key = `${pool}:${row.request}`;
        const expected = persistedLength.get(key) ?? 0;
        if (row.position !== expected) {
          const what = row.position > expected ? "skips to" : "rewrites";
          tally.fail({
            ...where,
            message: `${pool} KV of request ${row.request} ${what} position ${row.position}, next expected ${expected}`,
            expected,
            got: row.position,
          });
        }
        persistedLength.set(key, Math.max(expected, row.position + 1));
      }
      const attended = row.attended;
      if (!attended) return;
      if (attended.foreign?.length) {
        const other = attended.foreign[0];
        tally.fail({
          ...where,
          message: `row of request ${row.request} attends request ${other.request}'s position ${other.position}`,
        });
        return;
      }
      const seen: number[] = [];
      for (const [lo, hi] of attended.positions) for (let p = lo; p <= hi; p++) seen.push(p);
      seen.push(...(attended.temporary ?? []));
      let sawSelf = false;
      for (const batchRow of attended.batchRows ?? []) {
        if (batchRow === rowIndex) sawSelf = true;
        else seen.push(event.rows[batchRow].position);
      }
      const exact = seen.length === row.position && coversPrefix(seen);
      if (!exact || (attended.batchRows && !sawSelf)) {
        seen.sort((a, b) => a - b);
        tally.fail({
          ...where,
          message: `row at position ${row.position} of request ${row.request} (${event.phase}) attends positions [${compressRanges(seen, ", ")}]${sawSelf ? "" : " without itself"}, expected 0..${row.position - 1} and itself`,
        });
      }
    });
  }
  return tally.result();
}

/** The positions are 0 .. length - 1, each once (in any order): what sorting them and comparing would say. */
function coversPrefix(positions: readonly number[]): boolean {
  const seen = new Uint8Array(positions.length);
  for (const position of positions) {
    if (!Number.isInteger(position) || position < 0 || position >= positions.length || seen[position]) return false;
    seen[position] = 1;
  }
  return true;
}

export const law: Law = {
  name: POSITIONS,
  summary: "persisted KV contiguous per request and pool; each row attends exactly its request's earlier positions",
  appliesTo: () => true,
  needs: { baseline: "also-check" },
  check: ({ run, baseline }) =>
    baseline
      ? combine(checkPositions(run.trace), checkPositions(baseline.trace), "target-only run")
      : checkPositions(run.trace),
};
