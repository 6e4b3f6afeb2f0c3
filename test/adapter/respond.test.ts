// The protocol handling the engines share (src/adapter/respond.ts): what every engine's answer to a line is
// before its own code runs (invalid requests with the JSON path and the echoed requestId, unsupported cases
// never run, thrown errors answered with their name), and the line loop (non-JSON lines answered, blank lines
// skipped, answers in order).
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { requestFor } from "../../src/adapter/client.ts";
import { respondToCase, serveLines, type CaseEngine } from "../../src/adapter/respond.ts";
import type { Case } from "../../src/case/case.ts";
import { defaultEngineConfig } from "../../src/case/engine-config.ts";

const testCase: Case = {
  formatVersion: 1,
  model: { preset: "tiny" },
  draft: null,
  engine: defaultEngineConfig({ mode: "target-only" }),
  workload: { requests: [{ id: 0, prompt: [1, 5, 9], maxNewTokens: 4, arrivalStep: 0 }], aborts: [] },
};

function engine(overrides: Partial<CaseEngine> = {}): CaseEngine & { runs: number } {
  const state = {
    runs: 0,
    unsupportedReason: () => undefined,
    async run() {
      state.runs += 1;
      return { outputs: [] };
    },
    ...overrides,
  };
  return state;
}

describe("respondToCase", () => {
  it("an invalid request: the first schema issue with its path, the requestId echoed, nothing run", async () => {
    const broken = { ...requestFor(testCase, 7, false), version: "two" };
    const running = engine();
    const answer = await respondToCase(broken, running);
    expect(answer).toMatchObject({ requestId: 7, error: expect.stringMatching(/^invalid request: \/version /) });
    expect(running.runs).toBe(0);
    expect(await respondToCase("not an object", running)).toMatchObject({ requestId: 0 });
  });

  it("an unsupported case is refused with the engine's reason and not run", async () => {
    const running = engine({ unsupportedReason: () => "/engine/chunkSize: not declared" });
    const answer = await respondToCase(requestFor(testCase, 3, false), running);
    expect(answer).toEqual({ requestId: 3, error: "/engine/chunkSize: not declared", unsupported: true });
    expect(running.runs).toBe(0);
  });

  it("a run's answer carries the requestId; a thrown error is answered with its name", async () => {
    const ok = await respondToCase(requestFor(testCase, 4, true), engine());
    expect(ok).toEqual({ requestId: 4, outputs: [] });
    const failing = engine({
      run: () => Promise.reject(new RangeError("slot 2 crashed")),
    });
    expect(await respondToCase(requestFor(testCase, 5, false), failing)).toEqual({
      requestId: 5,
      error: "RangeError: slot 2 crashed",
    });
  });
});

describe("serveLines", () => {
  it("answers every non-blank line in order; a line that is not JSON gets an error", async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    const notJson: string[] = [];
    const serving = serveLines(input, output, {
      answer: async (value) => ({ requestId: (value as { requestId: number }).requestId, outputs: [] }),
      notJson: (message) => notJson.push(message),
    });
    input.end('{"requestId": 1}\n\n{oops\n{"requestId": 2}\n');
    await serving;
    const lines = output
      .read()!
      .toString()
      .trim()
      .split("\n")
      .map((line: string) => JSON.parse(line));
    expect(lines).toEqual([
      { requestId: 1, outputs: [] },
      { requestId: 0, error: "request line is not JSON" },
      { requestId: 2, outputs: [] },
    ]);
    expect(notJson).toHaveLength(1);
  });
});
