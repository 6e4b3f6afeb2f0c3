// Text into HTML and SVG: every value a report shows comes from case files, traces or engines, so all of it
// is escaped (a failure file shared in a bug report cannot inject markup).
export function escapeHtml(value: unknown): string {
  return String(value)
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}
