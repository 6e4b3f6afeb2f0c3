// Law "chunk invariance": a chunked prefill changes nothing a request computes. Its tokens, draft
// chains (the draft-extend rows' tokens, the verify rows' drafts), accept lengths, positions and
// attention equal those of the same case prefilled in one chunk (chunk size none, unlimited budget),
// tie-aware. Catches the chunked-prefill tail token (sglang PR 26800): a non-final chunk's last
// draft-extend row must take the next prompt token, not the token sampled from the chunk's logits.
import type { Case } from "../case/case.ts";
import type { Trace } from "../trace/schema.ts";
import { checkInvariance, type Tolerance } from "./invariance.ts";
import { notCheckable, type LawResult } from "./law.ts";

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

export function checkChunkInvariance(chunked: Trace, unchunked: Trace, tolerance?: Tolerance): LawResult {
  const prefillEvents = chunked.events.filter((event) => event.phase === "prefill");
  const chunksPerRequest = new Map<number, number>();
  for (const event of prefillEvents)
    for (const request of new Set(event.rows.map((row) => row.request)))
      chunksPerRequest.set(request, (chunksPerRequest.get(request) ?? 0) + 1);
  if (![...chunksPerRequest.values()].some((chunks) => chunks > 1))
    return notCheckable(CHUNK_INVARIANCE, "no prompt was prefilled in more than one chunk");
  return checkInvariance(chunked, unchunked, {
    law: CHUNK_INVARIANCE,
    subject: "the chunked run",
    baseline: "the unchunked run",
    tolerance,
  });
}
