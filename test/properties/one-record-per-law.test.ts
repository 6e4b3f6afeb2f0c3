// Issue 25: one failure record per failing law in a check, however many properties fail on the same bug (one
// planted bug wrote 45 records, 180 files, 3.9 MB: every failing property wrote one per failing law). Two
// properties that both fail on a planted fault write one record per failing law between them.
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { checkCommand } from "../../src/cli/check.ts";
import type { CheckSummary } from "../../src/report/summary.ts";
import { MIXED, propertyFor } from "../../src/properties/law-properties.ts";
import { runSuite } from "../../src/properties/suite.ts";
import { DRAFT_REFERENCE } from "../../src/laws/draft-reference.ts";

describe("failure records", () => {
  const dir = mkdtempSync(join(tmpdir(), "specconf-records-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("two properties failing on one fault: one record per failing law", async () => {
    const result = await runSuite({
      properties: [MIXED, propertyFor(DRAFT_REFERENCE)!],
      runs: 8,
      seed: 3,
      faults: ["chunked-tail-token"],
      shrinkSeconds: 2,
      failureDir: dir,
    });
    const failed = result.runs.filter((run) => run.failure);
    expect(failed.length).toBe(2);
    // Both shrunk failures share a failing law: without the rule it would have two records.
    const shared = failed[0].failure!.laws.filter((law) => failed[1].failure!.laws.includes(law));
    expect(shared.length).toBeGreaterThan(0);
    const records = readdirSync(dir).filter((name) => /\.seed\d+\.json$/.test(name));
    const laws = records.map((name) => name.split(".")[0]);
    expect(new Set(laws).size).toBe(laws.length);
    expect(laws.length).toBe(result.replays.size);
  });
});

describe("failure records over workers", () => {
  const dir = mkdtempSync(join(tmpdir(), "specconf-records-workers-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("check --workers 2: one record per failing law, as one process writes", { timeout: 600_000 }, async () => {
    let stdout = "";
    vi.spyOn(process.stdout, "write").mockImplementation((chunk) => ((stdout += String(chunk)), true));
    vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    let code: number;
    try {
      code = await checkCommand([
        ...["--property", "draft reference", "--property", "reference decode", "--property", "lossless"],
        ...["--fault", "chunked-tail-token", "--runs", "8", "--seed", "3", "--shrink-seconds", "2"],
        ...["--workers", "2", "--failures", dir, "--json"],
      ]);
    } finally {
      vi.restoreAllMocks();
    }
    expect(code).toBe(1);
    const failedLaws = (JSON.parse(stdout) as CheckSummary).laws.filter((law) => law.failed > 0);
    // The three properties each fail on the same laws: one record per law, not one per law and property.
    expect(failedLaws.length).toBeGreaterThan(1);
    const laws = readdirSync(dir)
      .filter((name) => /\.seed\d+\.json$/.test(name))
      .map((name) => name.split(".")[0]);
    expect(laws.length).toBe(failedLaws.length);
    expect(new Set(laws).size).toBe(laws.length);
  });
});
