// `specconf replay FILE`: reruns a shrunk failure (or any case file) from the file alone, checks every
// law, prints the run as a step table with the first offending event marked, and says whether the
// recorded failure reproduced. Exit 1 when a law fails (reproduced), 0 when every law holds, 2 bad input.
import { checkCase } from "../laws/check-case.ts";
import { loadReplayInput, readRecordedTrace } from "../failures/replay-input.ts";
import { describeCase, firstOffence, stepTable } from "../failures/step-table.ts";
import { runCommandBody } from "../errors/exit.ts";
import { stableJson } from "../schema/atomic-write.ts";
import { defineFlags, parseFlags, renderHelp, UsageError } from "./args.ts";
import { LIMIT_FLAG_SPECS, limitsFrom } from "./limit-flags.ts";
import { nothingChecked } from "./nothing-checked.ts";

const FLAGS = defineFlags({
  json: {
    type: "boolean",
    description: "print one JSON object (laws, reproduced, identical trace) instead of the table",
  },
  from: { type: "integer", min: 0, description: "first event of the table" },
  to: { type: "integer", min: 0, description: "last event of the table" },
  ...LIMIT_FLAG_SPECS,
});

export function replayCommand(argv: string[]): Promise<number> {
  return runCommandBody("replay", () => replay(argv));
}

async function replay(argv: string[]): Promise<number> {
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
        : `expected one FILE (a failure record or a case file), got ${positionals.length}`,
    );
  if (values.from !== undefined && values.to !== undefined && values.from > values.to)
    throw new UsageError(`--from ${values.from} is after --to ${values.to}`, "--from");
  const file = positionals[0];
  // Everything the file names is read and checked before anything runs.
  const input = loadReplayInput(file, limitsFrom(values));
  const recorded = readRecordedTrace(input);
  const testCase = input.kind === "failure" ? input.record.case : input.testCase;
  const recordedLaws = input.kind === "failure" ? input.record.laws : [];
  // A record is checked as it was found: the same laws, the same use of twins.
  const check = await checkCase(
    testCase,
    input.kind === "failure"
      ? {
          laws: input.record.checked ? new Set(input.record.checked) : undefined,
          twins: input.record.twins,
        }
      : {},
  );
  const failing = check.results.filter((result) => result.status === "fails");
  const own = input.kind === "failure" ? failing.find((result) => result.law === recordedLaws[0]) : undefined;
  const reproduced =
    input.kind === "failure"
      ? recordedLaws.some((law) => failing.some((result) => result.law === law))
      : failing.length > 0;
  const exact =
    input.kind === "failure" && own !== undefined && own.violation?.message === input.record.violation.message;
  let identical: boolean | undefined;
  if (recorded && check.run)
    identical = stableJson(recorded.events) === stableJson(JSON.parse(JSON.stringify(check.run.trace.events)));
  const code =
    failing.length > 0
      ? 1
      : nothingChecked(
          "replay",
          check.results.map((result) => result.status),
        );
  if (values.json) {
    process.stdout.write(
      `${JSON.stringify({ file, reproduced, exact, recordedLaws, identicalTrace: identical ?? null, crash: check.crash ?? null, laws: check.results })}\n`,
    );
    return code;
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
  if (check.run) {
    const mark =
      offence?.event !== undefined
        ? { event: offence.event, note: `${offence.law.law}: ${offence.law.violation?.message ?? "fails"}` }
        : undefined;
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
      exact
        ? `reproduced exactly: ${recordedLaws[0]}: ${input.record.violation.message}`
        : own
          ? `reproduced, differently: ${recordedLaws[0]}: ${own.violation?.message ?? "fails"} (recorded: ${input.record.violation.message})`
          : reproduced
            ? `reproduced in part: ${recordedLaws.filter((law) => failing.some((result) => result.law === law)).join(", ")} fails, ${recordedLaws[0]} holds now`
            : `not reproduced: ${recordedLaws.join(", ")} holds now`,
    );
  else out.push(failing.length > 0 ? `${failing.map((result) => result.law).join(", ")} fails` : "every law holds");
  process.stdout.write(out.join("\n") + "\n");
  return code;
}
