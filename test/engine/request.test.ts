import { describe, it, expect } from "vitest";
import { test, fc } from "@fast-check/vitest";
import { Faults } from "../../src/case/faults.ts";
import { Request } from "../../src/engine/request.ts";
import type { SamplingParams } from "../../src/sampling/params.ts";

const EOS = 2;
/** Reads status through a call, so TypeScript does not keep a narrowing across emit(). */
const statusOf = (r: Request) => r.status;
const PROMPT = [1, 5, 9];
const NO_FAULTS = new Faults([]);

function decoding(maxNewTokens: number, sampling?: SamplingParams): Request {
  const r = new Request({ id: 0, prompt: PROMPT, maxNewTokens, arrivalStep: 0, sampling });
  r.status = "decoding";
  r.draftRoot = { tokens: [7], logprobs: [0] };
  return r;
}

describe("Request.emit", () => {
  it("emits every candidate while no cut applies, and stays unfinished", () => {
    const r = decoding(10);
    expect(r.emit([4, 6, 8], EOS, NO_FAULTS)).toEqual({ emitted: [4, 6, 8], finished: false });
    expect(r.output).toEqual([4, 6, 8]);
    expect(r.tokens).toEqual([...PROMPT, 4, 6, 8]);
    expect(r.status).toBe("decoding");
    expect(r.finishReason).toBeUndefined();
    expect(r.draftRoot?.tokens[0]).toBe(7);
  });

  it("cuts at EOS, keeps the EOS, and finishes with reason eos", () => {
    const r = decoding(10);
    expect(r.emit([4, EOS, 8, 9], EOS, NO_FAULTS)).toEqual({ emitted: [4, EOS], finished: true });
    expect(r.output).toEqual([4, EOS]);
    expect(r.tokens).toEqual([...PROMPT, 4, EOS]);
    expect(r.status).toBe("finished");
    expect(r.finishReason).toBe("eos");
    expect(r.draftRoot).toBeUndefined();
    expect(r.draftHidden).toBeUndefined();
  });

  it("EOS as the first candidate emits just the EOS", () => {
    const r = decoding(10);
    expect(r.emit([EOS, 4], EOS, NO_FAULTS)).toEqual({ emitted: [EOS], finished: true });
    expect(r.finishReason).toBe("eos");
  });

  it("cuts at maxNewTokens across calls and finishes with reason length", () => {
    const r = decoding(4);
    expect(r.emit([4, 6], EOS, NO_FAULTS)).toEqual({ emitted: [4, 6], finished: false });
    expect(r.emit([8, 10, 12], EOS, NO_FAULTS)).toEqual({ emitted: [8, 10], finished: true });
    expect(r.output).toEqual([4, 6, 8, 10]);
    expect(r.tokens).toEqual([...PROMPT, 4, 6, 8, 10]);
    expect(r.status).toBe("finished");
    expect(r.finishReason).toBe("length");
  });

  it("finishes with length when a round fills maxNewTokens exactly", () => {
    const r = decoding(3);
    expect(r.emit([4, 6, 8], EOS, NO_FAULTS)).toEqual({ emitted: [4, 6, 8], finished: true });
    expect(r.finishReason).toBe("length");
  });

  it("EOS exactly at the last allowed token: reason eos (EOS wins)", () => {
    const r = decoding(3);
    expect(r.emit([4, 6, EOS, 8], EOS, NO_FAULTS)).toEqual({ emitted: [4, 6, EOS], finished: true });
    expect(r.finishReason).toBe("eos");
  });

  it("EOS beyond the max-new-tokens cut is not emitted: reason length", () => {
    const r = decoding(2);
    expect(r.emit([4, 6, EOS], EOS, NO_FAULTS)).toEqual({ emitted: [4, 6], finished: true });
    expect(r.output).not.toContain(EOS);
    expect(r.finishReason).toBe("length");
  });

  it("maxNewTokens 0 emits nothing and finishes with length", () => {
    const r = decoding(0);
    expect(r.emit([4], EOS, NO_FAULTS)).toEqual({ emitted: [], finished: true });
    expect(r.output).toEqual([]);
    expect(r.tokens).toEqual(PROMPT);
    expect(r.finishReason).toBe("length");
  });

  it("an empty round leaves an unfinished request unchanged", () => {
    const r = decoding(5);
    expect(r.emit([], EOS, NO_FAULTS)).toEqual({ emitted: [], finished: false });
    expect(r.status).toBe("decoding");
  });

  test.prop([
    fc.integer({ min: 0, max: 12 }),
    fc.array(fc.array(fc.integer({ min: 0, max: 6 }), { maxLength: 6 }), { minLength: 1, maxLength: 6 }),
  ])(
    "rounds of candidates: output is the candidate stream cut at the first EOS (kept) or maxNewTokens",
    (maxNewTokens, rounds) => {
      const r = decoding(maxNewTokens);
      const stream: number[] = [];
      for (const round of rounds) {
        if (r.status === "finished") break; // the engine stops emitting into a finished request
        stream.push(...round);
        const before = r.output.length;
        const { emitted, finished } = r.emit(round, EOS, NO_FAULTS);
        expect(emitted).toEqual(round.slice(0, emitted.length));
        expect(r.output.slice(before)).toEqual(emitted);
        expect(finished).toBe(statusOf(r) === "finished");
      }
      const eosAt = stream.indexOf(EOS);
      const untilEos = eosAt >= 0 ? stream.slice(0, eosAt + 1) : stream;
      const expected = untilEos.slice(0, maxNewTokens);
      expect(r.output).toEqual(expected);
      expect(r.tokens).toEqual([...PROMPT, ...expected]);
      const eosEmitted = expected[expected.length - 1] === EOS && expected.indexOf(EOS) === expected.length - 1;
      if (eosEmitted) expect(r.finishReason).toBe("eos");
      else if (expected.length === maxNewTokens) expect(r.finishReason).toBe("length");
      else {
        expect(r.finishReason).toBeUndefined();
        expect(r.status).toBe("decoding");
      }
    },
  );
});

describe("Request.emit with stop ids, logprobs and the termination faults", () => {
  const STOP = 7;
  const entry = (token: number) => ({ token, logprob: -token / 10, top: [] });

  it("a stop id ends the request like EOS: kept, reason stop, the id recorded", () => {
    const r = decoding(10, { stopTokenIds: [STOP, 11] });
    expect(r.emit([4, STOP, 8], EOS, NO_FAULTS)).toEqual({ emitted: [4, STOP], finished: true });
    expect(r.finishReason).toBe("stop");
    expect(r.stopTokenId).toBe(STOP);
  });

  it("a stop id at exactly the cap ends with reason stop, not length", () => {
    const r = decoding(3, { stopTokenIds: [STOP] });
    expect(r.emit([4, 6, STOP, 8], EOS, NO_FAULTS)).toEqual({ emitted: [4, 6, STOP], finished: true });
    expect(r.finishReason).toBe("stop");
  });

  it("length-before-stop: a run crossing the cap keeps the tokens past its stop and ends as length", () => {
    const faulty = decoding(4, { stopTokenIds: [STOP] });
    const faults = new Faults(["length-before-stop"]);
    expect(faulty.emit([4, STOP, 8, 9, 10], EOS, faults)).toEqual({ emitted: [4, STOP, 8, 9], finished: true });
    expect(faulty.finishReason).toBe("length");
    // A run that does not reach the cap still stops at the stop id.
    const short = decoding(10, { stopTokenIds: [STOP] });
    expect(short.emit([4, STOP, 8], EOS, faults).emitted).toEqual([4, STOP]);
    expect(short.finishReason).toBe("stop");
  });

  it("logprob entries follow the emitted tokens only", () => {
    const r = decoding(10, { stopTokenIds: [STOP], logprobs: 0 });
    r.emit([4, STOP, 8], EOS, NO_FAULTS, [entry(4), entry(STOP), entry(8)]);
    expect(r.logprobs).toEqual([entry(4), entry(STOP)]);
  });

  it("the penalizer counts every emitted token; the per-step faults count one per call", () => {
    const correct = decoding(10, { presencePenalty: 1 });
    correct.emit([4, 4, 6], EOS, NO_FAULTS);
    const context = correct.penalizer.contextWith([8]);
    expect([...context.outputCounts]).toEqual([
      [4, 2],
      [6, 1],
      [8, 1],
    ]);
    expect(context.committed).toBe(4);
    const perStep = decoding(10, { presencePenalty: 1 });
    perStep.emit([4, 4, 6], EOS, new Faults(["penalties-per-step", "min-tokens-per-step"]));
    const stale = perStep.penalizer.contextWith([]);
    expect([...stale.outputCounts]).toEqual([[6, 1]]);
    expect(stale.committed).toBe(1);
  });

  it("rowSampler: none without options that need logits; stop ids alone need none", () => {
    expect(decoding(5).rowSampler([], EOS)).toBeUndefined();
    expect(decoding(5, { stopTokenIds: [STOP] }).rowSampler([], EOS)).toBeUndefined();
    expect(decoding(5, { logprobs: 1 }).rowSampler([4], EOS)?.context.committed).toBe(1);
  });
});
