// The "html" reporter (issue 27): any command's report as one self-contained HTML page (html/page.ts). A
// check shows its verdict table and coverage, a replay (`specconf report FILE`) the verdicts of its case;
// both draw every failure the command attached (`failures`: the views failure-view.ts builds from the
// failure records, gathered before rendering since reporters are synchronous). Other commands' reports are
// shown as their text, preformatted.
import { renderHtml } from "./html/page.ts";
import type { HtmlReport, VerdictRow } from "./html/report-data.ts";
import type { LawVerdict } from "../check/runner.ts";
import type { CheckSummary, Report } from "./summary.ts";
import { renderText } from "./text.ts";
import { escapeHtml } from "./html/escape.ts";
import { checkFailedBecause, checkVerdictLine, verdictCounts, VERDICT_WORDS } from "./verdict.ts";

/** A check's row: its verdict over the runs, and the violation (with which run diverged) or why it judged nothing. */
function checkRow(law: CheckSummary["laws"][number], summary: CheckSummary): VerdictRow {
  const notJudged = [...summary.judged.neverCheckable, ...summary.judged.noCase].find(
    (entry) => entry.law === law.name,
  );
  const status = law.failed > 0 ? "fails" : law.passed > 0 ? "holds" : law.runs > 0 ? "not-checkable" : "no-case";
  const detail = law.violation
    ? `${law.violation}${law.diverged ? `\n${law.diverged}` : ""}`
    : law.failed === 0 && notJudged
      ? `${notJudged.kind}: ${notJudged.reason}`
      : undefined;
  return {
    law: law.name,
    status,
    runs: law.runs,
    passed: law.passed,
    failed: law.failed,
    ties: law.ties,
    notCheckable: law.notCheckable,
    ...(detail ? { detail } : {}),
  };
}

function verdictRow(result: LawVerdict): VerdictRow {
  const detail = result.violation?.message ?? result.reason;
  return { law: result.law, status: result.status, ties: result.ties, ...(detail ? { detail } : {}) };
}

export function renderHtmlReport(report: Report): string {
  const failures = report.failures ?? [];
  switch (report.command) {
    case "check": {
      const { summary } = report;
      const page: HtmlReport = {
        title: `specconf check${summary.engine ? ` --engine ${summary.engine.name}` : ""}`,
        subtitle: `seed ${summary.seed}${summary.engine ? `, engine ${summary.engine.command}` : ""}`,
        ok: summary.ok,
        verdict: checkVerdictLine(summary, checkFailedBecause(summary)),
        verdicts: summary.laws.map((law) => checkRow(law, summary)),
        coverage: {
          runs: summary.coverage.runs,
          labels: Object.entries(summary.coverage.labels),
          below: summary.coverage.below,
        },
        failures,
      };
      return renderHtml(page);
    }
    case "replay": {
      const { summary } = report;
      const failing = summary.laws.filter((law) => law.status === "fails");
      // The title's law with its own verdict: a law that was not checkable now does not "hold".
      const law = summary.recordedLaws[0] ?? failing[0]?.law;
      const status = summary.laws.find((result) => result.law === law)?.status;
      const word = status === undefined ? "did not apply" : VERDICT_WORDS[status];
      return renderHtml({
        title: law === undefined ? "specconf: replay" : `specconf: ${law} ${word}`,
        subtitle: summary.file,
        ok: failing.length === 0,
        verdict: verdictCounts(summary.laws),
        verdicts: summary.laws.map(verdictRow),
        failures,
      });
    }
    default:
      return (
        `<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>specconf ${escapeHtml(report.command)}</title></head>` +
        `<body><pre>${escapeHtml(renderText(report))}</pre></body></html>\n`
      );
  }
}
