// The reporters, as vitest's: each renders any command's report (summary.ts) in its own format. A new
// format (HTML, say) is one file exporting its render function plus one line here; commands pick a reporter
// by name (`--json` is "json", `--junit FILE` writes "junit", the terminal gets "text").
import { renderHtmlReport } from "./html.ts";
import { renderJson } from "./json.ts";
import { renderJunit } from "./junit.ts";
import type { Report } from "./summary.ts";
import { renderText } from "./text.ts";

export type Reporter = (report: Report) => string;

export const REPORTERS = {
  text: renderText,
  json: renderJson,
  junit: renderJunit,
  html: renderHtmlReport,
} as const satisfies Record<string, Reporter>;

export type ReporterName = keyof typeof REPORTERS;

export function render(report: Report, reporter: ReporterName): string {
  return REPORTERS[reporter](report);
}
