// `specconf validate`: another engine's outputs (and traces) against a golden file.
import { runCommandBody } from "../errors/exit.ts";
import { profileNames, PROFILES } from "../profiles/profiles.ts";
import { render } from "../report/reporters.ts";
import { judgeLaws, rowsOfVerdicts } from "../report/judged.ts";
import { validate, type TraceInput } from "../validate/validate.ts";
import { defineFlags, parseFlags, renderHelp, UsageError } from "./args.ts";
import { nothingChecked } from "./nothing-checked.ts";
import { checkOutputPaths, writeOutputFile } from "./output-paths.ts";

const FLAGS = defineFlags({
  golden: { type: "string", valueName: "FILE", description: "the golden file (golden/*.json)" },
  outputs: {
    type: "string",
    valueName: "FILE.jsonl",
    description: "the engine's outputs, one JSON object per request per line (schemas/outputs.schema.json)",
  },
  trace: {
    type: "string",
    multiple: true,
    valueName: "[CASE=]FILE",
    description:
      "a trace of one golden case (schemas/trace.schema.json); matched to its case by its requests unless CASE= is given",
  },
  profile: {
    type: "choice",
    choices: profileNames(),
    default: "strict",
    description: "engine conventions to accept, each named in the report",
  },
  case: {
    type: "string",
    multiple: true,
    valueName: "NAME",
    description: "validate only this golden case; lines of other cases are skipped",
  },
  epsilon: {
    type: "string",
    valueName: "X",
    description: "tie threshold in target logit units instead of the golden file's (e.g. for another EP or dtype)",
  },
  json: { type: "boolean", description: "print the report as one JSON object" },
  report: { type: "string", valueName: "FILE", description: "also write the JSON report here" },
});

const SUMMARY =
  "Check another engine's outputs (and traces) against a golden file: per request and per law, holds / fails with the first divergence / not checkable. Exit 0: everything holds; 1: something fails; 2: bad input.";

export function parseTraceArgument(raw: string): TraceInput {
  const match = /^([a-z0-9][a-z0-9-]*)=(.+)$/.exec(raw);
  return match ? { caseName: match[1], path: match[2] } : { path: raw };
}

function parseEpsilon(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (raw.trim() === "" || !Number.isFinite(value) || value <= 0)
    throw new UsageError(`--epsilon must be a number > 0, got '${raw}'`, "--epsilon");
  return value;
}

export function validateCommand(argv: string[]): Promise<number> {
  return runCommandBody("validate", () => validateEngine(argv));
}

async function validateEngine(argv: string[]): Promise<number> {
  const { values, help } = parseFlags(FLAGS, argv);
  if (help) {
    process.stdout.write(
      renderHelp(FLAGS, {
        usage: "specconf validate --golden FILE --outputs FILE.jsonl [--trace [CASE=]FILE]... [--profile NAME]",
        summary: SUMMARY,
      }),
    );
    return 0;
  }
  if (!values.golden) throw new UsageError("missing --golden FILE", "--golden");
  if (!values.outputs) throw new UsageError("missing --outputs FILE.jsonl", "--outputs");
  const traces = values.trace.map(parseTraceArgument);
  const epsilon = parseEpsilon(values.epsilon);
  if (values.report !== undefined)
    checkOutputPaths(
      [{ flag: "--report", path: values.report, kind: "file" }],
      [
        { flag: "--golden", path: values.golden },
        { flag: "--outputs", path: values.outputs },
        ...traces.map((trace) => ({ flag: "--trace", path: trace.path })),
      ],
    );
  const report = await validate({
    goldenPath: values.golden,
    outputsPath: values.outputs,
    traces,
    profile: PROFILES[values.profile],
    epsilon,
    cases: values.case,
  });
  if (values.report) writeOutputFile("--report", values.report, `${JSON.stringify(report, null, 2)}\n`);
  const statuses = [
    ...report.requests.flatMap((request) => request.checks),
    ...report.traces.flatMap((trace) => trace.laws),
  ];
  // Per law: held on some request or trace, or never checkable (and why); the counts above are per verdict.
  const judged = judgeLaws({
    selected: [...new Set(statuses.map((result) => result.law))],
    laws: rowsOfVerdicts([{ laws: statuses }]),
    notRun: [],
    cases: report.cases.length,
    caseKind: "golden",
  });
  process.stdout.write(render({ command: "validate", summary: { ...report, judged } }, values.json ? "json" : "text"));
  if (report.exitCode !== 0) return report.exitCode;
  return nothingChecked(
    "validate",
    statuses.map((result) => result.status),
  );
}
