// Model spec variants (issue 34, item 7): the draws keep every preset's value first (shrinks end at the preset's
// own case), a variant's case carries a spec that validates and differs from its preset in the fields drawn, the
// exports of specs differing only in BOS/EOS get distinct cache names, and both properties run with every law
// holding on the reference engine.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Case } from "../../src/case/case.ts";
import { ModelCache } from "../../src/sources/model-cache.ts";
import { getPreset } from "../../src/model/presets.ts";
import { validateModelSpec } from "../../src/model/spec.ts";
import { exportStem } from "../../src/export/export-name.ts";
import { specVariant, specVariantArbitrary } from "../../src/properties/arbitraries/spec-variants.ts";
import { propertyFor, dimensionProperties } from "../../src/properties/law-properties.ts";
import { propertyArbitrary, runLawProperty, describeFailure } from "../../src/properties/law-property.ts";
import { MODEL_SPEC_VARIANTS } from "../../src/properties/laws/model-spec-variants.ts";
import { FAMILY_SPEC_VARIANTS } from "../../src/properties/laws/family-spec-variants.ts";
import { narrowSpace } from "../../src/properties/arbitraries/capabilities.ts";
import { caseArbitrary } from "../../src/properties/arbitraries/case.ts";
import { outsideCapabilities } from "../../src/sources/capabilities.ts";
import { CAPABILITIES as LLAMA_SERVER } from "../../src/adapter/llama-server/capabilities.ts";
import type { Capabilities } from "../../src/adapter/protocol.ts";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const NONE = { rmsEps: null, ropeTheta: null, controls: null, convKernel: null, originalMaxPositions: null };

describe("model spec variants", () => {
  it("are properties of their own, keyed by no law", () => {
    expect(dimensionProperties().map((property) => property.law)).toEqual([MODEL_SPEC_VARIANTS, FAMILY_SPEC_VARIANTS]);
  });

  it("a draw keeping every value is the preset; each drawn field moves the spec, which validates", () => {
    for (const name of ["tiny", "small-gqa", "swa", "hybrid-f64"]) {
      const preset = getPreset(name);
      expect(specVariant(preset, NONE)).toEqual(preset);
      for (const draw of fc.sample(specVariantArbitrary, { seed: 5, numRuns: 40 })) {
        const spec = specVariant(preset, draw);
        validateModelSpec(spec);
        if (draw.rmsEps !== null) expect(spec.rmsEps).not.toBe(preset.rmsEps);
        if (draw.controls !== null) expect([spec.bosId, spec.eosId, spec.preamble[0]]).not.toEqual([1, 2, 1]);
        if (draw.convKernel !== null && preset.recurrent) expect(spec.recurrent!.convKernel).not.toBe(4);
      }
    }
  });

  it("shrinks to the preset's own case", () => {
    const details = fc.check(
      fc.property(propertyArbitrary(propertyFor(FAMILY_SPEC_VARIANTS)!), () => false),
      { seed: 3, numRuns: 1 },
    );
    const [shrunk] = details.counterexample as [Case];
    expect(shrunk.model).toEqual({ preset: "swa" });
  });

  it("exports of specs differing only in BOS and EOS are cached under distinct names", () => {
    const preset = getPreset("tiny");
    const moved = specVariant(preset, { ...NONE, controls: { bosId: 3, eosId: 6 } });
    expect(exportStem("abc", preset)).toBe("abc");
    expect(exportStem("abc", moved)).not.toBe("abc");
    const root = mkdtempSync(join(tmpdir(), "spec-variants-"));
    try {
      const cache = new ModelCache(root);
      const [base] = fc.sample(propertyArbitrary(propertyFor(MODEL_SPEC_VARIANTS)!), { seed: 1, numRuns: 1 });
      const plain: Case = {
        ...base,
        model: { preset: "tiny" },
        draft: null,
        engine: { ...base.engine, mode: "target-only" },
      };
      const variant: Case = { ...plain, model: { spec: { ...moved, name: "tiny (variant)" } } };
      const a = cache.files(plain, ["gguf", "hf"]);
      const b = cache.files(variant, ["gguf", "hf"]);
      expect(b.gguf!.target).not.toBe(a.gguf!.target);
      expect(b.hf!.target).not.toBe(a.hf!.target);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("narrowed to an external engine, variant cases stay inside its capabilities (llama-server; an HF engine)", () => {
    const hf: Capabilities = { ...LLAMA_SERVER, modelFormats: ["hf"], modelFamilies: [], drafts: ["mirror"] };
    for (const declared of [LLAMA_SERVER, hf])
      for (const property of dimensionProperties()) {
        const narrowed = narrowSpace({ ...property.space, faults: [] }, declared);
        if (typeof narrowed === "string") continue; // hf: the families property is not run (no family declared)
        const cases = fc.sample(caseArbitrary(narrowed), { seed: 9, numRuns: 30 });
        expect(cases.some((testCase) => "spec" in testCase.model)).toBe(true);
        for (const testCase of cases) expect(outsideCapabilities(declared, testCase)).toBeUndefined();
      }
  });

  for (const name of [MODEL_SPEC_VARIANTS, FAMILY_SPEC_VARIANTS])
    it(`property '${name}': every law holds over 10 runs`, { timeout: 120_000 }, async () => {
      const run = await runLawProperty(propertyFor(name)!, { numRuns: 10, seed: 1, failureDir: false });
      expect(run.error).toBeUndefined();
      expect(run.failure, run.failure && describeFailure(run)).toBeUndefined();
      expect(run.stats.get("reference decode")?.passed ?? 0).toBeGreaterThan(0);
    });
});
