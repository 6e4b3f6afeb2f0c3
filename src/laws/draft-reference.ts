// Law "draft reference": every draft row's output (its predict, and its logit within tolerance) equals a
// cache-free recomputation of the draft over the verified sequence (target hidden states recomputed
// too) followed by the row's draft path. Checked rows: the last row of each request in a draft-extend
// event (it yields the root's candidates) and every draft-decode row (chain or tree node), whose path is
// read back through hidden-state provenance. With the EAGLE heads and the tapped mirrors this catches
// hidden-state plumbing bugs; with every draft it catches wrong tokens and positions fed to the draft. EAGLE-3
// references are fed what the checkpoint's own config names (oracle.eagle3), argmaxes mapped by its d2t.
// Standalone drafts (issue 25: mirror, noisy and truncated mirror, what draft-model engines run) are ordinary
// causal LMs over the sequence: their rows are read from the tokens alone, no provenance needed
// (laws/draft-rows.ts), so a draft-only bug of a draft-model engine is seen directly, not only through
// acceptance.
import type { Trace } from "../trace/schema.ts";
import { isStandaloneDraft, type DraftKind } from "../model/spec.ts";
import { LawTally, notCheckable, type LawResult } from "./law.ts";
import type { RowPrediction } from "../reference/cache-free.ts";
import type { DraftRowRequest, ModuleRowRequest, ReferenceOracle } from "../reference/oracle.ts";
import { sequenceOf } from "./rounds.ts";
import type { Law } from "./definition.ts";
import { rowsFromTokens, rowsThroughProvenance, type CheckedRow } from "./draft-rows.ts";

export const DRAFT_REFERENCE = "draft reference";

/** Relative logit tolerance on top of the absolute epsilon: float32 accumulates rounding with depth. */
export function relativeTolerance(oracle: ReferenceOracle): number {
  return oracle.spec.dtype === "float32" ? 1e-5 : 1e-12;
}

/**
 * `draftKind`: the case's draft. A standalone draft's rows are read from the tokens (single-module drafting;
 * multi-layer modules read the target's hidden states), every other draft's through hidden provenance.
 */
export async function checkDraftReference(
  trace: Trace,
  oracle: ReferenceOracle,
  draftKind?: DraftKind,
): Promise<LawResult> {
  if (!oracle.hasDraft) return notCheckable(DRAFT_REFERENCE, "no draft model");
  const standalone = isStandaloneDraft(draftKind) && !trace.events.some((event) => event.module !== undefined);
  const rows = standalone ? rowsFromTokens(trace) : rowsThroughProvenance(trace);
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
  check: ({ run, oracle, testCase }) => checkDraftReference(run.trace, oracle, testCase.draft?.kind),
};
