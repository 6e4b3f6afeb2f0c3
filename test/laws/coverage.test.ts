// Coverage labels read from a case and its trace, and the counter's 2% rule.
import { describe, expect, it } from "vitest";
import type { Case } from "../../src/case/case.ts";
import { defaultEngineConfig } from "../../src/engine/config.ts";
import { runCase } from "../../src/engine/run-case.ts";
import { COVERAGE_LABELS, CoverageCounter, coverageLabels } from "../../src/laws/coverage.ts";
import { minimumPoolSlots } from "../../src/case/limits.ts";
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
  it("finds each corner in runs built to hit them", async () => {
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
    const classic = coverageLabels(all, (await runCase(all)).trace);
    // Scheduling: overlap, a prefix cache on page 3 with a pool of one request's reservation, padded buckets;
    // the second request shares 10 tokens (a hit at a page boundary), the third 7 (mid-page); a retract lands
    // after a verify, while its results are in flight.
    const shared = [1, 5, 9, 13, 17, 3, 4, 8, 21, 22, 23];
    const scheduled = testCase(
      { numSteps: 2, numDraftTokens: 3, pageSize: 3, overlap: true, prefixCache: true },
      [
        [shared, 8, 0],
        [[...shared.slice(0, 10), 30, 31], 8, 2],
        [[...shared.slice(0, 7), 40, 41, 42, 43, 44], 8, 4],
      ],
      { retracts: [{ request: 1, step: 5, beforeForward: 2 }] },
      "mirror",
    );
    scheduled.engine.poolSlots = minimumPoolSlots(scheduled);
    const padded = { ...scheduled, engine: { ...scheduled.engine, graphReplay: true, graphBuckets: [4, 8, 16] } };
    // Prompt lookup: the first request's bonus has occurred before (one draft, S = 1), the second's has not.
    const lookup = testCase({ numSteps: 1, numDraftTokens: 2 }, [
      [[1, 5, 9, 13, 17, 3], 4, 0],
      [[1, 5, 9, 13, 17, 4], 4, 0],
    ]);
    lookup.draft = defaultDraftSpec("ngram");
    const scheduling = coverageLabels(scheduled, (await runCase(scheduled)).trace);
    const paddedLabels = coverageLabels(padded, (await runCase(padded)).trace);
    const ragged = coverageLabels(lookup, (await runCase(lookup)).trace);
    expect(scheduling).toEqual(
      expect.arrayContaining([
        "finish with a future token in flight",
        "abort or retract with a future token in flight",
        "prefix hit mid-page",
        "prefix hit at a page boundary",
        "eviction while a prefix is shared",
      ]),
    );
    expect(scheduling).not.toContain("padded bucket with a padding row");
    expect(paddedLabels).toContain("padded bucket with a padding row");
    expect(ragged).toContain("empty-draft round next to a full one");
    expect(classic).not.toContain("empty-draft round next to a full one");
    expect([...new Set([...classic, ...scheduling, ...paddedLabels, ...ragged])].sort()).toEqual(
      [...COVERAGE_LABELS].sort(),
    );
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
