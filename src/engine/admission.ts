// Admission (SGLang's PrefillAdder, simplified): a request whose arrival step has come enters prefill only
// when every pool can reserve its worst case (prompt, max new tokens, two rounds past the last one for the
// overlap scheduler's extra round, and its temporary rows) next to the requests already admitted and the
// pages only the prefix cache holds; the cache evicts to make room, else the request waits (first come,
// first served). With the pools specconf draws for cases without a prefix cache nothing ever waits; with
// a prefix cache, small pools make the cache evict under pressure instead of the allocation failing.
import type { EngineConfig } from "./config.ts";

export interface AdmissionDemand {
  prompt: readonly number[];
  maxNewTokens: number;
}

/** Pages a request can hold at once in any one pool (an upper bound; shared prefix pages count in full). */
export function pagesNeeded(request: AdmissionDemand, config: EngineConfig): number {
  const perRound = Math.max(config.numDraftTokens, config.numSteps + 1);
  const persisted = request.prompt.length + request.maxNewTokens + 2 * perRound + 2;
  const temporary = Math.max(config.numDraftTokens, config.numSteps * config.topk) + 1;
  return Math.ceil(persisted / config.pageSize) + Math.ceil(temporary / config.pageSize) + 1;
}
