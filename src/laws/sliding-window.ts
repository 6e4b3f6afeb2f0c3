// Law "sliding window": in a model with sliding-window attention, every row's windowed layers attend exactly
// what its full-attention layers attend (the positions law's set) within its window, positions
// p - window + 1 .. p, on every path: prefill, draft extend, draft decode, verify, target decode, graph replay.
// Window metadata lost on one path (sglang issue 22679: draft extend; target verify), a drafter that ignores the
// target's window, or a window start that a rollback left behind (transformers PR 47447, OpenVINO PR 37620)
// each show as a row whose windowed set differs. Reads the trace rows' `window` sets next to `attended`.
import type { Case } from "../case/case.ts";
import { resolveModelSpec } from "../case/models.ts";
import type { ModelSpec } from "../model/spec.ts";
import { draftWindow, stackWindow } from "../model/window.ts";
import type { Trace, TraceEvent, TraceRow } from "../trace/schema.ts";
import type { Law } from "./definition.ts";
import { combine, LawTally, notCheckable, type LawResult } from "./law.ts";
import { compressRanges } from "./request-view.ts";

export const SLIDING_WINDOW = "sliding window";

/** The window of the model an event ran (target, draft, draft module k); undefined: not windowed. */
export function eventWindow(event: TraceEvent, spec: ModelSpec, draft: Case["draft"]): number | undefined {
  const model = event.model ?? (event.phase.startsWith("draft") ? "draft" : "target");
  return model === "target" ? stackWindow(spec) : draftWindow(spec, draft);
}

/** The positions one attended set names (persisted ranges, temporary rows, rows of the forward), ascending. */
function positionsOf(attended: NonNullable<TraceRow["attended"]>, event: TraceEvent): number[] {
  const positions: number[] = [];
  for (const [lo, hi] of attended.positions) for (let p = lo; p <= hi; p++) positions.push(p);
  positions.push(...(attended.temporary ?? []));
  for (const batchRow of attended.batchRows ?? []) positions.push(event.rows[batchRow]?.position ?? -1);
  return positions.sort((a, b) => a - b);
}

export function checkSlidingWindow(trace: Trace, spec: ModelSpec, draft: Case["draft"]): LawResult {
  const tally = new LawTally(SLIDING_WINDOW);
  let windowedRows = 0;
  for (const event of trace.events) {
    const window = eventWindow(event, spec, draft);
    if (window === undefined) continue;
    event.rows.forEach((row, rowIndex) => {
      if (!row.window || !row.attended) return;
      windowedRows += 1;
      tally.checked += 1;
      const where = { request: row.request, event: event.index, index: rowIndex };
      const model = event.model ?? event.phase;
      if (row.window.foreign?.length) {
        const other = row.window.foreign[0];
        tally.fail({
          ...where,
          message: `${model} row of request ${row.request} attends request ${other.request}'s position ${other.position} in its windowed layers`,
        });
        return;
      }
      const first = row.position - window + 1;
      const expected = positionsOf(row.attended, event).filter((p) => p >= first && p <= row.position);
      const got = positionsOf(row.window, event);
      const sawSelf = row.window.batchRows?.includes(rowIndex) ?? false;
      if (sawSelf && got.length === expected.length && got.every((p, i) => p === expected[i])) return;
      const outside = got.find((p) => p < first || p > row.position);
      tally.fail({
        ...where,
        message:
          `${model} row at position ${row.position} of request ${row.request} (${event.phase}) attends positions ` +
          `[${compressRanges(got, ", ")}] in its windowed layers, expected [${compressRanges(expected, ", ")}] ` +
          `(window ${window}: positions ${Math.max(0, first)}..${row.position}` +
          (outside !== undefined ? `; ${outside} lies outside it)` : sawSelf ? ")" : "; itself missing)"),
        ...(outside !== undefined ? { got: outside, expected: Math.max(0, first) } : {}),
      });
    });
  }
  if (windowedRows === 0)
    return notCheckable(SLIDING_WINDOW, "no row of a windowed model carries its windowed attended set");
  return tally.result();
}

export const law: Law = {
  name: SLIDING_WINDOW,
  summary: "rows of sliding-window models attend, in their windowed layers, their attended set within the window",
  appliesTo: (testCase) => stackWindow(resolveModelSpec(testCase.model)) !== undefined,
  needs: { baseline: "also-check" },
  check: ({ testCase, run, baseline }) => {
    const spec = resolveModelSpec(testCase.model);
    const own = checkSlidingWindow(run.trace, spec, testCase.draft);
    return baseline ? combine(own, checkSlidingWindow(baseline.trace, spec, testCase.draft), "target-only run") : own;
  },
};
