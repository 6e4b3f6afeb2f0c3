// `specconf merge REPORT...`: the --json reports of `check --shard K/N` (one per CI job, say) combined into
// the one run they split, as `vitest --merge-reports` does: the same verdicts, table, coverage and JUnit as
// an unsharded check with the same seed (src/report/check-summary.ts mergeShards). Exit 0 no law failed,
// 1 a law failed (or the coverage floor, or the shards' --require-laws), 2 bad input (a report that is not a
// shard of the same run).
import { runCommandBody } from "../errors/exit.ts";
import { mergeShards, MergeError } from "../report/check-summary.ts";
import { render } from "../report/reporters.ts";
import { ShardReportSchema } from "../report/shard-schema.ts";
import type { CheckSummary } from "../report/summary.ts";
import { parseJsonText, readInputFile } from "../schema/input-error.ts";
import { displayPath, validateAgainst } from "../schema/validator.ts";
import { defineFlags, parseFlags, renderHelp, UsageError } from "./args.ts";
import { checkOutputPaths, writeOutputFile } from "./output-paths.ts";

const FLAGS = defineFlags({
  json: { type: "boolean", description: "print the merged summary as one JSON object" },
  junit: { type: "string", valueName: "FILE", description: "also write the merged JUnit XML report" },
});

export function mergeCommand(argv: string[]): Promise<number> {
  return runCommandBody("merge", () => merge(argv));
}

function readShard(file: string): { file: string; summary: CheckSummary } {
  const data = parseJsonText(readInputFile(file), file);
  const checked = validateAgainst<CheckSummary>(ShardReportSchema, data, "shard report");
  if (!checked.ok) {
    const [issue] = checked.errors;
    throw new MergeError(file, displayPath(issue.path), issue.message);
  }
  return { file, summary: checked.value };
}

async function merge(argv: string[]): Promise<number> {
  const { values, help, positionals } = parseFlags(FLAGS, argv, { allowPositionals: true });
  if (help) {
    process.stdout.write(
      renderHelp(FLAGS, {
        usage: "specconf merge REPORT.json... [--json] [--junit FILE]",
        summary: "Combine the --json reports of check --shard K/N into one run's verdict, table, coverage and JUnit.",
      }),
    );
    return 0;
  }
  if (positionals.length === 0) throw new UsageError("missing REPORT: the --json reports of check --shard K/N");
  if (values.junit !== undefined)
    checkOutputPaths(
      [{ flag: "--junit", path: values.junit, kind: "file" }],
      positionals.map((path) => ({ flag: "REPORT", path })),
    );
  const summary = mergeShards(positionals.map(readShard));
  const report = { command: "check", summary } as const;
  if (values.junit !== undefined) writeOutputFile("--junit", values.junit, render(report, "junit"));
  process.stdout.write(render(report, values.json ? "json" : "text"));
  return summary.ok ? 0 : 1;
}
