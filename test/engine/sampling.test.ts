// Request sampling options under every speculative mode: the speculative run emits exactly what
// target-only greedy decoding over the processed logits emits (tokens, finish reason, stop id, logprobs
// within float32 rounding), every single-run law holds, verify rows of processed requests record the raw
// argmax next to the processed one, and no slot is held once the requests finish.
import { describe, expect, it } from "vitest";
import type { Case } from "../../src/case/case.ts";
import type { EngineConfig } from "../../src/case/engine-config.ts";
import { runCase } from "../../src/engine/run-case.ts";
import { changesLogits } from "../../src/sampling/params.ts";
import { targetOnlyCase } from "../../src/check/source.ts";
import { checkRun } from "../helpers/check-run.ts";
import { goldenCase } from "../helpers/golden-runs.ts";

const sampling = goldenCase("tiny-mirror", "sampling").case;

const MODES: [string, Partial<EngineConfig>, Partial<Case["workload"]>?][] = [
  ["chain, chunked and paged", { chunkSize: 3, pageSize: 2 }],
  ["tree (topk 2, N 6)", { topk: 2, numDraftTokens: 6 }],
  ["multi-layer", { multiLayer: true }],
  ["graph replay with retracts", { graphReplay: true }, { retracts: [{ request: 1, step: 3, beforeForward: 1 }] }],
];

describe("sampling options under speculation", async () => {
  const targetOnly = await runCase(targetOnlyCase(sampling));

  for (const [name, engine, workload] of MODES) {
    it(`${name}: equals target-only and holds every single-run law`, async () => {
      const testCase: Case = {
        ...sampling,
        engine: { ...sampling.engine, ...engine },
        workload: { ...sampling.workload, ...workload },
      };
      const run = await runCase(testCase);
      for (const output of run.outputs) {
        const expected = targetOnly.outputs.find((candidate) => candidate.id === output.id)!;
        expect(output.tokens).toEqual(expected.tokens);
        expect([output.finishReason, output.stopTokenId, output.finishedLength]).toEqual([
          expected.finishReason,
          expected.stopTokenId,
          expected.finishedLength,
        ]);
        output.logprobs!.forEach((entry, i) => {
          expect(entry.token).toBe(expected.logprobs![i].token);
          expect(Math.abs(entry.logprob - expected.logprobs![i].logprob)).toBeLessThan(1e-5);
        });
      }
      expect(run.internals?.slotsInUseAtEnd).toBe(0);
      const laws = await checkRun(testCase, run, targetOnly);
      expect(
        laws.filter((law) => law.status === "fails").map((law) => `${law.law}: ${law.violation?.message}`),
      ).toEqual([]);
    });
  }

  it("verify rows of processed requests carry the raw argmax, and processing moved some", async () => {
    const run = await runCase(sampling);
    const rows = run.trace.events.filter((event) => event.phase === "verify").flatMap((event) => event.rows);
    const processed = rows.filter((row) => row.rawPredict !== undefined);
    expect(processed.length).toBeGreaterThan(0);
    expect(processed.some((row) => row.rawPredict !== row.predict)).toBe(true);
    // Stop ids and logprobs change no logit: those rows are sampled but record no raw argmax.
    const unprocessed = new Set(
      sampling.workload.requests.filter((request) => !changesLogits(request.sampling)).map((request) => request.id),
    );
    expect(unprocessed.size).toBeGreaterThan(0);
    expect(processed.every((row) => !unprocessed.has(row.request))).toBe(true);
  });
});
