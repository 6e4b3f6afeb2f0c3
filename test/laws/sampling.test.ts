// The two sampling laws on edited runs: sampling replay fails where a recorded uniform or a decision no
// longer matches the rule, reports a missing uniform, and counts a decision within epsilon of its boundary
// as a tie (following the engine); the distribution law holds on a clean replica workload, fails on tokens
// drawn from a biased sampler (the negative control, through the law) and on an impossible token, and is not
// checkable with too few tokens.
import { describe, expect, it } from "vitest";
import type { Case } from "../../src/case/case.ts";
import { defaultCase } from "../../src/case/default-case.ts";
import { runCase } from "../../src/engine/run-case.ts";
import type { RunResult } from "../../src/trace/run-result.ts";
import { checkSamplingDistribution, distributionSamples } from "../../src/laws/sampling-distribution.ts";
import { freshSeedsCase } from "../../src/laws/fresh-seeds.ts";
import { checkSamplingReplay } from "../../src/laws/sampling-replay.ts";
import { biased } from "../../src/sampling/goodness-of-fit.ts";
import { requestSampling } from "../../src/sampling/params.ts";
import { drawToken } from "../../src/sampling/stochastic.ts";
import { referenceSource } from "../../src/sources/reference.ts";
import type { Trace } from "../../src/trace/schema.ts";
import { replicate } from "../../src/properties/arbitraries/workload.ts";

function stochasticCase(requests: number, copies: number, temperature: number, maxNewTokens = 12): Case {
  const base = defaultCase({
    preset: "tiny",
    draft: "noisy-mirror",
    seed: 8,
    numRequests: requests,
    maxNewTokens,
    engine: { numSteps: 2, numDraftTokens: 3, poolSlots: 4096 },
  });
  const sampled = base.workload.requests.map((request, i) => ({
    ...request,
    arrivalStep: 0,
    sampling: { temperature, seed: 100 + i },
  }));
  return { ...base, workload: { ...base.workload, requests: replicate(sampled, copies) } };
}

async function replay(testCase: Case, trace: Trace) {
  const oracle = await referenceSource().oracle(testCase);
  return checkSamplingReplay(trace, (id) => requestSampling(testCase, id), oracle);
}

describe("sampling replay", async () => {
  const testCase = stochasticCase(2, 1, 1.3);
  const run = await runCase(testCase);
  const verifyRowsWithDraws = () =>
    run.trace.events
      .filter((event) => event.phase === "verify")
      .flatMap((event) => event.rows.filter((row) => row.draws));

  it("holds on the engine's trace", async () => {
    const result = await replay(testCase, run.trace);
    expect(result.status).toBe("holds");
    expect(result.checked).toBeGreaterThan(10);
  });

  it("fails when a recorded acceptance test's uniform is moved across its boundary", async () => {
    const trace = structuredClone(run.trace);
    const row = trace.events
      .filter((event) => event.phase === "verify")
      .flatMap((event) => event.rows)
      .find((candidate) => candidate.draws?.some((draw) => draw.child !== undefined && (draw.margin ?? 1) > 0.05))!;
    const draw = row.draws!.find((candidate) => candidate.child !== undefined && (candidate.margin ?? 1) > 0.05)!;
    draw.uniform = draw.accepted ? 0.999999 : 0; // a rejection could never reject u = 0; an acceptance never accepts u ~ 1
    const result = await replay(testCase, trace);
    expect(result.status).toBe("fails");
    expect(result.violation?.message).toMatch(/the rule (accepts|rejects)/);
  });

  it("fails when a node's draws are gone: no uniform for the decision", async () => {
    expect(verifyRowsWithDraws().length).toBeGreaterThan(0);
    const trace = structuredClone(run.trace);
    const event = trace.events.find(
      (candidate) => candidate.phase === "verify" && candidate.rows.some((r) => r.draws),
    )!;
    for (const row of event.rows) if (row.draws) row.draws = [];
    const result = await replay(testCase, trace);
    expect(result.violation?.message).toMatch(/records no uniform/);
  });

  it("counts a decision within epsilon of its boundary as a tie and follows the engine", async () => {
    // A plain draw: the prefill's first token. Put its uniform just past the token's upper CDF boundary.
    const oracle = await referenceSource().oracle(testCase);
    const trace = structuredClone(run.trace);
    const request = trace.requests![0];
    const sequence = [...request.prompt, ...request.output];
    const reference = await oracle.processedOver(sequence, requestSampling(testCase, request.id)!);
    const { distributionOf } = await import("../../src/sampling/stochastic.ts");
    const distribution = distributionOf(reference.rows[request.prompt.length - 1]!, { temperature: 1.3 });
    let upper = 0;
    for (let token = 0; token <= request.output[0]; token++) upper += distribution.probs[token];
    const row = trace.events
      .flatMap((event) => event.rows)
      .find(
        (candidate) =>
          candidate.request === request.id && candidate.draws && candidate.position === request.prompt.length - 1,
      )!;
    expect(upper).toBeLessThan(1);
    row.draws![0].uniform = upper + 1e-6; // the rule draws the next token; 1e-6 * 1.3 is below epsilon 1e-4
    const tied = await replay(testCase, trace);
    expect(tied.status).toBe("holds");
    expect(tied.ties).toBe(1);
    row.draws![0].uniform = Math.min(upper + 0.01, 0.999);
    expect((await replay(testCase, trace)).status).toBe("fails");
  });
});

describe("sampling distribution", async () => {
  const testCase = stochasticCase(1, 48, 1.3);
  const run = await runCase(testCase);
  const oracle = await referenceSource().oracle(testCase);

  it("holds on a clean replica workload", async () => {
    const result = await checkSamplingDistribution(testCase, run.outputs, oracle);
    expect(result.status).toBe("holds");
    expect(result.checked).toBeGreaterThanOrEqual(100);
  });

  /** The run's outputs with every sampled token redrawn from `sampler` of its reference distribution. */
  async function redrawn(
    testCase: Case,
    run: RunResult,
    sampler: (probs: Float64Array) => ArrayLike<number>,
    start = 0.123,
  ): Promise<RunResult["outputs"]> {
    const { samples } = await distributionSamples(testCase, run.outputs, oracle);
    let uniform = start;
    const outputs = structuredClone(run.outputs);
    for (const sample of samples) {
      uniform = (uniform * 9301 + 0.49297) % 1;
      outputs.find((output) => output.id === sample.request)!.tokens[sample.index] = drawToken(
        sampler(sample.probs as Float64Array),
        uniform,
        1,
      ).token;
    }
    return outputs;
  }

  it("fails on the negative control only when the fresh-seed run rejects too (confirmation)", async () => {
    // One token per request: every redrawn token keeps its position's distribution (the prompt's), so only the
    // sampler differs. 160 replicas of a clean run hold, the same positions redrawn biased fail once the run on
    // fresh seeds (redrawn biased too) confirms; a clean confirmation run clears the first look.
    const single = stochasticCase(1, 160, 1.3, 1);
    const singleRun = await runCase(single);
    expect((await checkSamplingDistribution(single, singleRun.outputs, oracle)).status).toBe("holds");
    const fresh = freshSeedsCase(single);
    const freshRun = await runCase(fresh);
    const outputs = await redrawn(single, singleRun, (probs) => biased(probs, 0.7));
    let confirmations = 0;
    const confirmBiased = async () => {
      confirmations += 1;
      return { ...freshRun, outputs: await redrawn(fresh, freshRun, (probs) => biased(probs, 0.7), 0.77) };
    };
    const result = await checkSamplingDistribution(single, outputs, oracle, confirmBiased);
    expect(confirmations).toBe(1);
    expect(result.status).toBe("fails");
    expect(result.violation?.message).toMatch(
      /do not follow the target's processed distribution, confirmed on fresh seeds/,
    );
    const cleared = await checkSamplingDistribution(single, outputs, oracle, async () => freshRun);
    expect(cleared.status).toBe("holds");
    // A clean first look never asks for the confirmation run.
    await checkSamplingDistribution(single, singleRun.outputs, oracle, confirmBiased);
    expect(confirmations).toBe(1);
  });

  it("without a confirmation run (recorded traces) rejects at the stricter single-look level", async () => {
    const single = stochasticCase(1, 160, 1.3, 1);
    const singleRun = await runCase(single);
    const outputs = await redrawn(single, singleRun, (probs) => biased(probs, 0.5));
    const result = await checkSamplingDistribution(single, outputs, oracle, async () => undefined);
    expect(result.status).toBe("fails");
    expect(result.violation?.message).toMatch(/no fresh-seed run to confirm with/);
  });

  it("fails on a token the distribution gives probability 0", async () => {
    const restricted: Case = {
      ...testCase,
      workload: {
        ...testCase.workload,
        requests: testCase.workload.requests.map((request) => ({
          ...request,
          sampling: { ...request.sampling, topK: 1 },
        })),
      },
    };
    const outputs = structuredClone(run.outputs);
    const result = await checkSamplingDistribution(restricted, outputs, oracle);
    expect(result.status).toBe("fails");
    expect(result.violation?.message).toMatch(/probability 0/);
  });

  it("is not checkable with fewer than 100 informative tokens", async () => {
    const few = stochasticCase(1, 2, 1.3);
    const result = await checkSamplingDistribution(few, (await runCase(few)).outputs, oracle);
    expect(result.status).toBe("not-checkable");
  });
});
