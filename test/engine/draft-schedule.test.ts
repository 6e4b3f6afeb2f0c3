// Speculation schedules across a retract (issue 28, slice 4): a request resumed while its speculation is off
// re-extends its draft KV only as far as it reached at the retract; the positions verified since wait for the
// catch-up again, so a request that finishes while off holds the same draft KV with or without the retract.
// Found by the context limit property (seed 3): the resume had extended them all (2 rows more).
import { describe, expect, it } from "vitest";
import type { Case } from "../../src/case/case.ts";
import { defaultEngineConfig } from "../../src/case/engine-config.ts";
import { runCase } from "../../src/engine/run-case.ts";
import { defaultDraftSpec } from "../../src/model/spec.ts";
import { checkLaws } from "../../src/check/runner.ts";
import { referenceSource } from "../../src/sources/reference.ts";

const SCHEDULED: Case = {
  formatVersion: 1,
  model: { preset: "tiny" },
  draft: defaultDraftSpec("mirror"),
  engine: defaultEngineConfig({ numSteps: 1 }),
  workload: {
    requests: [
      {
        id: 1,
        prompt: [1, 5, 9, 13, 17, 4, 4, 4, 4],
        maxNewTokens: 6,
        arrivalStep: 0,
        draftSchedule: [1, 0, 0, 0, 1, 1],
      },
    ],
    aborts: [],
    retracts: [{ request: 1, step: 4, beforeForward: 0 }],
  },
};

function draftAnchors(trace: Awaited<ReturnType<typeof runCase>>["trace"]): number[] {
  return trace.events
    .filter((event) => event.phase === "draft-extend")
    .flatMap((event) => event.rows.map((row) => row.position))
    .sort((a, b) => a - b);
}

describe("speculation schedules across a retract", () => {
  it("the resumed request's draft KV ends where the run without the retract ends it", async () => {
    const retracted = await runCase(SCHEDULED);
    const plain = await runCase({ ...SCHEDULED, workload: { ...SCHEDULED.workload, retracts: [] } });
    expect(retracted.trace.lifecycle?.some((entry) => entry.kind === "retract")).toBe(true);
    expect(new Set(draftAnchors(retracted.trace))).toEqual(new Set(draftAnchors(plain.trace)));
    const check = await checkLaws(referenceSource(), SCHEDULED);
    expect(check.results.filter((result) => result.status === "fails")).toEqual([]);
  });
});
