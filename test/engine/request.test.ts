import { describe, it, expect } from "vitest";
import { test, fc } from "@fast-check/vitest";
import { Request } from "../../src/engine/request.ts";

const EOS = 2;
/** Reads status through a call, so TypeScript does not keep a narrowing across emit(). */
const statusOf = (r: Request) => r.status;
const PROMPT = [1, 5, 9];

function decoding(maxNewTokens: number): Request {
  const r = new Request({ id: 0, prompt: PROMPT, maxNewTokens, arrivalStep: 0 });
  r.status = "decoding";
  r.draftRoot = { tokens: [7], logprobs: [0] };
  return r;
}

describe("Request.emit", () => {
  it("emits every candidate while no cut applies, and stays unfinished", () => {
    const r = decoding(10);
    expect(r.emit([4, 6, 8], EOS)).toEqual({ emitted: [4, 6, 8], finished: false });
    expect(r.output).toEqual([4, 6, 8]);
    expect(r.tokens).toEqual([...PROMPT, 4, 6, 8]);
    expect(r.status).toBe("decoding");
    expect(r.finishReason).toBeUndefined();
    expect(r.draftRoot?.tokens[0]).toBe(7);
  });

  it("cuts at EOS, keeps the EOS, and finishes with reason eos", () => {
    const r = decoding(10);
    expect(r.emit([4, EOS, 8, 9], EOS)).toEqual({ emitted: [4, EOS], finished: true });
    expect(r.output).toEqual([4, EOS]);
    expect(r.tokens).toEqual([...PROMPT, 4, EOS]);
    expect(r.status).toBe("finished");
    expect(r.finishReason).toBe("eos");
    expect(r.draftRoot).toBeUndefined();
    expect(r.draftHidden).toBeUndefined();
  });

  it("EOS as the first candidate emits just the EOS", () => {
    const r = decoding(10);
    expect(r.emit([EOS, 4], EOS)).toEqual({ emitted: [EOS], finished: true });
    expect(r.finishReason).toBe("eos");
  });

  it("cuts at maxNewTokens across calls and finishes with reason length", () => {
    const r = decoding(4);
    expect(r.emit([4, 6], EOS)).toEqual({ emitted: [4, 6], finished: false });
    expect(r.emit([8, 10, 12], EOS)).toEqual({ emitted: [8, 10], finished: true });
    expect(r.output).toEqual([4, 6, 8, 10]);
    expect(r.tokens).toEqual([...PROMPT, 4, 6, 8, 10]);
    expect(r.status).toBe("finished");
    expect(r.finishReason).toBe("length");
  });

  it("finishes with length when a round fills maxNewTokens exactly", () => {
    const r = decoding(3);
    expect(r.emit([4, 6, 8], EOS)).toEqual({ emitted: [4, 6, 8], finished: true });
    expect(r.finishReason).toBe("length");
  });

  it("EOS exactly at the last allowed token: reason eos (EOS wins)", () => {
    const r = decoding(3);
    expect(r.emit([4, 6, EOS, 8], EOS)).toEqual({ emitted: [4, 6, EOS], finished: true });
    expect(r.finishReason).toBe("eos");
  });

  it("EOS beyond the max-new-tokens cut is not emitted: reason length", () => {
    const r = decoding(2);
    expect(r.emit([4, 6, EOS], EOS)).toEqual({ emitted: [4, 6], finished: true });
    expect(r.output).not.toContain(EOS);
    expect(r.finishReason).toBe("length");
  });

  it("maxNewTokens 0 emits nothing and finishes with length", () => {
    const r = decoding(0);
    expect(r.emit([4], EOS)).toEqual({ emitted: [], finished: true });
    expect(r.output).toEqual([]);
    expect(r.tokens).toEqual(PROMPT);
    expect(r.finishReason).toBe("length");
  });

  it("an empty round leaves an unfinished request unchanged", () => {
    const r = decoding(5);
    expect(r.emit([], EOS)).toEqual({ emitted: [], finished: false });
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
        const { emitted, finished } = r.emit(round, EOS);
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
