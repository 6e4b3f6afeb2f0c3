// The engine's own traces validate against the published trace schema, for every draft kind and mode.
import { describe, expect, it } from "vitest";
import { defaultCase } from "../../src/case/default-case.ts";
import { runCase } from "../../src/engine/run-case.ts";
import { parseTrace, validateTrace } from "../../src/trace/load.ts";
import { MODEL_DRAFT_KINDS } from "../../src/model/spec.ts";

describe("engine traces", () => {
  for (const draft of MODEL_DRAFT_KINDS) {
    it(`${draft}: the speculative trace is schema-valid and round-trips through JSON`, async () => {
      const testCase = defaultCase({
        preset: "tiny",
        draft,
        seed: 4,
        numRequests: 2,
        maxNewTokens: 6,
        engine: { chunkSize: 3, pageSize: 2 },
      });
      const { trace } = await runCase(testCase);
      expect(validateTrace(trace)).toEqual([]);
      expect(parseTrace(JSON.stringify(trace), "trace.json")).toEqual(trace);
      expect(new Set(trace.events.map((event) => event.phase))).toEqual(
        new Set(["prefill", "draft-extend", "verify", "draft-decode"]),
      );
      expect(trace.engine).toMatchObject({ ortVersion: expect.any(String), ep: "cpu", dtype: "float32", threads: 1 });
    });
  }

  it("target-only traces hold prefill and decode events", async () => {
    const base = defaultCase({ preset: "tiny", draft: "mirror", seed: 4, numRequests: 2, maxNewTokens: 4, engine: {} });
    const { trace } = await runCase({ ...base, engine: { ...base.engine, mode: "target-only" } });
    expect(validateTrace(trace)).toEqual([]);
    expect(new Set(trace.events.map((event) => event.phase))).toEqual(new Set(["prefill", "decode"]));
  });
});
