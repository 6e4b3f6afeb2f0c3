// The reference engine as a run source: every run in-process through runCase. An exception other than bad
// input (a case that cannot run: a harness bug when generated) is the engine crashing on the case.
import type { Case } from "../case/case.ts";
import { ForwardMemo } from "../engine/forward-memo.ts";
import { BadInputError } from "../errors/bad-input.ts";
import { loadModels } from "../case/models.ts";
import { runCase, type RunOptions } from "../engine/run-case.ts";
import { CrashedRun, type RunResult } from "../trace/run-result.ts";
import { ReferenceOracle } from "../reference/oracle.ts";
import { RunFailure, targetOnlyCase, type RunSource } from "../check/source.ts";

async function guarded(work: () => Promise<RunResult>): Promise<RunResult> {
  try {
    return await work();
  } catch (error) {
    // Bad input (the case, the model spec, the EP) is not the engine crashing.
    if (error instanceof BadInputError) throw error;
    const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    throw new RunFailure("crash", message, error instanceof CrashedRun ? error.before : undefined);
  }
}

export function referenceSource(options: RunOptions = {}): RunSource {
  // The runs of one case (its run, baseline and twins: the runner asks for them with the same case object)
  // share their forwards: an exact repeat is not computed again (engine/forward-memo.ts; bit-identical). Only
  // the latest case's memo is kept, so memory stays bounded; the memo is exact whichever case it serves.
  let memo: { testCase: Case; forwards: ForwardMemo } | undefined;
  const runOptions = (testCase: Case, more: RunOptions = {}): RunOptions => {
    if (memo?.testCase !== testCase) memo = { testCase, forwards: new ForwardMemo() };
    return { forwardMemo: memo.forwards, ...more, ...options };
  };
  return {
    name: "specconf-reference",
    run: (testCase) => guarded(() => runCase(testCase, runOptions(testCase))),
    targetOnly: (testCase) => guarded(() => runCase(targetOnlyCase(testCase), runOptions(testCase))),
    // No law reads a twin's per-step pool checks (KV conservation reads the run's and the baseline's).
    twin: (testCase, twin) => guarded(() => runCase(twin.of(testCase), runOptions(testCase, { checkPools: false }))),
    oracle: (testCase: Case) => ReferenceOracle.create(loadModels(testCase), testCase.engine.runtime),
  };
}
