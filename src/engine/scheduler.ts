// Prefill scheduling: which prompt chunks run in a step. Pure: no state is changed here.
import type { Request } from "./request.ts";

export interface PrefillChunk {
  request: Request;
  /** The chunk covers positions [start, end) of the tokens being prefilled (the prompt, or after a retract the verified tokens). */
  start: number;
  end: number;
  /** end === prefill length: the last chunk (it samples the first new token unless a bonus is pending). */
  final: boolean;
}

/**
 * One chunk per prefilling request per step, in arrival order, each at most chunkSize tokens (null:
 * the rest of the prompt), until the step's token budget is spent. The budget limits prefill rows
 * only: verify and draft rows always run.
 */
export function planPrefillChunks(
  prefilling: readonly Request[],
  chunkSize: number | null,
  tokenBudget: number,
): PrefillChunk[] {
  const chunks: PrefillChunk[] = [];
  let budgetLeft = tokenBudget;
  for (const request of prefilling) {
    if (budgetLeft <= 0) break;
    const remaining = request.prefillLength - request.prefilledLength;
    const length = Math.min(remaining, chunkSize ?? remaining, budgetLeft);
    if (length <= 0) continue;
    const start = request.prefilledLength;
    chunks.push({ request, start, end: start + length, final: start + length === request.prefillLength });
    budgetLeft -= length;
  }
  return chunks;
}
