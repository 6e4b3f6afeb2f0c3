// Law "graph-replay equivalence": a run with draft decode on captured, replayed graphs equals the eager
// run event for event: same phases, rows (request, token, position, slot) and predictions. Padding the
// context to a captured shape moves logits in the last bits, so predictions are tie-aware and logits
// compared within tolerance. Tree drafting's selection by cumulative score can flip the same way: a row
// that carries another candidate (draft-tree.ts) is a tie when its rank gap is below epsilon in both runs.
import type { Trace, TraceRow } from "../trace/schema.ts";
import { readDraftRounds, selectedRows } from "./draft-tree.ts";
import { LawTally, type LawResult } from "./law.ts";
import type { Law } from "./definition.ts";
import type { Case } from "../case/case.ts";

export const REPLAY_EQUIVALENCE = "graph-replay equivalence";

export interface ReplayTolerance {
  /** Tie threshold in the draft's logit units. */
  epsilon: number;
  absolute: number;
  relative: number;
}

export function checkReplayEquivalence(eager: Trace, replay: Trace, tolerance: ReplayTolerance): LawResult {
  const tally = new LawTally(REPLAY_EQUIVALENCE);
  const eagerSelected = selectedRows(readDraftRounds(eager));
  const replaySelected = selectedRows(readDraftRounds(replay));
  const count = Math.min(eager.events.length, replay.events.length);
  for (let e = 0; e < count; e++) {
    const expected = eager.events[e];
    const got = replay.events[e];
    tally.checked += 1;
    const where = { event: got.index };
    if (expected.phase !== got.phase || expected.rows.length !== got.rows.length) {
      tally.fail({
        ...where,
        message: `event ${got.index}: replay ran ${got.phase} with ${got.rows.length} rows, eager ${expected.phase} with ${expected.rows.length}`,
      });
      return tally.result();
    }
    for (let r = 0; r < got.rows.length; r++) {
      const a = expected.rows[r];
      const b = got.rows[r];
      const rowWhere = { ...where, index: r, request: b.request };
      const selectedA = eagerSelected.get(`${expected.index}:${r}`);
      const selectedB = replaySelected.get(`${got.index}:${r}`);
      if (selectedA && selectedB && selectedA.path !== selectedB.path) {
        if (Math.max(selectedA.rankGap, selectedB.rankGap) < tolerance.epsilon) {
          tally.ties += 1;
          return tally.result();
        }
        tally.fail({
          ...rowWhere,
          message: `event ${got.index} row ${r}: replay carries draft candidate [${selectedB.path}], eager [${selectedA.path}] (rank gaps ${selectedB.rankGap} and ${selectedA.rankGap})`,
        });
        return tally.result();
      }
      for (const field of ["request", "token", "position", "slot", "temporary"] as const) {
        if (a[field] !== b[field]) {
          tally.fail({
            ...rowWhere,
            message: `event ${got.index} row ${r}: replay ${field} ${String(b[field])}, eager ${String(a[field])}`,
          });
          return tally.result();
        }
      }
      if (a.predict !== b.predict) {
        // A near-tie may flip; everything after it legitimately differs, so the comparison stops here.
        if ((a.margin ?? Infinity) < tolerance.epsilon) {
          tally.ties += 1;
          return tally.result();
        }
        tally.fail({
          ...rowWhere,
          message: `event ${got.index} row ${r}: replay predicts ${b.predict}, eager ${a.predict} (margin ${a.margin})`,
          expected: a.predict,
          got: b.predict,
        });
        return tally.result();
      }
      const childrenA = tokenSet(a.children);
      const childrenB = tokenSet(b.children);
      if (childrenA !== undefined && childrenB !== undefined && childrenA !== childrenB) {
        if (Math.min(a.childMargin ?? Infinity, b.childMargin ?? Infinity) < tolerance.epsilon) {
          tally.ties += 1;
          return tally.result();
        }
        tally.fail({
          ...rowWhere,
          message: `event ${got.index} row ${r}: replay expands into tokens [${childrenB}], eager [${childrenA}]`,
        });
        return tally.result();
      }
      if (
        a.topLogit !== undefined &&
        b.topLogit !== undefined &&
        Math.abs(a.topLogit - b.topLogit) > tolerance.absolute + tolerance.relative * Math.abs(a.topLogit)
      ) {
        tally.fail({
          ...rowWhere,
          message: `event ${got.index} row ${r}: replay logit ${b.topLogit}, eager ${a.topLogit}`,
        });
        return tally.result();
      }
    }
  }
  if (eager.events.length !== replay.events.length)
    tally.fail({ message: `replay ran ${replay.events.length} forwards, eager ${eager.events.length}` });
  return tally.result();
}

/** A row's children as a sorted token list (their order among themselves follows logits, not the selection). */
function tokenSet(children: TraceRow["children"]): string | undefined {
  return children
    ?.map((child) => child.token)
    .sort((a, b) => a - b)
    .join(",");
}

const eagerTwin = (testCase: Readonly<Case>): Case => ({
  ...testCase,
  engine: { ...testCase.engine, graphReplay: false },
});

export const law: Law = {
  name: REPLAY_EQUIVALENCE,
  summary: "draft decode on captured, replayed graphs equals the eager run event for event",
  appliesTo: (testCase) => testCase.engine.mode === "speculative" && testCase.engine.graphReplay === true,
  // Event for event, not per request: the canonical twin (other schedule) cannot stand in for it.
  needs: { twin: { kind: "eager", describe: "the eager run", of: eagerTwin, composable: false }, oracle: true },
  check: ({ run, twin, oracle }) => {
    const relative = oracle.spec.dtype === "float32" ? 1e-5 : 1e-12;
    return checkReplayEquivalence(twin!.trace, run.trace, {
      epsilon: oracle.draftEpsilon,
      absolute: oracle.draftEpsilon,
      relative,
    });
  },
};
