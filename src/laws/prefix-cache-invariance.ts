// Law "prefix-cache invariance": a prefix hit reuses KV instead of computing it; everything the request
// computes after it is unchanged. Its tokens, draft chains, accept lengths, positions and attention equal
// those of the same case without the prefix cache, tie-aware; the positions a hit reused are compared in
// neither run (one of them never computed them). Catches reused draft KV that recomputation would not give
// (uninitialized, or paired with another request's next token) and KV overwritten inside a shared page.
import type { Case } from "../case/case.ts";
import type { Trace } from "../trace/schema.ts";
import { checkInvariance, showsForwards, type Tolerance } from "./invariance.ts";
import { notCheckable, type LawResult } from "./law.ts";
import type { Law } from "./definition.ts";

export const PREFIX_CACHE_INVARIANCE = "prefix-cache invariance";

/** The baseline: the same case without the prefix cache. */
export function uncachedTwin(testCase: Readonly<Case>): Case {
  return { ...testCase, engine: { ...testCase.engine, prefixCache: false } };
}

/** Some request started its prefill with a cached prefix. */
export function hadPrefixHit(trace: Trace): boolean {
  return (trace.lifecycle ?? []).some((entry) => entry.kind === "prefix-hit");
}

const NO_HIT = "no request hit a cached prefix";

export function checkPrefixCacheInvariance(cached: Trace, uncached: Trace, tolerance?: Tolerance): LawResult {
  if (showsForwards(cached) && !hadPrefixHit(cached)) return notCheckable(PREFIX_CACHE_INVARIANCE, NO_HIT);
  return checkInvariance(cached, uncached, {
    law: PREFIX_CACHE_INVARIANCE,
    subject: "the run with the prefix cache",
    baseline: "the run without it",
    tolerance,
  });
}

export const law: Law = {
  name: PREFIX_CACHE_INVARIANCE,
  summary: "tokens, draft chains, accept lengths and positions equal the run without the prefix cache",
  appliesTo: (testCase) => testCase.engine.prefixCache === true,
  needs: {
    twin: { kind: "uncached", describe: "the run without the prefix cache", of: uncachedTwin, composable: true },
  },
  unavailable: ({ run }) => (showsForwards(run.trace) && !hadPrefixHit(run.trace) ? NO_HIT : undefined),
  check: ({ run, twin }) => checkPrefixCacheInvariance(run.trace, twin!.trace),
};
