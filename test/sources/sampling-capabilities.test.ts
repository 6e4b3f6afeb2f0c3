// The sampling capability: a case using an undeclared sampling option is outside an engine's
// capabilities, generators narrowed to the declared options draw only those (and a focus that requires
// an undeclared one is not generated), and the new coverage corners are unreachable without them.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { narrowSpace } from "../../src/properties/arbitraries/capabilities.ts";
import { caseArbitrary } from "../../src/properties/arbitraries/case.ts";
import { MIXED, propertyFor } from "../../src/properties/law-properties.ts";
import type { Capabilities } from "../../src/adapter/protocol.ts";
import { REFERENCE_CAPABILITIES } from "../../src/adapter/server.ts";
import { SAMPLING_COVERAGE_LABELS } from "../../src/check/sampling-coverage.ts";
import { samplingOptionsOf } from "../../src/sampling/params.ts";
import { outsideCapabilities, unreachableLabels } from "../../src/sources/capabilities.ts";
import { LOGPROB_PARITY } from "../../src/laws/logprob-parity.ts";

const STOPS_ONLY: Capabilities = {
  ...REFERENCE_CAPABILITIES,
  sampling: ["stopTokenIds"],
};

describe("sampling capability", () => {
  const narrowed = narrowSpace({ ...MIXED.space, faults: [] }, STOPS_ONLY);
  if (typeof narrowed === "string") throw new Error(narrowed);
  const cases = fc.sample(caseArbitrary(narrowed), { seed: 3, numRuns: 200 });
  const options = new Set(cases.flatMap((c) => c.workload.requests.flatMap((r) => samplingOptionsOf(r.sampling))));

  it("generators draw only the declared options, and reach them", () => {
    expect([...options]).toEqual(["stopTokenIds"]);
    for (const testCase of cases) expect(outsideCapabilities(STOPS_ONLY, testCase)).toBeUndefined();
  });

  it("a case with an undeclared option is outside; an engine declaring none gets no sampling at all", () => {
    const sampled = fc
      .sample(caseArbitrary({ ...MIXED.space, faults: [] }), { seed: 4, numRuns: 100 })
      .find((c) => c.workload.requests.some((r) => r.sampling?.presencePenalty !== undefined))!;
    expect(outsideCapabilities(STOPS_ONLY, sampled)).toMatch(/^sampling option /);
    const { sampling: _declared, ...withoutSampling } = REFERENCE_CAPABILITIES;
    const none = narrowSpace({ ...MIXED.space, faults: [] }, withoutSampling);
    if (typeof none === "string") throw new Error(none);
    const plain = fc.sample(caseArbitrary(none), { seed: 5, numRuns: 100 });
    expect(plain.every((c) => c.workload.requests.every((r) => r.sampling === undefined))).toBe(true);
  });

  it("a focus that requires an undeclared option is not generated, and says why", () => {
    const property = propertyFor(LOGPROB_PARITY)!;
    expect(narrowSpace({ ...property.space, faults: [] }, STOPS_ONLY)).toBe("sampling option logprobs");
  });

  it("the sampling corners are unreachable without the options, reachable for the reference engine", () => {
    const unreachable = unreachableLabels({ ...REFERENCE_CAPABILITIES, sampling: [] });
    for (const label of SAMPLING_COVERAGE_LABELS) expect(unreachable).toContain(label);
    // The gather on the CPU EP is the in-process reference engine's ONNX feed, never drawn for an engine over the
    // protocol (narrowSpace): that label alone is unreachable there.
    expect(unreachableLabels(REFERENCE_CAPABILITIES)).toEqual(["context gathered on the CPU EP"]);
  });
});
