// `specconf replay FILE`: reruns a shrunk failure (or any case file) from the file alone, checks every
// law, prints the run as a step table with the first offending event marked, and says whether the
// recorded failure reproduced. Exit 1 when a law fails (reproduced), 0 when every law holds, 2 bad input.
import { runCommandBody } from "../errors/exit.ts";
import { checkLaws } from "../check/runner.ts";
import { LAWS } from "../laws/registry.ts";
import { referenceSource } from "../sources/reference.ts";
import { loadReplayInput, readRecordedTrace } from "../failures/replay-input.ts";
import { describeCase, firstOffence, stepTable, type StepTableOptions } from "../failures/step-table.ts";
import {
  invarianceMarks,
  judgeInvariance,
  judgementLine,
  twinOfLaw,
  twinStepTable,
  type InvarianceJudgement,
} from "../failures/invariance-runs.ts";
import { stableJson } from "../schema/atomic-write.ts";
import { defineFlags, parseFlags, rejectCombined, renderHelp, UsageError } from "./args.ts";
import { ExternalSource } from "../sources/external.ts";
import { outputsTable, sideBySide } from "../failures/side-by-side.ts";
import { LIMIT_FLAG_SPECS, limitsFrom } from "./limit-flags.ts";
import { nothingChecked } from "./nothing-checked.ts";
import { render } from "../report/reporters.ts";
import type { ReplaySummary } from "../report/summary.ts";
import { preflightProvider } from "./check.ts";
import type { Case } from "../case/case.ts";
import { EXECUTION_PROVIDERS, type ExecutionProvider } from "../runtime/ort.ts";

/** The case on another EP (everything else as recorded). */
function onEp(testCase: Case, ep: ExecutionProvider): Case {
  return { ...testCase, engine: { ...testCase.engine, runtime: { ...testCase.engine.runtime, ep } } };
}

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
  ep: {
    type: "choice",
    choices: EXECUTION_PROVIDERS,
    description:
      "rerun on this ONNX Runtime execution provider instead of the case's own (engine.runtime.ep): a GPU failure on the GPU, or on the CPU to see whether it is the EP's",
  },
  ...LIMIT_FLAG_SPECS,
});

export function replayCommand(argv: string[]): Promise<number> {
  return runCommandBody("replay", () => replay(argv));
}

async function replay(argv: string[]): Promise<number> {
  let engine: ExternalSource | undefined;
  try {
    const { values, positionals, help, given } = parseFlags(FLAGS, argv, { allowPositionals: true });
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
    if (values.engine === undefined) rejectCombined(given, ["engine-timeout"], "replaying on the reference engine");
    if (values.engine !== undefined) rejectCombined(given, ["ep"], "--engine (the engine runs on its own device)");
    if (values.engine !== undefined && values.engine.trim() === "")
      throw new UsageError("--engine needs a command that starts the engine, got an empty one", "--engine");
    const file = positionals[0];
    // Everything the file names is read and checked before anything runs.
    const input = loadReplayInput(file, limitsFrom(values));
    const recorded = readRecordedTrace(input);
    const fileCase = input.kind === "failure" ? input.record.case : input.testCase;
    const ep = values.ep as ExecutionProvider | undefined;
    const testCase = ep === undefined ? fileCase : onEp(fileCase, ep);
    if (ep !== undefined) await preflightProvider(ep);
    const recordedLaws = input.kind === "failure" ? input.record.laws : [];
    if (values.engine !== undefined)
      engine = await ExternalSource.start(values.engine, { timeoutMs: values["engine-timeout"] * 1000 });
    // A record is checked as it was found: the same laws, the same use of twins.
    const checked = input.kind === "failure" ? input.record.checked : undefined;
    const check = await checkLaws(engine ?? referenceSource(), testCase, {
      laws: checked ? LAWS.filter((law) => checked.includes(law.name)) : undefined,
      twins: input.kind === "failure" ? input.record.twins : undefined,
    });
    // Next to an engine's run: the reference engine's (where it can run the case) as the oracle.
    const reference = engine
      ? await referenceSource()
          .run(testCase)
          .catch(() => undefined)
      : undefined;
    const failing = check.results.filter((result) => result.status === "fails");
    // An invariance failure (the record's own law, or a case file's first): both runs against the reference.
    const judged = (input.kind === "failure" ? recordedLaws.slice(0, 1) : failing.map((result) => result.law)).find(
      (law) => failing.some((result) => result.law === law) && twinOfLaw(check, law) !== undefined,
    );
    const judgement: InvarianceJudgement | undefined = judged
      ? await judgeInvariance(check, judged, await (engine ?? referenceSource()).oracle(testCase))
      : undefined;
    const own = input.kind === "failure" ? failing.find((result) => result.law === recordedLaws[0]) : undefined;
    const reproduced =
      input.kind === "failure"
        ? recordedLaws.some((law) => failing.some((result) => result.law === law))
        : failing.length > 0;
    const exact =
      input.kind === "failure" && own !== undefined && own.violation?.message === input.record.violation.message;
    let identical: boolean | undefined;
    // The recorded trace is the engine's own: compared only when rerunning where it was recorded (engine and EP).
    const sameEp = testCase.engine.runtime.ep === fileCase.engine.runtime.ep;
    if (
      recorded &&
      check.run &&
      sameEp &&
      (engine !== undefined) === (input.kind === "failure" && !!input.record.engine)
    )
      identical = stableJson(recorded.events) === stableJson(JSON.parse(JSON.stringify(check.run.trace.events)));
    const code =
      failing.length > 0
        ? 1
        : nothingChecked(
            "replay",
            check.results.map((result) => result.status),
          );
    const summary: ReplaySummary = {
      file,
      reproduced,
      exact,
      recordedLaws,
      identicalTrace: identical ?? null,
      crash: check.crash ?? null,
      skipped: check.skipped ?? null,
      laws: check.results,
      ...(judgement ? { invariance: judgement } : {}),
    };
    if (values.json) {
      process.stdout.write(render({ command: "replay", summary, text: { lines: [] } }, "json"));
      return code;
    }
    const out: string[] = [];
    if (input.kind === "failure") {
      const record = input.record;
      out.push(
        `replaying ${file}: ${record.laws.join(", ")} failed (property '${record.property}', seed ${record.seed}, path ${JSON.stringify(record.path)})`,
      );
    } else out.push(`replaying case ${file}`);
    if (ep !== undefined) out.push(`on EP ${ep} (the file's case runs on ${fileCase.engine.runtime.ep})`);
    out.push(describeCase(testCase), "");
    const offence = firstOffence(check.results, recordedLaws, check.run?.trace);
    let mark: StepTableOptions["mark"] =
      offence?.event !== undefined
        ? { event: offence.event, note: `${offence.law.law}: ${offence.law.violation?.message ?? "fails"}` }
        : undefined;
    let twinMark: StepTableOptions["mark"];
    if (judgement) {
      out.push(judgementLine(judgement), "");
      ({ run: mark, twin: twinMark } = invarianceMarks(judgement, offence?.law.law, mark));
    }
    const twinTable = () =>
      judgement ? twinStepTable(check, judgement, { mark: twinMark, from: values.from, to: values.to }) : [];
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
      out.push(...twinTable());
    } else if (check.run) {
      if (judgement) out.push("the case's run:");
      out.push(stepTable(check.run.trace, { mark, from: values.from, to: values.to }));
      out.push(...twinTable());
    }
    const recordedViolation = input.kind === "failure" ? input.record.violation.message : undefined;
    process.stdout.write(render({ command: "replay", summary, text: { lines: out, recordedViolation } }, "text"));
    return code;
  } finally {
    await engine?.close();
  }
}
