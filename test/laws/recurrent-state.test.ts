// The recurrent state law on the reference engine's own traces of the hybrid family: every row of every path
// (prefill chunks, draft extend, tree draft decode, verify, target decode) says it started from the state of
// exactly its request's tokens before it; the law fails, naming the row, on a state of another length or of
// another request; a trace without the field is not checkable. With the prefix cache, a hit restores another
// request's checkpoint of the same tokens, which the law accepts, and a checkpoint of other tokens fails. And the
// configurations the engine does not run with recurrent state are refused by field.
import { describe, expect, it } from "vitest";
import { defaultCase } from "../../src/case/default-case.ts";
import { runCase } from "../../src/engine/run-case.ts";
import { ConfigError } from "../../src/case/engine-config.ts";
import { checkCaseConsistency } from "../../src/case/consistency.ts";
import { checkRecurrentState } from "../../src/laws/recurrent-state.ts";
import { checkLaws } from "../../src/check/runner.ts";
import { referenceSource } from "../../src/sources/reference.ts";
import { getPreset } from "../../src/model/presets.ts";
import type { Case } from "../../src/case/case.ts";
import type { Trace } from "../../src/trace/schema.ts";

describe("recurrent state law", async () => {
  const testCase = defaultCase({
    preset: "hybrid",
    draft: "noisy-mirror",
    seed: 3,
    numRequests: 2,
    maxNewTokens: 10,
    engine: { numSteps: 3, topk: 2, numDraftTokens: 5, chunkSize: 4 },
  });
  const run = await runCase(testCase);
  const targetOnly = await runCase({ ...testCase, engine: { ...testCase.engine, mode: "target-only" } });
  const copy = (): Trace => structuredClone(run.trace);
  /** The first verify root after a round that rejected a draft: where a wrong commit would show. */
  const rootAfterRejection = (trace: Trace) => {
    const event = trace.events.filter((e) => e.phase === "verify")[1];
    return { event, row: event.rows[0] };
  };

  it("holds on every path, each row reading its own request's state of its position's length", () => {
    for (const trace of [run.trace, targetOnly.trace]) {
      const result = checkRecurrentState(trace);
      expect(result.status, result.violation?.message).toBe("holds");
      expect(result.checked).toBeGreaterThan(0);
    }
    const phases = new Set(run.trace.events.filter((e) => e.rows.some((row) => row.recurrent)).map((e) => e.phase));
    expect([...phases].sort()).toEqual(["draft-decode", "draft-extend", "prefill", "verify"]);
    expect(targetOnly.trace.events.some((e) => e.phase === "decode" && e.rows[0].recurrent)).toBe(true);
    // Rounds rejected drafts (the noisy mirror), so some verify committed a state short of the block.
    const rejected = run.trace.events.some((e) => e.verify?.some((v) => v.acceptLen < testCase.engine.numSteps + 1));
    expect(rejected).toBe(true);
  });

  it("fails on a state of another length, naming the row", () => {
    const trace = copy();
    const { event, row } = rootAfterRejection(trace);
    row.recurrent = { request: row.request, length: row.position + 2 };
    const result = checkRecurrentState(trace);
    expect(result.status).toBe("fails");
    expect(result.violation).toMatchObject({
      event: event.index,
      index: 0,
      expected: row.position,
      got: row.position + 2,
    });
  });

  it("fails on another request's state of the right length", () => {
    const trace = copy();
    const { row } = rootAfterRejection(trace);
    row.recurrent = { request: row.request + 1, length: row.position };
    const result = checkRecurrentState(trace);
    expect(result.status).toBe("fails");
    expect(result.violation?.message).toContain(`of request ${row.request + 1}`);
  });

  it("is not checkable without the field", () => {
    const trace = copy();
    for (const event of trace.events) for (const row of event.rows) delete row.recurrent;
    expect(checkRecurrentState(trace).status).toBe("not-checkable");
  });
});

describe("hybrid configurations the engine does not run are refused by field", () => {
  const spec = getPreset("hybrid");
  const fieldOf = (testCase: Case): string | undefined => {
    try {
      checkCaseConsistency(testCase, spec);
      return undefined;
    } catch (error) {
      if (error instanceof ConfigError) return error.field;
      throw error;
    }
  };
  const base = (engine: object, draft: "mirror" | "eagle3-mirror" = "mirror") =>
    defaultCase({ preset: "hybrid", draft, seed: 1, numRequests: 1, maxNewTokens: 4, engine });
  it("runs chains, trees, overlap, retracts and the prefix cache; refuses graph replay, modules, the EAGLE-3 mirror", () => {
    expect(fieldOf(base({}))).toBeUndefined();
    expect(fieldOf(base({ topk: 2, numDraftTokens: 5 }))).toBeUndefined();
    expect(fieldOf(base({ overlap: true }))).toBeUndefined();
    expect(fieldOf(base({ prefixCache: true }))).toBeUndefined();
    expect(fieldOf(base({ graphReplay: true }))).toBe("/engine/graphReplay");
    expect(fieldOf(base({ multiLayer: true }))).toBe("/engine/multiLayer");
    expect(fieldOf(base({}, "eagle3-mirror"))).toBe("/draft/kind");
  });
});

describe("the prefix cache on hybrid models restores the recurrent state at the hit's end", async () => {
  // Later arrivals share the first request's preamble; it finishes first, so they hit its cached pages.
  const base = defaultCase({
    preset: "hybrid",
    draft: "mirror",
    seed: 5,
    numRequests: 3,
    maxNewTokens: 12,
    engine: { numSteps: 3, numDraftTokens: 4, chunkSize: 3, pageSize: 2, prefixCache: true },
  });
  const testCase: Case = {
    ...base,
    workload: {
      ...base.workload,
      requests: base.workload.requests.map((request, i) => ({ ...request, arrivalStep: [0, 4, 8][i] })),
    },
  };
  const run = await runCase(testCase);
  const hits = (run.trace.lifecycle ?? []).filter((entry) => entry.kind === "prefix-hit");
  const donorReads = run.trace.events.flatMap((event) =>
    event.rows.filter((row) => row.recurrent && row.recurrent.request !== row.request),
  );

  it("hits in the target and draft pools, and the first rows after a hit read the donor's checkpoint", () => {
    expect(hits.length).toBeGreaterThan(0);
    for (const hit of hits) for (const pool of hit.pools ?? []) expect(pool.length).toBeGreaterThan(0);
    expect(donorReads.length).toBeGreaterThan(0);
    for (const row of donorReads) expect(row.recurrent!.length).toBe(row.position);
  });

  it("every law holds, the prefix-cache invariance twin included", async () => {
    const check = await checkLaws(referenceSource(), testCase);
    const failing = check.results.filter((law) => law.status === "fails");
    expect(failing.map((law) => `${law.law}: ${law.violation?.message}`)).toEqual([]);
    const checked = (name: string) => check.results.find((law) => law.law === name)?.status;
    expect(checked("recurrent state")).toBe("holds");
    expect(checked("prefix-cache invariance")).toBe("holds");
  });

  it("fails when the donor's tokens differ from the reader's", () => {
    const trace = structuredClone(run.trace);
    const row = trace.events
      .flatMap((event) => event.rows)
      .find(
        (candidate) =>
          candidate === candidate && candidate.recurrent && candidate.recurrent.request !== candidate.request,
      )!;
    const donor = trace.requests!.find((request) => request.id === row.recurrent!.request)!;
    donor.prompt[0] = (donor.prompt[0] + 1) % 256;
    const result = checkRecurrentState(trace);
    expect(result.status).toBe("fails");
    expect(result.violation?.message).toContain(`of request ${donor.id}`);
  });
});
