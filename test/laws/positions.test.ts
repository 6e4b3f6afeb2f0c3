// Positions' written-before rule (issue 25): on the reference engine's trace every attended persisted position
// was written earlier; the newcomer's third-party trace (rows that do not say which writes are temporary: draft
// anchors 0-8 written, a row at 10 attending [0, 9]) fails where the contiguity check alone could not see it;
// and the skipped-draft-position fault fails on the position its extend skipped.
import { describe, expect, it } from "vitest";
import { defaultCase } from "../../src/case/default-case.ts";
import { runCase } from "../../src/engine/run-case.ts";
import { checkPositions } from "../../src/laws/positions.ts";
import type { Trace } from "../../src/trace/schema.ts";

describe("positions: attended persisted positions were written", async () => {
  const testCase = defaultCase({
    preset: "tiny",
    draft: "mirror",
    seed: 5,
    numRequests: 1,
    maxNewTokens: 8,
    engine: { numSteps: 2, numDraftTokens: 3 },
  });
  const { trace } = await runCase(testCase);

  it("holds on the reference engine's trace", () => {
    expect(checkPositions(trace).status).toBe("holds");
  });

  it("a third-party trace without temporary marks: a skipped draft anchor attended later fails", () => {
    const thirdParty: Trace = structuredClone(trace);
    for (const event of thirdParty.events) for (const row of event.rows) delete row.temporary;
    // Still holds once the marks are gone (the engine wrote everything it attends).
    expect(checkPositions(thirdParty).status).toBe("holds");
    // Drop the draft extend's row at the last persisted anchor before a later draft row attends across it.
    const extend = thirdParty.events.find((event) => event.phase === "draft-extend")!;
    const skipped = extend.rows[extend.rows.length - 1].position;
    extend.rows.pop();
    const result = checkPositions(thirdParty);
    expect(result.status).toBe("fails");
    expect(result.violation?.message).toMatch(
      new RegExp(`attends draft position ${skipped}, which no earlier forward wrote`),
    );
  });

  it("the skipped-draft-position fault fails on the position it skipped", async () => {
    const faulty = { ...testCase, engine: { ...testCase.engine, faults: ["skipped-draft-position" as const] } };
    const result = checkPositions((await runCase(faulty)).trace);
    expect(result.status).toBe("fails");
  });
});
