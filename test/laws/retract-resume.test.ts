// Retract resumes, from the case's schedule and a trace: retracts landing mid-round, after a step's last forward
// and under overlap hold on the reference engine at the points its lifecycle records; a retract the engine drops
// without a trace (issue 25: outputs unchanged, so retract/resume invariance holds on it) fails, shrunk to the
// retracted request's next forward; a retract of a request not yet admitted checks nothing.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { Case } from "../../src/case/case.ts";
import { runCase } from "../../src/engine/run-case.ts";
import { checkRetractResumes } from "../../src/laws/retract-resume.ts";
import { placePoints } from "../../src/laws/schedule-points.ts";
import { schedulingCase } from "../helpers/scheduling-cases.ts";

describe("retract resumes", async () => {
  const retracts = [
    { request: 0, step: 3, beforeForward: 2 },
    { request: 0, step: 6, beforeForward: 9 },
    { request: 1, step: 5, beforeForward: 0 },
  ];
  const testCase = schedulingCase({ overlap: true }, { retracts });
  const { trace } = await runCase(testCase);

  it("holds wherever the retracts land, at the points the lifecycle records", () => {
    const result = checkRetractResumes(testCase, trace);
    expect(result.status).toBe("holds");
    // The engine records the retracts that met a running request; the law checks exactly those.
    const recorded = (trace.lifecycle ?? []).filter((entry) => entry.kind === "retract");
    expect(recorded.length).toBeGreaterThanOrEqual(2);
    expect(result.checked).toBe(recorded.length);
    const placed = placePoints(retracts, trace);
    for (const entry of recorded)
      expect(placed.find((point) => point.request === entry.request && point.step === entry.step)?.beforeEvent).toBe(
        entry.beforeEvent,
      );
  });

  it("a retract the engine drops without a trace fails", async () => {
    const dropped = {
      ...testCase,
      engine: { ...testCase.engine, faults: ["retract-dropped-while-decoding" as const] },
    };
    const run = await runCase(dropped);
    expect((run.trace.lifecycle ?? []).some((entry) => entry.kind === "retract")).toBe(false);
    const result = checkRetractResumes(dropped, run.trace);
    expect(result.status).toBe("fails");
    expect(result.violation?.message).toMatch(
      /the case retracts request \d at step \d before forward \d .*, but its next forward, \S+ event \d+ at position \d+, continues/,
    );
  });

  it("a retract before the request's first forward checks nothing", async () => {
    const early = {
      ...testCase,
      workload: { ...testCase.workload, retracts: [{ request: 2, step: 0, beforeForward: 0 }] },
    };
    const result = checkRetractResumes(early, (await runCase(early)).trace);
    expect(result.checked).toBe(0);
  });

  it("a resume that starts where a prefix hit ends (past what the request had computed) holds", async () => {
    // Found by the property (seed 1082563508): r1 retracted after its first prefill chunk (position 0), resumed
    // from the prefix cache's 4 positions of r0's prompt.
    const base = schedulingCase({ numSteps: 1, numDraftTokens: 2, pageSize: 1, tokenBudget: 2, prefixCache: true });
    const hitCase = {
      ...base,
      workload: {
        requests: [
          { id: 0, prompt: [1, 5, 9, 13, 17, 3, 3], maxNewTokens: 2, arrivalStep: 0 },
          { id: 1, prompt: [1, 5, 9, 13, 17, 4, 4], maxNewTokens: 2, arrivalStep: 0 },
        ],
        aborts: [],
        retracts: [{ request: 1, step: 3, beforeForward: 1 }],
      },
    };
    const run = await runCase(hitCase);
    expect((run.trace.lifecycle ?? []).some((entry) => entry.kind === "prefix-hit" && entry.request === 1)).toBe(true);
    const result = checkRetractResumes(hitCase, run.trace);
    expect(result.status).toBe("holds");
    expect(result.checked).toBe(1);
  });

  it("a mid-prefill retract resumed above where it was, with the prefix cache on, is not counted (and does not fail)", async () => {
    // Found by the grammar acceptance property (seed 523697102): request 2, retracted after its first prefill row,
    // resumes from a longer cached prefix whose hit the lifecycle records elsewhere than right before the prefill.
    const file = new URL("../fixtures/cases/retract-mid-prefill-prefix-hit.case.json", import.meta.url);
    const midPrefill = JSON.parse(readFileSync(file, "utf8")) as Case;
    const result = checkRetractResumes(midPrefill, (await runCase(midPrefill)).trace);
    expect(result.status).not.toBe("fails");
  });
});
