// Law "chunk invariance": a chunked prefill changes nothing a request computes. Its tokens, draft
// chains (the draft-extend rows' tokens, the verify rows' drafts), accept lengths, positions and
// attention equal those of the same case prefilled in one chunk (chunk size none, unlimited budget),
// tie-aware. Catches the chunked-prefill tail token (sglang PR 26800): a non-final chunk's last
// draft-extend row must take the next prompt token, not the token sampled from the chunk's logits.
import type { Case } from "../case/case.ts";
import type { Trace } from "../trace/schema.ts";
import { checkInvariance, showsForwards, type Tolerance } from "./invariance.ts";
import { notCheckable, type LawResult } from "./law.ts";
import type { Law } from "./definition.ts";

export const CHUNK_INVARIANCE = "chunk invariance";

/** The baseline: every prompt in one chunk (no chunk size, a budget covering every prompt), no aborts or retracts. */
export function unchunkedTwin(testCase: Case): Case {
  const longest = testCase.workload.requests.reduce((sum, request) => sum + request.prompt.length, 0);
  return {
    ...testCase,
    engine: { ...testCase.engine, chunkSize: null, tokenBudget: Math.max(testCase.engine.tokenBudget, longest) },
    workload: { ...testCase.workload, aborts: [], ...(testCase.workload.retracts ? { retracts: [] } : {}) },
  };
}

/** Some prompt is prefilled in more than one chunk (by chunk size or by the token budget). */
export function isChunked(testCase: Case): boolean {
  const { chunkSize, tokenBudget } = testCase.engine;
  return testCase.workload.requests.some(
    (request) => request.prompt.length > Math.min(chunkSize ?? Infinity, tokenBudget),
  );
}

/** Some prompt of the run was prefilled in more than one forward. */
export function wasChunked(trace: Trace): boolean {
  const chunksPerRequest = new Map<number, number>();
  for (const event of trace.events)
    if (event.phase === "prefill")
      for (const request of new Set(event.rows.map((row) => row.request)))
        chunksPerRequest.set(request, (chunksPerRequest.get(request) ?? 0) + 1);
  return [...chunksPerRequest.values()].some((chunks) => chunks > 1);
}

const NOT_CHUNKED = "no prompt was prefilled in more than one chunk";

export function checkChunkInvariance(chunked: Trace, unchunked: Trace, tolerance?: Tolerance): LawResult {
  if (showsForwards(chunked) && !wasChunked(chunked)) return notCheckable(CHUNK_INVARIANCE, NOT_CHUNKED);
  return checkInvariance(chunked, unchunked, {
    law: CHUNK_INVARIANCE,
    subject: "the chunked run",
    baseline: "the unchunked run",
    tolerance,
  });
}

export const law: Law = {
  name: CHUNK_INVARIANCE,
  summary: "tokens, draft chains, accept lengths and positions equal the unchunked run's",
  appliesTo: isChunked,
  needs: { twin: { kind: "unchunked", describe: "the unchunked run", of: unchunkedTwin, composable: true } },
  unavailable: ({ run }) => (showsForwards(run.trace) && !wasChunked(run.trace) ? NOT_CHUNKED : undefined),
  check: ({ run, twin }) => checkChunkInvariance(run.trace, twin!.trace),
};
