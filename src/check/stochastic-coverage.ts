// Coverage corners of stochastic verification, read from a trace's recorded draws: where the rejection-
// sampling bugs live (the recovered token's distribution after a rejection, vllm-ascend PRs 2881/7808; the
// residual carried from one rejected child to the next in a tree).
import type { Trace } from "../trace/schema.ts";

export const STOCHASTIC_COVERAGE_LABELS = [
  /** A verify node rejected a drafted child and drew the recovered token from what was left. */
  "draft rejected, token recovered",
  /** A verify node tested a second child after rejecting its first (tree drafting: the residual carries over). */
  "second child tested after a rejection",
] as const;

export type StochasticCoverageLabel = (typeof STOCHASTIC_COVERAGE_LABELS)[number];

export function stochasticCoverageLabels(trace: Trace): StochasticCoverageLabel[] {
  const found = new Set<StochasticCoverageLabel>();
  for (const event of trace.events) {
    if (event.phase !== "verify") continue;
    for (const row of event.rows) {
      const draws = row.draws ?? [];
      const tests = draws.filter((draw) => draw.child !== undefined);
      if (tests.length > 0 && draws.some((draw) => draw.child === undefined))
        found.add("draft rejected, token recovered");
      if (tests.length > 1) found.add("second child tested after a rejection");
    }
  }
  return STOCHASTIC_COVERAGE_LABELS.filter((label) => found.has(label));
}
