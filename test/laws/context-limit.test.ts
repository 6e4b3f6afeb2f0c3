// The context boundary (issue 28, item 5): the engine drafts only what fits before its contexts and ends each
// request as target-only decoding does; law "context limit" holds on its traces and fails on rows past a
// context (target position, draft input position, attended position); the case checks refuse what the engine
// cannot run there, with the JSON path.
import { describe, expect, it } from "vitest";
import type { Case } from "../../src/case/case.ts";
import { checkCaseConsistency } from "../../src/case/consistency.ts";
import { defaultEngineConfig } from "../../src/case/engine-config.ts";
import { runCase } from "../../src/engine/run-case.ts";
import { checkContextLimit } from "../../src/laws/context-limit.ts";
import { readRounds } from "../../src/laws/rounds.ts";
import { getPreset } from "../../src/model/presets.ts";
import { defaultDraftSpec, type DraftKind } from "../../src/model/spec.ts";
import type { Trace } from "../../src/trace/schema.ts";
import { checkLaws } from "../../src/check/runner.ts";
import { referenceSource } from "../../src/sources/reference.ts";

const PROMPT = [1, 5, 9, 13, 17, 3];

function boundaryCase(draft: DraftKind, engine: Partial<Case["engine"]>, maxNewTokens = 10): Case {
  return {
    formatVersion: 1,
    model: { preset: "tiny" },
    draft: defaultDraftSpec(draft),
    engine: defaultEngineConfig({ numSteps: 3, contextLength: 16, ...engine }),
    workload: {
      requests: [
        { id: 0, prompt: PROMPT, maxNewTokens, arrivalStep: 0 },
        { id: 1, prompt: [...PROMPT, 4, 4], maxNewTokens: maxNewTokens - 2, arrivalStep: 0 },
      ],
      aborts: [],
    },
  };
}

describe("the engine at the context boundary", () => {
  it("caps each round's drafts at the room the contexts leave and ends as target-only decoding does", async () => {
    const testCase = boundaryCase("mirror", { draftContextLength: 12 });
    const run = await runCase(testCase);
    const targetOnly = await runCase({ ...testCase, engine: { ...testCase.engine, mode: "target-only" } });
    expect(run.outputs.map((output) => output.tokens)).toEqual(targetOnly.outputs.map((output) => output.tokens));
    for (const round of readRounds(run.trace)) {
      const bonus = round.verifyRows[0].position;
      const room = Math.max(0, Math.min(16 - 1 - bonus, 12 - bonus));
      expect(round.verifyRows.length - 1, `round at ${bonus}`).toBe(Math.min(3, room));
    }
    // Both requests decode past the draft's context, and reach the target's (prompt + output = 16).
    expect(readRounds(run.trace).some((round) => round.verifyRows[0].position >= 12)).toBe(true);
    expect(run.trace.requests!.map((request) => request.prompt.length + request.output.length)).toEqual([16, 16]);
    expect(checkContextLimit(testCase, run.trace).status).toBe("holds");
  });

  it("a prompt longer than the draft's context: the prefill extend stops at it, and no round drafts", async () => {
    const testCase = boundaryCase("eagle", { draftContextLength: 6 });
    const { trace } = await runCase(testCase);
    const extendAnchors = trace.events
      .filter((event) => event.phase === "draft-extend")
      .flatMap((event) => event.rows.map((row) => row.position));
    // Anchor 4 feeds position 5, the draft's last; prompts of 6 and 8 tokens.
    expect(Math.max(...extendAnchors)).toBe(4);
    expect(readRounds(trace).every((round) => round.verifyRows.length === 1)).toBe(true);
    expect(checkContextLimit(testCase, trace).status).toBe("holds");
  });

  it("a resume past the draft's context re-extends what fits, as the run without the retract holds it", async () => {
    // Found by the context limit property: prompt 6, draft context 8, S = 1, a retract after the first round.
    const testCase: Case = {
      ...boundaryCase("mirror", { numSteps: 1, contextLength: 15, draftContextLength: 8 }, 9),
      workload: {
        requests: [{ id: 0, prompt: PROMPT, maxNewTokens: 9, arrivalStep: 0 }],
        aborts: [],
        retracts: [{ request: 0, step: 1, beforeForward: 1 }],
      },
    };
    const check = await checkLaws(referenceSource(), testCase);
    expect(check.results.filter((result) => result.status === "fails")).toEqual([]);
  });
});

describe("law context limit", () => {
  const testCase = boundaryCase("mirror", { draftContextLength: 12 });

  /** The trace with one row of the first event of `phase` moved to `position`. */
  async function moved(phase: string, position: number): Promise<Trace> {
    const { trace } = await runCase(testCase);
    const edited = structuredClone(trace);
    edited.events.find((event) => event.phase === phase)!.rows[0].position = position;
    return edited;
  }

  it("fails on a target row at the context", async () => {
    const result = checkContextLimit(testCase, await moved("verify", 16));
    expect(result.status).toBe("fails");
    expect(result.violation?.message).toContain("past the target's context of 16");
  });

  it("fails on a draft row feeding the draft's context (anchor 11 feeds position 12)", async () => {
    expect(checkContextLimit(testCase, await moved("draft-decode", 10)).status).toBe("holds");
    const result = checkContextLimit(testCase, await moved("draft-decode", 11));
    expect(result.status).toBe("fails");
    expect(result.violation?.message).toMatch(/feeding position 12\), past the draft's context of 12/);
  });

  it("fails on a row attending a position past the context", async () => {
    const { trace } = await runCase(testCase);
    const edited = structuredClone(trace);
    const row = edited.events.find((event) => event.phase === "verify")!.rows[0];
    row.attended = { ...row.attended!, positions: [[0, 16]] };
    expect(checkContextLimit(testCase, edited).violation?.message).toContain("attends position 16");
  });

  it("applies only where a request comes within a verify block of a context", async () => {
    const { law } = await import("../../src/laws/context-limit.ts");
    expect(law.appliesTo(testCase)).toBe(true);
    const roomy = boundaryCase("mirror", { contextLength: undefined }, 4);
    expect(law.appliesTo(roomy)).toBe(false);
  });
});

describe("cases at the boundary the engine cannot run", () => {
  const spec = getPreset("tiny");
  const refused: [string, Case, string][] = [
    [
      "a context past the model's",
      boundaryCase("mirror", { contextLength: spec.maxPositions + 1 }),
      "/engine/contextLength",
    ],
    [
      "a draft context past the target's",
      boundaryCase("mirror", { draftContextLength: 17 }),
      "/engine/draftContextLength",
    ],
    [
      "a draft context without a draft model",
      boundaryCase("ngram", { draftContextLength: 12 }),
      "/engine/draftContextLength",
    ],
    [
      "a draft context with trees",
      boundaryCase("mirror", { draftContextLength: 12, topk: 2, numDraftTokens: 4 }),
      "/engine/draftContextLength",
    ],
    ["a request past the context", boundaryCase("mirror", {}, 11), "/workload/requests/0"],
    // Trees do not cap their lookahead: a request there must leave room for a whole verify block.
    ["a tree at the context", boundaryCase("mirror", { topk: 2, numDraftTokens: 4 }), "/workload/requests/0"],
  ];
  for (const [what, testCase, path] of refused)
    it(`${what}: ConfigError at ${path}`, () => {
      expect(() => checkCaseConsistency(testCase, spec)).toThrow(expect.objectContaining({ field: path }));
    });
});
