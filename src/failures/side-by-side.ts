// Two runs of one case next to each other: an external engine's and the reference engine's. Outputs per
// request (tokens, accept lengths) always; the step tables column by column when both runs have traces.
// Each column is cut to its width so the pair fits the terminal.
import type { RunResult } from "../trace/run-result.ts";

/** Per request: its tokens, finish reason and accept lengths, one line each. */
export function outputsTable(run: RunResult | undefined): string {
  if (!run) return "(no run)\n";
  return (
    run.outputs
      .map(
        (output) =>
          `r${output.id}: [${output.tokens.join(" ")}] ${output.finishReason}${output.acceptLens.length ? ` accept lens [${output.acceptLens.join(" ")}]` : ""}`,
      )
      .join("\n") + "\n"
  );
}

function fit(text: string, width: number): string {
  return text.length > width ? `${text.slice(0, width - 1)}…` : text.padEnd(width);
}

/** Two texts as columns under their titles, each cut to `width` characters. */
export function sideBySide(left: string, right: string, titles: [string, string], width: number): string {
  const a = left.replace(/\n$/, "").split("\n");
  const b = right.replace(/\n$/, "").split("\n");
  const lines = [`${fit(titles[0], width)} | ${titles[1]}`, `${"-".repeat(width)}-+-${"-".repeat(width)}`];
  for (let i = 0; i < Math.max(a.length, b.length); i++)
    lines.push(`${fit(a[i] ?? "", width)} | ${fit(b[i] ?? "", width).trimEnd()}`);
  return lines.join("\n") + "\n";
}
