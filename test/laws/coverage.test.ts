// Coverage labels read from a case and its trace, and the counter's 2% rule.
import { describe, expect, it } from "vitest";
import type { Case } from "../../src/case/case.ts";
import { defaultEngineConfig } from "../../src/engine/config.ts";
import { runCase } from "../../src/engine/run-case.ts";
import { COVERAGE_LABELS, CoverageCounter, coverageLabels } from "../../src/laws/coverage.ts";
import { defaultDraftSpec } from "../../src/model/spec.ts";

function testCase(
  engine: Partial<Case["engine"]>,
  requests: [number[], number, number][],
  extra: Partial<Case["workload"]> = {},
  draft: "noisy-mirror" | "mirror" = "noisy-mirror",
): Case {
  return {
    formatVersion: 1,
    model: { preset: "tiny" },
    draft: defaultDraftSpec(draft),
    engine: defaultEngineConfig({ poolSlots: 512, ...engine }),
    workload: {
      requests: requests.map(([prompt, maxNewTokens, arrivalStep], id) => ({ id, prompt, maxNewTokens, arrivalStep })),
      aborts: [],
      ...extra,
    },
  };
}

describe("coverage labels", () => {
  it("finds each corner in a run built to hit it", async () => {
    const prompt = [1, 5, 9, 13, 17, 3, 4, 8];
    const all = testCase(
      { numSteps: 3, topk: 2, numDraftTokens: 6, chunkSize: 6, pageSize: 4 },
      [
        [prompt, 5, 0],
        [prompt.slice(0, 7), 7, 0],
        [prompt, 9, 0],
      ],
      { aborts: [{ request: 2, step: 3, beforeForward: 1 }], retracts: [{ request: 1, step: 2, beforeForward: 0 }] },
    );
    const labels = coverageLabels(all, (await runCase(all)).trace);
    expect([...labels].sort()).toEqual([...COVERAGE_LABELS].sort());
  });

  it("a lone unchunked request on page 1 hits none but the cut round", async () => {
    // The mirror accepts all 3 drafts; max new tokens 2 cuts the first round after one token.
    const plain = testCase({ numSteps: 3 }, [[[1, 5, 9, 13, 17, 3], 2, 0]], {}, "mirror");
    expect(coverageLabels(plain, (await runCase(plain)).trace)).toEqual(["request finishes mid-round"]);
  });

  it("the counter fails labels below 2% of runs", () => {
    const counter = new CoverageCounter();
    for (let i = 0; i < 100; i++) counter.add(i < 1 ? [...COVERAGE_LABELS] : i < 2 ? ["batch of 2+ requests"] : []);
    const report = counter.report();
    expect(report.runs).toBe(100);
    expect(report.below).toEqual(COVERAGE_LABELS.filter((label) => label !== "batch of 2+ requests"));
    expect(counter.lines()[0]).toMatch(/1\.0% \(1\/100\)/);
  });

  it("exactly 2% passes", () => {
    const counter = new CoverageCounter();
    for (let i = 0; i < 50; i++) counter.add(i === 0 ? [...COVERAGE_LABELS] : []);
    expect(counter.report().below).toEqual([]);
  });
});
