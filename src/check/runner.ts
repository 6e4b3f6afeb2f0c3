// The one runner: a case and a run source in, every law that applies checked. It asks the source for the
// case's run, its target-only baseline and the twins the laws need (each at most once), fills each law's
// inputs from its declared needs, and applies the law. Property suites, `check` (reference or external
// engine), `run`, `replay`, `validate`, golden files, `mutants` and the benchmarks all go through here.
// The runner reads law definitions only: it never tests which law it is running.
import type { Case } from "../case/case.ts";
import { ConfigError } from "../case/engine-config.ts";
import type { RunResult } from "../trace/run-result.ts";
import { RunFailure, Unavailable, type RunSource } from "./source.ts";
import type { RelaxedViews } from "../profiles/relaxed-view.ts";
import { coverageLabels, unobservableLabels, type CoverageLabel } from "./coverage.ts";
import type { Law, LawInputs, TwinSpec } from "../laws/definition.ts";
import { checkInvariance } from "../laws/invariance.ts";
import { notCheckable, type LawResult } from "../laws/law.ts";
import { LAWS } from "../laws/registry.ts";

/** Reported when a run fails (crash, timeout, protocol error): a failure, never a pass, but it proves no law. */
export const RUNS_TO_COMPLETION = "runs to completion";

export interface CheckOptions {
  /** Laws to check (default: all); twins run only for these. */
  laws?: readonly Law[];
  /**
   * "combined" (default): the laws whose twins compose are first checked together against one canonical
   * twin differing in all their dimensions at once; when it agrees each of them holds, when it does not each
   * is checked against its own twin to say which breaks (the combined failure is never dropped).
   * "separate": each law against its own twin, always.
   */
  twins?: "combined" | "separate";
  /** A profile's relaxations (validate, check --engine with a profile). */
  views?: RelaxedViews;
}

export interface LawVerdict extends LawResult {
  /** Relaxations that changed what the law saw. */
  relaxedBy?: string[];
}

export interface CaseCheck {
  testCase: Case;
  /** One verdict per law that applied, plus RUNS_TO_COMPLETION when a run failed. */
  results: LawVerdict[];
  /** Seconds per law (its twin runs included); "runs": the case's run and its baseline. */
  seconds: Record<string, number>;
  labels: CoverageLabel[];
  /** Labels the run's trace cannot show, with the field it lacks (coverage.ts). */
  unobservable?: Partial<Record<CoverageLabel, string>>;
  run?: RunResult;
  baseline?: RunResult;
  twins: Record<string, { testCase: Case; result: RunResult }>;
  /** The run failure that ended the check (RUNS_TO_COMPLETION fails). */
  crash?: string;
  /** The source could not run the case at all: nothing was checked. */
  skipped?: string;
}

export function applicableLaws(testCase: Readonly<Case>, laws: readonly Law[] = LAWS): Law[] {
  return laws.filter((law) => law.appliesTo(testCase));
}

export function failures(check: CaseCheck): LawVerdict[] {
  return check.results.filter((result) => result.status === "fails");
}

function failed(law: string, message: string): LawResult {
  return { law, status: "fails", checked: 0, ties: 0, violation: { message } };
}

/** The composable twins of `laws` applied one after another: one run standing for all of them. */
function canonicalTwin(laws: readonly Law[]): TwinSpec {
  const twins = laws.map((law) => law.needs.twin!);
  return {
    kind: "canonical",
    describe: `the canonical run (${twins.map((twin) => twin.kind).join(", ")})`,
    of: (testCase) => twins.reduce<Case>((twinCase, twin) => twin.of(twinCase), { ...testCase }),
    composable: true,
  };
}

export async function checkLaws(source: RunSource, testCase: Case, options: CheckOptions = {}): Promise<CaseCheck> {
  const check: CaseCheck = { testCase, results: [], seconds: {}, labels: [], twins: {} };
  const timed = async <T>(key: string, work: () => Promise<T>): Promise<T> => {
    const start = performance.now();
    try {
      return await work();
    } finally {
      check.seconds[key] = (check.seconds[key] ?? 0) + (performance.now() - start) / 1000;
    }
  };
  const laws = applicableLaws(testCase, options.laws);
  const endWith = (what: string, error: unknown): CaseCheck => {
    if (error instanceof Unavailable) check.skipped = error.reason;
    else {
      check.crash = `${what}: ${error instanceof Error ? error.message : String(error)}`;
      // What the failed run's own checks saw before it failed, for the laws that read them.
      const before = error instanceof RunFailure ? error.before : undefined;
      for (const law of before ? laws : []) {
        const result = law.checkCrashed?.(before!);
        if (result?.status === "fails") check.results.push(result);
      }
      check.results.push(failed(RUNS_TO_COMPLETION, check.crash));
    }
    return check;
  };

  let run: RunResult;
  try {
    run = await timed("runs", () => source.run(testCase));
  } catch (error) {
    if (!(error instanceof Unavailable || error instanceof RunFailure)) throw error;
    return endWith("the run failed", error);
  }
  check.run = run;
  check.labels = coverageLabels(testCase, run.trace);
  check.unobservable = unobservableLabels(run.trace);

  let baselineReason = "the source has no target-only run";
  if (laws.some((law) => law.needs.baseline)) {
    try {
      check.baseline = await timed("runs", () => source.targetOnly(testCase));
    } catch (error) {
      if (error instanceof Unavailable) baselineReason = `no target-only run: ${error.reason}`;
      else if (error instanceof RunFailure) return endWith("the target-only run failed", error);
      else throw error;
    }
  }
  const oracle = await source.oracle(testCase);

  const twinRuns = new Map<string, Promise<RunResult>>();
  const twinRun = (twin: TwinSpec): Promise<RunResult> => {
    let pending = twinRuns.get(twin.kind);
    if (!pending) {
      const twinCase = twin.of(testCase);
      pending = source.twin(testCase, twin).then((result) => {
        check.twins[twin.kind] = { testCase: twinCase, result };
        return result;
      });
      twinRuns.set(twin.kind, pending);
    }
    return pending;
  };

  const views = options.views;
  const viewOf = (law: Law, result: RunResult | undefined): { run?: RunResult; relaxedBy: string[] } => {
    if (!views || !result) return { run: result, relaxedBy: [] };
    const view = views.viewFor(law.name, result.trace);
    const read = views.outputsFor(law.name, testCase, result.outputs, oracle.spec);
    const changed = view.trace !== result.trace || read.outputs !== result.outputs;
    return {
      run: changed ? { ...result, trace: view.trace, outputs: [...read.outputs] } : result,
      relaxedBy: [...view.relaxedBy, ...read.relaxedBy],
    };
  };
  const inputsOf = (law: Law): LawInputs & { relaxedBy: string[] } => {
    const own = viewOf(law, run);
    const baseline = viewOf(law, check.baseline);
    return { testCase, run: own.run!, baseline: baseline.run, oracle, relaxedBy: own.relaxedBy };
  };
  const unavailable = (law: Law): string | undefined => law.unavailable?.(inputsOf(law));

  // The combined comparison: one canonical twin for every law whose twin composes and that can be shown.
  const composable = laws.filter((law) => law.needs.twin?.composable && unavailable(law) === undefined);
  let combined: LawResult | undefined;
  if ((options.twins ?? "combined") === "combined" && composable.length > 0) {
    const canonical = canonicalTwin(composable);
    combined = await timed("canonical twin", async () => {
      try {
        const twin = await twinRun(canonical);
        return checkInvariance(run.trace, twin.trace, {
          law: "invariance",
          subject: "this run",
          baseline: canonical.describe,
        });
      } catch (error) {
        if (error instanceof Unavailable) return undefined; // each law against its own twin
        if (error instanceof RunFailure) return failed("invariance", `${canonical.describe} failed: ${error.message}`);
        throw error;
      }
    });
    // The canonical run's cost is shared by the laws it stands for.
    for (const law of composable)
      check.seconds[law.name] = (check.seconds[law.name] ?? 0) + check.seconds["canonical twin"] / composable.length;
  }

  const verdict = async (law: Law): Promise<LawVerdict> => {
    if (law.needs.internals && !run.internals)
      return notCheckable(law.name, "needs the engine's own pool integrity checks, which this source does not expose");
    if (law.needs.baseline === "compare" && !check.baseline) return notCheckable(law.name, baselineReason);
    if (views) {
      const view = views.viewFor(law.name, run.trace);
      if (view.disabled)
        return { ...notCheckable(law.name, view.disabled.reason), relaxedBy: [view.disabled.relaxation] };
    }
    const { relaxedBy, ...inputs } = inputsOf(law);
    const reason = law.unavailable?.(inputs);
    if (reason !== undefined) return notCheckable(law.name, reason);
    const twin = law.needs.twin;
    let twinResult: RunResult | undefined;
    if (twin) {
      if (twin.composable && combined?.status === "holds") return { ...combined, law: law.name };
      try {
        twinResult = await twinRun(twin);
      } catch (error) {
        if (error instanceof Unavailable) return notCheckable(law.name, `no ${twin.kind} twin: ${error.reason}`);
        if (error instanceof RunFailure) return failed(law.name, `${twin.describe} failed: ${error.message}`);
        throw error;
      }
    }
    const confirmation = law.needs.confirmation;
    const confirm = confirmation
      ? async () => {
          try {
            return viewOf(law, await twinRun(confirmation)).run;
          } catch (error) {
            if (error instanceof Unavailable) return undefined;
            throw error;
          }
        }
      : undefined;
    let result: LawResult;
    try {
      result = await law.check({
        ...inputs,
        ...(twinResult ? { twin: viewOf(law, twinResult).run } : {}),
        ...(confirm ? { confirm } : {}),
      });
    } catch (error) {
      if (error instanceof ConfigError) throw error;
      if (error instanceof RunFailure && confirmation)
        result = failed(law.name, `${confirmation.describe} failed: ${error.message}`);
      else
        result = failed(
          law.name,
          `the law could not read this run: ${error instanceof Error ? error.message : String(error)}`,
        );
    }
    // A law that compared nothing says so instead of "holds".
    if (result.status === "holds" && result.checked === 0)
      result = { ...notCheckable(law.name, "nothing in this run for the law to compare"), ties: result.ties };
    return relaxedBy.length > 0 ? { ...result, relaxedBy } : result;
  };
  const verdicts = new Map<Law, LawVerdict>();
  for (const law of laws) verdicts.set(law, await timed(law.name, () => verdict(law)));
  check.results.push(...verdicts.values());

  if (combined?.status === "fails") {
    const own = composable.map((law) => verdicts.get(law)!);
    if (!own.some((result) => result.status === "fails") && own.length > 0) {
      // Only the run differing in every dimension at once disagrees: reported under the first such law.
      Object.assign(own[0], {
        ...combined,
        law: own[0].law,
        violation: {
          ...combined.violation!,
          message: `against the canonical run only: ${combined.violation!.message}`,
        },
      });
    }
  }
  return check;
}
