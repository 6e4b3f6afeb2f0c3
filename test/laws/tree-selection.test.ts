// Law "tree selection": holds on the reference engine's trees, fails on the frontier-by-own-logprob
// fault and on hand-broken traces (frontier, cut, ancestor-closedness, linking, expansions), counts a
// selection that differs from the exact ranking within epsilon as a tie, and is not checkable without
// scores. A small hand-written tree (eagle draft: epsilon 1e-4) pins each rule; real runs show it on
// engine traces.
import { describe, expect, it } from "vitest";
import type { Case } from "../../src/case/case.ts";
import { defaultEngineConfig } from "../../src/case/engine-config.ts";
import type { FaultName } from "../../src/case/faults.ts";
import { runCase } from "../../src/engine/run-case.ts";
import { readDraftRounds } from "../../src/laws/draft-tree.ts";
import { checkReplayEquivalence } from "../../src/laws/replay-equivalence.ts";
import { checkTreeSelection } from "../../src/laws/tree-selection.ts";
import { defaultDraftSpec, type DraftKind } from "../../src/model/spec.ts";
import { childOf, children, handTree } from "../helpers/hand-tree.ts";

describe("tree selection on a hand-written tree", () => {
  it("holds on the exact selection", () => {
    expect(checkTreeSelection(handTree())).toMatchObject({ status: "holds", ties: 0 });
  });

  it("fails when a frontier keeps a worse child, naming both candidates and the gap", () => {
    const trace = handTree();
    // 4 (-3) kept, 5 (-1) left out; 4's own children score below it, as an engine would record.
    const row = trace.events[3].rows[1];
    row.candidate = 4;
    row.children = children([
      [9, 32, -3.5],
      [10, 33, -8],
    ]);
    const result = checkTreeSelection(trace);
    expect(result.status).toBe("fails");
    expect(result.violation?.message).toMatch(/frontier of draft step 2.*candidate 5 .*left out, 4 .*kept; gap 2/);
    expect(result.violation?.event).toBe(3);
  });

  it("counts a frontier that differs from the exact ranking within epsilon as a tie, not a failure", () => {
    const trace = handTree();
    childOf(trace, 4).score = -1 + 5e-5; // 4 now ranks above 5 by 5e-5 < epsilon 1e-4
    expect(checkTreeSelection(trace)).toMatchObject({ status: "holds", ties: 1 });
    childOf(trace, 4).score = -1 + 5e-4; // beyond epsilon: a real misselection
    expect(checkTreeSelection(trace).status).toBe("fails");
  });

  it("fails when the verified set is not the N - 1 best", () => {
    const trace = handTree();
    const verify = trace.events[4];
    verify.rows[3] = { ...verify.rows[3], candidate: 8, token: 31 }; // 8 (-2) instead of 7 (0)
    const result = checkTreeSelection(trace);
    expect(result.violation?.message).toMatch(/N - 1 cut.*candidate 7 .*left out, 8 .*kept/);
  });

  it("fails a set that is not ancestor-closed even when its cut is a tie", () => {
    const trace = handTree();
    // 9 scores like its parent 5 (ties go to 5, the lower number): selecting 9 without 5 is a tie at the
    // cut, but a verified node whose parent is not verified is a broken tree, tie or not.
    childOf(trace, 9).score = -1;
    childOf(trace, 7).score = -2.5;
    childOf(trace, 3).score = -1;
    childOf(trace, 8).score = -2.6;
    childOf(trace, 4).score = -3;
    const verify = trace.events[4];
    verify.rows[2] = { ...verify.rows[2], candidate: 2, token: 11, parent: 0 };
    verify.rows[3] = { ...verify.rows[3], candidate: 9, token: 32, parent: 2 };
    const result = checkTreeSelection(trace);
    expect(result.status).toBe("fails");
    expect(result.violation?.message).toMatch(/not ancestor-closed: candidate 9 is in, its parent 5 is not/);
  });

  it("fails verify rows out of ascending order and a parent index that names another candidate", () => {
    const unordered = handTree();
    const rows = unordered.events[4].rows;
    [rows[2], rows[3]] = [rows[3], rows[2]];
    expect(checkTreeSelection(unordered).violation?.message).toMatch(/not distinct and ascending/);
    const parent = handTree();
    parent.events[4].rows[3].parent = 1;
    expect(checkTreeSelection(parent).violation?.message).toMatch(/names verify row 1 as parent/);
  });

  it("fails expansions: a first child that is not the argmax, a child above its parent, a candidate created twice", () => {
    const argmax = handTree();
    argmax.events[2].rows[0].predict = 21;
    expect(checkTreeSelection(argmax).violation?.message).toMatch(/first child is token 20, the row's argmax is 21/);
    const above = handTree();
    childOf(above, 6).score = 0; // parent 2 scores -1
    expect(checkTreeSelection(above).violation?.message).toMatch(/child 6 scores 0, above its parent's -1/);
    const twice = handTree();
    twice.events[3].rows[1].children![0].number = 3;
    expect(checkTreeSelection(twice).violation?.message).toMatch(/cannot be linked: candidate 3 is created twice/);
  });

  it("fails a step-1 frontier that skips a root child and a row carrying a candidate of another depth", () => {
    const skipped = handTree();
    skipped.events[2].rows[1].candidate = 1;
    expect(checkTreeSelection(skipped).violation?.message).toMatch(/frontier of draft step 1/);
    const depth = handTree();
    depth.events[3].rows[1].candidate = 2;
    expect(checkTreeSelection(depth).violation?.message).toMatch(/not one of the depth-2 candidates/);
  });

  it("is not checkable on a trace without scored children", () => {
    const trace = handTree();
    for (const event of trace.events) for (const row of event.rows) delete row.children;
    expect(checkTreeSelection(trace).status).toBe("not-checkable");
  });
});

function treeCase(kind: DraftKind, topk: number, numDraftTokens: number, faults: FaultName[] = []): Case {
  return {
    formatVersion: 1,
    model: { preset: "tiny" },
    draft: defaultDraftSpec(kind),
    engine: defaultEngineConfig({ numSteps: 4, topk, numDraftTokens, chunkSize: 3, faults }),
    workload: {
      requests: [
        { id: 0, prompt: [1, 5, 9, 13, 17, 3, 4, 8, 21], maxNewTokens: 10, arrivalStep: 0 },
        { id: 1, prompt: [1, 5, 9, 13, 17, 22, 7], maxNewTokens: 8, arrivalStep: 0 },
      ],
      aborts: [],
    },
  };
}

describe("tree selection on engine traces", () => {
  for (const [kind, topk, numDraftTokens] of [
    ["mirror", 2, 6],
    ["noisy-mirror", 4, 8],
    ["eagle", 2, 5],
    ["mirror", 1, 5],
  ] as const) {
    it(`holds on a ${kind} run, topk ${topk}, N ${numDraftTokens}, with every round's scores recorded`, async () => {
      const { trace } = await runCase(treeCase(kind, topk, numDraftTokens));
      const result = checkTreeSelection(trace);
      expect(result).toMatchObject({ status: "holds", ties: 0 });
      const rounds = readDraftRounds(trace);
      expect(rounds.filter((round) => round.verify).length).toBeGreaterThan(2);
      expect(rounds.every((round) => !round.broken && round.candidates.size > 0)).toBe(true);
    });
  }

  it("fails the frontier-by-own-logprob fault's run at a frontier", async () => {
    const { trace } = await runCase(treeCase("mirror", 2, 6, ["frontier-by-own-logprob"]));
    const result = checkTreeSelection(trace);
    expect(result.status).toBe("fails");
    expect(result.violation?.message).toMatch(/frontier of draft step [2-9]/);
  });

  it("fails an engine trace whose verify row is moved to a worse candidate", async () => {
    const { trace } = await runCase(treeCase("noisy-mirror", 4, 8));
    const broken = structuredClone(trace);
    const round = readDraftRounds(broken).find((candidate) => candidate.verify)!;
    const rows = round.verify!.rows.map((row) => row.trace);
    const chosen = rows.map((row) => row.candidate!);
    // The worst candidate that keeps the set ancestor-closed replaces the last verified one.
    const worst = [...round.candidates.values()]
      .filter((candidate) => !chosen.includes(candidate.number) && chosen.includes(candidate.parent))
      .sort((a, b) => a.score - b.score)[0];
    rows[rows.length - 1].candidate = worst.number;
    rows[rows.length - 1].parent = chosen.indexOf(worst.parent);
    expect(checkTreeSelection(trace).status).toBe("holds");
    const result = checkTreeSelection(broken);
    expect(result.status).toBe("fails");
    expect(result.violation?.request).toBe(round.request);
  });
});

describe("graph-replay equivalence at tree selection", () => {
  it("a frontier that flips between eager and replay is a tie at a near-tie of scores, else a failure", () => {
    const flip = (score: number) => {
      const eager = handTree();
      const replay = handTree();
      for (const trace of [eager, replay]) childOf(trace, 4).score = score;
      const row = replay.events[3].rows[1];
      Object.assign(row, { candidate: 4, token: 21 });
      return checkReplayEquivalence(eager, replay, { epsilon: 1e-4, absolute: 1e-4, relative: 1e-5 });
    };
    expect(flip(-1 + 5e-5)).toMatchObject({ status: "holds", ties: 1 });
    expect(flip(-3).violation?.message).toMatch(/replay carries draft candidate \[10,21\], eager \[11,22\]/);
  });
});
