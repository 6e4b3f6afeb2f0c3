// Law "padding invariance": replaying decode-side forwards on graphs padded to a row bucket changes no
// request's tokens, draft chains, accept lengths, positions or attention: they equal those of the same case
// without padded buckets, tie-aware, request by request (so it composes with the other invariance twins;
// graph-replay equivalence compares the eager run event by event, padding-poison invariance the poison).
import type { Case } from "../case/case.ts";
import type { Trace } from "../trace/schema.ts";
import { checkInvariance, showsForwards, type Tolerance } from "./invariance.ts";
import { notCheckable, type LawResult } from "./law.ts";
import type { Law } from "./definition.ts";

export const PADDING_INVARIANCE = "padding invariance";

/** The baseline: no padded buckets (graph replay, if on, at exact shapes for draft decode only). */
export function unpaddedTwin(testCase: Readonly<Case>): Case {
  const { graphBuckets: _buckets, paddingPoisonSeed: _seed, ...engine } = testCase.engine;
  return { ...testCase, engine };
}

/** Some forward ran padding rows. */
export function ranPadded(trace: Trace): boolean {
  return trace.events.some((event) => (event.paddedRows ?? 0) > 0);
}

const UNPADDED = "no forward ran padding rows";

export function checkPaddingInvariance(padded: Trace, unpadded: Trace, tolerance?: Tolerance): LawResult {
  if (showsForwards(padded) && !ranPadded(padded)) return notCheckable(PADDING_INVARIANCE, UNPADDED);
  return checkInvariance(padded, unpadded, {
    law: PADDING_INVARIANCE,
    subject: "the padded run",
    baseline: "the run without padded buckets",
    tolerance,
  });
}

export const law: Law = {
  name: PADDING_INVARIANCE,
  summary: "tokens, draft chains, accept lengths and positions equal the run without padded graph buckets",
  appliesTo: (testCase) => testCase.engine.graphReplay === true && (testCase.engine.graphBuckets?.length ?? 0) > 0,
  needs: { twin: { kind: "unpadded", describe: "the run without padded buckets", of: unpaddedTwin, composable: true } },
  unavailable: ({ run }) => (showsForwards(run.trace) && !ranPadded(run.trace) ? UNPADDED : undefined),
  check: ({ run, twin }) => checkPaddingInvariance(run.trace, twin!.trace),
};
