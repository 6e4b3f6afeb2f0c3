// One failure record per failing law of a failed property run, so that every law a report counts as
// failed gets its own replay line, and each replay reproduces exactly the violation printed for that law:
// a law failing on the shrunk case gets the shrunk case; a law that failed on the first failing case only
// (shrinking kept another law failing) gets that first, unshrunk case. Each record holds the laws that were
// checked and the twin mode, so `replay` checks the case the same way.
import type { Case } from "../case/case.ts";
import { RUNS_TO_COMPLETION, type CaseCheck } from "../check/runner.ts";
import type { LawResult } from "../laws/law.ts";
import type { Trace } from "../trace/schema.ts";
import { DEFAULT_FAILURE_DIR, writeFailure } from "./failure-file.ts";
import { twinOfLaw } from "./invariance-runs.ts";

export interface WrittenFailure {
  file: string;
  replay: string;
  /** The violation the record holds (what its replay reproduces). */
  message: string;
  /** The record is of the first failing case, not the shrunk one. */
  unshrunk: boolean;
}

export interface PropertyFailureSources {
  property: string;
  seed: number;
  /** fast-check paths of the shrunk counterexample and of the first failing run. */
  shrunkPath: string;
  firstPath: string;
  shrunk: CaseCheck;
  first: CaseCheck;
  /** The laws that were checked (undefined: all), and those pinned as known findings (no record: not a failure). */
  checked?: ReadonlySet<string>;
  pinned?: ReadonlySet<string>;
  twins?: "combined" | "separate";
  /** The external engine the runs came from, and the reference engine's trace of a case (for replay). */
  engine?: { command: string; name: string };
  referenceTraceOf?: (testCase: Case) => Promise<Trace | undefined>;
  /**
   * Laws that already have a record in this check (an earlier property's): no second one (issue 25: one planted
   * bug wrote 45 records, 180 files, as every property it failed wrote one per failing law).
   */
  recorded?: ReadonlySet<string>;
}

function failing(check: CaseCheck, sources: PropertyFailureSources): LawResult[] {
  const { checked, pinned } = sources;
  return check.results.filter(
    (result) =>
      result.status === "fails" &&
      (!checked || checked.has(result.law) || result.law === RUNS_TO_COMPLETION) &&
      !pinned?.has(result.law),
  );
}

/** Writes one record per law failing on the shrunk or the first failing case; returns them by law. */
export async function writeLawFailures(
  sources: PropertyFailureSources,
  dir: string = DEFAULT_FAILURE_DIR,
): Promise<Map<string, WrittenFailure>> {
  const written = new Map<string, WrittenFailure>();
  for (const [check, unshrunk] of [
    [sources.shrunk, false],
    [sources.first, true],
  ] as const) {
    const results = failing(check, sources).filter(
      (result) => !written.has(result.law) && !sources.recorded?.has(result.law),
    );
    if (results.length === 0) continue;
    const referenceTrace = await sources.referenceTraceOf?.(check.testCase);
    for (const result of results) {
      const violation = result.violation ?? { message: result.reason ?? "fails" };
      const others = failing(check, sources).filter((other) => other.law !== result.law);
      // An invariance law's record keeps the twin it compared with: either run may be the one that went wrong.
      const twin = twinOfLaw(check, result.law);
      const { file, replay } = writeFailure(
        {
          property: sources.property,
          laws: [result.law, ...others.map((other) => other.law)],
          violation,
          seed: sources.seed,
          path: unshrunk ? sources.firstPath : sources.shrunkPath,
          testCase: check.testCase,
          trace: check.run?.trace,
          checked: sources.checked ? [...sources.checked] : undefined,
          twins: sources.twins,
          engine: sources.engine,
          referenceTrace,
          ...(twin ? { twin: { kind: twin.kind, describe: twin.describe, trace: twin.result.trace } } : {}),
        },
        dir,
      );
      written.set(result.law, { file, replay, message: violation.message, unshrunk });
    }
  }
  return written;
}
