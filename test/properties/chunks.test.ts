// A property's runs split into chunks (check --workers, --shard) must judge coverage exactly as one sequential
// run does: a label is judged over the runs whose space can reach it, and a label no trace could show is
// reported, not judged. A chunk record that kept only the counts turned a grammar label drawn by one
// property in ~2% of all runs into "below the floor" on 16 workers while one worker held (issue 26).
import { describe, expect, it } from "vitest";
import { CoverageCounter, type CoverageLabel } from "../../src/check/coverage.ts";
import { chunkRecord, suiteFromChunks } from "../../src/properties/chunks.ts";
import type { PropertyRun } from "../../src/properties/law-property.ts";

const RARE: CoverageLabel = "grammar ends inside an accepted run";
const BLIND: CoverageLabel = "request finishes mid-round";

/** A property's run whose coverage has labels outside its space and one its traces cannot show. */
function propertyRun(law: string, runs: number, reachesRare: boolean): PropertyRun {
  const coverage = new CoverageCounter();
  for (let i = 0; i < runs; i++) {
    const labels: CoverageLabel[] = reachesRare && i % 3 === 0 ? [RARE] : [];
    coverage.add(labels, { [BLIND]: "verify results' emitted" }, reachesRare ? [] : [RARE]);
  }
  return { law, seed: 1, runs, skipped: 0, stats: new Map(), coverage, seconds: 0 };
}

describe("chunk records", () => {
  it("carry the whole coverage counter: merged chunks judge every label as the unsplit runs do", () => {
    const runs = [propertyRun("grammar acceptance", 30, true), propertyRun("lossless", 600, false)];
    const whole = new CoverageCounter();
    for (const run of runs) whole.merge(run.coverage);
    // A worker's run arrives through structured clone (the class is lost, its fields kept).
    const chunks = runs.map((run) =>
      chunkRecord(0, run.runs, structuredClone(run), { runSeconds: 0, features: [], relaxations: [] }),
    );
    const merged = suiteFromChunks(
      runs.map((run) => run.law),
      chunks,
    ).coverage.report();
    expect(merged).toEqual(whole.report());
    // The rare label is judged over the 30 runs that could reach it (10 of them: sufficient), not the 630.
    expect(whole.report().below).not.toContain(RARE);
    expect(merged.unobservable[BLIND]).toBe("verify results' emitted");
  });
});
