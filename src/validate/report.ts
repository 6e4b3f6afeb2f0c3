// The human-readable validation report: one table per case (a row per request, a column per output
// check), one block per trace (a line per law), the profile's relaxations with what each changed, and
// the first divergence of everything that fails.
import type { LawResult } from "../laws/law.ts";
import { OUTPUT_CHECKS } from "./output-checks.ts";
import type { ValidationReport } from "./validate.ts";

function verdict(result: LawResult): string {
  const base = result.status === "holds" ? "holds" : result.status === "fails" ? "FAILS" : "n/c";
  return result.ties > 0 ? `${base} (${result.ties} tie${result.ties > 1 ? "s" : ""})` : base;
}

export function renderReport(report: ValidationReport): string {
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
        return (result ? verdict(result) : "-").padEnd(width);
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
      const detail = law.status === "not-checkable" && law.reason ? `: ${law.reason}` : "";
      const relaxed = law.relaxedBy?.length ? ` [relaxed: ${law.relaxedBy.join(", ")}]` : "";
      lines.push(`  ${law.law.padEnd(24)} ${verdict(law)}${relaxed}${detail}`);
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
  const { summary } = report;
  lines.push(
    "",
    `${summary.holds} hold, ${summary.fails} fail, ${summary.notCheckable} not checkable, ${summary.ties} ties: exit ${report.exitCode}`,
  );
  return `${lines.join("\n")}\n`;
}
