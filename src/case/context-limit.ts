// The context boundary as the case format defines it (issue 28): the target's context (engine contextLength,
// else the model's maxPositions) bounds a request's prompt + output, and no target row sits at or past it; a
// model draft may have a shorter context of its own (engine draftContextLength, vLLM's
// speculative_config.max_model_len), and no draft row feeds a token at or past it (a row at anchor a feeds
// position a + 1, docs/tracing.md). So a round drafts only what fits: with the bonus x_L at position L, its
// verify rows sit at L..L + s (s <= target - 1 - L) and its draft rows feed positions up to L + s - 1 (s <=
// draft - L); a request past its draft's context decodes without speculation. Engines that check the current
// length only and draft K + 1 positions past the limit crash or corrupt (vllm#57941: the draft's RoPE table
// overrun; TensorRT-LLM#16826; llama.cpp's test_slot_ctx_not_exceeded). The engine's side (the fault
// "lookahead-past-limit") is engine/context-limit.ts.
import type { Case } from "./case.ts";
import { ConfigError, type EngineConfig } from "./engine-config.ts";
import type { DraftSpec, ModelSpec } from "../model/spec.ts";

export interface ContextLimits {
  /** Positions of target rows are below this; a request's prompt + output is at most this. */
  target: number;
  /** Draft rows feed positions below this (Infinity: no draft model). */
  draft: number;
}

/** The limits of a case's engine config over its model. Pure. */
export function contextLimitsOf(
  engine: Pick<EngineConfig, "contextLength" | "draftContextLength" | "mode">,
  spec: Pick<ModelSpec, "maxPositions">,
  draft: Pick<DraftSpec, "kind"> | null | undefined,
): ContextLimits {
  const target = engine.contextLength ?? spec.maxPositions;
  const hasDraftModel = engine.mode === "speculative" && draft != null && draft.kind !== "ngram";
  return { target, draft: hasDraftModel ? (engine.draftContextLength ?? target) : Infinity };
}

/**
 * Draft tokens a round whose bonus sits at position `bonusPosition` can verify with every row inside the
 * limits (0: none; the draft has no root past its context). Pure.
 */
export function contextRoom(limits: ContextLimits, bonusPosition: number): number {
  return Math.max(0, Math.min(limits.target - 1 - bonusPosition, limits.draft - bonusPosition));
}

/** Draft anchors below this are inside the draft's context (the row at anchor a feeds position a + 1). */
export function draftAnchorEnd(limits: ContextLimits): number {
  return limits.draft - 1;
}

/** The engine drafts only what fits in these modes; elsewhere every round must fit whole (N + 1 to spare). */
export function capsLookahead(engine: EngineConfig): boolean {
  return engine.mode === "target-only" || (engine.topk === 1 && !engine.multiLayer && !engine.overlap);
}

/** What the engine cannot run at the boundary; ConfigError with the JSON path. */
export function checkContextLimits(testCase: Readonly<Case>, spec: ModelSpec): void {
  const engine = testCase.engine;
  if (engine.contextLength !== undefined && engine.contextLength > spec.maxPositions)
    throw new ConfigError(
      "/engine/contextLength",
      `${engine.contextLength} exceeds the model's maxPositions ${spec.maxPositions}`,
    );
  const limits = contextLimitsOf(engine, spec, testCase.draft);
  if (engine.draftContextLength !== undefined && engine.mode === "speculative") {
    const where = "/engine/draftContextLength";
    if (limits.draft === Infinity) throw new ConfigError(where, "a draft context needs a draft model (not ngram)");
    if (limits.draft > limits.target)
      throw new ConfigError(where, `${limits.draft} exceeds the target's context ${limits.target}`);
    if (!capsLookahead(engine))
      throw new ConfigError(where, "a draft context needs chain drafting (topk 1, no multi-layer, no overlap)");
    if (engine.prefixCache) throw new ConfigError(where, "a draft context needs the prefix cache off");
  }
  // Outside the modes that cap their lookahead, a request must leave room for a whole verify block.
  const spare = capsLookahead(engine) ? 0 : engine.numDraftTokens + 1;
  testCase.workload.requests.forEach((request, i) => {
    const longest = request.prompt.length + request.maxNewTokens + spare;
    if (longest <= limits.target) return;
    const what = spare > 0 ? "prompt + maxNewTokens + draft tokens" : "prompt + maxNewTokens";
    const limit =
      engine.contextLength === undefined
        ? `the model's maxPositions ${spec.maxPositions}`
        : `the context length ${limits.target}`;
    throw new ConfigError(`/workload/requests/${i}`, `${what} (${longest}) exceed ${limit}`);
  });
}

/**
 * The draft steps a round drafts: its scheduled steps (draft-schedule.ts), cut to the room its limits leave with
 * the bonus at `bonusPosition`. What laws judge a round's draft count by. Pure.
 */
export function roundDraftSteps(scheduled: number, limits: ContextLimits, bonusPosition: number): number {
  return Math.min(scheduled, contextRoom(limits, bonusPosition));
}
