// Replica workloads (the sampling distribution law's samples): each request repeated with distinct ids and
// seeds and the same prompt, pools scaled with them; narrowed to an engine's maxBatch, and not generated for
// an engine whose batches cannot hold them or that does not sample.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { narrowSpace } from "../../src/properties/arbitraries/capabilities.ts";
import { caseArbitrary } from "../../src/properties/arbitraries/case.ts";
import { replicate } from "../../src/properties/arbitraries/workload.ts";
import { propertyFor } from "../../src/properties/law-properties.ts";
import { REFERENCE_CAPABILITIES } from "../../src/adapter/server.ts";
import { SAMPLING_DISTRIBUTION } from "../../src/laws/sampling-distribution.ts";
import { GREEDY_SAMPLING_OPTIONS } from "../../src/sampling/params.ts";
import { preflightCase } from "../../src/case/preflight.ts";

const property = propertyFor(SAMPLING_DISTRIBUTION)!;

describe("replicas", () => {
  it("repeat each request with distinct ids and seeds, the same prompt and options", () => {
    const requests = [
      { id: 0, prompt: [1, 5], maxNewTokens: 3, arrivalStep: 0, sampling: { temperature: 0.7, seed: 9 } },
      { id: 1, prompt: [1, 6], maxNewTokens: 4, arrivalStep: 0, sampling: { temperature: 1.3 } },
    ];
    const copies = replicate(requests, 3);
    expect(copies.map((request) => request.id)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(new Set(copies.map((request) => request.sampling!.seed)).size).toBe(6);
    expect(copies.map((request) => request.prompt[1])).toEqual([5, 5, 5, 6, 6, 6]);
    expect(
      copies.every((request, i) => request.sampling!.temperature === requests[Math.floor(i / 3)].sampling.temperature),
    ).toBe(true);
    expect(replicate(requests, 1)).toEqual(requests);
  });

  it("the property's cases hold 32-48 copies of one request, run within the limits, and sample", () => {
    for (const testCase of fc.sample(caseArbitrary({ ...property.space, faults: [] }), { seed: 2, numRuns: 20 })) {
      const requests = testCase.workload.requests;
      expect(requests.length).toBeGreaterThanOrEqual(32);
      expect(requests.length).toBeLessThanOrEqual(48);
      expect(requests.every((request) => (request.sampling?.temperature ?? 0) > 0)).toBe(true);
      expect(() => preflightCase(testCase)).not.toThrow();
    }
  });

  it("narrowed to an engine's maxBatch; refused when the batch cannot hold them or the engine does not sample", () => {
    const narrowed = narrowSpace({ ...property.space, faults: [] }, { ...REFERENCE_CAPABILITIES, maxBatch: 100 });
    if (typeof narrowed === "string") throw new Error(narrowed);
    expect(narrowed.replicas).toEqual({ min: 32, max: 48 });
    const smaller = narrowSpace({ ...property.space, faults: [] }, { ...REFERENCE_CAPABILITIES, maxBatch: 40 });
    if (typeof smaller === "string") throw new Error(smaller);
    expect(smaller.replicas).toEqual({ min: 32, max: 40 });
    expect(narrowSpace({ ...property.space, faults: [] }, { ...REFERENCE_CAPABILITIES, maxBatch: 16 })).toMatch(
      /replicas \(maxBatch 16\)/,
    );
    expect(
      narrowSpace(
        { ...property.space, faults: [] },
        { ...REFERENCE_CAPABILITIES, sampling: [...GREEDY_SAMPLING_OPTIONS] },
      ),
    ).toMatch(/sampling option temperature/);
  });
});
