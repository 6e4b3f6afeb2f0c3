// The verdict of a `check`: a suite's per-law statistics (src/properties/suite.ts) as the summary's rows,
// and the policy that decides ok: every selected law held (pinned findings aside, and each pinned law must
// still fail), every coverage label reached its floor (not with --law, nor under 50 runs; labels the
// engine's capabilities cannot reach aside), and something was checked at all.
import { RUNS_TO_COMPLETION } from "../check/runner.ts";
import { COVERAGE_LABELS } from "../check/coverage.ts";
import type { RelaxationLog } from "../profiles/profiles.ts";
import { emptyStats, type LawStats } from "../properties/law-property.ts";
import type { SuiteResult } from "../properties/suite.ts";
import type { Capabilities } from "../adapter/protocol.ts";
import { declaredFeatures, unreachableLabels } from "../sources/capabilities.ts";
import type { CheckSummary, LawSummary } from "./summary.ts";

export interface CheckVerdictInput {
  seed: number;
  /** The laws asked for, in report order. */
  selected: readonly string[];
  /** --law was given (coverage is then not enforced). */
  lawFilter: boolean;
  suite: SuiteResult;
  /** With --engine. */
  engine?: { command: string; name: string; restarts: number; capabilities: Capabilities };
  /** With --engine --pins: law -> the finding it pins. */
  pins?: ReadonlyMap<string, string>;
  relaxations?: RelaxationLog;
}

/** The rows: every selected law, and any other law that failed (runs to completion among them). */
export function lawRows(selected: readonly string[], suite: SuiteResult): LawSummary[] {
  const stats = new Map<string, LawStats>(selected.map((name) => [name, emptyStats()]));
  for (const [law, lawStats] of suite.stats) stats.set(law, lawStats);
  const selectedSet = new Set(selected);
  return [...stats.entries()]
    .filter(([name, lawStats]) => selectedSet.has(name) || lawStats.failed > 0 || name === RUNS_TO_COMPLETION)
    .map(([name, lawStats]) => ({
      name,
      runs: lawStats.runs,
      passed: lawStats.passed,
      failed: lawStats.failed,
      ties: lawStats.ties,
      notCheckable: lawStats.notCheckable,
      seconds: lawStats.seconds,
      ...(lawStats.failed > 0 && suite.violations.has(name) ? { violation: suite.violations.get(name) } : {}),
      ...(lawStats.failed > 0 && suite.replays.has(name) ? { replay: suite.replays.get(name) } : {}),
      ...(lawStats.failed > 0 && suite.messages.has(name) ? { message: suite.messages.get(name) } : {}),
    }));
}

/** ok from the rows, the coverage and the pins: one rule for one run, shards merged, or anything else. */
export function checkOk(summary: Pick<CheckSummary, "laws" | "coverage" | "pinned">): boolean {
  const pinned = new Set((summary.pinned ?? []).map((pin) => pin.law));
  const lawsOk = summary.laws.every((law) => law.failed === 0 || pinned.has(law.name));
  const pinsOk = (summary.pinned ?? []).every((pin) => pin.reproduced);
  const checkedAnything = summary.laws.some((law) => law.passed + law.failed > 0);
  return lawsOk && pinsOk && summary.coverage.below.length === 0 && checkedAnything;
}

export function summarizeCheck(input: CheckVerdictInput): CheckSummary {
  const { suite, engine, pins } = input;
  const laws = lawRows(input.selected, suite);
  const report = suite.coverage.report();
  const unreachable = engine ? unreachableLabels(engine.capabilities) : [];
  const enforced = !input.lawFilter && report.runs >= 50;
  const below = enforced ? report.below.filter((label) => !unreachable.includes(label)) : [];
  // A pinned law's failures are the engine's known findings; a pinned law that no longer fails is news.
  const failedCount = (law: string) => laws.find((row) => row.name === law)?.failed ?? 0;
  const pinned = pins && [...pins].map(([law, finding]) => ({ law, finding, reproduced: failedCount(law) > 0 }));
  const summary: CheckSummary = {
    ok: false,
    seed: input.seed,
    ...(engine ? { engine: { command: engine.command, name: engine.name, restarts: engine.restarts } } : {}),
    laws,
    coverage: {
      runs: report.runs,
      labels: Object.fromEntries(COVERAGE_LABELS.map((label) => [label, report.counts[label]])),
      below,
      ...(unreachable.length > 0 ? { unreachable } : {}),
      enforced,
      ...(enforced ? {} : { notEnforcedBecause: input.lawFilter ? "--law given" : `under 50 runs (${report.runs})` }),
      ...(enforced && report.undecided.length > 0
        ? { undecided: report.undecided.filter((label) => !unreachable.includes(label)) }
        : {}),
      ...(Object.keys(report.unobservable).length > 0
        ? { unobservable: report.unobservable as Record<string, string> }
        : {}),
    },
    runSeconds: suite.runSeconds,
    ...(engine
      ? {
          notExercised: [
            ...suite.notExercised.map(({ law, reason }) => `law '${law}' (the engine lacks ${reason})`),
            ...declaredFeatures(engine.capabilities).filter((feature) => !suite.features.has(feature)),
          ],
          skipped: suite.skipped,
          ...(pinned ? { pinned } : {}),
          relaxations: (input.relaxations?.entries() ?? []).filter((entry) => entry.applied > 0),
        }
      : {}),
  };
  summary.ok = checkOk(summary);
  return summary;
}
