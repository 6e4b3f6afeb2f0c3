// The single-run laws (every law that needs no twin) on runs a test already has: a source that answers
// with them, through the one runner. What `checkRun` used to be, for engine tests that build runs by hand.
import type { Case } from "../../src/case/case.ts";
import type { RunResult } from "../../src/trace/run-result.ts";
import { checkLaws, type LawVerdict } from "../../src/check/runner.ts";
import { LAWS } from "../../src/laws/registry.ts";
import { referenceSource } from "../../src/sources/reference.ts";
import { Unavailable, type RunSource } from "../../src/check/source.ts";

export async function checkRun(testCase: Case, run: RunResult, targetOnly?: RunResult): Promise<LawVerdict[]> {
  const reference = referenceSource();
  const source: RunSource = {
    name: "given runs",
    run: async () => run,
    targetOnly: async () => {
      if (!targetOnly) throw new Unavailable("the test gave no target-only run");
      return targetOnly;
    },
    twin: async () => {
      throw new Unavailable("single-run laws only");
    },
    oracle: reference.oracle,
  };
  const check = await checkLaws(source, testCase, { laws: LAWS.filter((law) => !law.needs.twin) });
  return check.results;
}
