// Law "context limit" (issue 28): nothing is read or written past a model's context. Every target row sits at
// a position below the target's context (engine contextLength, else the model's maxPositions) and attends
// nothing at or past it; every draft row feeds a position below the draft's own context (a row at anchor a
// feeds a + 1, docs/tracing.md) and attends nothing past it; and a request's prompt + output fits the target's
// context. An engine that checks only the current length drafts and verifies its K + 1 lookahead past the limit
// (vllm#57941: the draft's RoPE table overrun; TensorRT-LLM#16826; llama.cpp's test_slot_ctx_not_exceeded).
// That the request ends as the target-only run does (tokens, finish reason) lossless and termination
// equivalence judge on the same runs. Trace-only; applies to cases that come within a lookahead of a limit.
import type { Case } from "../case/case.ts";
import { contextLimitsOf, type ContextLimits } from "../case/context-limit.ts";
import { resolveModelSpec } from "../case/models.ts";
import type { Trace } from "../trace/schema.ts";
import type { Law } from "./definition.ts";
import { LawTally, notCheckable, type LawResult } from "./law.ts";

export const CONTEXT_LIMIT = "context limit";

export function caseLimits(testCase: Readonly<Case>): ContextLimits {
  return contextLimitsOf(testCase.engine, resolveModelSpec(testCase.model), testCase.draft);
}

/** Some request comes within a verify block of the target's context, or the draft has a shorter one. */
export function reachesContextLimit(testCase: Readonly<Case>): boolean {
  const limits = caseLimits(testCase);
  const lookahead = testCase.engine.mode === "speculative" ? testCase.engine.numDraftTokens + 1 : 0;
  return (
    limits.draft < limits.target ||
    testCase.workload.requests.some(
      (request) => request.prompt.length + request.maxNewTokens + lookahead > limits.target,
    )
  );
}

export function checkContextLimit(testCase: Readonly<Case>, trace: Readonly<Trace>): LawResult {
  const limits = caseLimits(testCase);
  const tally = new LawTally(CONTEXT_LIMIT);
  for (const event of trace.events) {
    const draft = (event.model ?? (event.phase.startsWith("draft") ? "draft" : "target")) !== "target";
    // A draft row at anchor a feeds position a + 1: its positions count from one further on.
    const offset = draft ? 1 : 0;
    const limit = draft ? limits.draft : limits.target;
    const model = draft ? "draft" : "target";
    event.rows.forEach((row, index) => {
      tally.checked += 1;
      const attended = [...(row.attended?.positions ?? []).map(([, hi]) => hi), ...(row.attended?.temporary ?? [])];
      const furthest = Math.max(row.position, ...attended);
      if (furthest + offset < limit) return;
      const what = furthest === row.position ? `sits at ${draft ? "anchor" : "position"}` : "attends position";
      tally.fail({
        message: `${event.phase} row of request ${row.request} (event ${event.index}) ${what} ${furthest}${draft ? ` (feeding position ${furthest + 1})` : ""}, past the ${model}'s context of ${limit}`,
        request: row.request,
        event: event.index,
        index,
        expected: limit - 1 - offset,
        got: furthest,
      });
    });
  }
  for (const request of trace.requests ?? []) {
    tally.checked += 1;
    const length = request.prompt.length + request.output.length;
    if (length <= limits.target) continue;
    tally.fail({
      message: `request ${request.id} holds ${length} tokens (prompt + output), past the target's context of ${limits.target}`,
      request: request.id,
      expected: limits.target,
      got: length,
    });
  }
  if (tally.checked === 0) return notCheckable(CONTEXT_LIMIT, "the trace has no rows");
  return tally.result();
}

export const law: Law = {
  name: CONTEXT_LIMIT,
  summary: "no row reads or writes a position past its model's context; prompt + output fits the target's",
  appliesTo: reachesContextLimit,
  needs: {},
  unavailable: ({ run }) => (run.trace.events.length > 0 ? undefined : "the trace has no events"),
  check: ({ testCase, run }) => checkContextLimit(testCase, run.trace),
};
