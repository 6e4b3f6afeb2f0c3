// A failure record (.specconf/failures/*.json) as the HTML report shows it: the violation and replay command,
// the shrunk case, the failing run's trace, and the run to compare it with. That second run is what tells the
// bug apart from the case: an external engine's failure comes with the reference engine's trace of the same
// case (recorded next to it); a fault of the reference engine is compared with the same case with its faults
// switched off (rerun here: a shrunk case runs in well under a second). With `verdicts`, every law the record
// was checked with is checked again on the reference engine (what `specconf replay` prints).
import { dirname, join } from "node:path";
import type { Case } from "../case/case.ts";
import { coverageLabels } from "../check/coverage.ts";
import { LAWS } from "../laws/registry.ts";
import { checkLaws, type LawVerdict } from "../check/runner.ts";
import { loadReplayInput, readRecordedTrace, readRecordedTwinTrace } from "../failures/replay-input.ts";
import { describeCase } from "../failures/step-table.ts";
import { judgementLine, judgeRecordedRuns } from "../failures/invariance-runs.ts";
import { referenceSource } from "../sources/reference.ts";
import { loadTraceFile } from "../trace/load.ts";
import type { FailureView, RunView } from "./html/report-data.ts";
import type { CheckSummary } from "./summary.ts";

export interface FailureViewOptions {
  /** Check the record's laws again on the reference engine (a reference-engine failure only). */
  verdicts?: boolean;
}

function withoutFaults(testCase: Case): Case {
  return { ...testCase, engine: { ...testCase.engine, faults: [] } };
}

/** The record a replay line names (`npx specconf replay FILE`, the file JSON-quoted when it needs it). */
export function replayFile(line: string): string {
  const file = line.replace(/^npx specconf replay /, "").replace(/ --engine .*$/, "");
  return file.startsWith('"') ? (JSON.parse(file) as string) : file;
}

/** `check --html`: the failure each failing law's record holds (none for --no-write: no record was written). */
export async function checkFailureViews(summary: CheckSummary): Promise<FailureView[]> {
  const views: FailureView[] = [];
  for (const law of summary.laws)
    if (law.failed > 0 && law.replay) views.push(await failureView(replayFile(law.replay)));
  return views;
}

/** The judgement line of an invariance failure's record: which recorded run diverged from the reference. */
export async function recordedDivergence(file: string): Promise<string | undefined> {
  const input = loadReplayInput(file);
  if (input.kind !== "failure" || !input.record.twin) return undefined;
  const testCase = input.record.case;
  const judgement = await judgeRecordedRuns(
    input.record.laws[0],
    testCase,
    readRecordedTrace(input),
    readRecordedTwinTrace(input),
    await referenceSource().oracle(testCase),
  );
  return judgement && judgementLine(judgement);
}

/**
 * `check`: each failing invariance law's row says which run diverged from the reference (issue 34 item 6: the
 * twin may be the wrong one), read from its failure record (none with --no-write).
 */
export async function attachDivergences(summary: CheckSummary): Promise<void> {
  for (const law of summary.laws)
    if (law.failed > 0 && law.replay) {
      const diverged = await recordedDivergence(replayFile(law.replay));
      if (diverged) law.diverged = diverged;
    }
}

/** A failure record's view, with (options.verdicts) the law verdicts of the case checked again. */
export async function failureView(
  file: string,
  options: FailureViewOptions = {},
): Promise<FailureView & { laws?: LawVerdict[] }> {
  const input = loadReplayInput(file);
  if (input.kind !== "failure")
    throw new Error(`${file} is a case file; the report reads failure records (.specconf/failures/*.json)`);
  const record = input.record;
  const testCase = record.case;
  const engineName = record.engine?.name;
  let failing: RunView | undefined;
  const recorded = readRecordedTrace(input);
  let verdicts: LawVerdict[] | undefined;
  if (!record.engine && options.verdicts) {
    const checked = record.checked;
    const check = await checkLaws(referenceSource(), testCase, {
      laws: checked ? LAWS.filter((law) => checked.includes(law.name)) : undefined,
      twins: record.twins,
    });
    verdicts = check.results;
    if (check.run) failing = { title: "reference engine", trace: check.run.trace };
  }
  if (!failing && recorded) failing = { title: engineName ?? "reference engine", trace: recorded };
  if (!failing)
    failing = {
      title: `${engineName ?? "reference engine"} (no trace: the run failed)`,
      trace: { formatVersion: 1, engine: { name: engineName ?? "?" }, events: [] },
    };
  let other: RunView | undefined;
  // An invariance failure: the twin the law compared the case's run with (issue 25: either may have diverged).
  const twinTrace = record.referenceTraceFile ? undefined : readRecordedTwinTrace(input);
  if (record.referenceTraceFile) {
    const path = join(dirname(file), record.referenceTraceFile);
    other = { title: "specconf reference engine", trace: loadTraceFile(path) };
  } else if (twinTrace && record.twin) {
    other = { title: record.twin.describe, trace: twinTrace };
  } else if (!record.engine && testCase.engine.faults.length > 0) {
    const clean = await referenceSource().run(withoutFaults(testCase));
    other = { title: "reference engine, faults off", trace: clean.trace };
  }
  if (!record.engine && testCase.engine.faults.length > 0)
    failing = { ...failing, title: `reference engine, faults ${testCase.engine.faults.join(", ")}` };
  const diverged = record.twin ? await recordedDivergence(file) : undefined;
  return {
    law: record.laws[0],
    ...(diverged ? { diverged } : {}),
    violation: {
      message: record.violation.message,
      ...(record.violation.request !== undefined ? { request: record.violation.request } : {}),
      ...(record.violation.event !== undefined ? { event: record.violation.event } : {}),
    },
    replay: record.replay,
    caseSummary: describeCase(testCase),
    caseJson: JSON.stringify(testCase, null, 2),
    runs: other ? [failing, other] : [failing],
    ...(verdicts ? { laws: verdicts } : {}),
    labels: failing.trace.events.length > 0 ? coverageLabels(testCase, failing.trace) : [],
  };
}
