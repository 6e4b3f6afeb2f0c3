// Law "draft reference": every draft row's output (its predict, and its logit within tolerance) equals a
// cache-free recomputation of the draft over the verified sequence (target hidden states recomputed
// too) followed by the row's draft path. Checked rows: the last row of each request in a draft-extend
// event (it yields the root's candidates) and every draft-decode row (chain or tree node), whose path is
// read back through hidden-state provenance. With the EAGLE heads and the tapped mirrors this catches
// hidden-state plumbing bugs; with every draft it catches wrong tokens and positions fed to the draft. EAGLE-3
// references are fed what the checkpoint's own config names (oracle.eagle3), argmaxes mapped by its d2t.
import type { Trace, TraceEvent, TraceRow } from "../trace/schema.ts";
import { LawTally, notCheckable, type LawResult } from "./law.ts";
import type { RowPrediction } from "../reference/cache-free.ts";
import type { DraftRowRequest, ModuleRowRequest, ReferenceOracle } from "../reference/oracle.ts";
import { sequenceOf } from "./rounds.ts";
import type { Law } from "./definition.ts";

export const DRAFT_REFERENCE = "draft reference";

/** Relative logit tolerance on top of the absolute epsilon: float32 accumulates rounding with depth. */
export function relativeTolerance(oracle: ReferenceOracle): number {
  return oracle.spec.dtype === "float32" ? 1e-5 : 1e-12;
}

interface CheckedRow {
  event: TraceEvent;
  rowIndex: number;
  row: TraceRow;
  rootPosition: number;
  /** Chain/tree: the draft path ending at this row. Multi-layer: the round's drafts d_1..d_k fed to module k. */
  pathTokens: number[];
}

/** The rows to check, each with its root position and draft path (through hidden provenance). */
function rowsToCheck(trace: Trace): CheckedRow[] | string {
  const byIndex = new Map(trace.events.map((event) => [event.index, event]));
  const checked: CheckedRow[] = [];
  for (const event of trace.events) {
    if (event.phase === "draft-extend" || (event.phase === "draft-decode" && event.module !== undefined)) {
      // The last row of each request: it yields the root's candidates (module 0) or the next draft.
      const last = new Map<number, number>();
      event.rows.forEach((row, rowIndex) => last.set(row.request, rowIndex));
      for (const rowIndex of last.values()) {
        const row = event.rows[rowIndex];
        const drafts =
          event.phase === "draft-decode"
            ? event.rows.filter((other) => other.request === row.request).map((other) => other.token)
            : [];
        checked.push({ event, rowIndex, row, rootPosition: row.position + 1, pathTokens: drafts });
      }
    } else if (event.phase === "draft-decode") {
      for (const [rowIndex, row] of event.rows.entries()) {
        const path = [row.token];
        let provenance = row.hidden;
        let rootPosition: number | undefined;
        while (provenance) {
          const source = byIndex.get(provenance.event)?.rows[provenance.row];
          const sourceEvent = byIndex.get(provenance.event);
          if (!source || !sourceEvent) break;
          if (sourceEvent.phase === "draft-extend") {
            rootPosition = source.position + 1;
            break;
          }
          path.unshift(source.token);
          provenance = source.hidden;
        }
        if (rootPosition === undefined)
          return `draft-decode event ${event.index} row ${rowIndex} has no hidden-state provenance back to a draft extend`;
        checked.push({ event, rowIndex, row, rootPosition, pathTokens: path });
      }
    }
  }
  return checked;
}

export async function checkDraftReference(trace: Trace, oracle: ReferenceOracle): Promise<LawResult> {
  if (!oracle.hasDraft) return notCheckable(DRAFT_REFERENCE, "no draft model");
  const rows = rowsToCheck(trace);
  if (typeof rows === "string") return notCheckable(DRAFT_REFERENCE, rows);
  if (rows.length === 0) return notCheckable(DRAFT_REFERENCE, "the trace has no draft rows");
  if (rows.some(({ row }) => row.predict === undefined))
    return notCheckable(DRAFT_REFERENCE, "draft rows carry no predict");
  const tally = new LawTally(DRAFT_REFERENCE);
  // What each row is compared with, announced to the oracle first so it computes them all in a few forwards.
  const references: { checked: CheckedRow; expected: () => Promise<RowPrediction> }[] = [];
  const draftRows: DraftRowRequest[] = [];
  const moduleRows: ModuleRowRequest[] = [];
  const sequences = new Map<number, number[] | undefined>();
  for (const checked of rows) {
    const { event, row, rootPosition, pathTokens } = checked;
    if (!sequences.has(row.request)) sequences.set(row.request, sequenceOf(trace, row.request));
    const sequence = sequences.get(row.request);
    // The root must be verified: a request aborted or retracted mid-round has no sequence beyond it.
    if (!sequence || rootPosition >= sequence.length) continue;
    const module = event.module;
    if (module === undefined) {
      draftRows.push({ sequence, rootPosition, pathTokens });
      references.push({
        checked,
        expected: async () => (await oracle.draftRow(sequence, rootPosition, pathTokens)).prediction,
      });
    } else {
      // Module k's row at anchor i reads x_{i+k+1}: for a persisted extend row it must be verified.
      const root = event.phase === "draft-decode" ? rootPosition : sequence.length - 1;
      if (row.position + module + 1 > root + pathTokens.length) continue;
      const request = { sequence, module, lastAnchor: row.position, rootPosition: root, drafts: pathTokens };
      moduleRows.push(request);
      references.push({
        checked,
        expected: () => oracle.moduleRow(sequence, module, row.position, root, pathTokens),
      });
    }
  }
  await oracle.prepareRequests(trace.requests);
  await oracle.prepareDraftRows(draftRows);
  await oracle.prepareModuleRows(moduleRows);
  for (const { checked, expected: reference } of references) {
    const { event, rowIndex, row, pathTokens } = checked;
    const expected = await reference();
    tally.checked += 1;
    const where = { request: row.request, event: event.index, index: rowIndex };
    const label = `${event.phase} event ${event.index} row ${rowIndex} (request ${row.request}, position ${row.position}${pathTokens.length ? `, draft path ${pathTokens.join(" ")}` : ""})`;
    if (row.predict !== expected.argmax) {
      if (expected.margin < oracle.draftEpsilon) {
        tally.ties += 1;
        continue;
      }
      tally.fail({
        ...where,
        message: `${label}: the draft predicts ${row.predict}, the cache-free draft ${expected.argmax} (draft margin ${expected.margin})`,
        expected: expected.argmax,
        got: row.predict,
        margin: expected.margin,
      });
      continue;
    }
    if (row.topLogit === undefined) continue;
    const tolerance = oracle.draftEpsilon + relativeTolerance(oracle) * Math.abs(expected.topLogit);
    if (Math.abs(row.topLogit - expected.topLogit) > tolerance) {
      tally.fail({
        ...where,
        message: `${label}: logit ${row.topLogit} differs from the cache-free draft's ${expected.topLogit} by more than ${tolerance.toPrecision(3)}`,
      });
    }
  }
  return tally.result();
}

export const law: Law = {
  name: DRAFT_REFERENCE,
  summary: "draft tokens and logits equal a cache-free draft recomputation",
  appliesTo: (testCase) => testCase.engine.mode === "speculative",
  needs: { oracle: true },
  check: ({ run, oracle }) => checkDraftReference(run.trace, oracle),
};
