// llama.cpp under `specconf check --engine` in CI: >= 100 generated cases within its declared capabilities,
// every law it can show applied, its findings pinned (docs/findings/llama-cpp.pins.json): each pinned law
// must still fail on this version (else the finding is stale and this turns red), and no other law may fail.
import { describe, expect, it } from "vitest";
import { loadPins } from "../../../src/failures/pins.ts";
import { checkPinnedEngine } from "../../helpers/pinned-engine-check.ts";

const COMMAND = "node bin/specconf.js engine llama-cpp";

describe("llama.cpp: generated cases through the protocol, findings pinned", () => {
  it(">= 100 cases; only the pinned laws fail, and each of them does", { timeout: 300_000 }, async () => {
    const pins = loadPins("docs/findings/llama-cpp.pins.json").laws;
    const suite = await checkPinnedEngine(COMMAND, pins, { runs: 13, timeoutMs: 60_000 });
    for (const law of ["reference decode", "lossless", "batch invariance"]) {
      const stats = suite.stats.get(law)!;
      expect(stats.failed, law).toBe(0);
      expect(stats.passed, law).toBeGreaterThan(20);
    }
  });
});
