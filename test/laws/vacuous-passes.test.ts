// Issue 25, no vacuous passes: a law whose dimension the run does not have is not checkable, never "holds".
// The newcomer's llama.cpp run (no overlap scheduling, chains only) counted placeholder resolution and bonus
// stride as passed 100 times each, then listed both as never exercised. On the same kind of run (one request,
// a chain, no overlap) both are now not checkable with the reason; with overlap and a batch of trees they hold.
import { describe, expect, it } from "vitest";
import { defaultCase } from "../../src/case/default-case.ts";
import { runCase } from "../../src/engine/run-case.ts";
import { checkBonusStride } from "../../src/laws/bonus-stride.ts";
import { checkPlaceholderResolution } from "../../src/laws/placeholder-resolution.ts";

const chainCase = (engine: object, numRequests = 1) =>
  defaultCase({
    preset: "tiny",
    draft: "mirror",
    seed: 5,
    numRequests,
    maxNewTokens: 8,
    engine: { numSteps: 2, numDraftTokens: 3, ...engine },
  });

describe("no vacuous passes", () => {
  it("a chain without overlap: bonus stride and placeholder resolution are not checkable, saying why", async () => {
    const { trace } = await runCase(chainCase({}, 2));
    const stride = checkBonusStride(trace);
    expect(stride.status).toBe("not-checkable");
    expect(stride.reason).toMatch(/no tree, no ragged drafts/);
    const placeholders = checkPlaceholderResolution(trace);
    expect(placeholders.status).toBe("not-checkable");
    expect(placeholders.reason).toMatch(/no overlap scheduling/);
  });

  it("a batch of trees with overlap: both are checked and hold", async () => {
    const { trace } = await runCase(chainCase({ topk: 2, numDraftTokens: 4, overlap: true }, 3));
    const stride = checkBonusStride(trace);
    expect(stride.status).toBe("holds");
    expect(stride.checked).toBeGreaterThan(0);
    const placeholders = checkPlaceholderResolution(trace);
    expect(placeholders.status).toBe("holds");
    expect(placeholders.checked).toBeGreaterThan(0);
  });

  it("a negative token still fails placeholder resolution without overlap", async () => {
    const trace = structuredClone((await runCase(chainCase({}))).trace);
    trace.events[1].rows[0].token = -1;
    expect(checkPlaceholderResolution(trace).status).toBe("fails");
  });
});
