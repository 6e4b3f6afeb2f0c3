// The one runner: it checks exactly the laws that apply, runs only the twins selected laws need (each
// once), combines composable twins into one canonical run without changing a verdict, attributes a
// canonical failure by each law's own twin, turns a run failure into its own failing verdict, and reads a
// source's Unavailable as "not checkable" (never as a pass).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Case } from "../../src/case/case.ts";
import { LAWS } from "../../src/laws/registry.ts";
import { applicableLaws, checkLaws, failures, RUNS_TO_COMPLETION } from "../../src/check/runner.ts";
import { referenceSource } from "../../src/sources/reference.ts";
import { targetOnlyCase, Unavailable, type RunSource } from "../../src/check/source.ts";
import { caseArbitrary } from "../../src/properties/arbitraries/case.ts";
import { FULL_SPACE } from "../../src/properties/arbitraries/space.ts";

const sample = fc.sample(caseArbitrary(FULL_SPACE), { seed: 21, numRuns: 12 });
const reference = referenceSource();
const named = (...names: string[]) => LAWS.filter((law) => names.includes(law.name));
const twinOf = (name: string) => LAWS.find((law) => law.name === name)!.needs.twin!;
/** A generated case with several requests and pages above 1, all arriving together (so they share forwards). */
function batchedPagedCase(): Case {
  const found = sample.find((candidate) => candidate.workload.requests.length > 1 && candidate.engine.pageSize > 1)!;
  const requests = found.workload.requests.map((request) => ({ ...request, arrivalStep: 0 }));
  // A roomy pool: one request's reservation (a tight pool) would admit them one at a time.
  const engine = { ...found.engine, poolSlots: 256 * found.engine.pageSize };
  return { ...found, engine, workload: { ...found.workload, requests, aborts: [] } };
}

/** The reference engine, counting what the runner asks of it. */
function counting(): RunSource & { calls: string[] } {
  const calls: string[] = [];
  return {
    ...reference,
    calls,
    run: (testCase) => (calls.push("run"), reference.run(testCase)),
    targetOnly: (testCase) => (calls.push("targetOnly"), reference.targetOnly(testCase)),
    twin: (testCase, twin) => (calls.push(`twin ${twin.kind}`), reference.twin(testCase, twin)),
  };
}

describe("the runner", () => {
  it(
    "checks exactly the laws that apply, and runs each twin once, only for selected laws",
    { timeout: 60_000 },
    async () => {
      const testCase = batchedPagedCase();
      const source = counting();
      const all = await checkLaws(source, testCase, { twins: "separate" });
      expect(all.results.map((result) => result.law).sort()).toEqual(
        applicableLaws(testCase)
          .map((law) => law.name)
          .sort(),
      );
      expect(source.calls.filter((call) => call.startsWith("twin"))).toEqual([
        ...new Set(source.calls.filter((call) => call.startsWith("twin"))),
      ]);
      expect(Object.keys(all.twins)).toContain("reordered");
      expect(Object.keys(all.twins)).not.toContain("canonical");
      // Combined (the default): one canonical twin stands for every composable law; same verdicts.
      const combined = await checkLaws(reference, testCase);
      const ownTwins = LAWS.flatMap((law) =>
        law.needs.twin && !law.needs.twin.composable ? [law.needs.twin.kind] : [],
      );
      expect(Object.keys(combined.twins).filter((kind) => !ownTwins.includes(kind))).toEqual(["canonical"]);
      expect(combined.results.map((result) => [result.law, result.status])).toEqual(
        all.results.map((result) => [result.law, result.status]),
      );
      const some = await checkLaws(reference, testCase, {
        laws: named("positions", "page-size invariance"),
        twins: "separate",
      });
      expect(some.results.map((result) => result.law).sort()).toEqual(["page-size invariance", "positions"]);
      expect(Object.keys(some.twins)).toEqual(["unpaged"]);
      expect(some.seconds["page-size invariance"]).toBeGreaterThan(0);
    },
  );

  it("a failure against the canonical twin is attributed by each law's own twin", { timeout: 60_000 }, async () => {
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
        graphBuckets: undefined,
        overlap: undefined,
        prefixCache: undefined,
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
    const combined = await checkLaws(reference, testCase);
    const separate = await checkLaws(reference, testCase, { twins: "separate" });
    const verdicts = (check: typeof combined) =>
      Object.fromEntries(check.results.map((result) => [result.law, result.status]));
    expect(verdicts(combined)["chunk invariance"]).toBe("fails");
    expect(verdicts(combined)["page-size invariance"]).toBe("holds");
    expect(verdicts(combined)).toEqual(verdicts(separate));
    expect(Object.keys(combined.twins).sort()).toEqual(["canonical", "reordered", "unchunked", "unpaged"]);
  });

  it("a run failure is its own failure, never a pass", async () => {
    // An undersized pool is refused as bad input before the engine runs (src/case/limits.ts), so the run
    // fails the way a hung scheduler would: past its step limit.
    const testCase: Case = { ...sample[0], engine: { ...sample[0].engine, mode: "speculative" } };
    const check = await checkLaws(referenceSource({ maxSteps: 1 }), testCase);
    expect(check.crash).toMatch(/did not finish within 1 steps/);
    expect(failures(check).map((result) => result.law)).toEqual([RUNS_TO_COMPLETION]);
  });

  it(
    "a source without twins or baseline makes exactly the laws needing them not checkable",
    { timeout: 60_000 },
    async () => {
      const testCase = batchedPagedCase();
      const partial: RunSource = {
        ...reference,
        targetOnly: async () => {
          throw new Unavailable("no target-only mode");
        },
        twin: async () => {
          throw new Unavailable("no twins here");
        },
      };
      const check = await checkLaws(partial, testCase);
      for (const result of check.results) {
        const law = LAWS.find((candidate) => candidate.name === result.law)!;
        if (law.needs.twin || law.needs.baseline === "compare") expect(result.status, law.name).toBe("not-checkable");
        if (law.needs.twin)
          expect(result.reason).toMatch(/no twins here|no prompt|no forward|no retract|no request hit/);
      }
      expect(check.results.some((result) => result.status === "holds")).toBe(true);
    },
  );

  it("twins change only what their law varies", () => {
    const testCase = sample.find((candidate) => candidate.workload.requests.length > 1)!;
    expect(twinOf("page-size invariance").of(testCase).engine).toEqual({ ...testCase.engine, pageSize: 1 });
    expect(twinOf("graph-replay equivalence").of(testCase).engine).toEqual({ ...testCase.engine, graphReplay: false });
    expect(
      twinOf("batch invariance")
        .of(testCase)
        .workload.requests.map((request) => request.id),
    ).toEqual(testCase.workload.requests.map((request) => request.id).reverse());
    expect(twinOf("retract/resume invariance").of(testCase).workload).toMatchObject({ aborts: [], retracts: [] });
    expect(targetOnlyCase(testCase).engine).toMatchObject({ mode: "target-only", faults: [] });
  });
});

describe("a run that crashes part way", () => {
  // Leaked rejected slots exhaust the pool a few rounds in: the crash is "runs to completion", and the leak the
  // per-step pool check saw at its first step is KV conservation's (mutants at seed 4 found only the crash).
  const leaking: Case = {
    formatVersion: 1,
    model: { preset: "tiny" },
    draft: { kind: "eagle", noiseAlpha: 0.2, tapDelta: 0.1, truncatedLayers: 1, seed: 1 },
    engine: {
      mode: "speculative",
      numSteps: 3,
      topk: 2,
      numDraftTokens: 6,
      chunkSize: null,
      pageSize: 4,
      tokenBudget: 10,
      poolSlots: 40,
      faults: ["leaked-rejected-slots"],
      runtime: { ep: "cpu", threads: 1, graphOptimizationLevel: "basic" },
      graphReplay: true,
      overlap: true,
      prefixCache: true,
    },
    workload: {
      requests: [
        { id: 0, prompt: [1, 5, 9, 13, 17, 61, 46, 52], maxNewTokens: 6, arrivalStep: 2 },
        { id: 1, prompt: [1, 5, 9, 13, 17, 61, 46], maxNewTokens: 3, arrivalStep: 3 },
      ],
      aborts: [],
    },
  };

  it("still shows what its own per-step checks saw before it failed", async () => {
    const check = await checkLaws(reference, leaking);
    const failedLaws = failures(check).map((result) => result.law);
    expect(failedLaws).toContain(RUNS_TO_COMPLETION);
    expect(check.crash).toMatch(/KvPoolExhaustedError/);
    const conservation = check.results.find((result) => result.law === "KV conservation");
    expect(conservation?.status).toBe("fails");
    expect(conservation?.violation?.message).toMatch(/^after step \d+, pool /);
    // Without the fault the same case runs to completion and every law holds.
    const clean = await checkLaws(reference, { ...leaking, engine: { ...leaking.engine, faults: [] } });
    expect(failures(clean)).toEqual([]);
  });
});
