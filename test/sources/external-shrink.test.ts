// Generated cases through an external engine: a crash on one case is a failing case (never exit 2),
// shrunk through the engine (restarted after each crash) to the smallest case that still crashes it; a
// fault behind the protocol fails a law and shrinks small; and the shrunk case replays on the engine.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { narrowSpace } from "../../src/properties/arbitraries/capabilities.ts";
import { caseArbitrary } from "../../src/properties/arbitraries/case.ts";
import { MIXED } from "../../src/properties/law-properties.ts";
import { lawProperty, runLawProperty } from "../../src/properties/law-property.ts";
import { loadKills } from "../../src/failures/kills.ts";
import { RUNS_TO_COMPLETION } from "../../src/check/runner.ts";
import { ExternalSource } from "../../src/sources/external.ts";

const KILLS = loadKills().kills;
const dir = mkdtempSync(join(tmpdir(), "specconf-external-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("generated cases through an external engine", () => {
  it(
    "a crash only above 5 prompt tokens with topk > 1 shrinks to exactly that corner",
    { timeout: 120_000 },
    async () => {
      const command = "node test/fixtures/crash-corner-engine.mjs";
      const source = await ExternalSource.start(command, { timeoutMs: 10_000 });
      try {
        const property = lawProperty(RUNS_TO_COMPLETION, "the crash corner", {
          presets: ["tiny", "tiny-f64"],
          topks: [1, 2, 4],
          steps: { min: 1, max: 3 },
          requests: { min: 1, max: 3 },
          suffix: { min: 0, max: 8 },
        });
        const narrowed = narrowSpace({ ...property.space, faults: [] }, source.capabilities);
        if (typeof narrowed === "string") throw new Error(narrowed);
        const run = await runLawProperty(property, {
          numRuns: 100,
          seed: 11,
          laws: new Set(), // only whether each case runs to completion
          source,
          arbitrary: caseArbitrary(narrowed),
          engine: { command, name: source.name },
          failureDir: dir,
          shrinkSeconds: 90,
        });
        expect(run.failure, "the crash corner was not found").toBeDefined();
        const shrunk = run.failure!.testCase;
        expect(run.failure!.laws).toEqual([RUNS_TO_COMPLETION]);
        expect(shrunk.engine.topk).toBe(2);
        expect(shrunk.workload.requests).toHaveLength(1);
        expect(shrunk.workload.requests[0].prompt).toHaveLength(6);
        expect(source.restarts).toBeGreaterThan(0);
        const record = JSON.parse(readFileSync(run.failure!.file!, "utf8"));
        expect(record.engine).toEqual({ command, name: "crash-corner 1" });
        expect(record.violation.message).toMatch(/engine exited \(code 139\).*segfault/);
        expect(run.failure!.replay).toContain(`--engine "${command}"`);
      } finally {
        await source.close();
      }
    },
  );
});

// Three faults behind the protocol (the reference adapter with a fault switched on): found on generated
// cases and shrunk through the engine as small as in-process (<= 2 requests, <= 12 prompt tokens), at the
// seed of the fault's checked-in kill (src/properties/kills.json): shrinking keeps the laws the first failing
// case failed, so its size depends on the seed, and the kill's seed is the one `mutants` proved small.
const FAULTS_THROUGH_ENGINE = ["chunked-tail-token", "phase-confusion", "bonus-stride"] as const;

describe("faults behind the protocol shrink through the engine", () => {
  for (const fault of FAULTS_THROUGH_ENGINE) {
    it(`${fault}`, { timeout: 180_000 }, async () => {
      const command = `node bin/specconf.js adapter --fault ${fault}`;
      const kill = KILLS.find((candidate) => candidate.fault === fault)!;
      const source = await ExternalSource.start(command, { timeoutMs: 30_000 });
      try {
        const narrowed = narrowSpace({ ...MIXED.space, faults: [] }, source.capabilities);
        if (typeof narrowed === "string") throw new Error(narrowed);
        const run = await runLawProperty(MIXED, {
          numRuns: 30,
          seed: kill.seed,
          source,
          arbitrary: caseArbitrary(narrowed),
          engine: { command, name: source.name },
          failureDir: dir,
          shrinkSeconds: 60,
        });
        expect(run.failure, `${fault} was not found through the engine`).toBeDefined();
        const requests = run.failure!.testCase.workload.requests;
        expect(requests.length).toBeLessThanOrEqual(2);
        expect(requests.reduce((sum, request) => sum + request.prompt.length, 0)).toBeLessThanOrEqual(12);
        expect(run.failure!.laws).not.toContain(RUNS_TO_COMPLETION);
        expect(run.failure!.laws).toContain(kill.law);
      } finally {
        await source.close();
      }
    });
  }
});
