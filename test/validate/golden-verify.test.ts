// Every checked-in golden file: the reference engine still matches it (golden verify), the suite
// definitions and the files agree, and tests never modify a golden file.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadGoldenFile } from "../../src/golden/load.ts";
import { GOLDEN_SUITES } from "../../src/golden/suites.ts";
import { verifyGolden } from "../../src/validate/golden-verify.ts";
import { goldenText } from "../../src/golden/format.ts";

const DIR = "golden";
const files = readdirSync(DIR)
  .filter((name) => name.endsWith(".json"))
  .sort()
  .map((name) => join(DIR, name));

function fingerprint(path: string): string {
  return `${createHash("sha256").update(readFileSync(path)).digest("hex")}:${statSync(path).mtimeMs}`;
}
const before = new Map(files.map((file) => [file, fingerprint(file)]));

describe("golden files", () => {
  afterAll(() => {
    for (const file of files) expect(fingerprint(file), `${file} was modified by a test`).toBe(before.get(file));
  });

  it("one file per suite definition, named after it", () => {
    expect(files).toEqual(GOLDEN_SUITES.map((suite) => join(DIR, `${suite.suite}.json`)).sort());
  });

  for (const file of files) {
    it(`${file}: the reference engine matches it (golden verify)`, async () => {
      const golden = loadGoldenFile(file);
      // Written by `golden update` in the canonical format (a hand edit would show here).
      expect(readFileSync(file, "utf8")).toBe(goldenText(golden));
      const result = await verifyGolden(golden, file);
      const failing = [
        ...result.report.requests.flatMap((request) => request.checks),
        ...result.report.traces.flatMap((trace) => trace.laws),
      ].filter((law) => law.status === "fails");
      expect(failing.map((law) => law.violation?.message)).toEqual([]);
      expect(result.drift).toEqual([]);
      expect(result.ok).toBe(true);
      // Margins clear epsilon (a golden file full of near-ties would be fragile).
      expect(golden.stats.minMargin).toBeGreaterThan(10 * golden.epsilon.target);
    });
  }
});
