// The model-based suite can fail: with a fault on, the commands find it (pool integrity, a trace law, or
// outputs that disagree with the target-only model), without crashing the harness.
import { describe, expect, it } from "vitest";
import type { FaultName } from "../../src/case/faults.ts";
import { runModelBased } from "../../src/properties/commands/property.ts";

describe("model-based suite against faults", () => {
  const cases: [FaultName, RegExp][] = [
    ["leaked-rejected-slots", /slots|temporary/],
    ["cross-request-mask-leak", /positions|attends|output/],
    ["draft-position-early-increment", /positions|phase contracts/],
  ];
  for (const [fault, pattern] of cases) {
    it(`${fault} is found`, { timeout: 120_000 }, async () => {
      const run = await runModelBased({ seed: 7, numRuns: 60, faults: [fault], failureDir: false });
      expect(run.details.failed, `${fault} survived ${run.details.numRuns} runs`).toBe(true);
      expect(run.message).toMatch(pattern);
    });
  }

  it("passes with no fault (same seed)", { timeout: 120_000 }, async () => {
    const run = await runModelBased({ seed: 7, numRuns: 30, failureDir: false });
    expect(run.message).toBeUndefined();
  });
});
