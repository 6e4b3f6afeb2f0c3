// Law "speculation engaged" (issue 34): the reference engine's runs hold (chains and trees, from the trace and
// from accept lengths alone); a request reported without rounds, or a stretch decoded without one, fails with
// its output tokens; what has no room for a whole round is not judged (the cap, the context's last positions, an
// aborted tail, a checkpoint replay); an engine that reports no rounds at all is not checkable. The fault
// draft-failure-plain-decode fails this law and no other law (an EAGLE head: outputs stay exact).
import { describe, expect, it } from "vitest";
import type { Case } from "../../src/case/case.ts";
import { defaultCase } from "../../src/case/default-case.ts";
import { runCase } from "../../src/engine/run-case.ts";
import { checkLaws, failures } from "../../src/check/runner.ts";
import { referenceSource } from "../../src/sources/reference.ts";
import { checkSpeculationEngaged, law } from "../../src/laws/speculation-engaged.ts";
import type { RequestOutput, RunResult } from "../../src/trace/run-result.ts";
import type { DraftKind } from "../../src/model/spec.ts";

const S = 3;
const chainCase = (draft: DraftKind = "eagle", engine: object = {}, maxNewTokens = 12): Case =>
  defaultCase({
    preset: "tiny",
    draft,
    seed: 5,
    numRequests: 2,
    maxNewTokens,
    engine: { numSteps: S, numDraftTokens: S + 1, ...engine },
  });

/** The run as an engine without traces reports it: outputs and accept lengths only. */
const outputsOnly = (run: RunResult, edit: (output: RequestOutput) => RequestOutput = (o) => o): RunResult => ({
  outputs: run.outputs.map((output) => edit({ ...output })),
  trace: { ...run.trace, events: [] },
});

describe("speculation engaged", async () => {
  const testCase = chainCase();
  const run = await runCase(testCase);

  it("holds on the reference engine, from the trace and from accept lengths alone", () => {
    const traced = checkSpeculationEngaged(testCase, run);
    expect(traced.status).toBe("holds");
    expect(traced.checked).toBeGreaterThan(2);
    expect(checkSpeculationEngaged(testCase, outputsOnly(run)).status).toBe("holds");
  });

  it("holds on trees (N - 1 drafts a round) and multi-layer chains", async () => {
    for (const engine of [{ topk: 2, numDraftTokens: 5 }, { multiLayer: true }]) {
      const tree = chainCase("mirror", engine);
      const result = checkSpeculationEngaged(tree, await runCase(tree));
      expect(result.status, JSON.stringify(engine)).toBe("holds");
      expect(result.checked).toBeGreaterThan(0);
    }
  });

  it("a request reported without any round fails, naming it and the output tokens that had room", () => {
    const silent = outputsOnly(run, (output) => (output.id === 1 ? { ...output, acceptLens: [] } : output));
    const result = checkSpeculationEngaged(testCase, silent);
    expect(result.status).toBe("fails");
    // Token 0 is the prefill's; tokens 1.. were decoded alone; the last S have no room under the cap of 12.
    expect(result.violation?.request).toBe(1);
    expect(result.violation?.index).toBe(1);
    expect(result.violation?.message).toMatch(/output tokens 1-8 without speculating/);
  });

  it("no round where none fitted is no failure: llama-server's last steps under the cap, the context's end", () => {
    // llama.cpp drafts only when min(n_ctx - n_tokens - 2, n_remaining - 1) >= S: with 12 new tokens the rounds
    // cover tokens 1-8 (two rounds of 4) and tokens 9-11 are decoded alone.
    const llamaLike = outputsOnly(run, (output) => ({
      ...output,
      tokens: output.tokens.slice(0, 12),
      acceptLens: [4, 4],
    }));
    const capped = {
      ...testCase,
      workload: { ...testCase.workload, requests: testCase.workload.requests.map((r) => ({ ...r, maxNewTokens: 12 })) },
    };
    expect(checkSpeculationEngaged(capped, llamaLike).status).toBe("holds");
    // The same with a third round of 4 missing where it fitted (cap 13: after 9 tokens, 4 remain): fails.
    const roomier = {
      ...capped,
      workload: { ...capped.workload, requests: capped.workload.requests.map((r) => ({ ...r, maxNewTokens: 13 })) },
    };
    const missing = outputsOnly(run, (output) => ({
      ...output,
      tokens: output.tokens.slice(0, 13),
      acceptLens: [4, 4],
    }));
    expect(checkSpeculationEngaged(roomier, missing).violation?.message).toMatch(/output tokens 9 without/);
    // A context of prompt + 8 with room under the cap: after one round of 4 (tokens 1-4) the next round's rows
    // would need L + S + 2 = prompt + 9 positions (llama.cpp's n_draft_max is 2 there): tokens 5-7 decoded alone.
    const prompt = testCase.workload.requests[0].prompt.length;
    const atLimit = { ...roomier, engine: { ...roomier.engine, contextLength: prompt + 8 } };
    const filled = (acceptLens: number[]) =>
      outputsOnly({ ...run, outputs: run.outputs.slice(0, 1) }, (output) => ({
        ...output,
        tokens: output.tokens.slice(0, 8),
        acceptLens,
      }));
    expect(checkSpeculationEngaged(atLimit, filled([4])).status).toBe("holds");
    // With no round at all, the steps rooted at prompt .. prompt + 3 had room: tokens 1-4 fail.
    expect(checkSpeculationEngaged(atLimit, filled([])).violation?.message).toMatch(/output tokens 1-4 without/);
  });

  it("does not judge an aborted request's tail, nor a round re-verified from an earlier root (checkpoint replay)", () => {
    const aborted = outputsOnly(run, (output) => ({ ...output, finishReason: "abort", acceptLens: [4] }));
    expect(checkSpeculationEngaged(testCase, aborted).status).toBe("holds");
    // A replay: the restore round (accepted 1 of 3) and its replay from the same root with 2 drafts.
    const first = run.trace.events.find((event) => event.phase === "verify" && event.verify?.[0].request === 0)!;
    const rows = first.rows.filter((row) => row.request === 0);
    const replay = {
      ...first,
      index: first.index,
      rows: rows.slice(0, 3),
      verify: [{ ...first.verify![0], acceptLen: 3 }],
    };
    const replayed = {
      ...run,
      trace: { ...run.trace, events: [first, replay, ...run.trace.events.filter((e) => e !== first)] },
    };
    expect(checkSpeculationEngaged(testCase, replayed).status).toBe("holds");
  });

  it("prompt lookup is not judged; an engine that reports no rounds makes the law not checkable", () => {
    expect(law.appliesTo(chainCase("ngram"))).toBe(false);
    expect(law.appliesTo(chainCase("eagle"))).toBe(true);
    const silent = { ...outputsOnly(run, (output) => ({ ...output, acceptLens: [] })), roundsObserved: false };
    expect(law.unavailable!({ testCase, run: silent } as never)).toMatch(/reports no speculative rounds/);
    expect(law.unavailable!({ testCase, run: { ...silent, roundsObserved: true } } as never)).toBeUndefined();
  });

  it("the fault draft-failure-plain-decode fails this law and no other (EAGLE head); with a mirror, mirror acceptance too", async () => {
    const faulty = { ...testCase, engine: { ...testCase.engine, faults: ["draft-failure-plain-decode" as const] } };
    const check = await checkLaws(referenceSource(), faulty);
    expect(failures(check).map((result) => result.law)).toEqual(["speculation engaged"]);
    const violation = failures(check)[0].violation!;
    expect(violation.message).toMatch(/0 draft\(s\) verified where a round of 3 fitted/);
    const mirror = chainCase("mirror", { faults: ["draft-failure-plain-decode"] });
    const mirrorLaws = failures(await checkLaws(referenceSource(), mirror)).map((result) => result.law);
    expect(mirrorLaws).toEqual(expect.arrayContaining(["speculation engaged", "mirror acceptance"]));
  });
});
