// Every fault's checked-in kill (src/properties/kills.json) replays: the property it was found
// with, at its seed and counterexample path, fails the recorded law with the fault on, and the same
// case holds every law with the fault off. Regenerate with `npx specconf mutants --update-kills`.
import { describe, expect, it } from "vitest";
import { FAULT_NAMES, type FaultName } from "../../src/case/faults.ts";
import { checkLaws, failures } from "../../src/check/runner.ts";
import { referenceSource } from "../../src/sources/reference.ts";
import { loadKills } from "../../src/failures/kills.ts";
import { MIXED, propertyFor } from "../../src/properties/law-properties.ts";
import { runLawProperty } from "../../src/properties/law-property.ts";

const kills = loadKills();
const SCHEDULING_FAULTS = new Set([
  "stale-placeholder-after-gap",
  "future-ring-wrap",
  "prefix-hit-uninitialized-draft-kv",
  "prefix-draft-kv-unaligned",
  "padded-seq-lens-sum",
  "stale-padding-slot",
  "zero-draft-stale-row",
]);
const REGENERATE = "regenerate with: npx specconf mutants --update-kills";

describe("checked-in kills", () => {
  it("every fault has a kill, shrunk to at most 2 requests and 12 prompt tokens (scheduling faults: 16)", () => {
    const killed = new Set(kills.kills.map((kill) => kill.fault));
    expect(
      FAULT_NAMES.filter((fault) => !killed.has(fault)),
      `faults without a checked-in kill (${REGENERATE})`,
    ).toEqual([]);
    for (const kill of kills.kills) {
      expect(kill.requests, kill.fault).toBeLessThanOrEqual(2);
      // Issue 13's bound for the scheduling faults: stale padding slots need an earlier, larger batch.
      expect(kill.promptTokens, kill.fault).toBeLessThanOrEqual(SCHEDULING_FAULTS.has(kill.fault) ? 16 : 12);
    }
  });

  for (const kill of kills.kills) {
    it(
      `${kill.fault}: ${kill.law} fails at seed ${kill.seed}, path ${kill.path}; every law holds with the fault off`,
      { timeout: 30_000 },
      async () => {
        const property = kill.property === MIXED.law ? MIXED : propertyFor(kill.property);
        expect(property, `unknown property '${kill.property}' (${REGENERATE})`).toBeDefined();
        const run = await runLawProperty(property!, {
          numRuns: 1,
          seed: kill.seed,
          path: kill.path,
          faults: [kill.fault as FaultName],
          failureDir: false,
        });
        expect(run.failure, `the seed/path no longer fails (${REGENERATE})`).toBeDefined();
        expect(
          run.failure!.testCase,
          `the seed/path now generates another case: the arbitraries changed (${REGENERATE})`,
        ).toEqual(kill.case);
        expect(run.failure!.laws).toContain(kill.law);

        const clean = { ...kill.case, engine: { ...kill.case.engine, faults: [] } };
        const check = await checkLaws(referenceSource(), clean);
        expect(failures(check).map((law) => `${law.law}: ${law.violation?.message}`)).toEqual([]);
      },
    );
  }
});
