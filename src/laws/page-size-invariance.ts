// Law "page-size invariance": the KV page size changes slot ids only. A request's tokens, draft
// chains, accept lengths, positions and attended positions equal those of the same case with page
// size 1 (the schedule does not depend on paging, so aborts land at the same forwards), tie-aware.
import type { Case } from "../case/case.ts";
import type { Trace } from "../trace/schema.ts";
import { checkInvariance, type Tolerance } from "./invariance.ts";
import { notCheckable, type LawResult } from "./law.ts";
import type { Law } from "./definition.ts";

export const PAGE_SIZE_INVARIANCE = "page-size invariance";

/** The baseline: page size 1 (pool slots kept). */
export function unpagedTwin(testCase: Case): Case {
  return { ...testCase, engine: { ...testCase.engine, pageSize: 1 } };
}

export function checkPageSizeInvariance(paged: Trace, unpaged: Trace, tolerance?: Tolerance): LawResult {
  const pageSize = (paged.config as { pageSize?: number } | undefined)?.pageSize;
  const baselinePage = (unpaged.config as { pageSize?: number } | undefined)?.pageSize;
  if (pageSize !== undefined && pageSize === baselinePage)
    return notCheckable(PAGE_SIZE_INVARIANCE, `both runs use page size ${pageSize}`);
  return checkInvariance(paged, unpaged, {
    law: PAGE_SIZE_INVARIANCE,
    subject: `page size ${pageSize ?? "?"}`,
    baseline: `page size ${baselinePage ?? "?"}`,
    tolerance,
  });
}

export const law: Law = {
  name: PAGE_SIZE_INVARIANCE,
  summary: "tokens, draft chains, accept lengths and positions equal the page-size-1 run's",
  appliesTo: (testCase) => testCase.engine.pageSize > 1,
  needs: { twin: { kind: "unpaged", describe: "the page-size-1 run", of: unpagedTwin, composable: true } },
  check: ({ run, twin }) => checkPageSizeInvariance(run.trace, twin!.trace),
};
