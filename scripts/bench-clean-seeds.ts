// Issue 25's benchmark: `specconf check --runs R` on the clean engine at fresh seeds must hold at every one (a
// tool that cries wolf is switched off). Runs the seeds as parallel processes (--jobs at a time), each writing
// its JSON summary, and reports per seed the exit code, the laws that failed, coverage shown below the floor,
// labels not enough runs could judge, and the wall time; exits 1 if any seed failed.
//   npx tsx scripts/bench-clean-seeds.ts [--runs 200] [--seeds 1001,1002,...] [--count 10] [--first 1001]
//     [--jobs 2] [--json FILE]
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { CheckSummary } from "../src/report/summary.ts";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "200" },
    seeds: { type: "string" },
    count: { type: "string", default: "10" },
    first: { type: "string", default: "1001" },
    jobs: { type: "string", default: "2" },
    json: { type: "string" },
  },
});
const seeds = values.seeds
  ? values.seeds.split(",").map(Number)
  : Array.from({ length: Number(values.count) }, (_, i) => Number(values.first) + i);
const work = mkdtempSync(join(tmpdir(), "specconf-clean-seeds-"));

interface SeedResult {
  seed: number;
  exit: number | null;
  seconds: number;
  failedLaws: string[];
  coverageBelow: string[];
  undecided: string[];
  error?: string;
}

function runSeed(seed: number): Promise<SeedResult> {
  const start = performance.now();
  const out = join(work, `seed${seed}.json`);
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [
        "bin/specconf.js",
        "check",
        "--runs",
        values.runs!,
        "--seed",
        String(seed),
        "--json",
        "--failures",
        join(work, `failures${seed}`),
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("close", (exit) => {
      writeFileSync(out, stdout);
      const seconds = (performance.now() - start) / 1000;
      try {
        const summary = JSON.parse(stdout) as CheckSummary;
        resolve({
          seed,
          exit,
          seconds,
          failedLaws: summary.laws.filter((law) => law.failed > 0).map((law) => `${law.name}: ${law.violation ?? ""}`),
          coverageBelow: summary.coverage.below,
          undecided: summary.coverage.undecided ?? [],
        });
      } catch {
        resolve({ seed, exit, seconds, failedLaws: [], coverageBelow: [], undecided: [], error: stderr.slice(-500) });
      }
    });
  });
}

const results: SeedResult[] = [];
const queue = [...seeds];
await Promise.all(
  Array.from({ length: Math.max(1, Number(values.jobs)) }, async () => {
    for (let seed = queue.shift(); seed !== undefined; seed = queue.shift()) {
      const result = await runSeed(seed);
      results.push(result);
      console.log(
        `seed ${seed}: exit ${result.exit}, ${result.seconds.toFixed(0)}s${result.failedLaws.length ? `; FAILED ${result.failedLaws.join("; ")}` : ""}${result.coverageBelow.length ? `; coverage shown below: ${result.coverageBelow.join(", ")}` : ""}${result.undecided.length ? `; not enough runs to judge: ${result.undecided.join(", ")}` : ""}${result.error ? `; no summary: ${result.error}` : ""}`,
      );
    }
  }),
);
results.sort((a, b) => a.seed - b.seed);
const held = results.filter((result) => result.exit === 0).length;
console.log(`${held}/${results.length} seeds hold at --runs ${values.runs}`);
if (values.json) writeFileSync(values.json, JSON.stringify({ runs: Number(values.runs), results }, null, 2));
rmSync(work, { recursive: true, force: true });
process.exitCode = held === results.length ? 0 : 1;
