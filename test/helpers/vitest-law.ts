// The vitest side of a law's property: fixed run count (SPECCONF_RUNS, default 40) and seed
// (SPECCONF_SEED, else a fixed per-law seed), the seed printed always, and on failure the law, the
// violation, fast-check's seed/path and the one-line `npx specconf replay` command in the message.
import { expect, test } from "vitest";
import { seedFromEnv } from "../setup.ts";
import {
  describeFailure,
  runLawProperty,
  type LawProperty,
  type PropertyRun,
} from "../../src/properties/law-property.ts";
import { dimensionLabels } from "../../src/properties/dimensions.ts";

export const DEFAULT_RUNS = 40;

export function runsFromEnv(fallback = DEFAULT_RUNS): number {
  const raw = process.env.SPECCONF_RUNS;
  if (raw === undefined || raw.trim() === "") return fallback;
  const runs = Number(raw);
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`SPECCONF_RUNS must be an integer >= 1, got '${raw}'`);
  return runs;
}

/** A fixed seed per name, so each law's suite explores its own cases when SPECCONF_SEED is unset. */
export function fixedSeed(name: string): number {
  let hash = 2166136261;
  for (const char of name) hash = Math.imul(hash ^ char.charCodeAt(0), 16777619);
  return hash >>> 1;
}

export function seedFor(name: string): number {
  return seedFromEnv(process.env.SPECCONF_SEED) ?? fixedSeed(name);
}

export function summaryLine(run: PropertyRun): string {
  const own = run.stats.get(run.law);
  const laws = [...run.stats.values()].reduce((sum, stats) => sum + stats.runs, 0);
  return `law '${run.law}': ${run.runs} runs, ${laws} law checks, seed ${run.seed} (SPECCONF_SEED=${run.seed} replays), ${own ? `${own.passed} held, ${own.ties} ties, ${own.notCheckable} not checkable` : "not applied"}, ${run.seconds.toFixed(1)}s`;
}

/** Registers the law's property as one vitest test. */
export function lawTest(property: LawProperty, runs = runsFromEnv()): void {
  const seed = seedFor(property.law);
  test(`law: ${property.law} (${runs} runs, seed ${seed})`, { timeout: 600_000 }, async () => {
    const run = await runLawProperty(property, { numRuns: runs, seed, shrinkSeconds: 30 });
    console.log(summaryLine(run));
    if (run.error || run.failure) expect.fail(describeFailure(run));
    // The focus must reach the law: it applied and was checkable in at least a quarter of the runs.
    const own = run.stats.get(property.law);
    expect(
      own?.passed ?? 0,
      `law '${property.law}' was checked in too few runs: ${JSON.stringify(own)}`,
    ).toBeGreaterThanOrEqual(Math.ceil(runs / 4));
    // The coverage labels of a dimension only this kind of space draws (dimensions.ts) are judged here.
    const ownLabels = new Set(dimensionLabels(property.space));
    expect(
      run.coverage.report().below.filter((label) => ownLabels.has(label)),
      run.coverage.lines().join("\n"),
    ).toEqual([]);
  });
}
