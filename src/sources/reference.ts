// The reference engine as a run source: every run in-process through runCase. An exception other than bad
// input (a case that cannot run: a harness bug when generated) is the engine crashing on the case.
import type { Case } from "../case/case.ts";
import { BadInputError } from "../errors/bad-input.ts";
import { loadModels, runCase, type RunOptions, type RunResult } from "../engine/run-case.ts";
import { ReferenceOracle } from "../laws/oracle.ts";
import { RunFailure, targetOnlyCase, type RunSource } from "./source.ts";

async function guarded(work: () => Promise<RunResult>): Promise<RunResult> {
  try {
    return await work();
  } catch (error) {
    // Bad input (the case, the model spec, the EP) is not the engine crashing.
    if (error instanceof BadInputError) throw error;
    throw new RunFailure("crash", error instanceof Error ? `${error.name}: ${error.message}` : String(error));
  }
}

export function referenceSource(options: RunOptions = {}): RunSource {
  return {
    name: "specconf-reference",
    run: (testCase) => guarded(() => runCase(testCase, options)),
    targetOnly: (testCase) => guarded(() => runCase(targetOnlyCase(testCase), options)),
    twin: (testCase, twin) => guarded(() => runCase(twin.of(testCase), options)),
    oracle: (testCase: Case) => ReferenceOracle.create(loadModels(testCase), testCase.engine.runtime),
  };
}
