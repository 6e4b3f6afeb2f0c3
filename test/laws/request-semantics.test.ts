// The three request-semantics laws on the golden sampling case (stop ids, min tokens, penalties, bias,
// logprobs): they hold on the reference engine's run and its target-only baseline, and each fails, with
// the place, on outputs edited the way the cited bugs change them.
import { describe, expect, it } from "vitest";
import type { Case } from "../../src/case/case.ts";
import { runCase } from "../../src/engine/run-case.ts";
import type { RequestOutput, RunResult } from "../../src/trace/run-result.ts";
import { checkLogprobs, judgeEntry } from "../../src/laws/logprob-parity.ts";
import { law as processingParity } from "../../src/laws/processing-parity.ts";
import { checkTermination, endingOf } from "../../src/laws/termination-equivalence.ts";
import { referenceSource } from "../../src/sources/reference.ts";
import { targetOnlyCase } from "../../src/check/source.ts";
import { goldenCase } from "../helpers/golden-runs.ts";

const testCase: Case = goldenCase("tiny-mirror", "sampling").case;
const EOS = 2;

describe("request semantics laws", async () => {
  const run = await runCase(testCase);
  const baseline = await runCase(targetOnlyCase(testCase));
  const oracle = await referenceSource().oracle(testCase);
  const stopped = run.outputs.find((output) => output.finishReason === "stop")!;
  const edited = (output: RequestOutput, change: Partial<RequestOutput>): RequestOutput[] => [{ ...output, ...change }];

  it("the case stops a request with a stop id and asks for logprobs", () => {
    expect(stopped.stopTokenId).toBe(stopped.tokens[stopped.tokens.length - 1]);
    expect(run.outputs.every((output) => output.logprobs?.length === output.tokens.length)).toBe(true);
  });

  describe("termination equivalence", () => {
    it("holds on the speculative run and the target-only run", async () => {
      for (const result of [run, baseline]) {
        const verdict = await checkTermination(testCase, result.outputs, result.trace, oracle);
        expect(verdict.status, verdict.violation?.message).toBe("holds");
        expect(verdict.checked).toBeGreaterThan(run.outputs.length);
      }
    });

    it("fails on tokens kept past the stop id (sglang 31599), naming the first of them", async () => {
      const leaked = edited(stopped, { tokens: [...stopped.tokens, 11], finishReason: "length" });
      const verdict = await checkTermination(testCase, leaked, { ...run.trace, events: [] }, oracle);
      expect(verdict.status).toBe("fails");
      expect(verdict.violation).toMatchObject({ request: stopped.id, index: stopped.tokens.length });
    });

    it("fails on a wrong finish reason, stop id or finished length", async () => {
      const trace = { ...run.trace, events: [] };
      for (const change of [
        { finishReason: "length" as const },
        { stopTokenId: stopped.stopTokenId! + 1 },
        { finishedLength: stopped.tokens.length + 1 },
      ]) {
        const verdict = await checkTermination(testCase, edited(stopped, change), trace, oracle);
        expect(verdict.status, JSON.stringify(change)).toBe("fails");
      }
    });

    it("fails on a stop id emitted before min new tokens", async () => {
      const request = testCase.workload.requests.find((candidate) => candidate.sampling?.minNewTokens)!;
      const output = run.outputs.find((candidate) => candidate.id === request.id)!;
      const stop = request.sampling!.stopTokenIds![0];
      const early = edited(output, { tokens: [stop], finishReason: "stop", stopTokenId: stop, finishedLength: 1 });
      const verdict = await checkTermination(testCase, early, { ...run.trace, events: [] }, oracle);
      expect(verdict.violation?.message).toMatch(/masked until/);
    });

    it("fails when a forward runs the request after the round that finished it", async () => {
      const events = run.trace.events;
      const finishing = events.findIndex((event) =>
        event.verify?.some((result) => result.request === stopped.id && result.finished),
      );
      const after = { ...events[finishing], index: events.length };
      const verdict = await checkTermination(
        testCase,
        run.outputs,
        { ...run.trace, events: [...events, after] },
        oracle,
      );
      expect(verdict.violation).toMatchObject({ request: stopped.id, event: events.length });
    });

    it("endingOf: the first EOS or stop id, else the cap", () => {
      expect(endingOf([4, 7, EOS], 10, EOS, new Set([7]))).toEqual({ index: 1, reason: "stop", stopTokenId: 7 });
      expect(endingOf([4, EOS, 7], 10, EOS, new Set([7]))).toEqual({ index: 1, reason: "eos" });
      expect(endingOf([4, 5, 6], 2, EOS, new Set())).toEqual({ index: 1, reason: "length" });
      expect(endingOf([4, 7], 2, EOS, new Set([7]))).toEqual({ index: 1, reason: "stop", stopTokenId: 7 });
      expect(endingOf([4], 2, EOS, new Set())).toBeUndefined();
    });
  });

  describe("processing parity", () => {
    const check = (own: RunResult) =>
      processingParity.check({ testCase, run: own, baseline, oracle }) as Promise<{
        status: string;
        violation?: { message: string };
      }>;

    it("holds between the speculative and the target-only run", async () => {
      const verdict = await check(run);
      expect(verdict.status, verdict.violation?.message).toBe("holds");
    });

    it("fails when the speculative run reports another stop id or fewer logprob entries", async () => {
      const other = (change: Partial<RequestOutput>) => ({
        ...run,
        outputs: run.outputs.map((output) => (output.id === stopped.id ? { ...output, ...change } : output)),
      });
      expect((await check(other({ stopTokenId: 63 }))).violation?.message).toMatch(/stop id 63/);
      expect((await check(other({ logprobs: stopped.logprobs!.slice(1) }))).violation?.message).toMatch(
        /logprob entries/,
      );
    });
  });

  describe("logprob parity", () => {
    it("holds on both runs", async () => {
      for (const result of [run, baseline]) {
        const verdict = await checkLogprobs(testCase, result.outputs, oracle);
        expect(verdict.status, verdict.violation?.message).toBe("holds");
      }
    });

    it("fails on a speculated token's logprob reported as 0.0 (vLLM 34497), and on a missing entry", async () => {
      const output = run.outputs.find((candidate) => candidate.logprobs!.some((entry) => entry.logprob < -1e-3))!;
      const index = output.logprobs!.findIndex((entry) => entry.logprob < -1e-3);
      const zeroed = output.logprobs!.map((entry, i) => (i === index ? { ...entry, logprob: 0 } : entry));
      const verdict = await checkLogprobs(testCase, edited(output, { logprobs: zeroed }), oracle);
      expect(verdict.violation).toMatchObject({ request: output.id, index });
      const missing = await checkLogprobs(testCase, edited(output, { logprobs: output.logprobs!.slice(1) }), oracle);
      expect(missing.violation?.message).toMatch(/logprob entries for/);
    });

    it("judgeEntry: a top-k set differing at a boundary tie is a tie, far from it a failure", () => {
      const row = [Math.log(4), Math.log(2), Math.log(1), Math.log(1), Math.log(0.01)];
      const z = Math.log(8.01);
      const lp = (token: number) => ({ token, logprob: row[token] - z });
      const exact = { token: 0, logprob: lp(0).logprob, top: [lp(0), lp(1), lp(2)] };
      expect(judgeEntry(exact, 0, row, 3, 1e-9)).toEqual({ tie: false });
      // Token 3 ties token 2 for third place.
      expect(judgeEntry({ ...exact, top: [lp(0), lp(1), lp(3)] }, 0, row, 3, 1e-9)).toEqual({ tie: true });
      expect(judgeEntry({ ...exact, top: [lp(0), lp(1), lp(4)] }, 0, row, 3, 1e-9).violation).toBeDefined();
      expect(judgeEntry({ ...exact, top: [lp(0), lp(1)] }, 0, row, 3, 1e-9).violation?.message).toMatch(/2 top/);
      expect(judgeEntry(exact, 1, row, 3, 1e-9).violation?.message).toMatch(/for token 0/);
    });
  });
});
