// `specconf replay FILE`: reruns a shrunk failure (or any case file) from the file alone, checks every
// law, prints the run as a step table with the first offending event marked, and says whether the
// recorded failure reproduced. Exit 1 when a law fails (reproduced), 0 when every law holds, 2 bad input.
import { existsSync, readFileSync } from "node:fs";
import { ConfigError } from "../engine/config.ts";
import { checkLaws } from "../laws/runner.ts";
import { referenceSource } from "../sources/reference.ts";
import { loadReplayInput, traceFileOf } from "../failures/failure-file.ts";
import { describeCase, firstOffence, stepTable } from "../failures/step-table.ts";
import { SpecError } from "../model/spec.ts";
import { RuntimeError } from "../runtime/ort.ts";
import { stableJson } from "../schema/atomic-write.ts";
import { InputError } from "../schema/input-error.ts";
import { defineFlags, parseFlags, renderHelp, UsageError } from "./args.ts";
import { EngineStartError, ExternalSource } from "../sources/external.ts";
import { outputsTable, sideBySide } from "../failures/side-by-side.ts";

const FLAGS = defineFlags({
  json: {
    type: "boolean",
    description: "print one JSON object (laws, reproduced, identical trace) instead of the table",
  },
  from: { type: "integer", min: 0, description: "first event of the table" },
  to: { type: "integer", min: 0, description: "last event of the table" },
  engine: {
    type: "string",
    valueName: "COMMAND",
    description: "rerun on this external engine (never taken from the file) next to the reference engine",
  },
  "engine-timeout": { type: "integer", min: 1, default: 60, description: "with --engine: seconds per request" },
});

export async function replayCommand(argv: string[]): Promise<number> {
  let file: string | undefined;
  let engine: ExternalSource | undefined;
  try {
    const { values, positionals, help } = parseFlags(FLAGS, argv, { allowPositionals: true });
    if (help) {
      process.stdout.write(
        renderHelp(FLAGS, {
          usage: "specconf replay FILE [flags]",
          summary:
            "Rerun a failure record (.specconf/failures/*.json) or a case file, check every law and print the step table.",
        }),
      );
      return 0;
    }
    if (positionals.length !== 1)
      throw new UsageError(
        positionals.length === 0
          ? "missing FILE (a failure record or a case file)"
          : `expected one FILE, got ${positionals.length}`,
      );
    file = positionals[0];
    const input = loadReplayInput(file);
    const testCase = input.kind === "failure" ? input.record.case : input.testCase;
    const recordedLaws = input.kind === "failure" ? input.record.laws : [];
    if (values.engine !== undefined)
      engine = await ExternalSource.start(values.engine, { timeoutMs: values["engine-timeout"] * 1000 });
    const check = await checkLaws(engine ?? referenceSource(), testCase);
    // Next to an engine's run: the reference engine's (where it can run the case) as the oracle.
    const reference = engine
      ? await referenceSource()
          .run(testCase)
          .catch(() => undefined)
      : undefined;
    const failing = check.results.filter((result) => result.status === "fails");
    const reproduced =
      input.kind === "failure"
        ? recordedLaws.some((law) => failing.some((result) => result.law === law))
        : failing.length > 0;
    const traceFile = traceFileOf(input);
    let identical: boolean | undefined;
    if (traceFile && existsSync(traceFile) && check.run) {
      const recorded = JSON.parse(readFileSync(traceFile, "utf8"));
      identical = stableJson(recorded.events) === stableJson(JSON.parse(JSON.stringify(check.run.trace.events)));
    }
    if (values.json) {
      process.stdout.write(
        `${JSON.stringify({ file, reproduced, recordedLaws, identicalTrace: identical ?? null, crash: check.crash ?? null, laws: check.results })}\n`,
      );
      return failing.length > 0 ? 1 : 0;
    }
    const out: string[] = [];
    if (input.kind === "failure") {
      const record = input.record;
      out.push(
        `replaying ${file}: ${record.laws.join(", ")} failed (property '${record.property}', seed ${record.seed}, path ${JSON.stringify(record.path)})`,
      );
    } else out.push(`replaying case ${file}`);
    out.push(describeCase(testCase), "");
    const offence = firstOffence(check.results, recordedLaws, check.run?.trace);
    const mark =
      offence?.event !== undefined
        ? { event: offence.event, note: `${offence.law.law}: ${offence.law.violation?.message ?? "fails"}` }
        : undefined;
    if (engine) {
      const width = Math.max(60, Math.floor(((process.stdout.columns ?? 200) - 3) / 2));
      const titles: [string, string] = [`${engine.name}`, "specconf reference"];
      out.push(sideBySide(outputsTable(check.run), outputsTable(reference), titles, width));
      const table = (run: typeof reference, withMark: boolean) =>
        run && run.trace.events.length > 0
          ? stepTable(run.trace, { mark: withMark ? mark : undefined, from: values.from, to: values.to })
          : "(no trace events)\n";
      out.push(sideBySide(table(check.run, true), table(reference, false), titles, width));
      if (check.crash) out.push(`the engine failed: ${check.crash}`, "");
    } else if (check.run) {
      out.push(stepTable(check.run.trace, { mark, from: values.from, to: values.to }));
    }
    for (const result of check.results) {
      const verdict = result.status === "holds" ? "holds" : result.status === "fails" ? "FAILS" : "not checkable";
      const detail = result.violation ? `: ${result.violation.message}` : result.reason ? `: ${result.reason}` : "";
      out.push(`  ${result.law.padEnd(24)} ${verdict}${result.ties ? ` (${result.ties} ties)` : ""}${detail}`);
    }
    out.push("");
    if (identical !== undefined)
      out.push(
        identical
          ? "the rerun's trace is identical to the recorded one"
          : "the rerun's trace DIFFERS from the recorded one (the engine changed since)",
      );
    if (input.kind === "failure")
      out.push(
        reproduced
          ? `reproduced: ${recordedLaws.filter((law) => failing.some((result) => result.law === law)).join(", ")} fails`
          : `not reproduced: ${recordedLaws.join(", ")} holds now`,
      );
    else out.push(failing.length > 0 ? `${failing.map((result) => result.law).join(", ")} fails` : "every law holds");
    process.stdout.write(out.join("\n") + "\n");
    return failing.length > 0 ? 1 : 0;
  } catch (error) {
    if (
      error instanceof UsageError ||
      error instanceof InputError ||
      error instanceof SpecError ||
      error instanceof RuntimeError ||
      error instanceof EngineStartError
    ) {
      process.stderr.write(`specconf replay: ${error.message}\n`);
      return 2;
    }
    if (error instanceof ConfigError) {
      process.stderr.write(`specconf replay: ${file ? `${file}: ` : ""}${error.message}\n`);
      return 2;
    }
    throw error;
  } finally {
    await engine?.close();
  }
}
