// The reference engine at the context boundary (case/context-limit.ts says what the limits are): each round
// drafts only what fits, min(its steps, the room its limits leave), and a request past its draft's context
// decodes on without speculation. The fault "lookahead-past-limit" checks the current length only (the
// request is still below its limits, its draft has a root) and drafts the whole lookahead, so the round's
// verify rows and draft rows run K + 1 positions past the limit (vllm#57941, TensorRT-LLM#16826).
import type { Faults } from "../case/faults.ts";
import { contextRoom, type ContextLimits } from "../case/context-limit.ts";

/** Draft tokens the round whose bonus sits at `bonusPosition` may verify (the fault's one site). */
export function lookaheadRoom(limits: ContextLimits, bonusPosition: number, faults: Faults): number {
  if (faults.has("lookahead-past-limit")) return bonusPosition < limits.draft ? Infinity : 0;
  return contextRoom(limits, bonusPosition);
}
