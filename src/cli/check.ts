// `specconf check`: runs the laws' properties (each a generator focused on one law's corner, every run
// checked by every selected law), with progress, a summary table per law, coverage labels, and for each
// failure the shrunk case written under .specconf/failures with its one-line replay command.
import { randomInt } from "node:crypto";
import { FAULT_NAMES, type FaultName } from "../engine/faults.ts";
import { runCommandBody } from "../errors/exit.ts";
import { DEFAULT_RUNTIME, EXECUTION_PROVIDERS, type ExecutionProvider } from "../runtime/ort.ts";
import { buildTarget } from "../model/build.ts";
import { DEFAULT_PRESET, getPreset } from "../model/presets.ts";
import { sessionFor } from "../runtime/sessions.ts";
import { COVERAGE_LABELS, CoverageCounter, MIN_COVERAGE } from "../check/coverage.ts";
import { lawByName, LAW_NAMES } from "../laws/registry.ts";
import { RUNS_TO_COMPLETION } from "../check/runner.ts";
import { ExternalSource } from "../sources/external.ts";
import { declaredFeatures, unreachableLabels } from "../sources/capabilities.ts";
import { narrowSpace } from "../properties/arbitraries/capabilities.ts";
import { runSuite, type SuiteResult } from "../properties/suite.ts";
import { PROFILES, profileNames, RelaxationLog } from "../profiles/profiles.ts";
import { RelaxedViews } from "../profiles/relaxed-view.ts";
import { DEFAULT_FAILURE_DIR } from "../failures/failure-file.ts";
import { loadPins } from "../failures/pins.ts";
import {
  addResult,
  describeFailure,
  emptyStats,
  runLawProperty,
  type LawStats,
  type PropertyRun,
} from "../properties/law-property.ts";
import { LAW_PROPERTIES, propertyFor } from "../properties/law-properties.ts";
import { checkEngine } from "./check-engine.ts";
import { defineFlags, parseFlags, rejectCombined, renderHelp, UsageError } from "./args.ts";
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
    description: "check an external engine speaking the JSON Lines protocol (docs/adapter.md) on generated cases",
  },
  "engine-timeout": {
    type: "integer",
    min: 1,
    default: 60,
    description: "with --engine: seconds per request before the engine is killed (a failing case)",
  },
  golden: {
    type: "boolean",
    description: "with --engine: run the golden suites' fixed cases instead of generated ones",
  },
  "golden-file": {
    type: "string",
    multiple: true,
    valueName: "FILE",
    description: "with --engine --golden: the golden files whose cases to run (default: golden/*.json)",
  },
  pins: {
    type: "string",
    valueName: "FILE",
    description:
      "with --engine: laws pinned as the engine's known findings (docs/findings/*.pins.json): reported, not failing the run, and each must still fail",
  },
  outputs: {
    type: "string",
    valueName: "DIR",
    description: "with --engine --golden: write each suite's outputs as DIR/<suite>.jsonl (for specconf validate)",
  },
  profile: {
    type: "choice",
    choices: profileNames(),
    default: "strict",
    description: "with --engine: the engine's documented conventions the laws relax (docs/validate.md)",
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
  /** With --engine: the command, the name and version it declared, and restarts after failed cases. */
  engine?: { command: string; name: string; restarts: number };
  laws: LawSummary[];
  coverage: { runs: number; labels: Record<string, number>; below: string[]; unreachable?: string[] };
  /** With --engine: laws' properties and declared features no generated case exercised. */
  notExercised?: string[];
  skipped?: number;
  /** With --engine --pins: each pinned law, its finding, and whether it still failed. */
  pinned?: { law: string; finding: string; reproduced: boolean }[];
  /** With --engine --profile: the relaxations that changed what a law saw, and how often. */
  relaxations?: ReturnType<RelaxationLog["entries"]>;
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
  let source: ExternalSource | undefined;
  try {
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
      rejectCombined(
        given,
        ["golden", "golden-file", "outputs", "engine-timeout", "profile", "pins"],
        "checking the reference engine (they need --engine)",
      );
    else if (values.engine.trim() === "")
      throw new UsageError("--engine needs a command that starts the engine, got an empty one", "--engine");
    // Flags the chosen mode would silently ignore are refused.
    if (values.engine !== undefined) rejectCombined(given, ["ep"], "--engine (the engine runs on its own device)");
    if (values.engine !== undefined && !values.golden)
      rejectCombined(given, ["golden-file", "outputs"], "generated cases (it needs --golden)");
    if (values.engine !== undefined && values.golden)
      rejectCombined(
        given,
        ["law", "runs", "seed", "shrink-seconds", "twins", "junit", "failures", "no-write", "pins"],
        "--golden (the golden suites' fixed cases are checked as they are, nothing is generated or shrunk)",
      );
    if (values.engine !== undefined && values.golden) {
      const external = await checkEngine(values.engine, {
        goldenFiles: values["golden-file"],
        faults: values.fault as FaultName[],
        timeoutMs: values["engine-timeout"] * 1000,
        profile: PROFILES[values.profile],
        json: values.json,
        outputsDir: values.outputs,
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
    if (values.engine !== undefined) {
      source = await ExternalSource.start(values.engine, {
        timeoutMs: values["engine-timeout"] * 1000,
        onRestart: (reason) => progress.log(`  engine restarted after ${reason.split("\n")[0].slice(0, 160)}`),
      });
    }
    const capabilities = source?.capabilities;
    const pins = values.pins !== undefined ? loadPins(values.pins).laws : undefined;
    const relaxations = new RelaxationLog(PROFILES[values.profile]);
    process.stderr.write(
      `specconf check: seed ${seed} (replay: --seed ${seed} or SPECCONF_SEED=${seed}), ${values.runs} runs per law, ${properties.length} law(s), ${source ? `engine ${source.name}` : `EP ${values.ep}`}${faults.length ? `, faults ${faults.join(", ")}` : ""}\n`,
    );

    const progress = createProgress({
      label: "check",
      total: values.runs * properties.length,
      enabled: !values.json,
      unit: "runs",
    });
    let done = 0;
    let suite: SuiteResult;
    try {
      suite = await runSuite({
        properties,
        runs: values.runs,
        seed,
        faults,
        ep: values.ep,
        laws: lawFilter,
        shrinkSeconds: values["shrink-seconds"],
        twins: values.twins as "combined" | "separate",
        failureDir: values["no-write"] ? false : values.failures,
        source,
        engine: source && { command: source.command, name: source.name },
        pinned: pins && new Set(pins.keys()),
        views:
          source && values.profile !== "strict" ? new RelaxedViews(PROFILES[values.profile], relaxations) : undefined,
        narrow: capabilities && ((space) => narrowSpace(space, capabilities)),
        onRun: () => progress.update(++done),
        onShrink: (law, attempt) => {
          if (attempt % 10 === 0) progress.log(`  shrinking '${law}': ${attempt} attempts`);
        },
        log: (line) => progress.log(line),
      });
    } finally {
      progress.finish();
    }

    const stats = new Map<string, LawStats>(selected.map((name) => [name, emptyStats()]));
    for (const [law, lawStats] of suite.stats) stats.set(law, lawStats);
    const coverage = suite.coverage;
    const unreachable = capabilities ? unreachableLabels(capabilities) : [];
    const checkCoverage = !lawFilter && coverage.runs >= 50;
    const report = coverage.report();
    const below = checkCoverage ? report.below.filter((label) => !unreachable.includes(label)) : [];
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
        ...(lawStats.failed > 0 && suite.violations.has(name) ? { violation: suite.violations.get(name) } : {}),
        ...(lawStats.failed > 0 && suite.replays.has(name) ? { replay: suite.replays.get(name) } : {}),
      }));
    const checkedAnything = laws.some((law) => law.passed + law.failed > 0);
    // A pinned law's failures are the engine's known findings; a pinned law that no longer fails is news.
    const unreproduced = [...(pins?.keys() ?? [])].filter((law) => (stats.get(law)?.failed ?? 0) === 0);
    const lawsOk = laws.every((law) => law.failed === 0 || pins?.has(law.name)) && unreproduced.length === 0;
    const summary: CheckSummary = {
      ok: lawsOk && below.length === 0 && checkedAnything,
      seed,
      ...(source ? { engine: { command: source.command, name: source.name, restarts: source.restarts } } : {}),
      laws,
      coverage: {
        runs: report.runs,
        labels: Object.fromEntries(COVERAGE_LABELS.map((label) => [label, report.counts[label]])),
        below,
        ...(unreachable.length > 0 ? { unreachable } : {}),
      },
      ...(capabilities
        ? {
            notExercised: [
              ...suite.notExercised.map(({ law, reason }) => `law '${law}' (the engine lacks ${reason})`),
              ...declaredFeatures(capabilities).filter((feature) => !suite.features.has(feature)),
            ],
            skipped: suite.skipped,
            ...(pins
              ? {
                  pinned: [...pins].map(([law, finding]) => ({
                    law,
                    finding,
                    reproduced: !unreproduced.includes(law),
                  })),
                }
              : {}),
            relaxations: relaxations.entries().filter((entry) => entry.applied > 0),
          }
        : {}),
    };
    if (values.junit) writeOutputFile("--junit", values.junit, junitXml(summary, suite.messages));
    if (values.json) process.stdout.write(`${JSON.stringify(summary)}\n`);
    else {
      process.stdout.write(renderTable(summary, coverage, checkCoverage, suite.runSeconds));
      if (below.length > 0) process.stdout.write(`coverage below ${MIN_COVERAGE * 100}%: ${below.join(", ")}\n`);
      if (summary.notExercised?.length) process.stdout.write(`never exercised: ${summary.notExercised.join("; ")}\n`);
      if (summary.skipped)
        process.stdout.write(`${summary.skipped} generated cases the engine refused as unsupported\n`);
      for (const pin of summary.pinned ?? [])
        process.stdout.write(
          `pinned: ${pin.law} (${pin.finding}): ${pin.reproduced ? "fails as the finding says" : "NO LONGER FAILS: the engine changed; update the finding and the pin"}\n`,
        );
      // Every law the table counts as failed (pinned findings aside): its violation, then the command that
      // replays exactly it.
      for (const law of laws.filter((entry) => entry.failed > 0 && !pins?.has(entry.name)))
        process.stdout.write(
          `${law.name} FAILED: ${law.violation ?? "fails"}\n  ${law.replay ?? "(no failure file: --no-write)"}\n`,
        );
      if (!checkedAnything) process.stdout.write("nothing was checked: every run was skipped or not checkable\n");
      process.stdout.write(`seed ${seed}: ${summary.ok ? "every law holds" : "FAILED"}\n`);
    }
    return summary.ok ? 0 : 1;
  } finally {
    await source?.close();
  }
}

/** A missing GPU provider is bad input (exit 2 with the fix), not a law failure in every run. */
async function preflightProvider(ep: ExecutionProvider): Promise<void> {
  if (ep === "cpu") return;
  const spec = getPreset(DEFAULT_PRESET);
  const target = buildTarget(spec);
  await sessionFor(target.graph.bytes, target.graph.digest, spec, { ...DEFAULT_RUNTIME, ep });
}
