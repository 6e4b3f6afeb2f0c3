// `specconf golden update | verify | dump`: regenerate the checked-in golden suites (explicit only),
// check the reference engine against them, or dump the reference engine's outputs and traces for a
// golden file in the formats validate reads (optionally with faults switched on).
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { ConfigError } from "../engine/config.ts";
import { FAULT_NAMES, type FaultName } from "../engine/faults.ts";
import { goldenText } from "../golden/format.ts";
import { GoldenGenerationError, generateGolden } from "../golden/generate.ts";
import { consistencyIssues, digestIssues, loadGoldenFile, validateGoldenDocument } from "../golden/load.ts";
import { runGoldenCase } from "../golden/run-reference.ts";
import { GOLDEN_SUITES, suiteNames } from "../golden/suites.ts";
import { verifyGolden } from "../golden/verify.ts";
import { SpecError } from "../model/spec.ts";
import { RuntimeError } from "../runtime/ort.ts";
import { InputError } from "../schema/input-error.ts";
import { renderReport } from "../validate/report.ts";
import { stableJson, writeTextAtomic } from "../schema/atomic-write.ts";
import { jsonLines } from "../validate/write.ts";
import { defineFlags, parseFlags, renderHelp, UsageError } from "./args.ts";

export const DEFAULT_GOLDEN_DIR = "golden";

const UPDATE_FLAGS = defineFlags({
  suite: {
    type: "choice",
    choices: suiteNames(),
    multiple: true,
    description: "regenerate only these suites (default: all)",
  },
  dir: { type: "string", default: DEFAULT_GOLDEN_DIR, valueName: "DIR", description: "where golden files live" },
});

const VERIFY_FLAGS = defineFlags({
  dir: {
    type: "string",
    default: DEFAULT_GOLDEN_DIR,
    valueName: "DIR",
    description: "verify every *.json here when no FILE is given",
  },
  json: { type: "boolean", description: "print one JSON object per golden file" },
});

const DUMP_FLAGS = defineFlags({
  golden: { type: "string", valueName: "FILE", description: "the golden file whose cases to run" },
  outputs: { type: "string", valueName: "FILE.jsonl", description: "write the outputs here" },
  "trace-dir": { type: "string", valueName: "DIR", description: "write one trace per case here (<case>.trace.json)" },
  fault: { type: "choice", choices: FAULT_NAMES, multiple: true, description: "switch a named fault on" },
});

const USAGE = `usage: specconf golden <update|verify|dump> [flags]

  update [--suite NAME]... [--dir DIR]      regenerate golden files (checks every law first; atomic; stable key order)
  verify [--dir DIR] [FILE...]              run the reference engine against golden files (exit 1 on any failure)
  dump --golden FILE --outputs FILE.jsonl [--trace-dir DIR] [--fault NAME]...
                                            the reference engine's outputs and traces for a golden file, as validate reads them
`;

async function update(argv: string[]): Promise<number> {
  const { values, help } = parseFlags(UPDATE_FLAGS, argv);
  if (help) {
    process.stdout.write(
      renderHelp(UPDATE_FLAGS, {
        usage: "specconf golden update [flags]",
        summary:
          "Regenerate golden suites from the reference engine. Refuses when a law fails or a tie makes an expectation ambiguous.",
      }),
    );
    return 0;
  }
  const wanted =
    values.suite.length > 0 ? GOLDEN_SUITES.filter((suite) => values.suite.includes(suite.suite)) : GOLDEN_SUITES;
  // Generate and check everything first, then write: a failing suite leaves every file untouched.
  const generated = [];
  for (const suite of wanted) {
    const golden = await generateGolden(suite);
    const text = goldenText(golden);
    const issues = [...validateGoldenDocument(JSON.parse(text)), ...consistencyIssues(golden), ...digestIssues(golden)];
    if (issues.length > 0)
      throw new Error(`generated golden ${suite.suite} is invalid: ${issues[0].path} ${issues[0].message}`);
    generated.push({ suite: suite.suite, text, golden });
  }
  for (const { suite, text, golden } of generated) {
    const path = join(values.dir, `${suite}.json`);
    writeTextAtomic(path, text);
    const { stats } = golden;
    process.stdout.write(
      `${path}: ${golden.cases.length} cases, ${stats.tokens} tokens, margins min ${stats.minMargin.toPrecision(3)} median ${stats.medianMargin.toPrecision(3)}, mean accept length ${stats.meanAcceptLen.toFixed(2)}\n`,
    );
  }
  return 0;
}

function goldenFiles(dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((name) => name.endsWith(".json"))
      .sort()
      .map((name) => join(dir, name));
  } catch {
    throw new UsageError(`cannot read the golden directory '${dir}'`, "--dir");
  }
}

async function verify(argv: string[]): Promise<number> {
  const { values, positionals, help } = parseFlags(VERIFY_FLAGS, argv, { allowPositionals: true });
  if (help) {
    process.stdout.write(
      renderHelp(VERIFY_FLAGS, {
        usage: "specconf golden verify [flags] [FILE...]",
        summary: "Run the reference engine on golden files and validate its outputs and traces against them.",
      }),
    );
    return 0;
  }
  const files = positionals.length > 0 ? positionals : goldenFiles(values.dir);
  if (files.length === 0) throw new UsageError(`no golden files in '${values.dir}'`, "--dir");
  const goldens = files.map((file) => ({ file, golden: loadGoldenFile(file) }));
  let failed = false;
  for (const { file, golden } of goldens) {
    const result = await verifyGolden(golden, file);
    failed ||= !result.ok;
    if (values.json) {
      process.stdout.write(`${JSON.stringify(result)}\n`);
      continue;
    }
    const { summary } = result.report;
    process.stdout.write(
      `${file}: ${result.ok ? "ok" : "FAILS"} (${summary.holds} hold, ${summary.fails} fail, ${summary.notCheckable} not checkable, ${summary.ties} ties${result.drift.length ? `, ${result.drift.length} margins drifted` : ""})\n`,
    );
    if (result.report.exitCode !== 0) process.stdout.write(renderReport(result.report));
    for (const drift of result.drift.slice(0, 5)) {
      process.stdout.write(
        `  margin drift: case ${drift.case} request ${drift.request} token ${drift.index}: stored ${drift.stored}, recomputed ${drift.recomputed}\n`,
      );
    }
  }
  return failed ? 1 : 0;
}

async function dump(argv: string[]): Promise<number> {
  const { values, help } = parseFlags(DUMP_FLAGS, argv);
  if (help) {
    process.stdout.write(
      renderHelp(DUMP_FLAGS, {
        usage: "specconf golden dump --golden FILE --outputs FILE.jsonl [flags]",
        summary:
          "Run the reference engine on a golden file's cases and write its outputs (JSON Lines) and traces as validate reads them.",
      }),
    );
    return 0;
  }
  if (!values.golden) throw new UsageError("missing --golden FILE", "--golden");
  if (!values.outputs) throw new UsageError("missing --outputs FILE.jsonl", "--outputs");
  const golden = loadGoldenFile(values.golden);
  const lines = [];
  const traces = [];
  for (const goldenCase of golden.cases) {
    const run = await runGoldenCase(goldenCase, values.fault as FaultName[]);
    lines.push(...run.lines);
    traces.push({ name: goldenCase.name, trace: run.trace });
  }
  writeTextAtomic(values.outputs, jsonLines(lines));
  const traceDir = values["trace-dir"];
  if (traceDir)
    for (const { name, trace } of traces) writeTextAtomic(join(traceDir, `${name}.trace.json`), stableJson(trace));
  process.stdout.write(
    `${values.outputs}: ${lines.length} requests${traceDir ? `; traces in ${traceDir}/<case>.trace.json` : ""}\n`,
  );
  return 0;
}

export async function goldenCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  try {
    if (sub === "update") return await update(rest);
    if (sub === "verify") return await verify(rest);
    if (sub === "dump") return await dump(rest);
    if (sub === "--help" || sub === "-h" || sub === "help") {
      process.stdout.write(USAGE);
      return 0;
    }
    process.stderr.write(
      sub === undefined ? USAGE : `specconf golden: unknown subcommand '${sub}' (try: update, verify, dump)\n`,
    );
    return 2;
  } catch (error) {
    if (
      error instanceof UsageError ||
      error instanceof InputError ||
      error instanceof ConfigError ||
      error instanceof SpecError ||
      error instanceof RuntimeError ||
      error instanceof GoldenGenerationError
    ) {
      process.stderr.write(`specconf golden ${sub}: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
}
