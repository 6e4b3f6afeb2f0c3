// Abort between any two forwards (mid-prefill, between draft decode and verify, before draft extend):
// the engine never crashes, frees every slot of the aborted request, and the laws still hold.
import { fc, test } from "@fast-check/vitest";
import { expect } from "vitest";
import { defaultCase } from "../../src/case/default-case.ts";
import { runCase } from "../../src/engine/run-case.ts";
import { checkRun } from "../helpers/check-run.ts";

const abortArbitrary = fc.record({
  request: fc.integer({ min: 0, max: 2 }),
  step: fc.integer({ min: 0, max: 8 }),
  beforeForward: fc.integer({ min: 0, max: 6 }),
});

test.prop(
  [
    fc.array(abortArbitrary, { minLength: 1, maxLength: 2 }),
    fc.constantFrom(null, 2, 5),
    fc.integer({ min: 1, max: 4 }),
  ],
  { numRuns: 25 },
)("aborts at any point free every slot and keep the laws", async (aborts, chunkSize, numSteps) => {
  const base = defaultCase({
    preset: "tiny",
    draft: "tapped-mirror",
    seed: 9,
    numRequests: 3,
    maxNewTokens: 10,
    engine: { numSteps, numDraftTokens: numSteps + 1, chunkSize, pageSize: 2 },
  });
  const testCase = { ...base, workload: { ...base.workload, aborts } };
  const result = await runCase(testCase);
  expect(result.internals?.slotsInUseAtEnd).toBe(0);
  expect(result.internals?.poolChecks).toEqual([]);
  const aborted = new Set(aborts.map((abort) => abort.request));
  for (const output of result.outputs) {
    if (!aborted.has(output.id)) expect(output.finishReason).not.toBe("abort");
  }
  const laws = await checkRun(testCase, result);
  expect(laws.filter((law) => law.status === "fails")).toEqual([]);
});
