// The sliding window law on the reference engine's own traces of the swa family: it holds on every path
// (prefill, draft extend, tree draft decode, verify, target decode), each row's windowed set is the attended set
// cut to the window, and it fails, naming the row, when a windowed set keeps a position the window has left,
// loses one inside it, or loses the row itself; a trace without windowed sets is not checkable.
import { describe, expect, it } from "vitest";
import { defaultCase } from "../../src/case/default-case.ts";
import { runCase } from "../../src/engine/run-case.ts";
import { checkSlidingWindow } from "../../src/laws/sliding-window.ts";
import { getPreset } from "../../src/model/presets.ts";
import type { Trace } from "../../src/trace/schema.ts";

describe("sliding window law", async () => {
  const spec = getPreset("swa");
  const testCase = defaultCase({
    preset: "swa",
    draft: "noisy-mirror",
    seed: 3,
    numRequests: 2,
    maxNewTokens: 10,
    engine: { numSteps: 3, topk: 2, numDraftTokens: 5, chunkSize: 4 },
  });
  const run = await runCase(testCase);
  const targetOnly = await runCase({ ...testCase, engine: { ...testCase.engine, mode: "target-only" } });
  const copy = (): Trace => structuredClone(run.trace);
  /** A verify row far enough into its sequence that its window starts after position 0. */
  const late = (trace: Trace) => {
    const event = trace.events.find((e) => e.phase === "verify" && e.rows.some((row) => row.position >= 8))!;
    const index = event.rows.findIndex((row) => row.position >= 8);
    return { event, index, row: event.rows[index] };
  };

  it("holds on every path, where windowed sets are the attended sets cut to the window", () => {
    for (const trace of [run.trace, targetOnly.trace]) {
      const result = checkSlidingWindow(trace, spec, testCase.draft);
      expect(result.status, result.violation?.message).toBe("holds");
      expect(result.checked).toBeGreaterThan(0);
    }
    const phases = new Set(run.trace.events.filter((e) => e.rows.some((row) => row.window)).map((e) => e.phase));
    expect([...phases].sort()).toEqual(["draft-decode", "draft-extend", "prefill", "verify"]);
    expect(targetOnly.trace.events.some((e) => e.phase === "decode" && e.rows[0].window)).toBe(true);
    // The window really cuts: some row's windowed set is smaller than its attended set.
    const cut = run.trace.events.some((e) =>
      e.rows.some((row) => row.window && row.window.positions.length > 0 && row.window.positions[0][0] > 0),
    );
    expect(cut).toBe(true);
  });

  it("fails on a windowed set that keeps a position before the window, naming it", () => {
    const trace = copy();
    const { event, index, row } = late(trace);
    const first = row.position - spec.slidingWindow!.size + 1;
    row.window!.positions = [[first - 1, row.attended!.positions.at(-1)![1]]];
    const result = checkSlidingWindow(trace, spec, testCase.draft);
    expect(result.status).toBe("fails");
    expect(result.violation).toMatchObject({ event: event.index, index, got: first - 1, expected: first });
  });

  it("fails on a windowed set that lost a position inside the window, or the row itself", () => {
    const lost = copy();
    late(lost).row.window!.positions = [];
    expect(checkSlidingWindow(lost, spec, testCase.draft).status).toBe("fails");
    const noSelf = copy();
    const { row, index } = late(noSelf);
    row.window!.batchRows = row.window!.batchRows!.filter((batchRow) => batchRow !== index);
    const result = checkSlidingWindow(noSelf, spec, testCase.draft);
    expect(result.status).toBe("fails");
    expect(result.violation?.message).toContain("itself missing");
  });

  it("is not checkable without windowed sets, and ignores unwindowed models' rows", () => {
    const trace = copy();
    for (const event of trace.events) for (const row of event.rows) delete row.window;
    expect(checkSlidingWindow(trace, spec, testCase.draft).status).toBe("not-checkable");
    // The EAGLE head has layers of its own: its rows are not the window's business.
    const eagleRows = checkSlidingWindow(run.trace, spec, { ...testCase.draft!, kind: "eagle" });
    expect(eagleRows.checked).toBeLessThan(checkSlidingWindow(run.trace, spec, testCase.draft).checked);
  });
});
