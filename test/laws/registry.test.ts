// The registry and the shared runner: every law `specconf run` reports (check-run.ts) is in the registry
// (so the property suites check it too), the runner applies exactly the laws that apply, twins run only
// for selected laws, a crashing engine is a failure of its own, and law names resolve loosely.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import type { Case } from "../../src/case/case.ts";
import { runCase } from "../../src/engine/run-case.ts";
import { checkRun } from "../../src/laws/check-run.ts";
import {
  applicableLaws,
  checkCase,
  failures,
  RUNS_TO_COMPLETION,
  targetOnlyCase,
  twinCase,
} from "../../src/laws/check-case.ts";
import { combine, LAW_NAMES, lawByName, LAWS } from "../../src/laws/registry.ts";
import { caseArbitrary } from "../../properties/arbitraries/case.ts";
import { FULL_SPACE } from "../../properties/arbitraries/space.ts";

const sample = fc.sample(caseArbitrary(FULL_SPACE), { seed: 21, numRuns: 12 });

describe("law registry", () => {
  it("holds every law specconf run reports, on generated cases", { timeout: 60_000 }, async () => {
    for (const testCase of sample) {
      const run = await runCase(testCase);
      const targetOnly = await runCase(targetOnlyCase(testCase));
      for (const result of await checkRun(testCase, run, targetOnly))
        expect(LAW_NAMES, `checkRun reports '${result.law}'`).toContain(result.law);
    }
  });

  it("names are unique and resolve loosely", () => {
    expect(new Set(LAW_NAMES).size).toBe(LAWS.length);
    expect(lawByName("kv-conservation")?.name).toBe("KV conservation");
    expect(lawByName("page_size_invariance")?.name).toBe("page-size invariance");
    expect(lawByName("Retract/Resume invariance")?.name).toBe("retract/resume invariance");
    expect(lawByName("no such law")).toBeUndefined();
  });

  it("combine adds counts and keeps the first failure, naming the target-only run", () => {
    const holds = { law: "x", status: "holds" as const, checked: 3, ties: 1 };
    const fails = { law: "x", status: "fails" as const, checked: 2, ties: 0, violation: { message: "boom" } };
    expect(combine(holds, fails)).toMatchObject({
      status: "fails",
      checked: 5,
      ties: 1,
      violation: { message: "target-only run: boom" },
    });
    expect(combine({ law: "x", status: "not-checkable", checked: 0, ties: 0 }, holds)).toEqual(holds);
  });
});

describe("shared runner", () => {
  it(
    "checks exactly the laws that apply, and only runs the twins selected laws need",
    { timeout: 60_000 },
    async () => {
      const testCase = sample.find(
        (candidate) => candidate.workload.requests.length > 1 && candidate.engine.pageSize > 1,
      )!;
      const all = await checkCase(testCase, { twins: "separate" });
      expect(all.results.map((result) => result.law).sort()).toEqual(
        applicableLaws(testCase)
          .map((law) => law.name)
          .sort(),
      );
      expect(Object.keys(all.twins)).toContain("reordered");
      expect(Object.keys(all.twins)).not.toContain("canonical");
      // Combined (the default): one canonical twin stands for every invariance law; same verdicts.
      const combined = await checkCase(testCase);
      expect(Object.keys(combined.twins).filter((kind) => kind !== "eager")).toEqual(["canonical"]);
      expect(combined.results.map((result) => [result.law, result.status])).toEqual(
        all.results.map((result) => [result.law, result.status]),
      );
      const some = await checkCase(testCase, {
        laws: new Set(["positions", "page-size invariance"]),
        twins: "separate",
      });
      expect(some.results.map((result) => result.law).sort()).toEqual(["page-size invariance", "positions"]);
      expect(Object.keys(some.twins)).toEqual(["unpaged"]);
      expect(some.seconds["page-size invariance"]).toBeGreaterThan(0);
    },
  );

  it(
    "combined twins: a failure against the canonical twin is attributed by each law's own twin",
    { timeout: 60_000 },
    async () => {
      const base = sample.find((candidate) => candidate.workload.requests.length > 1)!;
      const prompt = [1, 5, 9, 13, 17, 3, 4, 8, 21, 22];
      const testCase: Case = {
        ...base,
        draft: { ...base.draft!, kind: "mirror" },
        engine: {
          ...base.engine,
          numSteps: 2,
          topk: 1,
          numDraftTokens: 3,
          chunkSize: 3,
          tokenBudget: 256,
          pageSize: 2,
          multiLayer: undefined,
          graphReplay: undefined,
          faults: ["chunked-tail-token"],
        },
        workload: {
          requests: [
            { id: 0, prompt, maxNewTokens: 6, arrivalStep: 0 },
            { id: 1, prompt: prompt.slice(0, 8), maxNewTokens: 6, arrivalStep: 0 },
          ],
          aborts: [],
        },
      };
      const combined = await checkCase(testCase);
      const separate = await checkCase(testCase, { twins: "separate" });
      const verdicts = (check: typeof combined) =>
        Object.fromEntries(check.results.map((result) => [result.law, result.status]));
      expect(verdicts(combined)["chunk invariance"]).toBe("fails");
      expect(verdicts(combined)["page-size invariance"]).toBe("holds");
      expect(verdicts(combined)).toEqual(verdicts(separate));
      expect(Object.keys(combined.twins).sort()).toEqual(["canonical", "reordered", "unchunked", "unpaged"]);
    },
  );

  it("a crash is reported as its own failure, never as a pass", async () => {
    const testCase: Case = {
      ...sample[0],
      engine: { ...sample[0].engine, poolSlots: 1 * sample[0].engine.pageSize, mode: "speculative" },
    };
    const check = await checkCase(testCase);
    expect(check.crash).toMatch(/exhausted|slot/i);
    expect(failures(check).map((result) => result.law)).toEqual([RUNS_TO_COMPLETION]);
  });

  it("twins change only what their law varies", () => {
    const testCase = sample.find((candidate) => candidate.workload.requests.length > 1)!;
    expect(twinCase("unpaged", testCase).engine).toEqual({ ...testCase.engine, pageSize: 1 });
    expect(twinCase("eager", testCase).engine).toEqual({ ...testCase.engine, graphReplay: false });
    expect(twinCase("reordered", testCase).workload.requests.map((request) => request.id)).toEqual(
      testCase.workload.requests.map((request) => request.id).reverse(),
    );
    expect(twinCase("unretracted", testCase).workload).toMatchObject({ aborts: [], retracts: [] });
    expect(targetOnlyCase(testCase).engine).toMatchObject({ mode: "target-only", faults: [] });
  });
});
