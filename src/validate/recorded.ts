// Recorded runs as a source: another engine's trace (and outputs) for one golden case, with the golden
// file's target tokens as the target-only baseline and its epsilon in the oracle. What `specconf validate`
// judges. A recording has no twin runs: the invariance laws read "not checkable" here (check --engine runs
// them on the engine itself).
import type { Case } from "../case/case.ts";
import { loadModels } from "../case/models.ts";
import { runFromTrace, type RunResult } from "../trace/run-result.ts";
import type { GoldenCase } from "../golden/schema.ts";
import { ReferenceOracle } from "../reference/oracle.ts";
import type { Trace } from "../trace/schema.ts";
import { Unavailable, type RunSource } from "../check/source.ts";

/** The golden tokens as a target-only run: lossless compares with them, reference decode checks them too. */
export function goldenBaseline(goldenCase: GoldenCase): RunResult {
  const prompts = new Map(goldenCase.case.workload.requests.map((request) => [request.id, request.prompt]));
  return runFromTrace({
    formatVersion: 1,
    engine: { name: "golden" },
    requests: goldenCase.expected.requests.map((request) => ({
      id: request.id,
      prompt: prompts.get(request.id) ?? [],
      output: request.tokens,
      finishReason: request.finishReason,
      ...(request.stopTokenId !== undefined ? { stopTokenId: request.stopTokenId } : {}),
      finishedLength: request.tokens.length,
      ...(request.logprobs
        ? {
            logprobs: request.logprobs.map((entry, i) => ({
              token: request.tokens[i],
              logprob: entry.logprob,
              top: entry.top,
            })),
          }
        : {}),
    })),
    events: [],
  });
}

/** The reference oracle of a golden case with the validation's epsilon (the golden file's, or --epsilon). */
export async function goldenOracle(
  goldenCase: GoldenCase,
  epsilon: { target: number; draft: number },
): Promise<ReferenceOracle> {
  const oracle = await ReferenceOracle.create(loadModels(goldenCase.case), goldenCase.case.engine.runtime);
  // The oracle derives its epsilon from dtype and EP; validation uses the golden file's (or --epsilon).
  // Its fields are plain readonly properties, so they are set on this instance only.
  Object.assign(oracle, { epsilon: epsilon.target, draftEpsilon: epsilon.draft });
  return oracle;
}

/** A recorded trace of one golden case; `oracle` is the golden file's (goldenOracle), shared across its traces. */
export function recordedSource(goldenCase: GoldenCase, trace: Trace, oracle: ReferenceOracle): RunSource {
  return {
    name: trace.engine.name,
    run: async () => runFromTrace(trace),
    targetOnly: async () => goldenBaseline(goldenCase),
    twin: async (_: Case, twin) => {
      throw new Unavailable(`a recorded trace has no ${twin.kind} run (specconf check --engine runs twins)`);
    },
    oracle: async () => oracle,
  };
}
