// A case on the tiny preset with default engine config: target-only without a draft kind, else speculative
// with that kind's default draft. The llama.cpp engines' tests (node-llama-cpp and llama-server) run these.
import type { Case } from "../../src/case/case.ts";
import { defaultEngineConfig } from "../../src/case/engine-config.ts";
import { defaultDraftSpec, type DraftKind } from "../../src/model/spec.ts";

export function tinyCase(kind: DraftKind | null, numSteps: number, prompts: number[][], maxNewTokens = 12): Case {
  return {
    formatVersion: 1,
    model: { preset: "tiny" },
    draft: kind ? defaultDraftSpec(kind) : null,
    engine: defaultEngineConfig({ mode: kind ? "speculative" : "target-only", numSteps }),
    workload: {
      requests: prompts.map((prompt, id) => ({ id, prompt, maxNewTokens, arrivalStep: 0 })),
      aborts: [],
    },
  };
}

// The tiny preset's preamble, and a second prompt of another length: two sequences in one batch.
export const TWO_PROMPTS = [
  [1, 5, 9, 13, 17],
  [1, 5, 9, 13, 17, 40, 7, 3],
];
