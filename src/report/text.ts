// The text reporter: what a person reads at the terminal, for every command's summary (summary.ts). One
// verdict vocabulary (verdict.ts); every failure ends with the command that replays exactly it.
import { COVERAGE_LABELS, MIN_COVERAGE } from "../check/coverage.ts";
import { LAW_NAMES } from "../laws/registry.ts";
import { OUTPUT_CHECKS } from "../validate/output-checks.ts";
import type { ValidationReport } from "../validate/validate.ts";
import type { JudgedLaws } from "./judged.ts";
import type { CheckSummary, EngineCheckSummary, MutantsSummary, Report, ReplaySummary, ReplayText } from "./summary.ts";
import {
  checkFailedBecause,
  checkVerdictLine,
  judgedCounts,
  lawLine,
  notJudgedLines,
  verdictCounts,
  verdictText,
  VERDICT_WORDS,
} from "./verdict.ts";

export function renderText(report: Report): string {
  switch (report.command) {
    case "check":
      return checkText(report.summary);
    case "check --engine --golden":
      return engineGoldenText(report.summary);
    case "validate":
      return validateText(report.summary);
    case "mutants":
      return mutantsText(report.summary);
    case "replay":
      return replayText(report.summary, report.text);
  }
}

/** A table: the first column left-aligned, the others right-aligned, a rule under the header. */
function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) =>
    cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join("  ");
  return [line(header), widths.map((width) => "-".repeat(width)).join("  "), ...rows.map(line)];
}

/** fc.statistics-style coverage lines: label, share, count. */
export function coverageLines(coverage: CheckSummary["coverage"]): string[] {
  const width = Math.max(...COVERAGE_LABELS.map((label) => label.length)) + 1;
  return COVERAGE_LABELS.map((label) => {
    const count = coverage.labels[label] ?? 0;
    const share = coverage.runs ? ((100 * count) / coverage.runs).toFixed(1).padStart(5) : "  0.0";
    return `${label.padEnd(width)} ${share}% (${count}/${coverage.runs})`;
  });
}

function checkText(summary: CheckSummary): string {
  const rows = summary.laws.map((law) => [
    law.name,
    String(law.runs),
    String(law.passed),
    law.failed ? `${law.failed} FAIL` : "0",
    String(law.ties),
    String(law.notCheckable),
    `${law.seconds.toFixed(1)}s`,
  ]);
  const lines = [
    ...table(["law", "runs", "passed", "failed", "ties", VERDICT_WORDS["not-checkable"], "time"], rows),
    `(time: each law's checks and the twin runs it needs; the cases' own runs and target-only baselines took ${(summary.runSeconds ?? 0).toFixed(1)}s)`,
    "",
    `coverage over ${summary.coverage.runs} runs (each label must reach ${MIN_COVERAGE * 100}%; a label fails only when the runs show it below${summary.coverage.enforced === false ? `; not enforced: ${summary.coverage.notEnforcedBecause ?? "not enforced"}` : ""}):`,
    ...coverageLines(summary.coverage).map((text) => `  ${text}`),
  ];
  const { below, undecided, unobservable } = summary.coverage;
  if (below.length > 0) lines.push(`coverage shown below ${MIN_COVERAGE * 100}%: ${below.join(", ")}`);
  if (undecided?.length)
    lines.push(
      `coverage under ${MIN_COVERAGE * 100}%, not enough runs to judge (not failing): ${undecided.join(", ")}`,
    );
  for (const [label, field] of Object.entries(unobservable ?? {}))
    lines.push(`coverage of '${label}' not enforced: the engine's traces have no ${field}`);
  lines.push(...notJudgedLines(summary.judged));
  if (summary.notExercised?.length)
    lines.push(`declared features no generated case exercised: ${summary.notExercised.join("; ")}`);
  if (summary.propertiesNotRun?.length)
    lines.push(
      `properties not run (their laws checked the other properties' runs, as the table counts): ${summary.propertiesNotRun.join("; ")}`,
    );
  if (summary.coverage.unreachable?.length)
    lines.push(`coverage not enforced for labels the engine cannot reach: ${summary.coverage.unreachable.join(", ")}`);
  if (summary.skipped) lines.push(`${summary.skipped} generated cases the engine refused as unsupported`);
  for (const pin of summary.pinned ?? [])
    lines.push(
      `pinned: ${pin.law} (${pin.finding}): ${pin.reproduced ? "fails as the finding says" : "NO LONGER FAILS: the engine changed; update the finding and the pin"}`,
    );
  // Every law the table counts as failed (pinned findings aside): its violation, then the command that
  // replays exactly it.
  const pinned = new Set((summary.pinned ?? []).map((pin) => pin.law));
  for (const law of summary.laws.filter((entry) => entry.failed > 0 && !pinned.has(entry.name)))
    lines.push(
      `${law.name} FAILED: ${law.violation ?? "fails"}`,
      `  ${law.replay ?? "(no failure file: --no-write)"}`,
      ...(law.diverged ? [`  ${law.diverged}`] : []),
    );
  if (!summary.laws.some((law) => law.passed + law.failed > 0))
    lines.push("nothing was checked: every run was skipped or not checkable");
  if (summary.required?.unmet) lines.push(summary.required.unmet);
  lines.push(checkVerdictLine(summary, checkFailedBecause(summary)));
  return `${lines.join("\n")}\n`;
}

/** One golden case's line: every law's verdict, then each violation. */
export function engineCaseText(entry: EngineCheckSummary["cases"][number]): string {
  if (entry.skipped) return `${entry.suite}/${entry.case}: skipped (${entry.skipped})\n`;
  const verdicts = entry.laws.map((law) => `${law.law} ${VERDICT_WORDS[law.status]}`);
  const failures = entry.laws
    .filter((law) => law.violation)
    .map((law) => `    ${law.law}: ${law.violation!.message}\n`);
  return `${entry.suite}/${entry.case}: ${verdicts.join(", ")}\n${failures.join("")}`;
}

/** The last lines of `check --engine --golden`: the laws that judged nothing, then cases, engine and verdict. */
export function engineGoldenFooter(summary: EngineCheckSummary): string {
  const verdict =
    summary.checked === 0
      ? "nothing was checked (every case skipped or not checkable): FAILED"
      : summary.ok
        ? "no law failed"
        : "FAILED";
  const counts = summary.judged ? `: ${judgedCounts(summary.judged)}` : "";
  const lines = summary.judged ? notJudgedLines(summary.judged) : [];
  return [
    ...lines,
    `${summary.cases.length} cases through '${summary.command ?? summary.engine}' (${summary.engine}): ${verdict}${counts}`,
    "",
  ].join("\n");
}

function engineGoldenText(summary: EngineCheckSummary): string {
  return `${summary.cases.map(engineCaseText).join("")}${engineGoldenFooter(summary)}`;
}

function validateText(report: ValidationReport & { judged?: JudgedLaws }): string {
  const lines: string[] = [];
  const { golden, epsilon, profile } = report;
  lines.push(
    `golden ${golden.file}: suite ${golden.suite} (ORT ${golden.ortVersion}, ${golden.ep}, ${golden.dtype}, ${golden.threads} thread${golden.threads > 1 ? "s" : ""})`,
  );
  lines.push(
    `outputs ${report.outputs}; profile ${profile.name}; epsilon target ${epsilon.target}, draft ${epsilon.draft}${epsilon.fromGolden ? " (golden)" : " (--epsilon)"}`,
  );
  if (report.skippedLines > 0)
    lines.push(`cases ${report.cases.join(", ")} (--case): ${report.skippedLines} lines of other cases skipped`);
  const failures: string[] = [];
  const cases = [...new Set(report.requests.map((request) => request.case))];
  const width = 22;
  for (const name of cases) {
    lines.push(
      "",
      `case ${name}`,
      `  ${"request".padStart(7)}  ${OUTPUT_CHECKS.map((check) => check.padEnd(width)).join("")}`,
    );
    for (const request of report.requests.filter((candidate) => candidate.case === name)) {
      const cells = OUTPUT_CHECKS.map((check) => {
        const result = request.checks.find((candidate) => candidate.law === check);
        return (result ? verdictText(result) : "-").padEnd(width);
      });
      lines.push(`  ${String(request.id).padStart(7)}  ${cells.join("").trimEnd()}`);
      for (const result of request.checks) {
        if (result.violation)
          failures.push(
            `  ${name} request ${request.id}${request.line ? ` (line ${request.line})` : ""}, ${result.law}: ${result.violation.message}`,
          );
      }
    }
  }
  for (const trace of report.traces) {
    lines.push("", `trace ${trace.file} (case ${trace.case})`);
    for (const law of trace.laws) {
      lines.push(lawLine(law, false));
      if (law.violation) failures.push(`  ${trace.case} trace, ${law.law}: ${law.violation.message}`);
    }
  }
  if (profile.relaxations.length > 0) {
    lines.push("", `profile ${profile.name} (${profile.description}): relaxations`);
    for (const relaxation of profile.relaxations) {
      const applied =
        relaxation.applied > 0 ? `applied ${relaxation.applied}x: ${relaxation.details.join("; ")}` : "not triggered";
      lines.push(`  - ${relaxation.id}: ${relaxation.convention}. specconf: ${relaxation.effect}. ${applied}`);
    }
  }
  if (failures.length > 0) lines.push("", "failures (first divergence):", ...failures);
  const { summary, judged } = report;
  if (judged?.neverCheckable.length) lines.push("", ...notJudgedLines(judged));
  // Verdicts counted, then laws: a law that held nowhere is not among those that hold.
  const laws = judged
    ? ` (laws: ${judged.held.length} of ${judged.total} held on a request or trace, ${judged.failed.length} failed, ${judged.neverCheckable.length} never checkable)`
    : "";
  lines.push(
    "",
    `${summary.holds} hold, ${summary.fails} fail, ${summary.notCheckable} not checkable, ${summary.ties} ties${laws}: exit ${report.exitCode}`,
  );
  return `${lines.join("\n")}\n`;
}

/** The kill matrix: a row per fault, a column per law that killed any (K shrunk, k first case only). */
function mutantsText(summary: MutantsSummary): string {
  const reports = summary.faults;
  const laws = LAW_NAMES.filter((law) =>
    reports.some((report) => report.laws.includes(law) || report.firstLaws.includes(law)),
  );
  const faultWidth = Math.max(5, ...reports.map((report) => report.name.length));
  const abbreviations = laws.map((_, i) => `L${i + 1}`);
  const lines = [
    `${"fault".padEnd(faultWidth)}  ${abbreviations.map((a) => a.padStart(3)).join(" ")}  killed by         size (requests/prompt tokens/rounds)   detect  shrink`,
  ];
  for (const report of reports) {
    const cells = laws.map((law) =>
      (report.laws.includes(law) ? "K" : report.firstLaws.includes(law) ? "k" : ".").padStart(3),
    );
    const size = report.killed ? `${report.requests}/${report.promptTokens}/${report.rounds}` : "-";
    lines.push(
      `${report.name.padEnd(faultWidth)}  ${cells.join(" ")}  ${(report.law ?? (report.crashed ? "CRASH (no law)" : "SURVIVED")).padEnd(17)} ${size.padEnd(37)} ${report.detectSeconds.toFixed(1).padStart(5)}s ${report.shrinkSeconds.toFixed(1).padStart(6)}s`,
    );
  }
  lines.push(
    "",
    "K: fails on the shrunk counterexample; k: fails on the first failing case only",
    ...laws.map((law, i) => `${abbreviations[i]}: ${law}`),
  );
  return lines.join("\n") + "\n";
}

function replayText(summary: ReplaySummary, text: ReplayText): string {
  const out = [...text.lines];
  for (const result of summary.laws) out.push(lawLine(result));
  out.push("");
  if (summary.identicalTrace !== null)
    out.push(
      summary.identicalTrace
        ? "the rerun's trace is identical to the recorded one"
        : "the rerun's trace DIFFERS from the recorded one (the engine changed since)",
    );
  const failing = summary.laws.filter((result) => result.status === "fails");
  const { recordedLaws } = summary;
  if (text.recordedViolation !== undefined) {
    const own = failing.find((result) => result.law === recordedLaws[0]);
    out.push(
      summary.exact
        ? `reproduced exactly: ${recordedLaws[0]}: ${text.recordedViolation}`
        : own
          ? `reproduced, differently: ${recordedLaws[0]}: ${own.violation?.message ?? "fails"} (recorded: ${text.recordedViolation})`
          : summary.reproduced
            ? `reproduced in part: ${recordedLaws.filter((law) => failing.some((result) => result.law === law)).join(", ")} fails, ${recordedLaws[0]} holds now`
            : `not reproduced: ${recordedLaws.join(", ")} holds now`,
    );
  } else
    out.push(
      failing.length > 0
        ? `${failing.map((result) => result.law).join(", ")} fails`
        : `no law fails: ${verdictCounts(summary.laws)}`,
    );
  return out.join("\n") + "\n";
}
