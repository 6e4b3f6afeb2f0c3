// Issue 25's benchmark: `specconf check --runs R` on the clean engine at fresh seeds must hold at every one (a
// tool that cries wolf is switched off). Runs the seeds as parallel processes (--jobs at a time, default one per
// seed up to the cores), each a `check --workers W` whose W splits the cores between the jobs (jobs x workers
// never exceed the cores: --cores, default the machine's), each writing its JSON summary; prints one line per
// seed (exit code, laws that failed, coverage shown below the floor, labels not enough runs could judge, wall
// time) and a total; exits 1 if any seed failed.
//   npx tsx scripts/bench-clean-seeds.ts [--runs 200] [--seeds 1001,1002,...] [--count 10] [--first 1001]
//     [--jobs J] [--cores C] [--json FILE]
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { CheckSummary } from "../src/report/summary.ts";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "200" },
    seeds: { type: "string" },
    count: { type: "string", default: "10" },
    first: { type: "string", default: "1001" },
    jobs: { type: "string" },
    cores: { type: "string" },
    json: { type: "string" },
  },
});

function positiveInteger(flag: string, raw: string): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) {
    console.error(`bench-clean-seeds: ${flag} must be a positive integer, got '${raw}'`);
    process.exit(2);
  }
  return value;
}

const seeds = values.seeds
  ? values.seeds.split(",").map((seed) => positiveInteger("--seeds", seed))
  : Array.from({ length: positiveInteger("--count", values.count!) }, (_, i) => Number(values.first) + i);
const cores = values.cores ? positiveInteger("--cores", values.cores) : availableParallelism();
const jobs = Math.min(
  seeds.length,
  values.jobs ? positiveInteger("--jobs", values.jobs) : Math.min(seeds.length, cores),
);
/** Worker processes of each job slot: the cores split between the jobs, the remainder to the first slots. */
const workersPerSlot = Array.from({ length: jobs }, (_, slot) =>
  Math.max(1, Math.floor(cores / jobs) + (slot < cores % jobs ? 1 : 0)),
);
const work = mkdtempSync(join(tmpdir(), "specconf-clean-seeds-"));

interface SeedResult {
  seed: number;
  exit: number | null;
  seconds: number;
  failedLaws: string[];
  coverageBelow: string[];
  undecided: string[];
  workers: number;
  error?: string;
}

function runSeed(seed: number, workers: number): Promise<SeedResult> {
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
        "--workers",
        String(workers),
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
          workers,
          failedLaws: summary.laws.filter((law) => law.failed > 0).map((law) => `${law.name}: ${law.violation ?? ""}`),
          coverageBelow: summary.coverage.below,
          undecided: summary.coverage.undecided ?? [],
        });
      } catch {
        const error = stderr.trim().split("\n").slice(-3).join(" | ") || `no output (exit ${exit})`;
        resolve({ seed, exit, seconds, workers, failedLaws: [], coverageBelow: [], undecided: [], error });
      }
    });
  });
}

console.log(
  `check --runs ${values.runs} at ${seeds.length} seed(s), ${jobs} at a time, --workers ${[...new Set(workersPerSlot)].join("/")} each (${cores} cores)`,
);
const started = performance.now();
const results: SeedResult[] = [];
const queue = [...seeds];
await Promise.all(
  workersPerSlot.map(async (workers) => {
    for (let seed = queue.shift(); seed !== undefined; seed = queue.shift()) {
      const result = await runSeed(seed, workers);
      results.push(result);
      console.log(
        `seed ${seed}: ${result.exit === 0 ? "holds" : "FAILS"} (exit ${result.exit}), ${result.seconds.toFixed(0)}s, --workers ${workers}${result.failedLaws.length ? `; FAILED ${result.failedLaws.join("; ")}` : ""}${result.coverageBelow.length ? `; coverage shown below: ${result.coverageBelow.join(", ")}` : ""}${result.undecided.length ? `; not enough runs to judge: ${result.undecided.join(", ")}` : ""}${result.error ? `; no summary: ${result.error}` : ""}`,
      );
    }
  }),
);
results.sort((a, b) => a.seed - b.seed);
const held = results.filter((result) => result.exit === 0).length;
const wall = (performance.now() - started) / 1000;
const failed = results.filter((result) => result.exit !== 0).map((result) => result.seed);
console.log(
  `total: ${held}/${results.length} seeds hold at --runs ${values.runs}, ${wall.toFixed(0)}s wall${failed.length ? `; failed seeds: ${failed.join(", ")}` : ""}`,
);
if (values.json)
  writeFileSync(values.json, JSON.stringify({ runs: Number(values.runs), cores, jobs, wall, results }, null, 2));
rmSync(work, { recursive: true, force: true });
process.exitCode = held === results.length ? 0 : 1;
