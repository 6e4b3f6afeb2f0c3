// The validation layer's bounds are real bounds: a generated case whose pool has exactly the slots
// requiredPoolSlots asks for runs to the end (no pool exhaustion) within its step bound, also with
// retracts and larger workloads than the property suites use; and the README's limits table states the
// limits the code applies.
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DEFAULT_LIMITS, FIXED_LIMITS, minimumPoolSlots, requiredPoolSlots, stepBound } from "../../src/case/limits.ts";
import { preflightCase } from "../../src/case/preflight.ts";
import { runCase } from "../../src/engine/run-case.ts";
import { caseArbitrary } from "../../src/properties/arbitraries/case.ts";
import { space } from "../../src/properties/arbitraries/space.ts";

const WIDE = space({
  requests: { min: 1, max: 4 },
  maxNewTokens: { min: 1, max: 24 },
  retracts: { min: 0, max: 2 },
  maxAborts: 2,
});

describe("limits", () => {
  it("a pool of exactly requiredPoolSlots, or of minimumPoolSlots, runs every generated case to the end, within stepBound", async () => {
    await fc.assert(
      fc.asyncProperty(caseArbitrary(WIDE), fc.boolean(), async (generated, minimum) => {
        const poolSlots = minimum ? minimumPoolSlots(generated) : requiredPoolSlots(generated);
        const testCase = { ...generated, engine: { ...generated.engine, poolSlots } };
        preflightCase(testCase);
        const result = await runCase(testCase, { trace: false });
        expect(result.internals!.steps).toBeLessThanOrEqual(stepBound(testCase));
        expect(result.internals!.slotsInUseAtEnd).toBe(0);
      }),
      { numRuns: 60 },
    );
  });

  it("the README's limits table states the limits the code applies", () => {
    const readme = readFileSync("README.md", "utf8");
    const row = (flag: string) => readme.split("\n").find((line) => line.startsWith(`| ${flag} `)) ?? "";
    expect(row("requests per case")).toContain(`${DEFAULT_LIMITS.maxRequests}`);
    expect(row("requests per case")).toContain("`--max-requests`");
    expect(row("prompt + new tokens per case")).toContain(`${DEFAULT_LIMITS.maxTotalTokens.toLocaleString("en-US")}`);
    expect(row("prompt + new tokens per case")).toContain("`--max-total-tokens`");
    expect(row("model parameters")).toContain(`${DEFAULT_LIMITS.maxParameters.toLocaleString("en-US")}`);
    expect(row("model parameters")).toContain("`--max-parameters`");
    expect(row("draft steps S")).toContain(`${FIXED_LIMITS.maxDraftSteps}`);
    expect(row("candidates per node K")).toContain(`${FIXED_LIMITS.maxTopk}`);
    expect(row("arrival, abort, retract steps")).toContain(`${FIXED_LIMITS.maxEventStep.toLocaleString("en-US")}`);
  });
});
