// Cases that reach the scheduling modes (docs/scheduling.md) for the law tests: three mirror-drafted requests
// sharing the preamble, arriving apart, with overlap, the prefix cache and padded buckets each switchable.
import type { AbortEvent, Case } from "../../src/case/case.ts";
import { defaultEngineConfig, type EngineConfig } from "../../src/case/engine-config.ts";
import { defaultDraftSpec } from "../../src/model/spec.ts";

export function schedulingCase(
  engine: Partial<EngineConfig>,
  lifecycle: { aborts?: AbortEvent[]; retracts?: AbortEvent[] } = {},
): Case {
  const shared = [1, 5, 9, 13, 17, 3, 4, 8, 21, 22, 23];
  return {
    formatVersion: 1,
    model: { preset: "tiny" },
    draft: defaultDraftSpec("mirror"),
    engine: defaultEngineConfig({ numSteps: 2, numDraftTokens: 3, pageSize: 2, poolSlots: 512, ...engine }),
    workload: {
      requests: [
        { id: 0, prompt: shared, maxNewTokens: 8, arrivalStep: 0 },
        { id: 1, prompt: [...shared.slice(0, 9), 30, 31], maxNewTokens: 8, arrivalStep: 2 },
        { id: 2, prompt: [...shared.slice(0, 6), 40, 41], maxNewTokens: 6, arrivalStep: 3 },
      ],
      aborts: lifecycle.aborts ?? [],
      ...(lifecycle.retracts ? { retracts: lifecycle.retracts } : {}),
    },
  };
}
