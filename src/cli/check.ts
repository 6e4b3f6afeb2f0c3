// `specconf check`: runs the laws' properties (each a generator focused on one law's corner, every run
// checked by every selected law), with progress, a summary table per law, coverage labels, and for each
// failure the shrunk case written under .specconf/failures with its one-line replay command.
import { randomInt } from "node:crypto";
import { FAULT_NAMES, type FaultName } from "../engine/faults.ts";
import { runCommandBody } from "../errors/exit.ts";
import { DEFAULT_RUNTIME, EXECUTION_PROVIDERS, type ExecutionProvider } from "../runtime/ort.ts";
import { buildTarget } from "../model/build.ts";
import { DEFAULT_PRESET, getPreset } from "../model/presets.ts";
import { sessionFor } from "../engine/run-case.ts";
import { COVERAGE_LABELS, CoverageCounter, MIN_COVERAGE } from "../laws/coverage.ts";
import { lawByName, LAW_NAMES } from "../laws/registry.ts";
import { RUNS_TO_COMPLETION } from "../laws/check-case.ts";
import { DEFAULT_FAILURE_DIR } from "../failures/failure-file.ts";
import {
  addResult,
  describeFailure,
  emptyStats,
  runLawProperty,
  type LawStats,
  type PropertyRun,
} from "../../properties/law-property.ts";
import { LAW_PROPERTIES, propertyFor } from "../../properties/index.ts";
import { checkEngine } from "../adapter/check-engine.ts";
import { defineFlags, parseFlags, rejectCombined, renderHelp, UsageError } from "./args.ts";
import { nothingChecked } from "./nothing-checked.ts";
import { checkOutputPaths, writeOutputFile, type OutputPath } from "./output-paths.ts";
import { createProgress } from "./progress.ts";

const FLAGS = defineFlags({
  law: {
    type: "string",
    multiple: true,
    valueName: "NAME",
    description: `check only this law (repeatable): ${LAW_NAMES.join(", ")}`,
  },
  runs: { type: "integer", min: 1, default: 30, description: "generated runs per law property" },
  seed: { type: "integer", description: "fast-check seed (default: SPECCONF_SEED, else a fresh one; always printed)" },
  fault: {
    type: "choice",
    choices: FAULT_NAMES,
    multiple: true,
    description: "switch a named fault on in every generated case",
  },
  ep: {
    type: "choice",
    choices: EXECUTION_PROVIDERS,
    default: "cpu",
    description: "ONNX Runtime execution provider of every generated case (webgpu: float32 presets only)",
  },
  "shrink-seconds": { type: "integer", min: 0, default: 30, description: "stop shrinking a failure after this long" },
  twins: {
    type: "choice",
    choices: ["combined", "separate"],
    default: "combined",
    description:
      "invariance laws: first against one canonical twin (each law's own twin only on a failure), or each against its own twin",
  },
  json: { type: "boolean", description: "print one JSON object" },
  junit: { type: "string", valueName: "FILE", description: "also write a JUnit XML report" },
  failures: {
    type: "string",
    default: DEFAULT_FAILURE_DIR,
    valueName: "DIR",
    description: "where shrunk failures are written",
  },
  "no-write": { type: "boolean", description: "do not write failure files" },
  engine: {
    type: "string",
    valueName: "COMMAND",
    description:
      "check an external engine speaking the JSON Lines protocol (docs/adapter.md) on the golden suites' cases",
  },
  "engine-timeout": {
    type: "integer",
    min: 1,
    default: 60,
    description: "with --engine: seconds per request before the engine is killed (exit 2)",
  },
  golden: {
    type: "string",
    multiple: true,
    valueName: "FILE",
    description: "with --engine: the golden files whose cases to run (default: golden/*.json)",
  },
});

export interface LawSummary {
  name: string;
  runs: number;
  passed: number;
  failed: number;
  ties: number;
  notCheckable: number;
  seconds: number;
  /** The violation of the law's first failure and the command that replays exactly it. */
  violation?: string;
  replay?: string;
}

export interface CheckSummary {
  ok: boolean;
  seed: number;
  laws: LawSummary[];
  coverage: { runs: number; labels: Record<string, number>; below: string[] };
}

export function seedFromEnvironment(flag: number | undefined): number {
  if (flag !== undefined) return flag;
  const raw = process.env.SPECCONF_SEED;
  if (raw !== undefined && raw.trim() !== "") {
    if (!/^[+-]?\d+$/.test(raw.trim()) || !Number.isSafeInteger(Number(raw)))
      throw new UsageError(`SPECCONF_SEED must be an integer, got '${raw}'`);
    return Number(raw);
  }
  return randomInt(0, 2 ** 31 - 1);
}

export function resolveLaws(names: readonly string[]): string[] {
  return names.map((name) => {
    const law = lawByName(name);
    if (!law) throw new UsageError(`--law: unknown law '${name}' (known: ${LAW_NAMES.join(", ")})`, "--law");
    return law.name;
  });
}

function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

export function junitXml(summary: CheckSummary, messages: Map<string, string>): string {
  const failures = summary.laws.filter((law) => law.failed > 0).length;
  const time = summary.laws.reduce((sum, law) => sum + law.seconds, 0);
  const cases = summary.laws.map((law) => {
    const attributes = `classname="specconf.laws" name="${escapeXml(law.name)}" time="${law.seconds.toFixed(3)}"`;
    const properties = `<system-out>${escapeXml(`runs ${law.runs}, passed ${law.passed}, failed ${law.failed}, ties ${law.ties}, not checkable ${law.notCheckable}, seed ${summary.seed}`)}</system-out>`;
    if (law.failed === 0) return `    <testcase ${attributes}>${properties}</testcase>`;
    const message = messages.get(law.name) ?? "the law failed";
    return `    <testcase ${attributes}><failure message="${escapeXml(message.split("\n")[0])}">${escapeXml(message)}</failure>${properties}</testcase>`;
  });
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites name="specconf check" tests="${summary.laws.length}" failures="${failures}" time="${time.toFixed(3)}">`,
    `  <testsuite name="laws (seed ${summary.seed})" tests="${summary.laws.length}" failures="${failures}" time="${time.toFixed(3)}">`,
    ...cases,
    "  </testsuite>",
    "</testsuites>",
    "",
  ].join("\n");
}

function renderTable(
  summary: CheckSummary,
  coverage: CoverageCounter,
  checkCoverage: boolean,
  runSeconds: number,
): string {
  const header = ["law", "runs", "passed", "failed", "ties", "not checkable", "time"];
  const rows = summary.laws.map((law) => [
    law.name,
    String(law.runs),
    String(law.passed),
    law.failed ? `${law.failed} FAIL` : "0",
    String(law.ties),
    String(law.notCheckable),
    `${law.seconds.toFixed(1)}s`,
  ]);
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) =>
    cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join("  ");
  const lines = [
    line(header),
    widths.map((width) => "-".repeat(width)).join("  "),
    ...rows.map(line),
    `(time: each law's checks and the twin runs it needs; the cases' own runs and target-only baselines took ${runSeconds.toFixed(1)}s)`,
    "",
  ];
  lines.push(
    `coverage over ${coverage.runs} runs (each label must reach ${MIN_COVERAGE * 100}%${checkCoverage ? "" : "; not enforced with --law"}):`,
  );
  for (const text of coverage.lines()) lines.push(`  ${text}`);
  return lines.join("\n") + "\n";
}

export function checkCommand(argv: string[]): Promise<number> {
  return runCommandBody("check", () => check(argv));
}

async function check(argv: string[]): Promise<number> {
  const { values, help, given } = parseFlags(FLAGS, argv);
  if (help) {
    process.stdout.write(
      renderHelp(FLAGS, {
        usage: "specconf check [flags]",
        summary: "Run the laws' property suites on generated cases; exit 0 all hold, 1 a law failed, 2 bad input.",
      }),
    );
    return 0;
  }
  if (values.engine === undefined)
    rejectCombined(given, ["golden", "engine-timeout"], "checking the reference engine (they need --engine)");
  if (values.engine !== undefined) {
    if (values.engine.trim() === "")
      throw new UsageError("--engine needs a command that starts the engine, got an empty one", "--engine");
    const external = await checkEngine(values.engine, {
      goldenFiles: values.golden,
      faults: values.fault as FaultName[],
      timeoutMs: values["engine-timeout"] * 1000,
      json: values.json,
    });
    if (external.error)
      process.stderr.write(`specconf check: --engine ${JSON.stringify(values.engine)}: ${external.error}\n`);
    return external.code;
  }
  const selected = values.law.length > 0 ? resolveLaws(values.law) : [...LAW_NAMES];
  const selectedSet = new Set(selected);
  const properties = LAW_PROPERTIES.filter((property) => selectedSet.has(property.law));
  for (const name of selected)
    if (!propertyFor(name)) throw new UsageError(`--law: '${name}' has no property suite yet`, "--law");
  const outputs: OutputPath[] = [];
  if (values.junit !== undefined) outputs.push({ flag: "--junit", path: values.junit, kind: "file" });
  if (!values["no-write"]) outputs.push({ flag: "--failures", path: values.failures, kind: "folder" });
  checkOutputPaths(outputs);
  await preflightProvider(values.ep);
  const seed = seedFromEnvironment(values.seed);
  const faults = values.fault as FaultName[];
  const lawFilter = values.law.length > 0 ? selectedSet : undefined;
  process.stderr.write(
    `specconf check: seed ${seed} (replay: --seed ${seed} or SPECCONF_SEED=${seed}), ${values.runs} runs per law, ${properties.length} law(s), EP ${values.ep}${faults.length ? `, faults ${faults.join(", ")}` : ""}\n`,
  );

  const total = values.runs * properties.length;
  const progress = createProgress({ label: "check", total, enabled: !values.json, unit: "runs" });
  const stats = new Map<string, LawStats>(selected.map((name) => [name, emptyStats()]));
  let runSeconds = 0;
  const coverage = new CoverageCounter();
  const replays = new Map<string, { replay: string; violation: string }>();
  /** Without failure files (--no-write): each law's violation on the first failing case. */
  const violations = new Map<string, string>();
  const messages = new Map<string, string>();
  const runs: PropertyRun[] = [];
  let done = 0;
  try {
    for (const [index, property] of properties.entries()) {
      progress.log(`law '${property.law}': ${property.focus}`);
      const run = await runLawProperty(property, {
        numRuns: values.runs,
        seed,
        faults,
        ep: values.ep,
        laws: lawFilter,
        shrinkSeconds: values["shrink-seconds"],
        twins: values.twins as "combined" | "separate",
        failureDir: values["no-write"] ? false : values.failures,
        onRun: (check) => {
          runSeconds += check.seconds.runs ?? 0;
          progress.update(++done);
        },
        onShrink: (attempt) => {
          if (attempt % 10 === 0) progress.log(`  shrinking '${property.law}': ${attempt} attempts`);
        },
      });
      done = values.runs * (index + 1);
      progress.update(done);
      runs.push(run);
      coverage.merge(run.coverage);
      for (const [law, lawStats] of run.stats) {
        const entry = stats.get(law) ?? emptyStats();
        for (const key of Object.keys(lawStats) as (keyof LawStats)[]) entry[key] += lawStats[key];
        stats.set(law, entry);
      }
      if (run.error) throw new Error(`property '${property.law}': ${run.error}`);
      if (run.failure) {
        const text = describeFailure(run);
        progress.log(text);
        for (const law of run.failure.laws) if (!messages.has(law)) messages.set(law, text);
        // Each failing law's own record: the violation it holds is what its replay reproduces.
        for (const [law, written] of run.failure.replays ?? [])
          if (!replays.has(law)) replays.set(law, { replay: written.replay, violation: written.message });
        for (const result of run.failure.firstCheck.results)
          if (result.status === "fails" && !violations.has(result.law))
            violations.set(result.law, result.violation?.message ?? result.reason ?? "fails");
      }
    }
  } finally {
    progress.finish();
  }

  const checkCoverage = !lawFilter && coverage.runs >= 50;
  const report = coverage.report();
  const laws: LawSummary[] = [...stats.entries()]
    .filter(([name, lawStats]) => selectedSet.has(name) || lawStats.failed > 0 || name === RUNS_TO_COMPLETION)
    .map(([name, lawStats]) => ({
      name,
      runs: lawStats.runs,
      passed: lawStats.passed,
      failed: lawStats.failed,
      ties: lawStats.ties,
      notCheckable: lawStats.notCheckable,
      seconds: lawStats.seconds,
      ...(lawStats.failed > 0 && (replays.has(name) || violations.has(name))
        ? { violation: replays.get(name)?.violation ?? violations.get(name) }
        : {}),
      ...(lawStats.failed > 0 && replays.has(name) ? { replay: replays.get(name)!.replay } : {}),
    }));
  const lawsOk = laws.every((law) => law.failed === 0);
  const coverageOk = !checkCoverage || report.below.length === 0;
  const summary: CheckSummary = {
    ok: lawsOk && coverageOk,
    seed,
    laws,
    coverage: {
      runs: report.runs,
      labels: Object.fromEntries(COVERAGE_LABELS.map((label) => [label, report.counts[label]])),
      below: checkCoverage ? report.below : [],
    },
  };
  if (values.junit) writeOutputFile("--junit", values.junit, junitXml(summary, messages));
  if (values.json) process.stdout.write(`${JSON.stringify(summary)}\n`);
  else {
    process.stdout.write(renderTable(summary, coverage, checkCoverage, runSeconds));
    if (!coverageOk) process.stdout.write(`coverage below ${MIN_COVERAGE * 100}%: ${report.below.join(", ")}\n`);
    // Every law the table counts as failed: its violation, then the command that replays exactly it.
    for (const law of laws.filter((entry) => entry.failed > 0))
      process.stdout.write(
        `${law.name} FAILED: ${law.violation ?? "fails"}\n  ${law.replay ?? "(no failure file: --no-write)"}\n`,
      );
    process.stdout.write(`seed ${seed}: ${summary.ok ? "every law holds" : "FAILED"}\n`);
  }
  if (!summary.ok) return 1;
  return nothingChecked(
    "check",
    laws.flatMap((law) => (law.passed > 0 ? ["holds"] : [])),
  );
}

/** A missing GPU provider is bad input (exit 2 with the fix), not a law failure in every run. */
async function preflightProvider(ep: ExecutionProvider): Promise<void> {
  if (ep === "cpu") return;
  const spec = getPreset(DEFAULT_PRESET);
  const target = buildTarget(spec);
  await sessionFor(target.graph.bytes, target.graph.digest, spec, { ...DEFAULT_RUNTIME, ep });
}
