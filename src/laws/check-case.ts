// The shared runner: one generated case in, every law that applies checked. It runs the case, its
// fault-free target-only baseline, and the twins the selected multi-run laws need, then applies each
// law with its own timing. Property suites, `specconf check`, `specconf mutants` and `specconf replay`
// all go through here, so every generated run is checked by every law that applies to it.
import type { Case } from "../case/case.ts";
import { ConfigError } from "../engine/config.ts";
import { ForwardMemo } from "../engine/forward-memo.ts";
import { loadModels, runCase, type RunResult } from "../engine/run-case.ts";
import { unchunkedTwin } from "./chunk-invariance.ts";
import { coverageLabels, type CoverageLabel } from "./coverage.ts";
import { notCheckable, type LawResult } from "./law.ts";
import { ReferenceOracle } from "./oracle.ts";
import { unpagedTwin } from "./page-size-invariance.ts";
import { BATCH_INVARIANCE, hasSharedBatch, reorderedTwin } from "./batch-invariance.ts";
import { CHUNK_INVARIANCE } from "./chunk-invariance.ts";
import { checkInvariance } from "./invariance.ts";
import { RETRACT_INVARIANCE, unretractedTwin } from "./retract-invariance.ts";
import { LAWS, type LawDefinition, type TwinKind } from "./registry.ts";

/** Reported when the engine throws: a crash is a failure, never a pass, but it proves no law. */
export const RUNS_TO_COMPLETION = "runs to completion";

export interface CaseCheckOptions {
  /** Laws to check (default: all); twins run only for selected laws that apply. */
  laws?: ReadonlySet<string>;
  /**
   * "combined" (default): the invariance laws that apply are first checked together against the
   * canonical twin (one run instead of up to four); when that comparison holds, each of them holds for
   * the case, and when it fails, each law is checked against its own twin to say which one breaks (the
   * combined failure is never dropped). "separate": each law against its own twin, always.
   */
  twins?: "combined" | "separate";
}

export interface CaseCheck {
  testCase: Case;
  /** One result per law that applied (and was selected), plus RUNS_TO_COMPLETION when a run crashed. */
  results: LawResult[];
  /** Seconds per law (its twin runs included); "runs": the case's run and the target-only baseline. */
  seconds: Record<string, number>;
  labels: CoverageLabel[];
  run?: RunResult;
  targetOnly?: RunResult;
  twins: Partial<Record<TwinKind, { testCase: Case; result: RunResult }>>;
  crash?: string;
}

export function twinCase(kind: TwinKind, testCase: Case): Case {
  switch (kind) {
    case "unchunked":
      return unchunkedTwin(testCase);
    case "unpaged":
      return unpagedTwin(testCase);
    case "reordered":
      return reorderedTwin(testCase);
    case "eager":
      return { ...testCase, engine: { ...testCase.engine, graphReplay: false } };
    case "unretracted":
      return unretractedTwin(testCase);
    case "canonical":
      return canonicalTwin(testCase);
  }
}

/**
 * The canonical twin: unchunked (unlimited budget), page size 1, requests reversed with mirrored
 * arrivals, no aborts or retracts. Every per-request invariance law says a request's projection does not
 * depend on one of these dimensions, so the case must also agree with this one run that differs in all
 * of them at once.
 */
export function canonicalTwin(testCase: Case): Case {
  return unretractedTwin(unpagedTwin(unchunkedTwin(reorderedTwin(testCase))));
}

/** The baseline for lossless: the same workload, target-only, no faults. */
export function targetOnlyCase(testCase: Case): Case {
  return { ...testCase, engine: { ...testCase.engine, mode: "target-only", faults: [] } };
}

export function applicableLaws(testCase: Case, selected?: ReadonlySet<string>): LawDefinition[] {
  return LAWS.filter((law) => (!selected || selected.has(law.name)) && law.applies(testCase));
}

function message(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

function crashed(law: string, error: unknown): LawResult {
  return { law, status: "fails", checked: 0, ties: 0, violation: { message: `the engine crashed: ${message(error)}` } };
}

export async function checkCase(testCase: Case, options: CaseCheckOptions = {}): Promise<CaseCheck> {
  const seconds: Record<string, number> = {};
  const check: CaseCheck = { testCase, results: [], seconds, labels: [], twins: {} };
  const timed = async <T>(key: string, work: () => Promise<T>): Promise<T> => {
    const start = performance.now();
    try {
      return await work();
    } finally {
      seconds[key] = (seconds[key] ?? 0) + (performance.now() - start) / 1000;
    }
  };
  // The case's runs share their forwards: an exact repeat (a twin's prefill, the eager twin's verify) is
  // not computed again (engine/forward-memo.ts; bit-identical).
  const forwardMemo = new ForwardMemo();
  let run: RunResult;
  try {
    run = await timed("runs", () => runCase(testCase, { forwardMemo }));
  } catch (error) {
    if (error instanceof ConfigError) throw error; // the generator made an impossible case: a harness bug
    check.crash = message(error);
    check.results.push(crashed(RUNS_TO_COMPLETION, error));
    return check;
  }
  check.run = run;
  check.labels = coverageLabels(testCase, run.trace);
  const oracle = await ReferenceOracle.create(loadModels(testCase), testCase.engine.runtime);
  const laws = applicableLaws(testCase, options.laws);
  let baseline: Promise<RunResult> | undefined;
  const targetOnly = (): Promise<RunResult> => {
    baseline ??= runCase(targetOnlyCase(testCase), { forwardMemo }).then((result) => (check.targetOnly = result));
    return baseline;
  };
  if (laws.some((law) => law.baseline)) {
    try {
      await timed("runs", targetOnly);
    } catch (error) {
      check.crash = `target-only run: ${message(error)}`;
      check.results.push(crashed(RUNS_TO_COMPLETION, error));
      return check;
    }
  }
  const twinRuns = new Map<TwinKind, Promise<RunResult>>();
  const twin = (kind: TwinKind): Promise<RunResult> => {
    let pending = twinRuns.get(kind);
    if (!pending) {
      const twinTestCase = twinCase(kind, testCase);
      // No law reads a twin's per-step pool checks (KV conservation checks the run and its baseline).
      pending = runCase(twinTestCase, { forwardMemo, checkPools: false }).then((result) => {
        check.twins[kind] = { testCase: twinTestCase, result };
        return result;
      });
      twinRuns.set(kind, pending);
    }
    return pending;
  };
  const context = { testCase, run, targetOnly, oracle, twin };
  const invariances = laws.filter((law) => law.invariance);
  let combined: LawResult | undefined;
  if ((options.twins ?? "combined") === "combined" && invariances.length > 0) {
    combined = await timed("canonical twin", async () => {
      try {
        return checkInvariance(run.trace, (await twin("canonical")).trace, {
          law: "invariance",
          subject: "this run",
          baseline: "the canonical run (unchunked, page 1, reordered, no aborts or retracts)",
        });
      } catch (error) {
        return crashed("invariance", error);
      }
    });
    // The canonical run's cost is shared by the laws it stands for.
    for (const law of invariances)
      seconds[law.name] = (seconds[law.name] ?? 0) + seconds["canonical twin"] / invariances.length;
  }
  for (const law of laws) {
    if (law.invariance && combined?.status === "holds") {
      // Not checkable stays the law's own verdict: nothing of its kind happened in this run.
      const reason =
        law.name === CHUNK_INVARIANCE && !isChunkedRun(run)
          ? "no prompt was prefilled in more than one chunk"
          : law.name === RETRACT_INVARIANCE && !retractLanded(run)
            ? "no retract landed on an active request"
            : law.name === BATCH_INVARIANCE && !hasSharedBatch(run.trace)
              ? "no forward packed two requests"
              : undefined;
      check.results.push(reason ? notCheckable(law.name, reason) : { ...combined, law: law.name });
      continue;
    }
    // Every other law, and each invariance law against its own twin when the combined comparison failed.
    const result = await timed(law.name, async () => {
      try {
        return await law.check(context);
      } catch (error) {
        if (error instanceof ConfigError) throw error;
        return crashed(law.name, error);
      }
    });
    check.results.push(result);
  }
  if (
    combined?.status === "fails" &&
    !check.results.some((result) => invariances.some((law) => law.name === result.law) && result.status === "fails")
  ) {
    // Only the run differing in every dimension at once disagrees: reported, under the first such law.
    const first = check.results.find((result) => result.law === invariances[0].name)!;
    Object.assign(first, {
      ...combined,
      law: first.law,
      violation: { ...combined.violation!, message: `against the canonical run only: ${combined.violation!.message}` },
    });
  }
  return check;
}

function isChunkedRun(run: RunResult): boolean {
  const chunks = new Map<number, number>();
  for (const event of run.trace.events)
    if (event.phase === "prefill")
      for (const request of new Set(event.rows.map((row) => row.request)))
        chunks.set(request, (chunks.get(request) ?? 0) + 1);
  return [...chunks.values()].some((count) => count > 1);
}

function retractLanded(run: RunResult): boolean {
  return (run.trace.lifecycle ?? []).some((entry) => entry.kind === "retract");
}

export function failures(check: CaseCheck): LawResult[] {
  return check.results.filter((result) => result.status === "fails");
}
