// Padding-poison invariance: padded replays with other poison are identical event for event; a real row that
// changed with the poison, or a verify result that did, fails at that event.
import { describe, expect, it } from "vitest";
import { runCase } from "../../src/engine/run-case.ts";
import { checkPaddingPoisonInvariance, repoisonedTwin } from "../../src/laws/padding-poison-invariance.ts";
import type { Trace } from "../../src/trace/schema.ts";
import { schedulingCase } from "../helpers/scheduling-cases.ts";

describe("padding-poison invariance", async () => {
  const testCase = schedulingCase({ graphReplay: true, graphBuckets: [4, 8, 16] });
  const run = (await runCase(testCase)).trace;
  const twin = (await runCase(repoisonedTwin(testCase))).trace;
  const copy = (): Trace => structuredClone(twin);

  it("holds: the poison differs, real rows do not", () => {
    expect(repoisonedTwin(testCase).engine.paddingPoisonSeed).toBe(1);
    expect(run.events.filter((event) => (event.paddedRows ?? 0) > 0).length).toBeGreaterThan(3);
    const result = checkPaddingPoisonInvariance(run, twin);
    expect(result.status).toBe("holds");
    expect(result.checked).toBe(run.events.length);
  });

  it("a real row's prediction that moved with the poison fails at that event", () => {
    const broken = copy();
    const event = broken.events.find((candidate) => (candidate.paddedRows ?? 0) > 0)!;
    event.rows[0].margin = event.rows[0].margin! + 1e-7;
    const result = checkPaddingPoisonInvariance(run, broken);
    expect(result.status).toBe("fails");
    expect(result.violation?.event).toBe(event.index);
    expect(result.violation?.message).toMatch(/margin .*, with other poison/);
  });

  it("a verify result that moved with the poison fails", () => {
    const broken = copy();
    const verify = broken.events.find((candidate) => candidate.verify?.length)!;
    verify.verify![0].acceptLen -= 1;
    expect(checkPaddingPoisonInvariance(run, broken).violation?.message).toMatch(/verify event \d+: results/);
  });

  it("is not checkable without padding rows", () => {
    const unpadded = structuredClone(run);
    for (const event of unpadded.events) delete event.paddedRows;
    expect(checkPaddingPoisonInvariance(unpadded, twin).status).toBe("not-checkable");
  });
});
