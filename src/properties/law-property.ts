// A law's property: a generator focused on the law's corner, run through the shared checker (every law
// that applies checks every run). runLawProperty drives fast-check: per-law statistics and coverage
// over the generated runs, shrinking restricted to the laws that failed (cheaper, and it keeps the
// counterexample failing the same way), a shrink time budget, and on failure the shrunk case and its
// trace written under .specconf/failures with a one-line replay command.
import fc from "fast-check";
import type { Case } from "../case/case.ts";
import type { FaultName } from "../case/faults.ts";
import { getPreset } from "../model/presets.ts";
import type { ExecutionProvider } from "../runtime/ort.ts";
import { checkLaws, failures, RUNS_TO_COMPLETION, type CaseCheck } from "../check/runner.ts";
import { LAWS } from "../laws/registry.ts";
import type { Law } from "../laws/definition.ts";
import { referenceSource } from "../sources/reference.ts";
import type { RunSource } from "../check/source.ts";
import type { RelaxedViews } from "../profiles/relaxed-view.ts";
import { CoverageCounter } from "../check/coverage.ts";
import type { LawResult } from "../laws/law.ts";
import { DEFAULT_FAILURE_DIR } from "../failures/failure-file.ts";
import { writeLawFailures, type WrittenFailure } from "../failures/law-failures.ts";
import { caseArbitrary } from "./arbitraries/case.ts";
import { labelsOutside } from "./dimensions.ts";
import { space, type CaseSpace } from "./arbitraries/space.ts";

export interface LawProperty {
  /**
   * The law this property focuses on (its name as the law reports it), or for a property of a case dimension no
   * one law owns (law-properties.ts dimensionProperties), the dimension's name, which names no law.
   */
  law: string;
  /** Why the generator looks where it does. */
  focus: string;
  /** The narrowed case space (faults are added by the runner). */
  space: Omit<CaseSpace, "faults">;
}

export function lawProperty(law: string, focus: string, overrides: Partial<CaseSpace> = {}): LawProperty {
  return { law, focus, space: space(overrides) };
}

export interface LawStats {
  runs: number;
  passed: number;
  failed: number;
  /** Runs where the law counted at least one tie. */
  tied: number;
  ties: number;
  notCheckable: number;
  seconds: number;
  /** Why the law was not checkable, with how many runs said so (the report names why a law judged nothing). */
  reasons?: Record<string, number>;
}

/**
 * Distinct not-checkable reasons kept per law: most are fixed strings, a few name a run's numbers (page sizes,
 * sample counts). Past the cap a new reason is dropped (the notCheckable count stays exact); a cap this far
 * above what laws word keeps a split over workers counting what one process counts.
 */
const MAX_REASONS = 20;

export function emptyStats(): LawStats {
  return { runs: 0, passed: 0, failed: 0, tied: 0, ties: 0, notCheckable: 0, seconds: 0 };
}

function addReason(stats: LawStats, reason: string, count: number): void {
  const reasons = (stats.reasons ??= {});
  if (reason in reasons || Object.keys(reasons).length < MAX_REASONS) reasons[reason] = (reasons[reason] ?? 0) + count;
}

/** Adds `from`'s counts to `into` (a property's runs to the suite's, a chunk's to its property's). */
export function mergeStats(into: LawStats, from: Readonly<LawStats>): void {
  for (const key of ["runs", "passed", "failed", "tied", "ties", "notCheckable", "seconds"] as const)
    into[key] += from[key] ?? 0;
  for (const [reason, count] of Object.entries(from.reasons ?? {})) addReason(into, reason, count);
}

export function addResult(stats: LawStats, result: LawResult, seconds: number): void {
  stats.runs += 1;
  stats.seconds += seconds;
  if (result.status === "fails") stats.failed += 1;
  else if (result.status === "not-checkable") {
    stats.notCheckable += 1;
    addReason(stats, result.reason ?? "not checkable", 1);
  } else stats.passed += 1;
  if (result.ties > 0) stats.tied += 1;
  stats.ties += result.ties;
}

export interface PropertyFailure {
  seed: number;
  path: string;
  /** The shrunk case and its check (every selected law). */
  testCase: Case;
  check: CaseCheck;
  /** Laws failing on the first failing (unshrunk) case, and on the shrunk one. */
  firstLaws: string[];
  laws: string[];
  firstCase: Case;
  firstCheck: CaseCheck;
  shrinks: number;
  /** Seconds to the first failure, and spent shrinking. */
  detectSeconds: number;
  shrinkSeconds: number;
  /** Written failure record and its replay command (absent when writing is off). */
  file?: string;
  replay?: string;
  /** One record per failing law (src/failures/law-failures.ts); file/replay above are laws[0]'s. */
  replays?: Map<string, WrittenFailure>;
  /** fast-check's own replay parameters. */
  fastCheck: string;
}

export interface PropertyRun {
  law: string;
  seed: number;
  /** Generated runs executed (shrink attempts not included). */
  runs: number;
  /** Runs the source could not run at all (nothing checked). */
  skipped: number;
  stats: Map<string, LawStats>;
  coverage: CoverageCounter;
  seconds: number;
  failure?: PropertyFailure;
  /** A harness error (not a law failure): generator or checker bug. */
  error?: string;
}

export interface PropertyRunOptions {
  numRuns: number;
  seed: number;
  faults?: readonly FaultName[];
  /** Execution provider every generated case runs on (default cpu). */
  ep?: ExecutionProvider;
  /** Laws that are checked and can fail the property (default: every law). */
  laws?: ReadonlySet<string>;
  /** Replay one counterexample: fast-check's path (with the seed it came from). */
  path?: string;
  /**
   * Start at this generated run of the seed's sequence (fast-check's path, shrinking as usual): runs
   * [startRun, startRun + numRuns) of the same sequence one fc.check from 0 would draw, so a property's runs
   * split into chunks (check --workers) draw, fail and shrink exactly as one run does. Default 0.
   */
  startRun?: number;
  /** Stop shrinking after this many seconds (the best counterexample so far is kept). Default 60. */
  shrinkSeconds?: number;
  /** Where failures are written (default .specconf/failures); false: not written. */
  failureDir?: string | false;
  /** How the invariance laws use twin runs (runner.ts); default "combined". */
  twins?: "combined" | "separate";
  /** Where runs come from (default: the reference engine in-process). */
  source?: RunSource;
  /** Replaces the generated-case arbitrary (an external engine's capabilities narrow the space). */
  arbitrary?: fc.Arbitrary<Case>;
  /** A profile's relaxations (check --engine --profile). */
  views?: RelaxedViews;
  /**
   * Laws pinned as known findings of the engine under test (check --pins): checked and counted like any other,
   * their failures do not fail the property (the suite then requires each pinned law to fail somewhere).
   */
  pinned?: ReadonlySet<string>;
  /** The external engine behind `source`: named in failure files, which also get the reference's trace. */
  engine?: { command: string; name: string };
  /** Laws with a failure record already written in this check (suite.ts): they get no second one. */
  recorded?: ReadonlySet<string>;
  /** Called after each generated run (not after shrink attempts). */
  onRun?: (check: CaseCheck, run: number) => void;
  /** Called after each shrink attempt. */
  onShrink?: (attempt: number, failing: boolean) => void;
}

export function propertyArbitrary(
  property: LawProperty,
  faults: readonly FaultName[] = [],
  ep: ExecutionProvider = "cpu",
): fc.Arbitrary<Case> {
  // WebGPU has no float64 kernels: its runs draw from the float32 presets only.
  const presets =
    ep === "webgpu"
      ? property.space.presets.filter((name) => getPreset(name).dtype === "float32")
      : property.space.presets;
  const cases = caseArbitrary({ ...property.space, presets, faults });
  return ep === "cpu"
    ? cases
    : cases.map((testCase) => ({
        ...testCase,
        engine: { ...testCase.engine, runtime: { ...testCase.engine.runtime, ep } },
      }));
}

/** The registry's laws among `names` (names that are not laws, such as RUNS_TO_COMPLETION, select nothing). */
export function lawsNamed(names: ReadonlySet<string>): Law[] {
  return LAWS.filter((law) => names.has(law.name));
}

export function failedLaws(
  check: CaseCheck,
  selected?: ReadonlySet<string>,
  pinned?: ReadonlySet<string>,
): LawResult[] {
  return failures(check).filter(
    (result) =>
      (!selected || selected.has(result.law) || result.law === RUNS_TO_COMPLETION) && !pinned?.has(result.law),
  );
}

export async function runLawProperty(property: LawProperty, options: PropertyRunOptions): Promise<PropertyRun> {
  const start = performance.now();
  const stats = new Map<string, LawStats>();
  const coverage = new CoverageCounter();
  const outside = labelsOutside(property.space);
  let runs = 0;
  let skipped = 0;
  let firstFailure: { check: CaseCheck; seconds: number } | undefined;
  let lastFailing: CaseCheck | undefined;
  let shrinkLaws: Set<string> | undefined;
  let shrinkStart = 0;
  let shrinkAttempts = 0;
  const shrinkBudget = (options.shrinkSeconds ?? 60) * 1000;
  const source = options.source ?? referenceSource();
  const checkOne = (testCase: Case, names: ReadonlySet<string> | undefined): Promise<CaseCheck> =>
    checkLaws(source, testCase, { laws: names && lawsNamed(names), twins: options.twins, views: options.views });

  const predicate = async (testCase: Case): Promise<boolean> => {
    if (firstFailure) {
      // Shrinking: only the laws that failed, and nothing once the budget is spent (a passing answer
      // ends shrinking quickly and keeps the last failing case).
      if (performance.now() - shrinkStart > shrinkBudget) return true;
      const check = await checkOne(testCase, shrinkLaws);
      const failing = failedLaws(check, shrinkLaws, options.pinned).length > 0;
      shrinkAttempts += 1;
      options.onShrink?.(shrinkAttempts, failing);
      if (failing) lastFailing = check;
      return !failing;
    }
    const check = await checkOne(testCase, options.laws);
    runs += 1;
    if (check.skipped !== undefined) skipped += 1;
    coverage.add(check.labels, check.unobservable, outside);
    for (const result of check.results) {
      const entry = stats.get(result.law) ?? emptyStats();
      addResult(entry, result, check.seconds[result.law] ?? 0);
      stats.set(result.law, entry);
    }
    options.onRun?.(check, runs);
    const failed = failedLaws(check, options.laws, options.pinned);
    if (failed.length === 0) return true;
    firstFailure = { check, seconds: (performance.now() - start) / 1000 };
    lastFailing = check;
    shrinkLaws = new Set(failed.map((result) => result.law));
    shrinkStart = performance.now();
    return false;
  };

  const details = await fc.check(
    fc.asyncProperty(options.arbitrary ?? propertyArbitrary(property, options.faults, options.ep), predicate),
    {
      seed: options.seed,
      numRuns: options.numRuns,
      ...(options.path !== undefined
        ? { path: options.path, endOnFailure: true }
        : options.startRun
          ? { path: String(options.startRun) }
          : {}),
    },
  );
  const result: PropertyRun = {
    law: property.law,
    seed: details.seed,
    runs,
    skipped,
    stats,
    coverage,
    seconds: (performance.now() - start) / 1000,
  };
  if (!details.failed) return result;
  if (!firstFailure || !lastFailing || !details.counterexample) {
    result.error =
      details.errorInstance instanceof Error
        ? (details.errorInstance.stack ?? details.errorInstance.message)
        : String(details.errorInstance ?? "fast-check failed without a counterexample");
    return result;
  }
  const [shrunk] = details.counterexample as [Case];
  // Recheck the shrunk case against every selected law, for the record and the kill matrix.
  const check = await checkOne(shrunk, options.laws);
  const laws = failedLaws(check, options.laws, options.pinned).map((law) => law.law);
  const path = details.counterexamplePath ?? "";
  const failure: PropertyFailure = {
    seed: details.seed,
    path,
    testCase: shrunk,
    check,
    firstLaws: failedLaws(firstFailure.check, options.laws, options.pinned).map((law) => law.law),
    laws: laws.length > 0 ? laws : [...(shrinkLaws ?? [])],
    firstCase: firstFailure.check.testCase,
    firstCheck: firstFailure.check,
    shrinks: details.numShrinks,
    detectSeconds: firstFailure.seconds,
    shrinkSeconds: (performance.now() - shrinkStart) / 1000,
    fastCheck: `{ seed: ${details.seed}, path: ${JSON.stringify(path)}, endOnFailure: true }`,
  };
  result.failure = failure;
  if (options.failureDir !== false) await writePropertyFailure(property, result, options);
  return result;
}

/**
 * The failure records of a failed property run, one per failing law (src/failures/law-failures.ts), and
 * their replay commands on the run's failure. Separate from running: check --workers writes only the
 * failure that decides a property, once the earlier runs are known to pass.
 */
export async function writePropertyFailure(
  property: LawProperty,
  run: PropertyRun,
  options: PropertyRunOptions,
): Promise<void> {
  const failure = run.failure!;
  const replays = await writeLawFailures(
    {
      property: property.law,
      seed: failure.seed,
      shrunkPath: failure.path,
      firstPath: options.path ?? String((options.startRun ?? 0) + run.runs - 1),
      shrunk: failure.check,
      first: failure.firstCheck,
      checked: options.laws,
      pinned: options.pinned,
      twins: options.twins,
      engine: options.engine,
      referenceTraceOf: options.engine ? referenceTraceOf : undefined,
      recorded: options.recorded,
    },
    options.failureDir || DEFAULT_FAILURE_DIR,
  );
  failure.replays = replays;
  const own = replays.get(failure.laws[0]) ?? replays.values().next().value;
  failure.file = own?.file;
  failure.replay = own?.replay;
}

/** The reference engine's trace of a case an external engine failed on (none where it cannot run it). */
async function referenceTraceOf(testCase: Case) {
  try {
    return (await referenceSource().run(testCase)).trace;
  } catch {
    return undefined;
  }
}

/**
 * A property the engine cannot run (its focus needs what the engine lacks). Its law is not thereby unexercised:
 * it checks every other property's runs, and may fail on them.
 */
export function notRunLine(law: string, lacks: string): string {
  // A property keyed by a case dimension (law-properties.ts dimensionProperties) has no law of its own.
  const checks = LAWS.some((entry) => entry.name === law) ? `law '${law}' still checks` : "every law still checks";
  return `property '${law}' not run: the engine lacks ${lacks} (${checks} the other properties' runs)`;
}

/** One paragraph for a failed property: the law, the violation, the seed and the replay line. */
export function describeFailure(run: PropertyRun): string {
  const failure = run.failure;
  if (!failure) return run.error ? `property '${run.law}' could not run: ${run.error}` : `property '${run.law}' passed`;
  const result = failure.check.results.find((law) => law.status === "fails");
  const requests = failure.testCase.workload.requests;
  // The laws that failed lead: the property only says where the case came from (issue 25: "property 'reference
  // decode' failed" read as that law failing when mirror acceptance had).
  return [
    `${failure.laws.join(", ")} FAILED on a case of property '${run.law}' after ${run.runs} runs (seed ${failure.seed}); shrunk ${failure.shrinks} times to ${requests.length} request(s), prompt tokens ${requests.map((request) => request.prompt.length).join("+")}`,
    `  ${result?.law ?? failure.laws[0]}: ${result?.violation?.message ?? "fails"}`,
    `  fast-check: ${failure.fastCheck}`,
    ...(failure.replay ? [`  ${failure.replay}`] : []),
  ].join("\n");
}
