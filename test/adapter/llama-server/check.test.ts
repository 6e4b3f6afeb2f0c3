// llama-server under `specconf check --engine` in CI: the server is built from the shipped llama.cpp source (or
// reused: .ci/run builds it first, once per llama.cpp commit), then generated cases within its declared
// capabilities run through it, every case with a time budget (--case-timeout), every law it can show applied,
// its findings pinned (docs/findings/llama-server.pins.json): each pinned law must still fail on this version
// (else the finding is stale and this turns red), and no other law may fail.
import { existsSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { buildBinary } from "../../../src/adapter/llama-server/binary.ts";
import { loadPins } from "../../../src/failures/pins.ts";
import { checkPinnedEngine } from "../../helpers/pinned-engine-check.ts";

const PINS = "docs/findings/llama-server.pins.json";
/** Seconds one case may take on the server before it is killed (the case then fails, as any crash would). */
const CASE_BUDGET_S = 30;
const COMMAND = `node bin/specconf.js engine llama-server --case-timeout ${CASE_BUDGET_S}`;

describe("llama-server: generated cases through the protocol, findings pinned", () => {
  beforeAll(async () => {
    // Reuses the cached build (instant); builds it on a machine that never did (minutes).
    await buildBinary({ log: (text) => process.stderr.write(text) });
  }, 1_800_000);

  it(">= 100 cases; only the pinned laws fail, and each of them does", { timeout: 600_000 }, async () => {
    const pins = existsSync(PINS) ? loadPins(PINS).laws : new Map<string, string>();
    // ~25 laws' properties reach this engine: 7 runs each make >= 100 cases (192 at seed 1, about 100 s).
    const suite = await checkPinnedEngine(COMMAND, pins, { runs: 7, timeoutMs: (CASE_BUDGET_S + 30) * 1000 });
    // Each checked on enough cases to mean something (mirror drafts are one kind among five: fewer cases).
    const floors: Record<string, number> = {
      "reference decode": 50,
      lossless: 50,
      "acceptance correctness": 20,
      "mirror acceptance": 3,
      // The request dimensions mapped to the server's own fields (grammar, slot context, slots, stop strings).
      "grammar acceptance": 5,
      "context limit": 0,
      "slot history": 0,
      "usage counts": 5,
    };
    for (const [law, floor] of Object.entries(floors)) {
      const stats = suite.stats.get(law)!;
      expect(stats.failed, law).toBe(0);
      expect(stats.passed, law).toBeGreaterThan(floor);
    }
  });
});
