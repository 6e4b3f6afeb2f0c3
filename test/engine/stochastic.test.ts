// Stochastic requests in the engine: under every speculative mode and target-only, every single-run law holds
// (sampling replay replays each decision), each decision is recorded with the one uniform it took, tokens
// replay from the seed and do not depend on the batch, and the sampling faults fail sampling replay.
import { describe, expect, it } from "vitest";
import type { Case } from "../../src/case/case.ts";
import { defaultCase } from "../../src/case/default-case.ts";
import type { EngineConfig } from "../../src/case/engine-config.ts";
import type { FaultName } from "../../src/case/faults.ts";
import { runCase } from "../../src/engine/run-case.ts";
import type { SamplingParams } from "../../src/sampling/params.ts";
import { UniformStream } from "../../src/sampling/uniform-stream.ts";
import { targetOnlyCase } from "../../src/check/source.ts";
import { checkRun } from "../helpers/check-run.ts";

/** Two stochastic requests (cuts and processors on the second) and a greedy one, arriving together. */
const SAMPLING: (SamplingParams | undefined)[] = [
  { temperature: 1.3, seed: 11 },
  { temperature: 0.7, topK: 8, topP: 0.9, minP: 0.05, logitBias: { "52": 2 }, presencePenalty: 0.5, seed: 12 },
  undefined,
];

function stochasticCase(engine: Partial<EngineConfig> = {}, preset = "tiny", faults: FaultName[] = []): Case {
  const base = defaultCase({
    preset,
    draft: "noisy-mirror",
    seed: 5,
    numRequests: 3,
    maxNewTokens: 12,
    engine: { numSteps: 3, numDraftTokens: 4, faults, ...engine },
  });
  return {
    ...base,
    workload: {
      ...base.workload,
      requests: base.workload.requests.map((request, i) => ({
        ...request,
        arrivalStep: 0,
        ...(SAMPLING[i] ? { sampling: SAMPLING[i] } : {}),
      })),
    },
  };
}

const MODES: [string, Partial<EngineConfig>][] = [
  ["chain, chunked and paged", { chunkSize: 3, pageSize: 2 }],
  ["tree (topk 2, N 6)", { topk: 2, numDraftTokens: 6 }],
  ["multi-layer", { multiLayer: true }],
  ["graph replay", { graphReplay: true }],
  ["target-only", { mode: "target-only" }],
];

async function failing(testCase: Case): Promise<string[]> {
  const run = await runCase(testCase);
  const targetOnly = await runCase(targetOnlyCase(testCase));
  const laws = await checkRun(testCase, run, targetOnly);
  return laws.filter((law) => law.status === "fails").map((law) => `${law.law}: ${law.violation?.message}`);
}

describe("stochastic sampling in the engine", () => {
  for (const [name, engine] of MODES) {
    it(`${name}: every single-run law holds and sampling replay checked decisions`, async () => {
      const testCase = stochasticCase(engine);
      const run = await runCase(testCase);
      const laws = await checkRun(testCase, run, await runCase(targetOnlyCase(testCase)));
      expect(laws.filter((law) => law.status === "fails").map((law) => law.violation?.message)).toEqual([]);
      expect(laws.find((law) => law.law === "sampling replay")?.checked).toBeGreaterThan(10);
      expect(run.internals?.slotsInUseAtEnd).toBe(0);
    });
  }

  it("records one uniform per decision, taken in order from the request's own stream", async () => {
    const run = await runCase(stochasticCase());
    for (const [id, sampling] of SAMPLING.entries()) {
      const uniforms = run.trace.events.flatMap((event) =>
        event.rows.filter((row) => row.request === id).flatMap((row) => (row.draws ?? []).map((draw) => draw.uniform)),
      );
      if (!sampling) {
        expect(uniforms).toEqual([]);
        continue;
      }
      const stream = new UniformStream(sampling.seed!);
      expect(uniforms).toEqual(uniforms.map(() => stream.next()));
      // Each round: one accept test per child tried, one draw where the walk stops; plus the prefill's draw.
      const rounds = run.trace.events.flatMap((event) => (event.verify ?? []).filter((r) => r.request === id));
      const decisions = rounds.reduce((sum, round) => sum + round.acceptLen + (round.acceptLen <= 3 ? 1 : 0), 0);
      expect(uniforms.length).toBe(1 + decisions);
    }
  });

  it("tokens replay from the seed and do not depend on the batch (float64: no rounding ties)", async () => {
    const batched = await runCase(stochasticCase({}, "tiny-f64"));
    const again = await runCase(stochasticCase({}, "tiny-f64"));
    expect(again.outputs).toEqual(batched.outputs);
    const testCase = stochasticCase({}, "tiny-f64");
    const alone = await runCase({
      ...testCase,
      workload: { ...testCase.workload, requests: [testCase.workload.requests[1]] },
    });
    expect(alone.outputs[0].tokens).toEqual(batched.outputs[1].tokens);
  });

  for (const fault of ["temperature-applied-twice", "recovery-from-target", "processing-bonus-only"] as const) {
    it(`${fault} fails sampling replay`, async () => {
      expect(
        (await failing(stochasticCase({}, "tiny", [fault]))).some((law) => law.startsWith("sampling replay")),
      ).toBe(true);
    });
  }
});
