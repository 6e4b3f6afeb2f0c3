// Multi-layer (MTP-style) drafting: S mirror modules, each with its own pool. Full acceptance and every
// law, chunked and unchunked, page sizes 1 and 4, with graph replay and retracts; chunked prefill
// persists the same module rows as unchunked.
import { describe, expect, it } from "vitest";
import type { Case } from "../../src/case/case.ts";
import { defaultCase } from "../../src/case/default-case.ts";
import { runCase } from "../../src/engine/run-case.ts";
import { checkRun } from "../helpers/check-run.ts";
import { acceptanceStats } from "../../src/laws/mirror-acceptance.ts";
import type { Trace } from "../../src/trace/schema.ts";

function multiLayerCase(
  numSteps: number,
  chunkSize: number | null,
  pageSize: number,
  extra: Partial<Case["engine"]> = {},
): Case {
  return defaultCase({
    preset: "tiny",
    draft: "tapped-mirror",
    seed: 8,
    numRequests: 3,
    maxNewTokens: 12,
    engine: { numSteps, numDraftTokens: numSteps + 1, chunkSize, pageSize, multiLayer: true, ...extra },
  });
}

async function lawsOf(testCase: Case) {
  const targetOnly = await runCase({
    ...testCase,
    engine: { ...testCase.engine, mode: "target-only" },
    workload: { ...testCase.workload, retracts: [] },
  });
  const run = await runCase(testCase);
  return { run, laws: await checkRun(testCase, run, targetOnly) };
}

/** Persisted module rows: pool -> request -> position -> token. */
function moduleRows(trace: Trace): Map<string, number> {
  const rows = new Map<string, number>();
  for (const event of trace.events) {
    if (event.module === undefined || event.phase !== "draft-extend") continue;
    for (const row of event.rows) rows.set(`${event.pool}/${row.request}/${row.position}`, row.token);
  }
  return rows;
}

describe("multi-layer drafting", () => {
  for (const numSteps of [1, 2, 3, 4]) {
    it(`S=${numSteps}: full acceptance, every law, chunk 2/none, page 1/4, replay on/off`, async () => {
      for (const [chunkSize, pageSize, graphReplay] of [
        [null, 1, false],
        [2, 4, false],
        [3, 1, true],
      ] as const) {
        const testCase = multiLayerCase(numSteps, chunkSize, pageSize, { graphReplay });
        const { run, laws } = await lawsOf(testCase);
        const where = `chunk ${chunkSize} page ${pageSize} replay ${graphReplay}`;
        expect(
          laws.filter((law) => law.status === "fails"),
          where,
        ).toEqual([]);
        const stats = acceptanceStats(run.trace, numSteps);
        expect(stats.fullAcceptRounds, where).toBe(stats.uncutRounds);
        expect(
          new Set(run.trace.events.filter((event) => event.module !== undefined).map((event) => event.pool)).size,
        ).toBe(numSteps);
      }
    });
  }

  it("chunked prefill persists the same module rows as unchunked", async () => {
    const unchunked = await runCase(multiLayerCase(3, null, 1));
    for (const chunkSize of [1, 2, 5]) {
      const chunked = await runCase(multiLayerCase(3, chunkSize, 2));
      expect(moduleRows(chunked.trace)).toEqual(moduleRows(unchunked.trace));
    }
  });

  it("retracts re-prefill every module pool", async () => {
    const base = multiLayerCase(3, 2, 2);
    const testCase = {
      ...base,
      workload: {
        ...base.workload,
        retracts: [
          { request: 0, step: 4, beforeForward: 2 },
          { request: 1, step: 6, beforeForward: 0 },
          { request: 2, step: 7, beforeForward: 3 },
        ],
      },
    };
    const { run, laws } = await lawsOf(testCase);
    expect(run.trace.lifecycle?.filter((entry) => entry.kind === "retract").length).toBeGreaterThan(0);
    expect(laws.filter((law) => law.status === "fails")).toEqual([]);
    expect(run.internals?.slotsInUseAtEnd).toBe(0);
  });

  it("refuses prompts without the preamble and the EAGLE head", async () => {
    const base = multiLayerCase(3, null, 1);
    const badPrompt = {
      ...base,
      workload: { ...base.workload, requests: [{ ...base.workload.requests[0], prompt: [1, 5, 8, 9] }] },
    };
    await expect(runCase(badPrompt)).rejects.toThrow(
      /\/workload\/requests\/0\/prompt\/2: multi-layer mirror modules need prompts starting with the preamble/,
    );
    await expect(runCase({ ...base, draft: { ...base.draft!, kind: "eagle" } })).rejects.toThrow(/\/draft\/kind/);
  });
});
