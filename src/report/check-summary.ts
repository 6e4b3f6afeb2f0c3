// The verdict of a `check`: a suite's per-law statistics (src/properties/suite.ts) as the summary's rows,
// and the policy that decides ok: every selected law held (pinned findings aside, and each pinned law must
// still fail), every coverage label reached its floor (not with --law, nor under 50 runs; labels the
// engine's capabilities cannot reach aside), something was checked at all, and --require-laws' laws were
// judged. What each law judged (held, failed, never checkable, no applicable case, and why) is judged.ts's.
import { RUNS_TO_COMPLETION } from "../check/runner.ts";
import { COVERAGE_LABELS } from "../check/coverage.ts";
import type { RelaxationLog } from "../profiles/profiles.ts";
import { emptyStats, type LawStats } from "../properties/law-property.ts";
import type { SuiteResult } from "../properties/suite.ts";
import type { Capabilities } from "../adapter/protocol.ts";
import { declaredFeatures, unreachableLabels } from "../sources/capabilities.ts";
import type { CheckSummary, LawSummary, ShardRecord } from "./summary.ts";
import { suiteFromChunks } from "../properties/chunks.ts";
import { BadInputError } from "../errors/bad-input.ts";
import { judgeLaws, unmetRequirement, type LawRequirement } from "./judged.ts";

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
  /** With --shard: the shard and its chunks (its coverage floor is the merge's to enforce). */
  shard?: Pick<ShardRecord, "index" | "count" | "runs" | "properties" | "chunks">;
  /** --require-laws. */
  required?: LawRequirement;
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
      ...(lawStats.reasons && Object.keys(lawStats.reasons).length > 0 ? { reasons: { ...lawStats.reasons } } : {}),
      ...(lawStats.failed > 0 && suite.violations.has(name) ? { violation: suite.violations.get(name) } : {}),
      ...(lawStats.failed > 0 && suite.replays.has(name) ? { replay: suite.replays.get(name) } : {}),
      ...(lawStats.failed > 0 && suite.messages.has(name) ? { message: suite.messages.get(name) } : {}),
    }));
}

/** Whether a law's row shows any check decided (a pass or a failure). */
function checkedAnything(laws: readonly LawSummary[], law: string): boolean {
  const row = laws.find((entry) => entry.name === law);
  return row !== undefined && row.passed + row.failed > 0;
}

/** ok from the rows, the coverage, the pins and --require-laws: one rule for one run, shards merged, or anything else. */
export function checkOk(summary: Pick<CheckSummary, "laws" | "coverage" | "pinned" | "required">): boolean {
  const pinned = new Set((summary.pinned ?? []).map((pin) => pin.law));
  const lawsOk = summary.laws.every((law) => law.failed === 0 || pinned.has(law.name));
  const pinsOk = (summary.pinned ?? []).every((pin) => pin.reproduced);
  const checkedAnything = summary.laws.some((law) => law.passed + law.failed > 0);
  const requiredOk = summary.required?.unmet === undefined;
  return lawsOk && pinsOk && summary.coverage.below.length === 0 && checkedAnything && requiredOk;
}

export function summarizeCheck(input: CheckVerdictInput): CheckSummary {
  const { suite, engine, pins } = input;
  const laws = lawRows(input.selected, suite);
  const report = suite.coverage.report();
  const unreachable = engine ? unreachableLabels(engine.capabilities) : [];
  const enforced = !input.lawFilter && report.runs >= 50 && input.shard === undefined;
  const below = enforced ? report.below.filter((label) => !unreachable.includes(label)) : [];
  // A pinned law's failures are the engine's known findings; a pinned law that no longer fails is news.
  const failedCount = (law: string) => laws.find((row) => row.name === law)?.failed ?? 0;
  const pinned = pins && [...pins].map(([law, finding]) => ({ law, finding, reproduced: failedCount(law) > 0 }));
  // A law whose property the engine cannot run has no applicable case only when no other property's run
  // applied to it either (issue 25 saw "law 'bonus stride': not exercised" above a table where bonus stride
  // had caught the bug); one whose property ran but drew no case it applies to is listed too (issue 34).
  const judged = judgeLaws({
    selected: input.selected,
    laws,
    notRun: suite.notExercised,
    cases: report.runs - suite.skipped,
  });
  // A shard judges a share of the runs: the merge decides --require-laws, as it does the coverage floor.
  const unmet = input.required && !input.shard ? unmetRequirement(input.required, judged) : undefined;
  const summary: CheckSummary = {
    ok: false,
    seed: input.seed,
    ...(engine ? { engine: { command: engine.command, name: engine.name, restarts: engine.restarts } } : {}),
    laws,
    judged,
    ...(input.required ? { required: { ...input.required, ...(unmet ? { unmet } : {}) } } : {}),
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
          notExercised: declaredFeatures(engine.capabilities).filter((feature) => !suite.features.has(feature)),
          propertiesNotRun: suite.notExercised
            .filter(({ law }) => checkedAnything(laws, law))
            .map(({ law, reason }) => `'${law}' (the engine lacks ${reason})`),
          skipped: suite.skipped,
          ...(pinned ? { pinned } : {}),
          relaxations: (input.relaxations?.entries() ?? []).filter((entry) => entry.applied > 0),
        }
      : {}),
  };
  if (input.shard)
    summary.shard = {
      ...input.shard,
      selected: [...input.selected],
      lawFilter: input.lawFilter,
      notExercised: suite.notExercised,
      ...(engine ? { capabilities: engine.capabilities } : {}),
      ...(pins ? { pins: [...pins] } : {}),
      ...(input.required ? { required: input.required } : {}),
    };
  summary.ok = checkOk(summary);
  return summary;
}

/**
 * The shards of one check (`check --shard K/N --json`) as the one run they split: their counted chunks
 * recombined (chunks.ts: per property up to the first failure), the verdict recomputed by the same policy.
 * Throws MergeError on reports that are not the shards of one run.
 */
export function mergeShards(reports: readonly { file: string; summary: CheckSummary }[]): CheckSummary {
  const shards = reports.map(({ file, summary }) => {
    if (!summary.shard) throw new MergeError(file, "/shard", "not a shard's report (check --shard K/N --json)");
    return { file, summary, shard: summary.shard };
  });
  const first = shards[0];
  for (const { file, summary, shard } of shards) {
    for (const key of ["count", "runs", "lawFilter"] as const)
      if (shard[key] !== first.shard[key])
        throw new MergeError(file, `/shard/${key}`, `${shard[key]}, but ${first.file} has ${first.shard[key]}`);
    if (summary.seed !== first.summary.seed)
      throw new MergeError(file, "/seed", `${summary.seed}, but ${first.file} has ${first.summary.seed}`);
    if (JSON.stringify(shard.properties) !== JSON.stringify(first.shard.properties))
      throw new MergeError(file, "/shard/properties", `differ from ${first.file}'s`);
  }
  const indices = shards.map(({ shard }) => shard.index).sort((a, b) => a - b);
  const expected = Array.from({ length: first.shard.count }, (_, i) => i + 1);
  if (JSON.stringify(indices) !== JSON.stringify(expected))
    throw new MergeError(
      first.file,
      "/shard/index",
      `shards ${indices.join(", ")} given, ${expected.join(", ")} needed`,
    );
  const suite = suiteFromChunks(
    first.shard.properties,
    shards.flatMap(({ shard }) => shard.chunks),
  );
  suite.notExercised.push(...first.shard.notExercised);
  const engine = first.summary.engine;
  const relaxations = new Map<string, NonNullable<CheckSummary["relaxations"]>[number]>();
  for (const { summary } of shards)
    for (const entry of summary.relaxations ?? []) {
      const total = relaxations.get(entry.id) ?? { ...entry, applied: 0, details: [] };
      total.applied += entry.applied;
      total.details.push(...entry.details.slice(0, 5 - total.details.length));
      relaxations.set(entry.id, total);
    }
  const merged = summarizeCheck({
    seed: first.summary.seed,
    selected: first.shard.selected,
    lawFilter: first.shard.lawFilter,
    suite,
    engine: engine && {
      ...engine,
      restarts: shards.reduce((sum, { summary }) => sum + (summary.engine?.restarts ?? 0), 0),
      capabilities: first.shard.capabilities!,
    },
    pins: first.shard.pins && new Map(first.shard.pins),
    relaxations: { entries: () => [...relaxations.values()] } as unknown as RelaxationLog,
    required: first.shard.required,
  });
  // Which run diverged, as the shard that recorded the failure found it.
  for (const row of merged.laws)
    for (const { summary } of shards) {
      const diverged = summary.laws?.find((entry) => entry.name === row.name && entry.replay === row.replay)?.diverged;
      if (row.failed > 0 && diverged !== undefined && row.diverged === undefined) row.diverged = diverged;
    }
  return merged;
}

/** Reports that cannot be merged: bad input naming the file and the JSON path. */
export class MergeError extends BadInputError {
  constructor(file: string, jsonPath: string, detail: string) {
    super(detail, { file, jsonPath });
  }
}
