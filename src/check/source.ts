// A run source: where the runs the laws judge come from. The reference engine in-process, an external
// engine over the protocol, and recorded outputs and traces (a golden file's case) all answer the same
// three questions; the runner (src/check/runner.ts) memoizes the answers per case and never asks which
// source it is talking to.
import type { Case } from "../case/case.ts";
import type { CrashedRun, RunResult } from "../trace/run-result.ts";
import type { TwinSpec } from "../laws/definition.ts";
import type { ReferenceOracle } from "../reference/oracle.ts";

/**
 * The source cannot produce this run (an engine that does not support the configuration, a recorded trace
 * that has no twin). Not a failure: the case is skipped, or the law that needed the run is not checkable.
 */
export class Unavailable extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = "Unavailable";
  }
}

/**
 * The engine failed on this case: it crashed, timed out, broke the protocol or answered an error. A failing
 * case like any other (it shrinks); the source is ready for the next case.
 */
export class RunFailure extends Error {
  constructor(
    readonly kind: "crash" | "timeout" | "protocol" | "engine-error",
    message: string,
    /** What the engine's own per-step checks recorded before it failed (the reference engine's crashes). */
    readonly before?: CrashedRun["before"],
  ) {
    super(message);
    this.name = "RunFailure";
  }
}

export interface RunSource {
  /** Names the source in reports ("reference", the engine's name and version). */
  readonly name: string;
  /** The case's own run. Throws Unavailable or RunFailure; anything else is a harness error. */
  run(testCase: Case): Promise<RunResult>;
  /** The target-only greedy run of the case's workload. */
  targetOnly(testCase: Case): Promise<RunResult>;
  /** The case changed as `twin` says (runs twin.of(testCase)). */
  twin(testCase: Case, twin: TwinSpec): Promise<RunResult>;
  /** Cache-free references of the case's models: the tie-aware oracle of every law. */
  oracle(testCase: Case): Promise<ReferenceOracle>;
}

/** The baseline for lossless: the same workload, target-only, no faults. */
export function targetOnlyCase(testCase: Readonly<Case>): Case {
  return { ...testCase, engine: { ...testCase.engine, mode: "target-only", faults: [] } };
}
