// Contract tests of the case arbitraries: the same seed gives the same cases; every generated case, and
// every case shrinking visits, is a valid case (schema and engine consistency); prompts keep the preset's
// preamble through shrinking; each law's space keeps its focus; the whole space shrinks to the simplest case.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Case } from "../../src/case/case.ts";
import { validateCase } from "../../src/case/load.ts";
import { checkCaseConsistency } from "../../src/case/consistency.ts";
import { resolveModelSpec } from "../../src/case/models.ts";
import { caseArbitrary } from "../../src/properties/arbitraries/case.ts";
import { checkSpace, FULL_SPACE, space } from "../../src/properties/arbitraries/space.ts";
import { SAMPLING_OPTIONS, samplingOptionsOf } from "../../src/sampling/params.ts";
import { numDraftTokensFor, UNLIMITED_BUDGET } from "../../src/properties/arbitraries/engine.ts";
import { getPreset } from "../../src/model/presets.ts";
import { LAW_PROPERTIES, lawsWithoutProperty, MIXED } from "../../src/properties/law-properties.ts";
import { propertyArbitrary } from "../../src/properties/law-property.ts";
import { removableArray } from "../../src/properties/arbitraries/removable-array.ts";
import { requestsArbitrary, requestsOf, type RequestDraw } from "../../src/properties/arbitraries/workload.ts";

function assertValid(testCase: Case): void {
  expect(validateCase(testCase)).toEqual([]);
  const spec = resolveModelSpec(testCase.model);
  expect(() => checkCaseConsistency(testCase, spec)).not.toThrow();
  for (const request of testCase.workload.requests)
    expect(request.prompt.slice(0, spec.preamble.length)).toEqual(spec.preamble);
  expect(testCase.workload.requests.map((request) => request.id)).toEqual(testCase.workload.requests.map((_, i) => i));
}

describe("case arbitraries", () => {
  it("the same seed gives the same cases", () => {
    const a = fc.sample(caseArbitrary(FULL_SPACE), { seed: 42, numRuns: 20 });
    const b = fc.sample(caseArbitrary(FULL_SPACE), { seed: 42, numRuns: 20 });
    expect(a).toEqual(b);
    expect(fc.sample(caseArbitrary(FULL_SPACE), { seed: 43, numRuns: 20 })).not.toEqual(a);
  });

  it("every generated case is valid, for every law's space", () => {
    for (const property of [MIXED, ...LAW_PROPERTIES]) {
      for (const testCase of fc.sample(propertyArbitrary(property), { seed: 7, numRuns: 40 })) assertValid(testCase);
    }
  });

  it("every case shrinking visits stays valid, and the whole space shrinks to the simplest case", () => {
    const invalid: string[] = [];
    let visited = 0;
    const details = fc.check(
      fc.property(caseArbitrary(FULL_SPACE), (testCase) => {
        visited += 1;
        try {
          assertValid(testCase);
        } catch (error) {
          invalid.push(`${(error as Error).message.split("\n")[0]}: ${JSON.stringify(testCase)}`);
        }
        return false; // always "fails": fast-check shrinks all the way down
      }),
      { seed: 3, numRuns: 1 },
    );
    expect(invalid).toEqual([]);
    expect(visited).toBeGreaterThan(10);
    const [shrunk] = details.counterexample as [Case];
    const preamble = getPreset("tiny").preamble;
    expect(shrunk.model).toEqual({ preset: "tiny" });
    expect(shrunk.draft?.kind).toBe("mirror");
    expect(shrunk.engine).toMatchObject({
      numSteps: 1,
      topk: 1,
      numDraftTokens: 2,
      chunkSize: null,
      pageSize: 1,
      tokenBudget: UNLIMITED_BUDGET,
    });
    expect(shrunk.engine.multiLayer).toBeUndefined();
    expect(shrunk.engine.graphReplay).toBeUndefined();
    expect(shrunk.engine.graphBuckets).toBeUndefined();
    expect(shrunk.engine.overlap).toBeUndefined();
    expect(shrunk.engine.prefixCache).toBeUndefined();
    expect(shrunk.engine.poolSlots).toBe(256);
    expect(shrunk.workload).toEqual({
      requests: [{ id: 0, prompt: [...preamble, 3], maxNewTokens: 1, arrivalStep: 0 }],
      aborts: [],
    });
  });

  it("shrinks of a failing case keep failing cases valid (a property that needs 2 requests shrinks to exactly 2)", () => {
    const details = fc.check(
      fc.property(caseArbitrary(FULL_SPACE), (testCase) => {
        assertValid(testCase);
        return testCase.workload.requests.length < 2;
      }),
      { seed: 5, numRuns: 200 },
    );
    expect(details.failed).toBe(true);
    const [shrunk] = details.counterexample as [Case];
    expect(shrunk.workload.requests).toHaveLength(2);
    expect(shrunk.workload.requests.every((request) => request.prompt.length === 6)).toBe(true);
  });

  it("each law's space keeps its focus", () => {
    const sample = (law: string) =>
      fc.sample(propertyArbitrary(LAW_PROPERTIES.find((property) => property.law === law)!), { seed: 11, numRuns: 60 });
    expect(sample("chunk invariance").every((c) => c.engine.chunkSize !== null)).toBe(true);
    expect(sample("page-size invariance").every((c) => c.engine.pageSize > 1)).toBe(true);
    expect(sample("batch invariance").every((c) => c.workload.requests.length >= 2)).toBe(true);
    expect(
      sample("bonus stride").every(
        (c) => (c.engine.topk > 1 || c.draft?.kind === "ngram") && c.workload.requests.length >= 2,
      ),
    ).toBe(true);
    expect(sample("per-step pools").every((c) => c.engine.multiLayer === true)).toBe(true);
    expect(sample("graph-replay equivalence").every((c) => c.engine.graphReplay === true)).toBe(true);
    expect(sample("retract/resume invariance").every((c) => (c.workload.retracts ?? []).length >= 1)).toBe(true);
    expect(
      sample("mirror acceptance").every((c) => ["mirror", "tapped-mirror", "eagle3-mirror"].includes(c.draft!.kind)),
    ).toBe(true);
    for (const law of ["aux provenance", "draft vocabulary"]) {
      const cases = sample(law);
      expect(cases.every((c) => c.draft?.kind === "eagle3" || c.draft?.kind === "eagle3-mirror")).toBe(true);
      // Both checkpoint variants of the fc input are drawn.
      expect(new Set(cases.map((c) => c.draft?.normBeforeFc === true))).toEqual(new Set([false, true]));
    }
    expect(
      sample("termination equivalence").every((c) =>
        c.workload.requests.every((r) => (r.sampling?.stopTokenIds?.length ?? 0) > 0),
      ),
    ).toBe(true);
    expect(
      sample("logprob parity").every((c) => c.workload.requests.every((r) => r.sampling?.logprobs !== undefined)),
    ).toBe(true);
    expect(sample("processing parity").every((c) => c.workload.requests.every((r) => r.sampling !== undefined))).toBe(
      true,
    );
  });

  it("the whole space reaches every option", () => {
    const cases = fc.sample(caseArbitrary(FULL_SPACE), { seed: 13, numRuns: 400 });
    const seen = (pick: (c: Case) => unknown) => new Set(cases.map(pick));
    expect(seen((c) => ("preset" in c.model ? c.model.preset : "")).size).toBe(FULL_SPACE.presets.length);
    expect(seen((c) => c.draft?.kind).size).toBe(FULL_SPACE.drafts.length);
    expect(seen((c) => c.engine.topk)).toEqual(new Set(FULL_SPACE.topks));
    expect(seen((c) => c.engine.numSteps).size).toBe(5);
    expect(seen((c) => c.engine.chunkSize).has(null)).toBe(true);
    expect(seen((c) => c.engine.multiLayer === true).size).toBe(2);
    expect(seen((c) => c.engine.graphReplay === true).size).toBe(2);
    expect(seen((c) => c.engine.graphBuckets !== undefined).size).toBe(2);
    expect(seen((c) => c.engine.overlap === true).size).toBe(2);
    expect(seen((c) => c.engine.prefixCache === true).size).toBe(2);
    // Tight pools (one request's reservation) only with the prefix cache; prompt lookup only with chains.
    expect(cases.some((c) => c.engine.prefixCache && c.engine.poolSlots < 256 * c.engine.pageSize)).toBe(true);
    expect(cases.every((c) => c.engine.prefixCache || c.engine.poolSlots === 256 * c.engine.pageSize)).toBe(true);
    expect(cases.every((c) => c.draft?.kind !== "ngram" || c.engine.topk === 1)).toBe(true);
    // Shared prompt prefixes beyond the preamble.
    const preambleLength = (c: Case) => getPreset("preset" in c.model ? c.model.preset! : "tiny").preamble.length;
    expect(
      cases.some((c) => {
        const [first, second] = c.workload.requests;
        const at = preambleLength(c);
        return second !== undefined && second.prompt.length > at && first.prompt[at] === second.prompt[at];
      }),
    ).toBe(true);
    expect(cases.some((c) => c.workload.aborts.length > 0 && (c.workload.retracts ?? []).length > 0)).toBe(true);
    expect(cases.some((c) => c.engine.tokenBudget < 16)).toBe(true);
    const requests = cases.flatMap((c) => c.workload.requests);
    const options = new Set(requests.flatMap((r) => samplingOptionsOf(r.sampling)));
    // Grammars and stop strings are dimensions of their own spaces (src/properties/dimensions.ts): the whole space
    // draws none.
    const ownSpaces: readonly string[] = ["grammar", "stop", "includeStopStrInOutput"];
    expect([...options].sort()).toEqual([...SAMPLING_OPTIONS].filter((option) => !ownSpaces.includes(option)).sort());
    expect(requests.some((r) => r.sampling === undefined)).toBe(true);
    const grammarCases = fc.sample(caseArbitrary({ ...FULL_SPACE, grammar: true }), { seed: 13, numRuns: 100 });
    expect(grammarCases.some((c) => c.workload.requests.some((r) => r.sampling?.grammar !== undefined))).toBe(true);
    const textCases = fc.sample(caseArbitrary({ ...FULL_SPACE, text: true }), { seed: 13, numRuns: 100 });
    const textRequests = textCases.flatMap((c) => c.workload.requests).filter((r) => r.sampling?.stop !== undefined);
    expect(textRequests.some((r) => (r.sampling?.stop?.length ?? 0) > 1)).toBe(true);
    expect(textRequests.some((r) => r.sampling?.includeStopStrInOutput === true)).toBe(true);
    expect(requests.some((r) => r.draftSchedule !== undefined)).toBe(false);
    // Nor the context boundary or request slots (issue 28): their spaces draw them on every case.
    expect(cases.some((c) => c.engine.contextLength !== undefined || c.engine.requestSlots !== undefined)).toBe(false);
    const bounded = fc.sample(
      caseArbitrary({
        ...FULL_SPACE,
        contextBoundary: true,
        topks: [1],
        multiLayer: [false],
        overlap: [false],
        prefixCache: [false],
      }),
      { seed: 13, numRuns: 50 },
    );
    for (const c of bounded) {
      const context = c.engine.contextLength!;
      for (const r of c.workload.requests)
        expect(context - r.prompt.length - r.maxNewTokens).toBeLessThanOrEqual(c.engine.numSteps + 1);
    }
    expect(bounded.some((c) => c.engine.draftContextLength !== undefined)).toBe(true);
    const slotted = fc.sample(caseArbitrary({ ...FULL_SPACE, slotReuse: true }), { seed: 13, numRuns: 20 });
    expect(slotted.every((c) => c.engine.requestSlots === 1)).toBe(true);
  });

  it("N is valid for every S and K", () => {
    for (let S = 1; S <= 5; S++) {
      expect(numDraftTokensFor(S, 1, 17)).toBe(S + 1);
      for (const K of [2, 3, 4]) {
        for (let raw = 0; raw < 64; raw++) {
          const N = numDraftTokensFor(S, K, raw);
          expect(N).toBeGreaterThanOrEqual(2);
          expect(N).toBeLessThanOrEqual(Math.min(8, 1 + K + (S - 1) * K * K));
        }
      }
    }
  });

  it("every law of the registry has a property, and bad spaces are refused", () => {
    expect(lawsWithoutProperty()).toEqual([]);
    expect(() => checkSpace(space({ steps: { min: 3, max: 2 } }))).toThrow(/steps/);
    expect(() => checkSpace(space({ drafts: [] }))).toThrow(/drafts/);
    expect(() => checkSpace(space({ sampling: { options: ["stopTokenIds"], required: ["logprobs"] } }))).toThrow(
      /logprobs/,
    );
  });
});

describe("removable arrays", () => {
  const lengthsOfShrinks = (arbitrary: fc.Arbitrary<number[]>) => {
    const [drawn] = fc.sample(arbitrary, { seed: 3, numRuns: 1 });
    expect(drawn).toHaveLength(3);
    return new Set([...arbitrary.shrink(drawn, undefined).take(50)].map((shrink) => shrink.value.length));
  };

  it("removing a request keeps every other request's prompt (suffix tokens are offset by the index)", () => {
    const s = space({ requests: { min: 3, max: 3, shrinkTo: 1 }, maxShared: 0 });
    const requests = requestsArbitrary(s);
    const [drawn] = fc.sample(requests, { seed: 5, numRuns: 1 });
    const spec = getPreset("tiny");
    const prompts = (draws: RequestDraw[]) => requestsOf(spec, draws, s.sampling).map((request) => request.prompt);
    const removals = [...requests.shrink(drawn, undefined).take(3)].map((shrink) => shrink.value);
    expect(removals.map((draws) => draws.length)).toEqual([2, 2, 2]);
    removals.forEach((draws, k) => {
      const removed = drawn.length - 1 - k;
      expect(prompts(draws)).toEqual(prompts(drawn).filter((_, index) => index !== removed));
    });
  });

  it("shrink below the drawn minimum only to shrinkTo (a case drawn with 3 requests may shrink to 1)", () => {
    const item = fc.nat({ max: 9 });
    expect(lengthsOfShrinks(removableArray(item, { minLength: 3, maxLength: 3 }))).toEqual(new Set([3]));
    expect(lengthsOfShrinks(removableArray(item, { minLength: 3, maxLength: 3, shrinkTo: 1 }))).toEqual(
      new Set([2, 3]),
    );
  });
});
