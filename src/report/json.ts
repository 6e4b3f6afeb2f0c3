// The JSON reporter: the summary as one line of JSON (summary.ts), what scripts, CI and `specconf merge` read.
import type { Report } from "./summary.ts";

export function renderJson(report: Report): string {
  return `${JSON.stringify(report.summary)}\n`;
}
