// One per-law table per EP and seed from run-on-gpu.sh check's logs (check-EP-seedS[-groupG].txt): the groups
// of one seed are one check split over processes, so their rows add up (runs, passed, failed, ties, not
// checkable) and so do their coverage counts, which are judged against the 2% bar over all of the seed's runs
// (a group alone may miss a label its share of runs is too small for).
// (A failing law's row reads `1 FAIL` in the failed column.)
// Usage: npx tsx scripts/gpu/check-summary.ts DIR
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const dir = process.argv[2] ?? "/tmp/specconf-check";
const COVERAGE_BAR = 0.02;
interface Seed {
  laws: Map<string, number[]>;
  coverage: Map<string, [number, number]>;
  groups: number;
  failures: string[];
  complete: boolean;
}
const seeds = new Map<string, Seed>();
for (const file of readdirSync(dir)
  .filter((name) => /^check-.*\.txt$/.test(name))
  .sort()) {
  const key = file.replace(/^check-/, "").replace(/(-group\d+)?\.txt$/, "");
  const seed: Seed = seeds.get(key) ?? {
    laws: new Map(),
    coverage: new Map(),
    groups: 0,
    failures: [],
    complete: true,
  };
  seeds.set(key, seed);
  seed.groups += 1;
  const text = readFileSync(join(dir, file), "utf8");
  if (!/^seed \d+: /m.test(text)) seed.complete = false; // killed before its table
  for (const match of text.matchAll(/^(\S.*?)\s+(\d+)\s+(\d+)\s+(\d+)(?: FAIL)?\s+(\d+)\s+(\d+)\s+[\d.]+s$/gm)) {
    const counts = match.slice(2, 7).map(Number);
    const sum = seed.laws.get(match[1]) ?? [0, 0, 0, 0, 0];
    seed.laws.set(
      match[1],
      sum.map((value, i) => value + counts[i]),
    );
  }
  for (const match of text.matchAll(/^ {2}(\S.*?)\s+[\d.]+% \((\d+)\/(\d+)\)$/gm)) {
    const [hits, runs] = seed.coverage.get(match[1]) ?? [0, 0];
    seed.coverage.set(match[1], [hits + Number(match[2]), runs + Number(match[3])]);
  }
  seed.failures.push(...[...text.matchAll(/^(.* FAILED: .*)$/gm)].map((match) => match[1]));
}
for (const [key, seed] of seeds) {
  const failed = [...seed.laws.values()].reduce((total, counts) => total + counts[2], 0);
  // Counted per law, as check's own last line (src/report/verdict.ts): a law that judged no run did not hold.
  const rows = [...seed.laws.values()];
  const held = rows.filter(([, passed, fails]) => passed > 0 && fails === 0).length;
  const neverCheckable = rows.filter(([runs, passed, fails]) => runs > 0 && passed + fails === 0).length;
  const noRun = rows.filter(([runs]) => runs === 0).length;
  const counts = `${held} of ${rows.length} laws held on at least one run, ${neverCheckable} never checkable, ${noRun} with no applicable run`;
  const below = [...seed.coverage].filter(([, [hits, runs]]) => hits < COVERAGE_BAR * runs).map(([label]) => label);
  console.log(`\n## ${key} (${seed.groups} process${seed.groups > 1 ? "es" : ""})`);
  console.log("| law | runs | passed | failed | ties | not checkable |\n| --- | --- | --- | --- | --- | --- |");
  for (const [law, counts] of seed.laws) console.log(`| ${law} | ${counts.join(" | ")} |`);
  console.log(
    `${seed.complete ? "" : "INCOMPLETE (a process was stopped before its table); "}${failed === 0 ? "no law failed" : `${failed} failing runs`} (${counts}); coverage ${below.length === 0 ? "every label >= 2%" : `below 2%: ${below.join(", ")}`}`,
  );
  for (const failure of seed.failures) console.log(`- ${failure}`);
}
