// `specconf golden update | verify | dump`: regenerate the checked-in golden suites (explicit only),
// check the reference engine against them, or dump the reference engine's outputs and traces for a
// golden file in the formats validate reads (optionally with faults switched on).
import { join } from "node:path";
import { FAULT_NAMES, type FaultName } from "../case/faults.ts";
import { runCommandBody } from "../errors/exit.ts";
import { goldenText } from "../golden/format.ts";
import { generateGolden } from "../golden/generate.ts";
import { goldenFilesIn, packageGoldenDir } from "../golden/golden-dir.ts";
import { consistencyIssues, digestIssues, loadGoldenFile, validateGoldenDocument } from "../golden/load.ts";
import { runGoldenCase } from "../adapter/reference-outputs.ts";
import { GOLDEN_SUITES, suiteNames } from "../golden/suites.ts";
import { verifyGolden } from "../validate/golden-verify.ts";
import { render } from "../report/reporters.ts";
import { stableJson } from "../schema/atomic-write.ts";
import { jsonLines } from "../validate/write.ts";
import { defineFlags, parseFlags, renderHelp, UsageError } from "./args.ts";
import { checkOutputPaths, writeOutputFiles } from "./output-paths.ts";

const UPDATE_FLAGS = defineFlags({
  suite: {
    type: "choice",
    choices: suiteNames(),
    multiple: true,
    description: "regenerate only these suites (default: all)",
  },
  dir: { type: "string", valueName: "DIR", description: "where golden files live (default: the package's golden/)" },
});

const VERIFY_FLAGS = defineFlags({
  dir: {
    type: "string",
    valueName: "DIR",
    description: "verify every *.json here when no FILE is given (default: the package's golden/)",
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

  update [--suite NAME]... [--dir DIR]
      regenerate golden files (every law must hold first; the whole set written atomically)
  verify [--dir DIR] [FILE...]
      run the reference engine against golden files (exit 1 on any failure)
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
          "Regenerate golden suites from the reference engine. Refuses when a law fails or a tie makes an expectation ambiguous; writes the whole set atomically (all suites or none).",
      }),
    );
    return 0;
  }
  const dir = values.dir ?? packageGoldenDir();
  checkOutputPaths([{ flag: "--dir", path: dir, kind: "folder" }]);
  const wanted =
    values.suite.length > 0 ? GOLDEN_SUITES.filter((suite) => values.suite.includes(suite.suite)) : GOLDEN_SUITES;
  // Generate and check everything first, then write the whole set at once: a failing suite, a write
  // error or an interrupt leaves every file as it was.
  const generated = [];
  for (const suite of wanted) {
    const golden = await generateGolden(suite);
    const text = goldenText(golden);
    const issues = [...validateGoldenDocument(JSON.parse(text)), ...consistencyIssues(golden), ...digestIssues(golden)];
    if (issues.length > 0)
      throw new Error(`generated golden ${suite.suite} is invalid: ${issues[0].path} ${issues[0].message}`);
    generated.push({ path: join(dir, `${suite.suite}.json`), text, golden });
  }
  writeOutputFiles("--dir", generated);
  for (const { path, golden } of generated) {
    const { stats } = golden;
    process.stdout.write(
      `${path}: ${golden.cases.length} cases, ${stats.tokens} tokens, margins min ${stats.minMargin.toPrecision(3)} median ${stats.medianMargin.toPrecision(3)}, mean accept length ${stats.meanAcceptLen.toFixed(2)}\n`,
    );
  }
  return 0;
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
  if (positionals.length > 0 && values.dir !== undefined)
    throw new UsageError(
      "--dir cannot be combined with FILE arguments (it picks the files when none are given)",
      "--dir",
    );
  const files = positionals.length > 0 ? positionals : goldenFilesIn(values.dir ?? packageGoldenDir(), "--dir");
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
    if (result.report.exitCode !== 0)
      process.stdout.write(render({ command: "validate", summary: result.report }, "text"));
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
  const traceDir = values["trace-dir"];
  const golden = loadGoldenFile(values.golden);
  checkOutputPaths(
    [
      { flag: "--outputs", path: values.outputs, kind: "file" },
      ...(traceDir !== undefined ? [{ flag: "--trace-dir", path: traceDir, kind: "folder" as const }] : []),
    ],
    [{ flag: "--golden", path: values.golden }],
  );
  const lines = [];
  const traces = [];
  for (const goldenCase of golden.cases) {
    const run = await runGoldenCase(goldenCase, values.fault as FaultName[]);
    lines.push(...run.lines);
    traces.push({ name: goldenCase.name, trace: run.trace });
  }
  if (traceDir)
    writeOutputFiles(
      "--trace-dir",
      traces.map(({ name, trace }) => ({ path: join(traceDir, `${name}.trace.json`), text: stableJson(trace) })),
    );
  writeOutputFiles("--outputs", [{ path: values.outputs, text: jsonLines(lines) }]);
  process.stdout.write(
    `${values.outputs}: ${lines.length} requests${traceDir ? `; traces in ${traceDir}/<case>.trace.json` : ""}\n`,
  );
  return 0;
}

const SUBCOMMANDS: Record<string, (argv: string[]) => Promise<number>> = { update, verify, dump };

export async function goldenCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== undefined && Object.hasOwn(SUBCOMMANDS, sub))
    return runCommandBody(`golden ${sub}`, () => SUBCOMMANDS[sub](rest));
  if (sub === "--help" || sub === "-h" || sub === "help") {
    process.stdout.write(USAGE);
    return 0;
  }
  return runCommandBody("golden", async () => {
    throw new UsageError(
      sub === undefined
        ? "missing subcommand (update, verify or dump; specconf golden --help)"
        : `unknown subcommand '${sub}' (try: update, verify, dump)`,
    );
  });
}
