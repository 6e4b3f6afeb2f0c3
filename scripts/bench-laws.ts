// Law throughput: generated runs per second and law checks per second, per law and overall, with the
// runs spread over worker processes (one per core by default), plus the time to detect and shrink a
// failing case. Cases come from every law's property in turn (each law's own generator), and every run
// is checked by every law that applies, exactly as `specconf check` does.
//
//   npx tsx scripts/bench-laws.ts [--runs 2000] [--workers 2] [--seed 1] [--json]
//   npx tsx scripts/bench-laws.ts --engine "npx specconf adapter" [--runs 300]
//
// With --engine the same cases also run through the external engine (each worker starts its own), right
// after the in-process pass, and the ratio of the two runs/s is reported (target, issue 10: >= 50%).
//
// Target (issue 4): >= 10,000 law checks from >= 2,000 generated runs in <= 2 minutes on 2 cores; a
// failing case shrunk in <= 30 s.
import { fork } from "node:child_process";
import { availableParallelism } from "node:os";
import fc from "fast-check";
import { checkLaws } from "../src/laws/runner.ts";
import { referenceSource } from "../src/sources/reference.ts";
import { ExternalSource } from "../src/sources/external.ts";
import { LAW_PROPERTIES, MIXED } from "../properties/index.ts";
import { propertyArbitrary, runLawProperty } from "../properties/law-property.ts";
import { defineFlags, parseFlags } from "../src/cli/args.ts";

const FLAGS = defineFlags({
  runs: { type: "integer", min: 1, default: 2000, description: "generated runs in all" },
  workers: { type: "integer", min: 1, default: Math.min(2, availableParallelism()), description: "worker processes" },
  seed: { type: "integer", default: 1, description: "fast-check seed" },
  json: { type: "boolean", description: "print one JSON object" },
  worker: { type: "integer", min: 0, description: "internal: run as worker number N" },
  engine: { type: "string", valueName: "COMMAND", description: "also run the cases through this engine" },
});

interface WorkerReport {
  runs: number;
  cpuSeconds: number;
  /** Seconds of the cases' own runs and target-only baselines. */
  runSeconds: number;
  laws: Record<string, { checks: number; seconds: number; failed: number }>;
}

async function worker(
  index: number,
  workers: number,
  runs: number,
  seed: number,
  engine?: string,
): Promise<WorkerReport> {
  const source = engine ? await ExternalSource.start(engine) : referenceSource();
  const cpu = process.cpuUsage();
  const report: WorkerReport = { runs: 0, cpuSeconds: 0, runSeconds: 0, laws: {} };
  const properties = LAW_PROPERTIES;
  // Case k goes to worker k mod workers; property k mod (number of properties) generates it.
  const perProperty = Math.ceil(runs / properties.length);
  for (const [p, property] of properties.entries()) {
    const cases = fc.sample(propertyArbitrary(property), { seed: seed + p, numRuns: perProperty });
    for (const [i, testCase] of cases.entries()) {
      const k = p * perProperty + i;
      if (k >= runs || k % workers !== index) continue;
      const check = await checkLaws(source, testCase);
      report.runs += 1;
      report.runSeconds += check.seconds.runs ?? 0;
      for (const result of check.results) {
        const entry = (report.laws[result.law] ??= { checks: 0, seconds: 0, failed: 0 });
        entry.checks += 1;
        entry.seconds += check.seconds[result.law] ?? 0;
        if (result.status === "fails") entry.failed += 1;
      }
    }
  }
  const used = process.cpuUsage(cpu);
  report.cpuSeconds = (used.user + used.system) / 1e6;
  if (source instanceof ExternalSource) await source.close();
  return report;
}

function runWorker(index: number, workers: number, runs: number, seed: number, engine?: string): Promise<WorkerReport> {
  return new Promise((resolve, reject) => {
    const child = fork(
      process.argv[1],
      [
        ...["--worker", String(index), "--workers", String(workers), "--runs", String(runs), "--seed", String(seed)],
        ...(engine ? ["--engine", engine] : []),
      ],
      { execArgv: process.execArgv, stdio: ["ignore", "pipe", "inherit", "ipc"] },
    );
    let out = "";
    child.stdout!.on("data", (chunk) => (out += chunk));
    child.on("exit", (code) =>
      code === 0
        ? resolve(JSON.parse(out.trim().split("\n").pop()!))
        : reject(new Error(`worker ${index} exited with ${code}`)),
    );
  });
}

const { values } = parseFlags(FLAGS, process.argv.slice(2));
if (values.worker !== undefined) {
  const report = await worker(values.worker, values.workers, values.runs, values.seed, values.engine);
  process.stdout.write(`${JSON.stringify(report)}\n`);
  process.exit(0);
}

const start = performance.now();
const reports = await Promise.all(
  Array.from({ length: values.workers }, (_, i) => runWorker(i, values.workers, values.runs, values.seed)),
);
const wall = (performance.now() - start) / 1000;
const laws = new Map<string, { checks: number; seconds: number; failed: number }>();
for (const report of reports) {
  for (const [law, entry] of Object.entries(report.laws)) {
    const total = laws.get(law) ?? { checks: 0, seconds: 0, failed: 0 };
    total.checks += entry.checks;
    total.seconds += entry.seconds;
    total.failed += entry.failed;
    laws.set(law, total);
  }
}
const runs = reports.reduce((sum, report) => sum + report.runs, 0);
const checks = [...laws.values()].reduce((sum, entry) => sum + entry.checks, 0);
const cpu = reports.reduce((sum, report) => sum + report.cpuSeconds, 0);
const runSeconds = reports.reduce((sum, report) => sum + report.runSeconds, 0);

// Shrinking: a fault the mixed property finds, detected and shrunk.
const shrinkStart = performance.now();
const shrink = await runLawProperty(MIXED, {
  numRuns: 200,
  seed: values.seed,
  faults: ["cross-request-mask-leak"],
  failureDir: false,
});
const shrinkWall = (performance.now() - shrinkStart) / 1000;
const shrunk = shrink.failure;

// The same cases through the external engine, right after the in-process pass.
let external:
  { command: string; wallSeconds: number; runsPerSecond: number; ratio: number; failed: number } | undefined;
if (values.engine) {
  const engineStart = performance.now();
  const engineReports = await Promise.all(
    Array.from({ length: values.workers }, (_, i) =>
      runWorker(i, values.workers, values.runs, values.seed, values.engine),
    ),
  );
  const engineWall = (performance.now() - engineStart) / 1000;
  const engineRuns = engineReports.reduce((sum, report) => sum + report.runs, 0);
  const failed = engineReports.reduce(
    (sum, report) => sum + Object.values(report.laws).reduce((inner, entry) => inner + entry.failed, 0),
    0,
  );
  external = {
    command: values.engine,
    wallSeconds: engineWall,
    runsPerSecond: engineRuns / engineWall,
    ratio: engineRuns / engineWall / (runs / wall),
    failed,
  };
}

const summary = {
  runs,
  workers: values.workers,
  wallSeconds: wall,
  cpuSeconds: cpu,
  runsPerSecond: runs / wall,
  lawChecks: checks,
  lawChecksPerSecond: checks / wall,
  engineRunSeconds: runSeconds,
  laws: [...laws.entries()].map(([law, entry]) => ({
    law,
    checks: entry.checks,
    seconds: entry.seconds,
    checksPerSecond: entry.seconds > 0 ? entry.checks / entry.seconds : null,
    failed: entry.failed,
  })),
  shrink: shrunk
    ? {
        fault: "cross-request-mask-leak",
        detectSeconds: shrunk.detectSeconds,
        shrinkSeconds: shrunk.shrinkSeconds,
        shrinks: shrunk.shrinks,
        requests: shrunk.testCase.workload.requests.length,
        promptTokens: shrunk.testCase.workload.requests.reduce((sum, request) => sum + request.prompt.length, 0),
        totalSeconds: shrinkWall,
      }
    : null,
  target: { lawChecks: 10_000, runs: 2_000, seconds: 120, shrinkSeconds: 30 },
  ...(external ? { external } : {}),
};

if (values.json) {
  process.stdout.write(`${JSON.stringify(summary)}\n`);
} else {
  const lines = [
    `${runs} generated runs on ${values.workers} worker(s) in ${wall.toFixed(1)}s (${cpu.toFixed(1)}s CPU): ${summary.runsPerSecond.toFixed(1)} runs/s, ${checks} law checks, ${summary.lawChecksPerSecond.toFixed(1)} law checks/s`,
    `engine runs of the cases and their target-only baselines: ${runSeconds.toFixed(1)}s of worker time`,
    "",
    `${"law".padEnd(26)} ${"checks".padStart(7)} ${"seconds".padStart(8)} ${"checks/s".padStart(9)}  (seconds: the law's own work, twin runs included)`,
    ...summary.laws.map(
      (entry) =>
        `${entry.law.padEnd(26)} ${String(entry.checks).padStart(7)} ${entry.seconds.toFixed(1).padStart(8)} ${(entry.checksPerSecond === null ? "-" : entry.checksPerSecond.toFixed(0)).padStart(9)}${entry.failed ? `  ${entry.failed} FAILED` : ""}`,
    ),
    "",
    shrunk
      ? `shrinking: cross-request-mask-leak detected in ${shrunk.detectSeconds.toFixed(1)}s, shrunk in ${shrunk.shrinkSeconds.toFixed(1)}s (${shrunk.shrinks} steps) to ${summary.shrink!.requests} request(s), ${summary.shrink!.promptTokens} prompt tokens`
      : "shrinking: the fault was not found",
    `target: >= ${summary.target.lawChecks} law checks from >= ${summary.target.runs} runs in <= ${summary.target.seconds}s, shrink <= ${summary.target.shrinkSeconds}s: ${checks >= 10_000 && runs >= 2_000 && wall <= 120 && (shrunk?.shrinkSeconds ?? Infinity) <= 30 ? "met" : "NOT met"}`,
  ];
  if (external)
    lines.push(
      `through '${external.command}': ${external.runsPerSecond.toFixed(1)} runs/s in ${external.wallSeconds.toFixed(1)}s = ${(external.ratio * 100).toFixed(0)}% of in-process (target >= 50%: ${external.ratio >= 0.5 ? "met" : "NOT met"})${external.failed ? `, ${external.failed} law checks FAILED` : ""}`,
    );
  process.stdout.write(lines.join("\n") + "\n");
}
