// A real third-party engine: Hugging Face transformers (examples/hf_engine.py) running the exported
// checkpoints (the Llama target, the standalone draft, the EAGLE head with transformers' own
// LlamaDecoderLayer) produced these outputs; they validate against the golden files.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PROFILES } from "../../src/profiles/profiles.ts";
import { validate } from "../../src/validate/validate.ts";

const DIR = "test/export/fixtures/transformers";

describe("transformers outputs on the exported checkpoints", () => {
  for (const file of readdirSync(DIR).filter((name) => name.endsWith(".jsonl"))) {
    const suite = file.replace(/\.jsonl$/, "");
    it(`${suite}: every output check holds`, async () => {
      const cases = suite === "tiny-mirror" ? ["unchunked", "chunked-paged"] : undefined; // no trees in the example engine
      const report = await validate({
        goldenPath: `golden/${suite}.json`,
        outputsPath: join(DIR, file),
        profile: PROFILES.strict,
        cases,
      });
      const failing = report.requests.flatMap((request) =>
        request.checks.filter((check) => check.status === "fails").map((check) => check.violation?.message),
      );
      expect(failing).toEqual([]);
      expect(report.summary.holds).toBeGreaterThan(0);
      expect(report.exitCode).toBe(0);
    });
  }
});
