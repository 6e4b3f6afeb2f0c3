// A target-only case gets its target's files whatever its draft kind: the run never loads the draft, and an
// engine that declares no draft kinds is sent target-only cases carrying one of the generator's kinds. Before,
// a kind the format cannot carry (noisy-mirror in HF) left the case with no files at all, and the engine failed
// the run ("specconf sent no hf files"; found running issue 36's installed-package adapter).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { defaultCase } from "../../src/case/default-case.ts";
import { ModelCache } from "../../src/sources/model-cache.ts";

const dir = mkdtempSync(join(tmpdir(), "specconf-model-cache-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const caseOf = (mode: "target-only" | "speculative") =>
  defaultCase({ preset: "tiny", draft: "noisy-mirror", seed: 1, numRequests: 1, maxNewTokens: 4, engine: { mode } });

describe("model files of a target-only case", () => {
  it("carry the target even when the format cannot carry the draft kind; a speculative case gets none", () => {
    const cache = new ModelCache(dir);
    const targetOnly = cache.files(caseOf("target-only"), ["hf"]);
    expect(targetOnly.hf?.target).toBeDefined();
    expect(targetOnly.hf?.draft).toBeUndefined();
    expect(cache.files(caseOf("speculative"), ["hf"]).hf).toBeUndefined();
  });
});
