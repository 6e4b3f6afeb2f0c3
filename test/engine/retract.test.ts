// Retract and resume at any point between forwards: resume re-prefills every pool and keeps the pending
// bonus, so outputs equal the run without retracts (tie-aware), every law holds, and no slot leaks.
import { fc, test } from "@fast-check/vitest";
import { expect } from "vitest";
import { defaultCase } from "../../src/case/default-case.ts";
import { loadModels } from "../../src/case/models.ts";
import { runCase } from "../../src/engine/run-case.ts";
import { checkRun } from "../helpers/check-run.ts";
import { checkOutputsAgree } from "../../src/laws/lossless.ts";
import { ReferenceOracle } from "../../src/reference/oracle.ts";

const retractArbitrary = fc.record({
  request: fc.integer({ min: 0, max: 2 }),
  step: fc.integer({ min: 0, max: 10 }),
  beforeForward: fc.integer({ min: 0, max: 6 }),
});

test.prop(
  [
    fc.array(retractArbitrary, { minLength: 1, maxLength: 3 }),
    fc.constantFrom(null, 3),
    fc.constantFrom([1, 1], [3, 1], [2, 2]),
    fc.constantFrom("tapped-mirror", "eagle"),
  ],
  { numRuns: 20 },
)(
  "retract/resume invariance: same outputs, laws hold, pools empty",
  async (retracts, chunkSize, [numSteps, topk], draft) => {
    const numDraftTokens = topk === 1 ? numSteps + 1 : numSteps + 2;
    const base = defaultCase({
      preset: "tiny",
      draft,
      seed: 11,
      numRequests: 3,
      maxNewTokens: 10,
      engine: { numSteps, topk, numDraftTokens, chunkSize, pageSize: 2 },
    });
    const withRetracts = { ...base, workload: { ...base.workload, retracts } };
    const plain = await runCase(base);
    const retracted = await runCase(withRetracts);
    expect(retracted.internals?.slotsInUseAtEnd).toBe(0);
    expect(retracted.internals?.poolChecks).toEqual([]);
    const laws = await checkRun(withRetracts, retracted, plain);
    expect(laws.filter((law) => law.status === "fails")).toEqual([]);
    const oracle = await ReferenceOracle.create(loadModels(base), base.engine.runtime);
    const baseline = new Map(plain.trace.requests!.map((request) => [request.id, request.output]));
    const invariance = await checkOutputsAgree(
      "retract/resume invariance",
      retracted.trace.requests!.map((request) => ({ request, targetOnly: baseline.get(request.id)! })),
      oracle,
    );
    expect(invariance.status).toBe("holds");
  },
);
