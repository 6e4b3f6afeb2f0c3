// llama.cpp under `specconf check --engine` in CI: >= 100 generated cases within its declared capabilities,
// every law it can show applied, its findings pinned (docs/findings/llama-cpp.pins.json): each pinned law
// must still fail on this version (else the finding is stale and this turns red), and no other law may fail.
import { describe, expect, it } from "vitest";
import { narrowSpace } from "../../../src/properties/arbitraries/capabilities.ts";
import { LAW_PROPERTIES } from "../../../src/properties/law-properties.ts";
import { runSuite } from "../../../src/properties/suite.ts";
import { loadPins } from "../../../src/failures/pins.ts";
import { ExternalSource } from "../../../src/sources/external.ts";

const COMMAND = "node bin/specconf.js engine llama-cpp";

describe("llama.cpp: generated cases through the protocol, findings pinned", () => {
  it(">= 100 cases; only the pinned laws fail, and each of them does", { timeout: 300_000 }, async () => {
    const pins = loadPins("docs/findings/llama-cpp.pins.json").laws;
    const source = await ExternalSource.start(COMMAND, { timeoutMs: 60_000 });
    try {
      const suite = await runSuite({
        properties: LAW_PROPERTIES,
        runs: 13,
        seed: 1,
        source,
        engine: { command: COMMAND, name: source.name },
        narrow: (space) => narrowSpace(space, source.capabilities),
        pinned: new Set(pins.keys()),
        failureDir: false,
      });
      const runs = suite.runs.reduce((sum, run) => sum + run.runs, 0);
      expect(runs).toBeGreaterThanOrEqual(100);
      expect(suite.runs.filter((run) => run.failure).map((run) => run.failure!.laws)).toEqual([]);
      for (const law of pins.keys())
        expect(suite.stats.get(law)?.failed ?? 0, `${law} no longer fails`).toBeGreaterThan(0);
      for (const law of ["reference decode", "lossless", "batch invariance"]) {
        const stats = suite.stats.get(law)!;
        expect(stats.failed, law).toBe(0);
        expect(stats.passed, law).toBeGreaterThan(20);
      }
    } finally {
      await source.close();
    }
  });
});
