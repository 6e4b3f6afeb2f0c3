// `specconf validate`: another engine's outputs (and traces) against a golden file.
import { ConfigError } from "../engine/config.ts";
import { SpecError } from "../model/spec.ts";
import { RuntimeError } from "../runtime/ort.ts";
import { InputError } from "../schema/input-error.ts";
import { profileNames, PROFILES } from "../validate/profiles.ts";
import { renderReport } from "../validate/report.ts";
import { validate, type TraceInput } from "../validate/validate.ts";
import { writeTextAtomic } from "../schema/atomic-write.ts";
import { defineFlags, parseFlags, renderHelp, UsageError } from "./args.ts";

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

export async function validateCommand(argv: string[]): Promise<number> {
  try {
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
    const report = await validate({
      goldenPath: values.golden,
      outputsPath: values.outputs,
      traces: values.trace.map(parseTraceArgument),
      profile: PROFILES[values.profile],
      epsilon: parseEpsilon(values.epsilon),
      cases: values.case,
    });
    if (values.report) writeTextAtomic(values.report, `${JSON.stringify(report, null, 2)}\n`);
    process.stdout.write(values.json ? `${JSON.stringify(report)}\n` : renderReport(report));
    return report.exitCode;
  } catch (error) {
    if (
      error instanceof UsageError ||
      error instanceof InputError ||
      error instanceof ConfigError ||
      error instanceof SpecError ||
      error instanceof RuntimeError
    ) {
      process.stderr.write(`specconf validate: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
}
