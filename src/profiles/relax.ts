// Trace transforms behind the profiles' relaxations. Each returns a new trace (the input is never
// modified) and how many rows or requests it touched, so the report can say what a relaxation did.
import type { Trace, TraceEvent, TraceRow } from "../trace/schema.ts";

export interface Transformed {
  trace: Trace;
  applied: number;
  detail: string;
}

function cloneTrace(trace: Trace): Trace {
  return structuredClone(trace);
}

/** SGLang v2 pads draft extend to N rows per request: keep each request's first accept_len rows after a verify. */
export function dropPaddedExtendRows(trace: Trace): Transformed {
  const out = cloneTrace(trace);
  const lastAccept = new Map<number, number>();
  const remaps = new Map<number, (number | undefined)[]>();
  let dropped = 0;
  let events = 0;
  for (const event of out.events) {
    if (event.phase === "verify" && event.verify) {
      for (const result of event.verify) lastAccept.set(result.request, result.acceptLen);
      continue;
    }
    if (event.phase !== "draft-extend") continue;
    const kept = new Map<number, number>();
    const remap: (number | undefined)[] = [];
    const rows: TraceRow[] = [];
    event.rows.forEach((row) => {
      const limit = lastAccept.get(row.request);
      const count = kept.get(row.request) ?? 0;
      if (limit !== undefined && count >= limit) {
        remap.push(undefined);
        return;
      }
      kept.set(row.request, count + 1);
      remap.push(rows.length);
      rows.push(row);
    });
    for (const request of kept.keys()) lastAccept.delete(request);
    if (rows.length !== event.rows.length) {
      dropped += event.rows.length - rows.length;
      events += 1;
      remaps.set(event.index, remap);
      event.rows = rows;
    }
  }
  if (dropped > 0) remapRowReferences(out, remaps);
  return { trace: out, applied: dropped, detail: `dropped ${dropped} padding rows in ${events} draft-extend events` };
}

/** Rewrites hidden provenance and batch-row references after rows were removed; references to removed rows point past the end. */
function remapRowReferences(trace: Trace, remaps: Map<number, (number | undefined)[]>): void {
  const sizes = new Map(trace.events.map((event) => [event.index, event.rows.length]));
  for (const event of trace.events) {
    const own = remaps.get(event.index);
    for (const row of event.rows) {
      if (row.hidden) {
        const remap = remaps.get(row.hidden.event);
        if (remap)
          row.hidden = {
            ...row.hidden,
            row: remap[row.hidden.row] ?? (sizes.get(row.hidden.event) ?? 0) + row.hidden.row,
          };
      }
      if (own && row.attended?.batchRows) {
        row.attended = {
          ...row.attended,
          batchRows: row.attended.batchRows
            .map((index) => own[index])
            .filter((index): index is number => index !== undefined),
        };
      }
    }
  }
}

/** Tree draft decode attending per lane: the positions law does not judge draft-decode rows' attended sets. */
export function stripDraftDecodeAttention(trace: Trace): Transformed {
  const out = cloneTrace(trace);
  let stripped = 0;
  for (const event of out.events) {
    if (event.phase !== "draft-decode") continue;
    for (const row of event.rows) {
      if (row.attended) {
        delete row.attended;
        stripped += 1;
      }
    }
  }
  return { trace: out, applied: stripped, detail: `${stripped} draft-decode rows' attended sets not judged` };
}

/**
 * Radix-cache prefix sharing: a request whose first persisted write in a pool starts at p0 > 0 reuses a
 * shared prefix. A synthetic first event declares positions 0..p0-1 persisted, so contiguity is judged
 * from p0 on (and attended ranges still must cover the prefix).
 */
export function declareSharedPrefixes(trace: Trace): Transformed {
  const out = cloneTrace(trace);
  const firstWrite = new Map<string, { pool: string; request: number; position: number }>();
  for (const event of out.events) {
    const pool = poolOf(event);
    for (const row of event.rows) {
      if (row.temporary !== false) continue;
      const key = `${pool}:${row.request}`;
      if (!firstWrite.has(key)) firstWrite.set(key, { pool, request: row.request, position: row.position });
    }
  }
  const shared = [...firstWrite.values()].filter((write) => write.position > 0);
  if (shared.length === 0) return { trace: out, applied: 0, detail: "" };
  const maxIndex = Math.max(0, ...out.events.map((event) => event.index));
  const synthetic: TraceEvent[] = [];
  for (const [offset, pool] of [...new Set(shared.map((write) => write.pool))].entries()) {
    const rows: TraceRow[] = [];
    for (const write of shared.filter((candidate) => candidate.pool === pool)) {
      for (let position = 0; position < write.position; position++)
        rows.push({ request: write.request, token: 0, position, temporary: false });
    }
    const phase = pool.startsWith("draft") ? "draft-extend" : "prefill";
    synthetic.push({ index: maxIndex + 1 + offset, phase, pool, rows });
  }
  out.events = [...synthetic, ...out.events];
  return {
    trace: out,
    applied: shared.length,
    detail: shared
      .map((write) => `request ${write.request} ${write.pool} KV starts at position ${write.position}`)
      .join("; "),
  };
}

export function poolOf(event: TraceEvent): string {
  return event.pool ?? event.model ?? (event.phase.startsWith("draft") ? "draft" : "target");
}

export function isMultiLayer(trace: Trace): boolean {
  if (trace.events.some((event) => event.module !== undefined && event.module > 0)) return true;
  const draftPools = new Set(trace.events.filter((event) => event.phase.startsWith("draft")).map(poolOf));
  return draftPools.size > 1;
}
