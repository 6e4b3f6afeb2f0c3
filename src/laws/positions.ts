// Law "positions": per request and pool, persisted KV positions are written contiguously (no gap, no
// repeat); every row attends exactly to the request's positions below its own (persisted, its
// ancestors' temporary rows, earlier rows of its forward) plus itself, and to nothing of another request;
// and every persisted position a row attends was written before, in that row's pool (issue 25: a draft
// position skipped while later rows attend across it, seen on a third-party trace whose rows do not say
// which writes are temporary, so the contiguity check could not see the gap). Written: a row not marked
// temporary, a verify's accepted path (compacted into the target pool at L..L + accept_len - 1), a prefix
// hit's shared positions. Draft decode continuing the KV it extends, and verify rows at L + depth, are
// special cases.
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
  // Per pool and request: the positions whose persisted KV has been written (bit per position).
  const written = new Map<string, Uint8Array>();
  const markWritten = (key: string, from: number, to: number) => {
    let bits = written.get(key);
    if (!bits || bits.length < to) {
      const grown = new Uint8Array(Math.max(to, 2 * (bits?.length ?? 0), 64));
      if (bits) grown.set(bits);
      written.set(key, (bits = grown));
    }
    bits.fill(1, from, to);
  };
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
        for (const key of [...written.keys()]) if (key.endsWith(`:${entry.request}`)) written.delete(key);
      } else
        for (const hit of entry.pools ?? []) {
          persistedLength.set(`${hit.pool}:${entry.request}`, hit.length);
          markWritten(`${hit.pool}:${entry.request}`, 0, hit.length);
        }
    }
    const pool = event.pool ?? event.model ?? (event.phase.startsWith("draft") ? "draft" : "target");
    const pendingWrites: [string, number][] = [];
    event.rows.forEach((row, rowIndex) => {
      tally.checked += 1;
      // Discarded rows wrote their KV too (overlap: a zombie's or an aborted round's results are dropped, not its
      // writes).
      if (row.temporary !== true) pendingWrites.push([`${pool}:${row.request}`, row.position]);
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
      const unwritten = firstUnwritten(attended.positions, written.get(`${pool}:${row.request}`));
      if (unwritten !== undefined)
        tally.fail({
          ...where,
          message: `row at position ${row.position} of request ${row.request} (${event.phase}) attends ${pool} position ${unwritten}, which no earlier forward wrote`,
          got: unwritten,
        });
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
    // This forward's writes count for later forwards (its own rows see each other as batch rows).
    for (const [key, position] of pendingWrites) markWritten(key, position, position + 1);
    for (const result of event.verify ?? []) {
      const root = event.rows.find((row) => row.request === result.request);
      if (root) markWritten(`${pool}:${result.request}`, root.position, root.position + result.acceptLen);
    }
  }
  return tally.result();
}

/** The first position of the ranges whose bit is not set (undefined when all are written). */
function firstUnwritten(ranges: readonly (readonly number[])[], bits: Uint8Array | undefined): number | undefined {
  for (const [lo, hi] of ranges)
    for (let position = lo; position <= hi; position++) if (!bits || bits[position] !== 1) return position;
  return undefined;
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
