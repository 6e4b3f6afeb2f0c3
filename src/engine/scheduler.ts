// Prefill scheduling: which prompt chunks run in a step. Pure: no state is changed here.
import type { Request } from "./request.ts";

export interface PrefillChunk {
  request: Request;
  /** The chunk covers prompt positions [start, end). */
  start: number;
  end: number;
  /** end === prompt length: this chunk samples the first new token. */
  final: boolean;
}

/**
 * One chunk per prefilling request per step, in arrival order, each at most chunkSize tokens (null:
 * the rest of the prompt), until the step's token budget is spent. The budget limits prefill rows
 * only: verify and draft rows always run.
 */
export function planPrefillChunks(prefilling: readonly Request[], chunkSize: number | null, tokenBudget: number): PrefillChunk[] {
  const chunks: PrefillChunk[] = [];
  let budgetLeft = tokenBudget;
  for (const request of prefilling) {
    if (budgetLeft <= 0) break;
    const remaining = request.prompt.length - request.prefilledLength;
    const length = Math.min(remaining, chunkSize ?? remaining, budgetLeft);
    if (length <= 0) continue;
    const start = request.prefilledLength;
    chunks.push({ request, start, end: start + length, final: start + length === request.prompt.length });
    budgetLeft -= length;
  }
  return chunks;
}
