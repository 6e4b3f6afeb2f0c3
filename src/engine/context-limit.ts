// The reference engine at the context boundary (case/context-limit.ts says what the limits are): each round
// drafts only what fits, min(its steps, the room its limits leave), and a request past its draft's context
// decodes on without speculation, its draft KV extended over the verified positions that fit. The fault "lookahead-past-limit" checks the current length only (the
// request is still below its limits, its draft has a root) and drafts the whole lookahead, so the round's
// verify rows and draft rows run K + 1 positions past the limit (vllm#57941, TensorRT-LLM#16826).
import type { Faults } from "../case/faults.ts";
import { contextRoom, draftAnchorEnd, type ContextLimits } from "../case/context-limit.ts";
import type { PendingExtend } from "./draft-schedule.ts";

/** Draft tokens the round whose bonus sits at `bonusPosition` may verify (the fault's one site). */
export function lookaheadRoom(limits: ContextLimits, bonusPosition: number, faults: Faults): number {
  if (faults.has("lookahead-past-limit")) return bonusPosition < limits.draft ? Infinity : 0;
  return contextRoom(limits, bonusPosition);
}

/**
 * The part of a draft extend inside the draft's context (anchors below draft - 1), for a request whose next
 * round cannot draft: its draft KV still covers every verified position that fits, as a resume's re-prefill
 * would write it. Undefined when nothing fits.
 */
export function insideDraftContext(extend: PendingExtend, limits: ContextLimits): PendingExtend | undefined {
  const kept = Math.min(extend.tokens.length, draftAnchorEnd(limits) - extend.firstAnchor);
  if (kept <= 0) return undefined;
  if (kept === extend.tokens.length) return extend;
  return {
    firstAnchor: extend.firstAnchor,
    tokens: extend.tokens.slice(0, kept),
    hidden: extend.hidden.select(Array.from({ length: kept }, (_, i) => i)),
  };
}
