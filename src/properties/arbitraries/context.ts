// Cases at the context boundary (issue 28, item 5; src/case/context-limit.ts): the engine's context a few
// tokens past the longest prompt, every request's prompt + output driven to it minus 0..S + 1 (its max new
// tokens derived, so shrinking a prompt keeps the request at the boundary), and half the time a draft context
// shorter than the target's (vllm#57941), which may fall inside a prompt: that request never drafts. Only
// spaces with contextBoundary draw it (their other draws stay as they were).
import fc from "fast-check";
import type { Case } from "../../case/case.ts";
import type { RequestDraw } from "./workload.ts";

export interface ContextDraw {
  /** The context's distance past the longest prompt (1..12). */
  past: number;
  /** The draft's context this far below the target's (1..12), or none. */
  draftShorter: number | null;
}

export const contextDrawArbitrary: fc.Arbitrary<ContextDraw> = fc.record({
  past: fc.integer({ min: 1, max: 12 }),
  draftShorter: fc.option(fc.integer({ min: 1, max: 12 }), { nil: null }),
});

/** The case driven to its context: engine limits set, each request's max new tokens up to them. Pure. */
export function atContextBoundary(testCase: Case, draw: ContextDraw, requests: readonly RequestDraw[]): Case {
  const { engine, workload } = testCase;
  const longest = Math.max(...workload.requests.map((request) => request.prompt.length));
  const contextLength = longest + draw.past;
  const draftContextLength =
    draw.draftShorter !== null && testCase.draft?.kind !== "ngram"
      ? Math.max(2, contextLength - draw.draftShorter)
      : undefined;
  return {
    ...testCase,
    engine: { ...engine, contextLength, ...(draftContextLength !== undefined ? { draftContextLength } : {}) },
    workload: {
      ...workload,
      requests: workload.requests.map((request, i) => {
        // Replicas share their drawn request's gap (ids run over copies of it).
        const raw = requests[Math.floor((i * requests.length) / workload.requests.length)]?.contextGap ?? 0;
        const gap = Math.min(raw, engine.numSteps + 1);
        const maxNewTokens = Math.max(1, contextLength - gap - request.prompt.length);
        // Min new tokens stay within the cap (case/sampling-checks.ts).
        const minNewTokens = request.sampling?.minNewTokens;
        const sampling =
          minNewTokens !== undefined && minNewTokens > maxNewTokens
            ? { sampling: { ...request.sampling, minNewTokens: maxNewTokens } }
            : {};
        return { ...request, maxNewTokens, ...sampling };
      }),
    },
  };
}
