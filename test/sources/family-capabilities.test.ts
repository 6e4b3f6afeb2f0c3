// Issue 29's families as capabilities (modelFamilies): an engine that declares none is never sent a family
// case and the property says what it lacks; one declaring sliding windows on GGUF gets the sliding-window
// property's float32 preset with the drafts a family target's files carry (standalone drafts and prompt
// lookup, never a trained head with no family file), every generated case inside its capabilities; a family
// no declared format can carry (hybrid presets on GGUF: llama.cpp's width assert) stays out with the reason.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Capabilities } from "../../src/adapter/protocol.ts";
import { caseArbitrary } from "../../src/properties/arbitraries/case.ts";
import { narrowSpace } from "../../src/properties/arbitraries/capabilities.ts";
import { propertyFor } from "../../src/properties/law-properties.ts";
import { outsideCapabilities } from "../../src/sources/capabilities.ts";
import { resolveModelSpec } from "../../src/case/models.ts";
import { modelFamiliesOf } from "../../src/model/spec.ts";

const GGUF_ENGINE: Capabilities = {
  modes: ["target-only", "speculative"],
  drafts: ["mirror", "truncated-mirror", "noisy-mirror", "eagle3", "ngram"],
  modelFormats: ["gguf"],
  maxBatch: 4,
};

describe("model families as capabilities", () => {
  const property = propertyFor("sliding window")!;
  const space = { ...property.space, faults: [] };

  it("an engine declaring no family gets no family case, and the property says what it lacks", () => {
    expect(narrowSpace(space, GGUF_ENGINE)).toMatch(
      /sliding-window attention \(modelFamilies: sliding-window not declared\)/,
    );
  });

  it("declared on GGUF: the float32 window preset with the drafts its files carry; every case inside", () => {
    const declared: Capabilities = { ...GGUF_ENGINE, modelFamilies: ["sliding-window", "rope-scaling"] };
    const narrowed = narrowSpace(space, declared);
    if (typeof narrowed === "string") throw new Error(narrowed);
    expect(narrowed.presets).toEqual(["swa"]);
    expect(narrowed.drafts).not.toContain("eagle3");
    const cases = fc.sample(caseArbitrary(narrowed), { seed: 7, numRuns: 60 });
    for (const testCase of cases) {
      expect(modelFamiliesOf(resolveModelSpec(testCase.model))).toEqual(["sliding-window", "rope-scaling"]);
      expect(outsideCapabilities(declared, testCase)).toBeUndefined();
    }
    // The same case with a trained head is outside: a family target's GGUF carries no EAGLE-3 head.
    const withHead = { ...cases[0], draft: { ...cases[0].draft!, kind: "eagle3" as const } };
    expect(outsideCapabilities(declared, withHead)).toMatch(/^draft eagle3 of a sliding-window, rope-scaling model/);
    // Declaring only one of the preset's two families is not enough.
    expect(outsideCapabilities({ ...GGUF_ENGINE, modelFamilies: ["sliding-window"] }, cases[0])).toMatch(
      /rope-scaling not declared/,
    );
  });

  it("hybrid declared on GGUF only: its presets stay out with llama.cpp's reason; on HF they come in", () => {
    const hybridSpace = { ...propertyFor("recurrent state")!.space, faults: [] };
    const onGguf = narrowSpace(hybridSpace, { ...GGUF_ENGINE, modelFamilies: ["hybrid"] });
    expect(onGguf).toMatch(/GGML_ASSERT\(2 \* n_embd == d_inner\)/);
    const onHf = narrowSpace(hybridSpace, { ...GGUF_ENGINE, modelFormats: ["hf"], modelFamilies: ["hybrid"] });
    if (typeof onHf === "string") throw new Error(onHf);
    expect(onHf.presets).toEqual(["hybrid"]);
  });
});
