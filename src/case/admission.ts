// Admission (SGLang's PrefillAdder, simplified): a request whose arrival step has come enters prefill only
// when every pool can reserve its worst case (prompt, max new tokens, the last round's accepted tokens past
// them and, under overlap, the zombie round's, plus its temporary rows) next to the requests already
// admitted; else it waits (first come, first served). Pages only the prefix cache holds count as free: the
// cache evicts them when an allocation needs them. A pool of one request's reservation (minimumPoolSlots)
// therefore never runs out: requests wait for room and the cache evicts under pressure.
import type { EngineConfig } from "./engine-config.ts";

export interface AdmissionDemand {
  prompt: readonly number[];
  maxNewTokens: number;
}

/** Pages a request can hold at once in any one pool (an upper bound; shared prefix pages count in full). */
export function pagesNeeded(request: AdmissionDemand, config: EngineConfig): number {
  const perRound = Math.max(config.numDraftTokens, config.numSteps + 1);
  // The last round may accept past max new tokens; under overlap a zombie round runs after it.
  const rounds = config.overlap ? 2 : 1;
  const persisted = request.prompt.length + request.maxNewTokens + rounds * perRound + 2;
  const temporary = Math.max(config.numDraftTokens, config.numSteps * config.topk) + 1;
  return Math.ceil(persisted / config.pageSize) + Math.ceil(temporary / config.pageSize) + 1;
}
