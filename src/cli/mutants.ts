// `specconf mutants`: proves the laws on the engine's own faults. For each fault (read from FAULT_NAMES,
// so new faults join automatically) the properties run in turn with the fault on (the mixed one over the
// whole space, then each law's) until a law fails, then shrink; reports the kill matrix (fault x law), the shrunk counterexample's size (requests, prompt
// tokens, verify rounds) and the time to detect. A fault no law kills in --max-runs runs survives (exit 1).
import { FAULT_NAMES, type FaultName } from "../case/faults.ts";
import { LAW_NAMES } from "../laws/registry.ts";
import { RUNS_TO_COMPLETION } from "../check/runner.ts";
import { KILLS_FILE, loadKills, writeKills, type Kill } from "../failures/kills.ts";
import { DEFAULT_FAILURE_DIR } from "../failures/failure-file.ts";
import { runCommandBody } from "../errors/exit.ts";
import { existsSync } from "node:fs";
import { runLawProperty, type PropertyRun } from "../properties/law-property.ts";
import { LAW_PROPERTIES, MIXED } from "../properties/law-properties.ts";
import type { LawProperty } from "../properties/law-property.ts";
import { huntSchedule } from "../properties/dimensions.ts";
import { defineFlags, parseFlags, renderHelp } from "./args.ts";
import { seedFromEnvironment } from "./check-flags.ts";
import { checkOutputPaths, type OutputPath } from "./output-paths.ts";
import { createProgress } from "./progress.ts";
import { render } from "../report/reporters.ts";
import type { FaultReport } from "../report/summary.ts";

const FLAGS = defineFlags({
  fault: {
    type: "choice",
    choices: FAULT_NAMES,
    multiple: true,
    description: "only these faults (default: every fault)",
  },
  "max-runs": {
    type: "integer",
    min: 1,
    default: 400,
    description: "generated runs per fault before it counts as surviving",
  },
  batch: {
    type: "integer",
    min: 1,
    description:
      "runs per property before the next property's turn (default: 20, fewer when --max-runs would not give every property a turn)",
  },
  seed: { type: "integer", description: "fast-check seed (default: SPECCONF_SEED, else 1, so kills are reproducible)" },
  "shrink-seconds": { type: "integer", min: 0, default: 30, description: "stop shrinking after this long" },
  "update-kills": { type: "boolean", description: `write the kills to ${KILLS_FILE} (CI replays them)` },
  failures: {
    type: "string",
    default: DEFAULT_FAILURE_DIR,
    valueName: "DIR",
    description: "where each kill's shrunk failure is written (one record per fault and law)",
  },
  json: { type: "boolean", description: "print one JSON object" },
});

export function sizeOf(run: PropertyRun): { requests: number; promptTokens: number; rounds: number } | undefined {
  const failure = run.failure;
  if (!failure) return undefined;
  const requests = failure.testCase.workload.requests;
  const events = failure.check.run?.trace.events ?? [];
  const rounds = events.reduce((sum, event) => sum + (event.verify?.length ?? 0), 0);
  return {
    requests: requests.length,
    promptTokens: requests.reduce((sum, request) => sum + request.prompt.length, 0),
    rounds,
  };
}

/**
 * Runs the properties in turn with the fault on, `batch` runs each (the mixed property first, then each
 * law's; for a fault only cases of one dimension can show, the properties drawing it: properties/dimensions.ts; by default as many as let every property run within `maxRuns`, at most 20), with a fresh seed per
 * round, until a law fails or `maxRuns` runs are spent.
 */
export async function huntFault(
  fault: FaultName,
  options: {
    maxRuns: number;
    seed: number;
    shrinkSeconds: number;
    batch?: number;
    onRun?: () => void;
    failureDir?: string | false;
  },
): Promise<{ report: FaultReport; run?: PropertyRun; property: LawProperty }> {
  const start = performance.now();
  const schedule = huntSchedule(fault, [MIXED, ...LAW_PROPERTIES]);
  // Every property gets its turn within maxRuns (26 properties of 20 runs would not fit in 400).
  const batch = options.batch ?? Math.max(1, Math.min(20, Math.floor(options.maxRuns / schedule.length)));
  let runs = 0;
  let last: { run: PropertyRun; property: LawProperty } | undefined;
  for (let round = 0; runs < options.maxRuns && !last?.run.failure; round++) {
    for (const property of schedule) {
      const numRuns = Math.min(batch, options.maxRuns - runs);
      if (numRuns <= 0) break;
      const run = await runLawProperty(property, {
        numRuns,
        seed: options.seed + round,
        faults: [fault],
        shrinkSeconds: options.shrinkSeconds,
        onRun: options.onRun,
        failureDir: options.failureDir,
      });
      if (run.error) throw new Error(`fault ${fault}, property '${property.law}': ${run.error}`);
      runs += run.runs;
      last = { run, property };
      if (run.failure) break;
    }
  }
  const failure = last?.run.failure;
  const size = last && sizeOf(last.run);
  const realLaws = (failure?.laws ?? []).filter((law) => law !== RUNS_TO_COMPLETION);
  const elapsed = (performance.now() - start) / 1000;
  const detectSeconds = failure ? elapsed - failure.shrinkSeconds : elapsed;
  const report: FaultReport = {
    name: fault,
    killed: realLaws.length > 0,
    law: realLaws[0] ?? null,
    laws: realLaws,
    firstLaws: failure?.firstLaws ?? [],
    property: failure ? last!.property.law : null,
    requests: size?.requests ?? null,
    promptTokens: size?.promptTokens ?? null,
    rounds: size?.rounds ?? null,
    seconds: elapsed,
    detectSeconds,
    shrinkSeconds: failure?.shrinkSeconds ?? 0,
    runs,
    seed: failure?.seed ?? options.seed,
    path: failure?.path ?? null,
    replay: failure?.replay ?? null,
    crashed: (failure?.laws ?? []).includes(RUNS_TO_COMPLETION),
  };
  return { report, run: failure ? last!.run : undefined, property: last?.property ?? MIXED };
}

export function mutantsCommand(argv: string[]): Promise<number> {
  return runCommandBody("mutants", () => mutants(argv));
}

async function mutants(argv: string[]): Promise<number> {
  const { values, help } = parseFlags(FLAGS, argv);
  if (help) {
    process.stdout.write(
      renderHelp(FLAGS, {
        usage: "specconf mutants [flags]",
        summary: "Switch each named fault on and search until a law fails; exit 0 when every fault is killed.",
      }),
    );
    return 0;
  }
  const faults = (values.fault.length > 0 ? values.fault : [...FAULT_NAMES]) as FaultName[];
  const seed = values.seed ?? (process.env.SPECCONF_SEED ? seedFromEnvironment(undefined) : 1);
  const outputs: OutputPath[] = [{ flag: "--failures", path: values.failures, kind: "folder" }];
  if (values["update-kills"]) outputs.push({ flag: "--update-kills", path: KILLS_FILE, kind: "file" });
  checkOutputPaths(outputs);
  process.stderr.write(
    `specconf mutants: seed ${seed}, up to ${values["max-runs"]} runs per fault, ${faults.length} fault(s)\n`,
  );
  const reports: FaultReport[] = [];
  const kills: Kill[] = [];
  for (const fault of faults) {
    const progress = createProgress({ label: fault, total: values["max-runs"], enabled: !values.json, unit: "runs" });
    let runs = 0;
    let result: Awaited<ReturnType<typeof huntFault>>;
    try {
      result = await huntFault(fault, {
        maxRuns: values["max-runs"],
        seed,
        shrinkSeconds: values["shrink-seconds"],
        batch: values.batch,
        onRun: () => progress.update(++runs),
        failureDir: values.failures,
      });
    } finally {
      progress.finish();
    }
    const { report, run, property } = result;
    reports.push(report);
    if (!values.json)
      process.stderr.write(
        `${fault}: ${report.killed ? `killed by ${report.law} (property '${report.property}') after ${report.runs} runs (${report.seconds.toFixed(1)}s), shrunk to ${report.requests} request(s), ${report.promptTokens} prompt tokens, ${report.rounds} rounds` : report.crashed ? "the engine crashed (a crash proves no law)" : `survived ${report.runs} runs`}\n`,
      );
    if (report.killed && run?.failure) {
      kills.push({
        fault,
        property: property.law,
        law: report.law!,
        laws: report.laws,
        seed: run.failure.seed,
        path: run.failure.path,
        requests: report.requests!,
        promptTokens: report.promptTokens!,
        rounds: report.rounds!,
        case: run.failure.testCase,
      });
    }
  }
  if (values["update-kills"]) {
    const previous = existsSync(KILLS_FILE)
      ? loadKills().kills.filter((kill) => !faults.includes(kill.fault as FaultName))
      : [];
    const merged = [...previous, ...kills].sort(
      (a, b) => FAULT_NAMES.indexOf(a.fault as FaultName) - FAULT_NAMES.indexOf(b.fault as FaultName),
    );
    writeKills({
      formatVersion: 1,
      generatedBy: `specconf mutants --seed ${seed} --max-runs ${values["max-runs"]}`,
      kills: merged,
    });
    process.stderr.write(`wrote ${merged.length} kill(s) to ${KILLS_FILE}\n`);
  }
  const ok = reports.every((report) => report.killed);
  process.stdout.write(
    render({ command: "mutants", summary: { ok, seed, faults: reports } }, values.json ? "json" : "text"),
  );
  return ok ? 0 : 1;
}
