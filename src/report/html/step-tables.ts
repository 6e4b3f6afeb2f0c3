// Both runs' step tables side by side as HTML: one line per forward (event, step, phase, pool, each request's
// rows as token@position, its verify result), the first divergence marked in both (class "divergence", and
// the id "first-divergence" on the failing run's) and the violation's event in the failing run ("violation").
import { escapeHtml } from "./escape.ts";
import type { Divergence } from "./divergence.ts";
import type { RunView } from "./report-data.ts";
import type { TraceEvent } from "../../trace/schema.ts";

function rowsCell(event: TraceEvent): string {
  const groups = new Map<number, string[]>();
  for (const row of event.rows) {
    const parts = groups.get(row.request) ?? [];
    const slot = row.slot !== undefined ? `/s${row.slot}` : "";
    parts.push(`${row.token}@${row.position}${slot}${row.temporary ? "t" : ""}`);
    groups.set(row.request, parts);
  }
  const lines = [...groups].map(([request, parts]) => `r${request}: ${parts.join(" ")}`);
  for (const result of event.verify ?? [])
    lines.push(
      `accept r${result.request}: len ${result.acceptLen} index [${result.acceptIndex.join(" ")}] bonus ${result.bonus}` +
        (result.emitted ? ` emitted [${result.emitted.join(" ")}]${result.finished ? " finished" : ""}` : ""),
    );
  return lines.map(escapeHtml).join("<br>");
}

function table(
  run: RunView,
  side: "a" | "b",
  marks: { divergence?: number; violation?: number; note?: string },
): string {
  const body = run.trace.events.map((event) => {
    const classes = [
      marks.divergence === event.index ? "divergence" : "",
      marks.violation === event.index ? "violation" : "",
    ].filter(Boolean);
    const id = marks.divergence === event.index && side === "a" ? ' id="first-divergence"' : "";
    const phase = `${event.phase}${event.draftStep ? ` ${event.draftStep}` : ""}${event.module !== undefined ? ` m${event.module}` : ""}`;
    const note =
      marks.violation === event.index && marks.note ? `<div class="note">${escapeHtml(marks.note)}</div>` : "";
    return (
      `<tr${id} data-event="${event.index}"${classes.length ? ` class="${classes.join(" ")}"` : ""}>` +
      `<td>${event.index}</td><td>${escapeHtml(event.step ?? "")}</td><td>${escapeHtml(phase)}</td>` +
      `<td>${escapeHtml(event.pool ?? event.model ?? "")}</td><td class="rows">${rowsCell(event)}${note}</td></tr>`
    );
  });
  return (
    `<div class="run" id="run-${side}"><h4>${escapeHtml(run.title)}</h4>` +
    `<table class="steps"><thead><tr><th>event</th><th>step</th><th>phase</th><th>pool</th><th>rows: token@position/slot (t: temporary)</th></tr></thead>` +
    `<tbody>${body.join("")}</tbody></table></div>`
  );
}

export function stepTablesHtml(
  runs: readonly [RunView, RunView?],
  divergence: Divergence | undefined,
  violation: { event?: number; message: string },
): string {
  const [a, b] = runs;
  const left = table(a, "a", { divergence: divergence?.eventA, violation: violation.event, note: violation.message });
  const right = b ? table(b, "b", { divergence: divergence?.eventB }) : "";
  const what = divergence
    ? `<p class="divergence-note">first divergence: ${escapeHtml(divergence.what)}</p>`
    : b
      ? `<p class="divergence-note">the two runs' steps agree (request by request)</p>`
      : "";
  return `${what}<div class="side-by-side">${left}${right}</div>`;
}
