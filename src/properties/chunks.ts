// A chunk of a property's runs as a record (check --workers, check --shard, specconf merge): its counts,
// coverage, tally and, when it failed, what the report needs of the failure. A suite's totals are built
// from the records in one way, whether the chunks ran in one process, over workers, or on several machines:
// per property, in order of their first run, up to and including the first chunk that failed (an unsharded,
// sequential run stops there too), so every way of splitting the runs gives the same verdicts and counts.
import { CoverageCounter, type CoverageRecord } from "../check/coverage.ts";
import { emptyStats, mergeStats, type LawStats, type PropertyRun } from "./law-property.ts";
import { absorbRun, emptySuiteResult, type SuiteResult } from "./suite.ts";

export interface ChunkRecord {
  /** The property (named by its law) and the chunk's generated runs [start, start + count). */
  law: string;
  start: number;
  count: number;
  runs: number;
  skipped: number;
  stats: Record<string, LawStats>;
  coverage: CoverageRecord;
  runSeconds: number;
  features: [string, number][];
  relaxations: { id: string; applied: number; details: string[] }[];
  /** A failed chunk: its laws' failure text, violations and replay commands (suite.ts absorbRun's maps). */
  failure?: { messages: [string, string][]; violations: [string, string][]; replays: [string, string][] };
  error?: string;
}

/** The record of a chunk's run (its failure records already written, when it failed and writing is on). */
export function chunkRecord(
  start: number,
  count: number,
  run: PropertyRun,
  tally: Pick<ChunkRecord, "runSeconds" | "features" | "relaxations">,
): ChunkRecord {
  // Fields, not methods: a run from a worker arrives as data (structured clone drops the class). All of the
  // counter, not its counts alone: the runs outside a label's space and those blind to it change its verdict.
  const coverage = Object.assign(new CoverageCounter(), run.coverage).toRecord();
  const record: ChunkRecord = {
    law: run.law,
    start,
    count,
    runs: run.runs,
    skipped: run.skipped,
    stats: Object.fromEntries(run.stats),
    coverage,
    ...tally,
    ...(run.error ? { error: run.error } : {}),
  };
  if (run.failure) {
    // Its text counts the property's runs from the first, as one sequential run's would.
    const failed = emptySuiteResult();
    absorbRun(failed, { ...run, runs: start + run.runs }, {});
    record.failure = {
      messages: [...failed.messages],
      violations: [...failed.violations],
      replays: [...failed.replays],
    };
  }
  return record;
}

/** The chunks that count: per property, in order, up to and including the first failed one. */
export function countedChunks(order: readonly string[], chunks: readonly ChunkRecord[]): ChunkRecord[] {
  return order.flatMap((law) => {
    const own = chunks.filter((chunk) => chunk.law === law).sort((a, b) => a.start - b.start);
    const failed = own.findIndex((chunk) => chunk.failure !== undefined || chunk.error !== undefined);
    return failed < 0 ? own : own.slice(0, failed + 1);
  });
}

/** A suite's totals from its counted chunks (in property order; the first failure of each law wins). */
export function suiteFromChunks(order: readonly string[], chunks: readonly ChunkRecord[]): SuiteResult {
  const result = emptySuiteResult();
  for (const chunk of countedChunks(order, chunks)) {
    if (chunk.error) throw new Error(`property '${chunk.law}': ${chunk.error}`);
    result.skipped += chunk.skipped;
    result.coverage.merge(CoverageCounter.fromRecord(chunk.coverage));
    for (const [law, stats] of Object.entries(chunk.stats)) {
      const entry = result.stats.get(law) ?? emptyStats();
      mergeStats(entry, stats);
      result.stats.set(law, entry);
    }
    result.runSeconds += chunk.runSeconds;
    for (const [feature, count] of chunk.features)
      result.features.set(feature, (result.features.get(feature) ?? 0) + count);
    for (const [map, entries] of [
      [result.messages, chunk.failure?.messages ?? []],
      [result.violations, chunk.failure?.violations ?? []],
      [result.replays, chunk.failure?.replays ?? []],
    ] as const)
      for (const [law, text] of entries) if (!map.has(law)) map.set(law, text);
  }
  return result;
}

/** The relaxations of the counted chunks, summed per relaxation (the first five details kept). */
export function relaxationsOf(chunks: readonly ChunkRecord[]): Map<string, { applied: number; details: string[] }> {
  const totals = new Map<string, { applied: number; details: string[] }>();
  for (const chunk of chunks)
    for (const entry of chunk.relaxations) {
      const total = totals.get(entry.id) ?? { applied: 0, details: [] };
      total.applied += entry.applied;
      total.details.push(...entry.details.slice(0, 5 - total.details.length));
      totals.set(entry.id, total);
    }
  return totals;
}
