// One self-contained HTML page per check or failure (issue 27): inline CSS and SVG, no script, no external
// resource, so the file can be attached to a bug report and opened anywhere. Sections: the verdict table, the
// coverage, then each failure: its violation and replay command, the shrunk case, the draft tree of the
// failing round, both runs' step tables side by side with the first divergence marked, and both runs'
// accept-length histograms.
import { firstDivergence } from "./divergence.ts";
import { draftTreeSvg } from "./draft-tree-svg.ts";
import { escapeHtml } from "./escape.ts";
import { failingVerifyEvent, roundTree } from "./failing-round.ts";
import { acceptLengths, histogramSvg } from "./histogram-svg.ts";
import type { FailureView, HtmlReport, VerdictRow } from "./report-data.ts";
import { stepTablesHtml } from "./step-tables.ts";

const STYLE = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #1b1f24; }
h1 { font-size: 20px; margin: 0 0 4px; } h2 { font-size: 17px; margin-top: 28px; } h3 { font-size: 15px; }
.subtitle { color: #57606a; margin: 0 0 16px; font-family: ui-monospace, monospace; }
.verdict-ok { color: #1a7f37; font-weight: 600; } .verdict-failed { color: #cf222e; font-weight: 600; }
table { border-collapse: collapse; } th, td { border: 1px solid #d0d7de; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.status-fails td { background: #ffebe9; } tr.status-not-checkable td, tr.status-no-case td { color: #57606a; }
.below { color: #cf222e; }
.failure { border-top: 3px solid #cf222e; margin-top: 24px; padding-top: 8px; }
.violation-message { background: #ffebe9; padding: 8px; border-radius: 6px; font-family: ui-monospace, monospace; white-space: pre-wrap; }
code, pre, .steps { font-family: ui-monospace, monospace; font-size: 12px; }
pre { background: #f6f8fa; padding: 8px; border-radius: 6px; overflow: auto; max-height: 320px; }
.side-by-side { display: flex; gap: 16px; align-items: flex-start; overflow-x: auto; }
.run { flex: 1 1 0; min-width: 420px; } .run h4 { margin: 4px 0; }
.steps td.rows { white-space: normal; word-break: break-word; }
tr.divergence td { background: #fff8c5; } tr.violation td { background: #ffebe9; } tr.divergence.violation td { background: #ffd8b5; }
tr.divergence td:first-child::before { content: "\\25B6 "; color: #bf8700; }
.note { color: #cf222e; margin-top: 2px; } .divergence-note { background: #fff8c5; padding: 6px; border-radius: 6px; font-family: ui-monospace, monospace; }
svg.draft-tree { background: #fff; border: 1px solid #d0d7de; border-radius: 6px; }
.node rect { fill: #fff; stroke: #8c959f; stroke-dasharray: 4 3; } .node.verified rect { fill: #ddf4ff; stroke: #0969da; stroke-dasharray: none; }
.node.accepted rect { fill: #dafbe1; stroke: #1a7f37; stroke-width: 3; }
.node text { font: 12px ui-monospace, monospace; } .node .token { font-weight: 700; font-size: 14px; } .node .score, .predict { fill: #57606a; font-size: 11px; }
.edge { stroke: #8c959f; stroke-width: 1; } .edge.verified { stroke: #0969da; stroke-width: 1.5; } .edge.accepted { stroke: #1a7f37; stroke-width: 4; }
.legend { font: 12px system-ui, sans-serif; fill: #57606a; }
.histograms { display: flex; gap: 24px; } .histogram rect { fill: #0969da; } .histogram text { font: 11px system-ui, sans-serif; }
figure { margin: 0; } figcaption { font-weight: 600; }
`;

function verdictCell(row: VerdictRow): string {
  const text =
    row.status === "fails"
      ? "FAILS"
      : row.status === "not-checkable"
        ? "not checkable"
        : row.status === "no-case"
          ? "no applicable case"
          : row.status;
  return escapeHtml(text);
}

function verdictTable(rows: readonly VerdictRow[]): string {
  const counts = rows.some((row) => row.runs !== undefined);
  const head = counts
    ? "<tr><th>law</th><th>verdict</th><th>runs</th><th>passed</th><th>failed</th><th>ties</th><th>not checkable</th><th>detail</th></tr>"
    : "<tr><th>law</th><th>verdict</th><th>ties</th><th>detail</th></tr>";
  const body = rows.map((row) => {
    const num = (value: number | undefined) => `<td class="num">${value ?? ""}</td>`;
    const cells = counts
      ? [num(row.runs), num(row.passed), num(row.failed), num(row.ties), num(row.notCheckable)].join("")
      : num(row.ties);
    return `<tr class="status-${row.status}" data-law="${escapeHtml(row.law)}"><td>${escapeHtml(row.law)}</td><td class="verdict">${verdictCell(row)}</td>${cells}<td>${escapeHtml(row.detail ?? "")}</td></tr>`;
  });
  return `<table class="verdicts"><thead>${head}</thead><tbody>${body.join("")}</tbody></table>`;
}

function coverageSection(report: HtmlReport): string {
  const coverage = report.coverage;
  if (!coverage) return "";
  const below = new Set(coverage.below);
  const rows = coverage.labels.map(([label, count]) => {
    const share = coverage.runs > 0 ? ((100 * count) / coverage.runs).toFixed(1) : "0.0";
    return `<tr${below.has(label) ? ' class="below"' : ""}><td>${escapeHtml(label)}</td><td class="num">${share}%</td><td class="num">${count}/${coverage.runs}</td></tr>`;
  });
  return `<h2>Coverage</h2><table class="coverage"><thead><tr><th>label</th><th>share</th><th>runs</th></tr></thead><tbody>${rows.join("")}</tbody></table>`;
}

function failureSection(failure: FailureView, index: number): string {
  const [a, b] = failure.runs;
  const divergence = b ? firstDivergence(a.trace, b.trace) : undefined;
  const verify = failingVerifyEvent(a.trace, {
    event: failure.violation.event ?? divergence?.eventA,
    request: failure.violation.request ?? divergence?.request,
  });
  const tree = verify ? roundTree(a.trace, verify, failure.violation.request ?? divergence?.request) : undefined;
  const maxLen = Number(a.trace.config?.numSteps ?? 0) + 1;
  const histograms = failure.runs
    .filter((run) => run !== undefined)
    .map((run) => histogramSvg(run.title, acceptLengths(run.trace), maxLen));
  return (
    `<section class="failure" id="failure-${index}" data-law="${escapeHtml(failure.law)}">` +
    `<h2>${escapeHtml(failure.law)} fails</h2>` +
    `<div class="violation-message">${escapeHtml(failure.violation.message)}</div>` +
    (failure.diverged ? `<p class="diverged">${escapeHtml(failure.diverged)}</p>` : "") +
    `<p>replay: <code class="replay">${escapeHtml(failure.replay)}</code></p>` +
    (failure.labels
      ? `<p>coverage labels reached: ${failure.labels.length ? failure.labels.map(escapeHtml).join(", ") : "none"}</p>`
      : "") +
    `<h3>Shrunk case</h3><p><code>${escapeHtml(failure.caseSummary).replace(/\n/g, "<br>")}</code></p>` +
    `<details><summary>case JSON</summary><pre class="case-json">${escapeHtml(failure.caseJson)}</pre></details>` +
    `<h3>Draft tree of the failing round</h3>` +
    (tree ? draftTreeSvg(tree) : "<p>no verify round in the failing run</p>") +
    `<h3>Step tables</h3>${stepTablesHtml(failure.runs, divergence, failure.violation)}` +
    `<h3>Accept lengths</h3><div class="histograms">${histograms.join("")}</div>` +
    "</section>"
  );
}

export function renderHtml(report: HtmlReport): string {
  return (
    "<!DOCTYPE html>\n" +
    `<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<title>${escapeHtml(report.title)}</title><style>${STYLE}</style></head><body>` +
    `<h1>${escapeHtml(report.title)} <span class="${report.ok ? "verdict-ok" : "verdict-failed"}" id="verdict">${report.ok ? "no law failed" : "FAILED"}</span></h1>` +
    `<p class="verdict-line">${escapeHtml(report.verdict)}</p>` +
    `<p class="subtitle">${escapeHtml(report.subtitle)}</p>` +
    `<h2>Verdicts</h2>${verdictTable(report.verdicts)}` +
    coverageSection(report) +
    report.failures.map(failureSection).join("") +
    "</body></html>\n"
  );
}
