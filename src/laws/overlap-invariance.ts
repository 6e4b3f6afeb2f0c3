// Law "overlap invariance": overlap scheduling changes when the host learns results, not what a request
// computes. Its tokens, draft chains, accept lengths, positions and attention equal those of the same case
// scheduled synchronously, tie-aware; the trace's discarded work (a zombie's extra round, a round in flight
// when an abort or retract landed) is left out. Catches placeholders resolved to another request's or a
// stale value (the future ring wrapping, a placeholder surviving a retract), and late results applied.
import type { Case } from "../case/case.ts";
import type { Trace } from "../trace/schema.ts";
import { checkInvariance, type Tolerance } from "./invariance.ts";
import type { LawResult } from "./law.ts";
import type { Law } from "./definition.ts";

export const OVERLAP_INVARIANCE = "overlap invariance";

/** The baseline: the same case scheduled synchronously. */
export function synchronousTwin(testCase: Readonly<Case>): Case {
  return { ...testCase, engine: { ...testCase.engine, overlap: false } };
}

export function checkOverlapInvariance(overlapped: Trace, synchronous: Trace, tolerance?: Tolerance): LawResult {
  return checkInvariance(overlapped, synchronous, {
    law: OVERLAP_INVARIANCE,
    subject: "the overlapped run",
    baseline: "the synchronous run",
    tolerance,
  });
}

export const law: Law = {
  name: OVERLAP_INVARIANCE,
  summary: "tokens, draft chains, accept lengths and positions equal the synchronously scheduled run's",
  appliesTo: (testCase) => testCase.engine.overlap === true,
  needs: {
    twin: { kind: "synchronous", describe: "the synchronous run", of: synchronousTwin, composable: true },
  },
  check: ({ run, twin }) => checkOverlapInvariance(run.trace, twin!.trace),
};
