// Bad sampling options are refused with the JSON path of the field: by the case schema (types, ranges,
// logit bias keys) and by the consistency check (token ids outside the vocabulary, min tokens above the cap).
import { describe, expect, it } from "vitest";
import type { Case } from "../../src/case/case.ts";
import { validateCase } from "../../src/case/load.ts";
import { ConfigError } from "../../src/case/engine-config.ts";
import { checkCaseConsistency } from "../../src/case/consistency.ts";
import { resolveModelSpec } from "../../src/case/models.ts";
import { defaultCase } from "../../src/case/default-case.ts";

const base = defaultCase({ preset: "tiny", draft: "mirror", seed: 1, numRequests: 1, maxNewTokens: 8, engine: {} });

function withSampling(sampling: unknown): Case {
  const testCase = structuredClone(base) as Case;
  (testCase.workload.requests[0] as { sampling?: unknown }).sampling = sampling;
  return testCase;
}

const paths = (sampling: unknown) => validateCase(withSampling(sampling)).map((issue) => issue.path);

function configError(sampling: unknown): string | undefined {
  const testCase = withSampling(sampling);
  try {
    checkCaseConsistency(testCase, resolveModelSpec(testCase.model));
  } catch (error) {
    if (error instanceof ConfigError) return error.field;
    throw error;
  }
  return undefined;
}

describe("sampling options in a case", () => {
  it("accepts every option", () => {
    const sampling = {
      stopTokenIds: [7],
      minNewTokens: 2,
      repetitionPenalty: 1.2,
      presencePenalty: 0.5,
      frequencyPenalty: -0.5,
      logitBias: { "7": -100, "12": 3.5 },
      logprobs: 5,
    };
    expect(validateCase(withSampling(sampling))).toEqual([]);
    expect(configError(sampling)).toBeUndefined();
  });

  it("the schema names the field of a bad type or range, and of a bias key that is not a token id", () => {
    expect(paths({ repetitionPenalty: 0 })).toContain("/workload/requests/0/sampling/repetitionPenalty");
    expect(paths({ presencePenalty: 3 })).toContain("/workload/requests/0/sampling/presencePenalty");
    expect(paths({ logprobs: 21 })).toContain("/workload/requests/0/sampling/logprobs");
    expect(paths({ temperature: -1 })).toContain("/workload/requests/0/sampling/temperature");
    expect(paths({ topP: 0 })).toContain("/workload/requests/0/sampling/topP");
    expect(paths({ minP: 1.5 })).toContain("/workload/requests/0/sampling/minP");
    expect(paths({ topK: 2.5 })).toContain("/workload/requests/0/sampling/topK");
    // An option specconf does not know (vLLM's typical_p) is refused, not ignored.
    expect(paths({ typicalP: 0.9 } as never).join()).toMatch(/sampling/);
    expect(paths({ logitBias: { abc: 1 } }).join()).toMatch(/sampling\/logitBias/);
  });

  it("the consistency check names token ids outside the vocabulary and min tokens above the cap", () => {
    expect(configError({ stopTokenIds: [3, 64] })).toBe("/workload/requests/0/sampling/stopTokenIds/1");
    expect(configError({ logitBias: { "99": 1 } })).toBe("/workload/requests/0/sampling/logitBias/99");
    expect(configError({ minNewTokens: 9 })).toBe("/workload/requests/0/sampling/minNewTokens");
  });
});
