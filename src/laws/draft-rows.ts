// The draft rows the draft reference law checks, each with the root position of its round and its draft path
// (the tokens fed after x_L up to and including its own), read in one of two ways:
// - through hidden-state provenance (drafts fed a hidden state: EAGLE heads, tapped mirrors, module drafts):
//   a draft-decode row names the draft row it continues, back to the draft extend that yielded d_1;
// - from the tokens alone (standalone drafts, issue 25): a standalone draft model is an ordinary causal LM
//   over the sequence, so a row's prediction depends only on the verified tokens x_0..x_L and the tokens fed
//   after them in its round. A chain's path is the request's draft-decode rows since its round's draft extend,
//   in event order; the root is that extend's last anchor + 1 (an engine that records no extend: the root
//   row of the verify that ends the round). Provenance is not needed (a standalone draft takes no hidden
//   state, docs/tracing.md convention 7) and, where a trace records it, not trusted for chains; tree rows
//   (several per request and step) are read through it, as no order can tell their parents.
import type { Trace, TraceEvent, TraceRow } from "../trace/schema.ts";
import { traceTopk } from "./draft-tree.ts";

export interface CheckedRow {
  event: TraceEvent;
  rowIndex: number;
  row: TraceRow;
  rootPosition: number;
  /** Chain/tree: the draft path ending at this row. Multi-layer: the round's drafts d_1..d_k fed to module k. */
  pathTokens: number[];
}

/** The last row of each request in an extend (or module) event: it yields the root's candidates or the next draft. */
function lastRowsOf(event: TraceEvent): CheckedRow[] {
  const last = new Map<number, number>();
  event.rows.forEach((row, rowIndex) => last.set(row.request, rowIndex));
  return [...last.values()].map((rowIndex) => {
    const row = event.rows[rowIndex];
    const drafts =
      event.phase === "draft-decode"
        ? event.rows.filter((other) => other.request === row.request).map((other) => other.token)
        : [];
    return { event, rowIndex, row, rootPosition: row.position + 1, pathTokens: drafts };
  });
}

/** A draft-decode row's root and path through hidden-state provenance, or undefined when it does not reach an extend. */
function pathThroughProvenance(
  byIndex: ReadonlyMap<number, TraceEvent>,
  row: TraceRow,
): { rootPosition: number; pathTokens: number[] } | undefined {
  const pathTokens = [row.token];
  let provenance = row.hidden;
  while (provenance) {
    const sourceEvent = byIndex.get(provenance.event);
    const source = sourceEvent?.rows[provenance.row];
    if (!source || !sourceEvent) return undefined;
    if (sourceEvent.phase === "draft-extend") return { rootPosition: source.position + 1, pathTokens };
    pathTokens.unshift(source.token);
    provenance = source.hidden;
  }
  return undefined;
}

const noProvenance = (event: TraceEvent, rowIndex: number) =>
  `draft-decode event ${event.index} row ${rowIndex} has no hidden-state provenance back to a draft extend`;

/** The rows to check, each with its root position and draft path, read through hidden provenance. */
export function rowsThroughProvenance(trace: Trace): CheckedRow[] | string {
  const byIndex = new Map(trace.events.map((event) => [event.index, event]));
  const checked: CheckedRow[] = [];
  for (const event of trace.events) {
    if (event.phase === "draft-extend" || (event.phase === "draft-decode" && event.module !== undefined)) {
      checked.push(...lastRowsOf(event));
    } else if (event.phase === "draft-decode") {
      for (const [rowIndex, row] of event.rows.entries()) {
        const path = pathThroughProvenance(byIndex, row);
        if (!path) return noProvenance(event, rowIndex);
        checked.push({ event, rowIndex, row, ...path });
      }
    }
  }
  return checked;
}

interface StandaloneRound {
  /** The round's root position, from its draft extend; undefined until the verify when none was recorded. */
  rootPosition?: number;
  path: number[];
  /** Rows of a round without an extend, waiting for its verify's root. */
  waiting: CheckedRow[];
}

/** The rows to check of a standalone draft's trace, read from the tokens (provenance only for tree rows). */
export function rowsFromTokens(trace: Trace): CheckedRow[] | string {
  const byIndex = new Map(trace.events.map((event) => [event.index, event]));
  const checked: CheckedRow[] = [];
  const rounds = new Map<number, StandaloneRound>();
  const tree = traceTopk(trace) > 1;
  for (const event of trace.events) {
    if (event.phase === "draft-extend") {
      for (const last of lastRowsOf(event)) {
        checked.push(last);
        rounds.set(last.row.request, { rootPosition: last.rootPosition, path: [], waiting: [] });
      }
    } else if (event.phase === "draft-decode") {
      const rowsPerRequest = new Map<number, number>();
      for (const row of event.rows) rowsPerRequest.set(row.request, (rowsPerRequest.get(row.request) ?? 0) + 1);
      for (const [rowIndex, row] of event.rows.entries()) {
        if (tree || rowsPerRequest.get(row.request)! > 1) {
          // A tree step: which earlier row is a node's parent only provenance says.
          const path = pathThroughProvenance(byIndex, row);
          if (!path) return noProvenance(event, rowIndex);
          checked.push({ event, rowIndex, row, ...path });
          continue;
        }
        let round = rounds.get(row.request);
        if (!round) rounds.set(row.request, (round = { path: [], waiting: [] }));
        round.path.push(row.token);
        const entry = { event, rowIndex, row, rootPosition: round.rootPosition ?? -1, pathTokens: [...round.path] };
        if (round.rootPosition === undefined) round.waiting.push(entry);
        else checked.push(entry);
      }
    } else if (event.phase === "verify") {
      const roots = new Map<number, number>();
      for (const row of event.rows) if (!roots.has(row.request)) roots.set(row.request, row.position);
      for (const [request, rootPosition] of roots) {
        const round = rounds.get(request);
        if (!round || round.rootPosition !== undefined) continue;
        // No extend opened this round: its verify's root row is the root, and the next round starts afresh.
        checked.push(...round.waiting.map((entry) => ({ ...entry, rootPosition })));
        rounds.delete(request);
      }
    }
  }
  return checked;
}
