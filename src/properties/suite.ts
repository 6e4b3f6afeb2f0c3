// The laws' property suite as one programmatic run: every selected law's property in turn against one
// run source (the reference engine, or an external engine whose capabilities narrow each property's space),
// with per-law statistics, coverage, the features the cases exercised, and each failure's replay line.
// `specconf check` renders it; `specconf check --engine` runs the same suite through the engine.
import type fc from "fast-check";
import type { Case } from "../case/case.ts";
import type { FaultName } from "../case/faults.ts";
import { CoverageCounter } from "../check/coverage.ts";
import type { ExecutionProvider } from "../runtime/ort.ts";
import type { RunSource } from "../check/source.ts";
import type { CaseCheck } from "../check/runner.ts";
import type { RelaxedViews } from "../profiles/relaxed-view.ts";
import { featuresOf } from "../sources/capabilities.ts";
import { caseArbitrary } from "./arbitraries/case.ts";
import type { CaseSpace } from "./arbitraries/space.ts";
import {
  addResult,
  describeFailure,
  emptyStats,
  mergeStats,
  notRunLine,
  runLawProperty,
  type LawProperty,
  type LawStats,
  type PropertyRun,
} from "./law-property.ts";

export interface SuiteOptions {
  properties: readonly LawProperty[];
  runs: number;
  seed: number;
  faults?: readonly FaultName[];
  ep?: ExecutionProvider;
  /** Laws checked and able to fail (default: every law). */
  laws?: ReadonlySet<string>;
  shrinkSeconds?: number;
  twins?: "combined" | "separate";
  failureDir?: string | false;
  source?: RunSource;
  views?: RelaxedViews;
  engine?: { command: string; name: string };
  /** Laws pinned as the engine's known findings (law-property.ts). */
  pinned?: ReadonlySet<string>;
  /** An external engine's capabilities: each property's space narrowed (a string: the property cannot run). */
  narrow?: (space: CaseSpace) => CaseSpace | string;
  /** Progress: a generated run done, a shrink attempt, a line to print. */
  onRun?: () => void;
  onShrink?: (law: string, attempt: number) => void;
  log?: (line: string) => void;
}

export interface SuiteResult {
  stats: Map<string, LawStats>;
  coverage: CoverageCounter;
  runs: PropertyRun[];
  /** Per failing law: the replay command of its own record, the violation that replay reproduces, the text. */
  replays: Map<string, string>;
  violations: Map<string, string>;
  messages: Map<string, string>;
  /** Seconds spent in the cases' own runs and target-only baselines. */
  runSeconds: number;
  /** Properties whose focus the source cannot run, and why. */
  notExercised: { law: string; reason: string }[];
  /** Features of the cases that ran (not skipped), with counts. */
  features: Map<string, number>;
  /** Generated cases the source could not run at all. */
  skipped: number;
}

export function emptySuiteResult(): SuiteResult {
  return {
    stats: new Map(),
    coverage: new CoverageCounter(),
    runs: [],
    replays: new Map(),
    violations: new Map(),
    messages: new Map(),
    runSeconds: 0,
    notExercised: [],
    features: new Map(),
    skipped: 0,
  };
}

export async function runSuite(options: SuiteOptions): Promise<SuiteResult> {
  const result = emptySuiteResult();
  for (const property of options.properties) {
    let arbitrary: fc.Arbitrary<Case> | undefined;
    if (options.narrow) {
      const narrowed = options.narrow({ ...property.space, faults: options.faults ?? [] });
      if (typeof narrowed === "string") {
        result.notExercised.push({ law: property.law, reason: narrowed });
        options.log?.(notRunLine(property.law, narrowed));
        for (let run = 0; run < options.runs; run++) options.onRun?.();
        continue;
      }
      arbitrary = caseArbitrary(narrowed);
    }
    options.log?.(`law '${property.law}': ${property.focus}`);
    const run = await runLawProperty(property, {
      numRuns: options.runs,
      seed: options.seed,
      faults: options.faults,
      ep: options.ep,
      laws: options.laws,
      shrinkSeconds: options.shrinkSeconds,
      twins: options.twins,
      failureDir: options.failureDir,
      // One record per failing law in a check: laws an earlier property recorded get none here.
      recorded: new Set(result.replays.keys()),
      source: options.source,
      views: options.views,
      engine: options.engine,
      pinned: options.pinned,
      arbitrary,
      onRun: (check) => {
        countRun(result, check);
        options.onRun?.();
      },
      onShrink: (attempt) => options.onShrink?.(property.law, attempt),
    });
    absorbRun(result, run, options);
  }
  return result;
}

/** Adds one property's run (or its chunks' merged run) to the suite's totals, failures and replay lines. */
export function absorbRun(result: SuiteResult, run: PropertyRun, options: Pick<SuiteOptions, "log">): void {
  result.runs.push(run);
  result.skipped += run.skipped;
  result.coverage.merge(run.coverage);
  for (const [law, lawStats] of run.stats) {
    const entry = result.stats.get(law) ?? emptyStats();
    mergeStats(entry, lawStats);
    result.stats.set(law, entry);
  }
  if (run.error) throw new Error(`property '${run.law}': ${run.error}`);
  if (run.failure) {
    const text = describeFailure(run);
    options.log?.(text);
    for (const law of run.failure.laws) if (!result.messages.has(law)) result.messages.set(law, text);
    // Each failing law's own record (src/failures/law-failures.ts): what its replay reproduces exactly.
    for (const [law, written] of run.failure.replays ?? [])
      if (!result.replays.has(law)) {
        result.replays.set(law, written.replay);
        result.violations.set(law, written.message);
      }
    // Without records (--no-write): each law's violation on the first failing case.
    for (const law of run.failure.firstCheck.results)
      if (law.status === "fails" && !result.violations.has(law.law))
        result.violations.set(law.law, law.violation?.message ?? law.reason ?? "fails");
  }
}

/** A generated run's share of the suite's totals: its own run time, and the features its case exercised. */
export function countRun(tally: Pick<SuiteResult, "runSeconds" | "features">, check: CaseCheck): void {
  tally.runSeconds += check.seconds.runs ?? 0;
  if (check.skipped !== undefined) return;
  const features = featuresOf(check.testCase);
  // Every case's target-only baseline exercises target-only decoding too.
  if (check.baseline) features.push("mode target-only");
  for (const feature of new Set(features)) tally.features.set(feature, (tally.features.get(feature) ?? 0) + 1);
}
