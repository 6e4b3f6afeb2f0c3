// Law "sampling distribution": the tokens stochastic requests emit follow the target's processed
// distribution. Every output token of every stochastic request in the run is one sample of the cache-free
// distribution at its position (prompt ++ the output before it, processed, temperature, min-p, top-k,
// top-p: stochastic.ts); the samples' randomized PITs must be uniform and their temperature score centred
// (goodness-of-fit.ts: chi-square over 10 bins and the score's z, their p-value simulated under the exact null:
// monte-carlo-fit.ts), and no token may have reference probability 0. A rejection is confirmed on the same case
// with fresh sampling seeds before the law fails (issue 25: at 1e-4 per run, thousands of clean runs cried wolf),
// so the false-alarm rate is SCREEN_RATE x CONFIRM_RATE per case, shrinking included. Reads outputs
// only, so it applies to any engine, with or without traces or uniforms: what `validate` and `check
// --engine` can show of speculative sampling's losslessness. Its property draws workloads of replicas (a
// request repeated with distinct seeds) for enough samples; runs with fewer than MIN_SAMPLES informative
// tokens (a position whose distribution holds one token tells nothing) are not checkable. The negative
// control (controlSamples: the same positions drawn from a biased sampler, the temperature 0.7 times the
// right one) is what scripts/sampling-power.ts and the tests run to show the test's power at these sizes.
import type { Case } from "../case/case.ts";
import type { RequestOutput, RunResult } from "../trace/run-result.ts";
import { isStochastic, requestSampling } from "../sampling/params.ts";
import { biased, goodnessOfFit, MIN_SAMPLES, type FitResult, type TokenSample } from "../sampling/goodness-of-fit.ts";
import { monteCarloFit } from "../sampling/monte-carlo-fit.ts";
import { distributionOf, drawToken } from "../sampling/stochastic.ts";
import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";
import type { Law } from "./definition.ts";
import { FRESH_SEEDS, freshSeedsCase } from "./fresh-seeds.ts";
import { LawTally, notCheckable, type LawResult, type LawViolation } from "./law.ts";
import type { ReferenceOracle } from "../reference/oracle.ts";

export const SAMPLING_DISTRIBUTION = "sampling distribution";

/** The negative control's sampler: temperature times this factor (sharper). */
export const CONTROL_TEMPERATURE_FACTOR = 0.7;
/** Seed of the control's draws (fixed: independent of the engine's randomness). */
const CONTROL_SEED = 0xc0de;

export interface PositionSample extends TokenSample {
  cutMargin: number;
  request: number;
  index: number;
}

export interface DistributionSamples {
  samples: PositionSample[];
  /** Tokens set aside: reference probability 0 but excluded by a cut within epsilon (a near-tie). */
  ties: number;
}

/** Every output token of the run's stochastic requests with its reference distribution (but certain ones). */
export async function distributionSamples(
  testCase: Readonly<Case>,
  outputs: readonly Readonly<RequestOutput>[],
  oracle: ReferenceOracle,
): Promise<DistributionSamples> {
  const samples: PositionSample[] = [];
  let ties = 0;
  for (const output of outputs) {
    const sampling = requestSampling(testCase, output.id);
    if (!sampling || !isStochastic(sampling.params) || output.tokens.length === 0) continue;
    const prompt = testCase.workload.requests.find((request) => request.id === output.id)!.prompt;
    const reference = await oracle.processedOver([...prompt, ...output.tokens], sampling);
    output.tokens.forEach((token, index) => {
      const distribution = distributionOf(reference.rows[prompt.length - 1 + index]!, sampling.params);
      const possible = distribution.probs[token] > 0;
      if (!possible && distribution.cutMargin < oracle.epsilon) ties += 1;
      // A position where one token holds all the mass tells nothing about the sampler (its PIT is the jitter).
      else if (!possible || distribution.probs[token] < 1)
        samples.push({ ...distribution, token, request: output.id, index });
    });
  }
  return { samples, ties };
}

/** The same positions resampled from the biased sampler (the negative control). Pure. */
export function controlSamples(samples: readonly TokenSample[], factor = CONTROL_TEMPERATURE_FACTOR): TokenSample[] {
  const rng = xoroshiro128plus(CONTROL_SEED);
  return samples.map((sample) => {
    const probs = biased(sample.probs, factor);
    return { probs: sample.probs, token: drawToken(probs, uniformFloat64(rng), 1).token };
  });
}

/**
 * The PIT jitter's seed: from the case (its prompts and sampling seeds), fixed before anything is drawn, so the
 * jitter is independent of the tokens, and differs between cases, so runs of different cases do not share it.
 */
export function jitterSeed(testCase: Readonly<Case>): number {
  let hash = 0x811c9dc5;
  for (const request of testCase.workload.requests)
    for (const value of [request.id, request.sampling?.seed ?? -1, ...request.prompt])
      hash = Math.imul(hash ^ (value & 0xffff), 0x01000193);
  return hash | 0;
}

export function fitOf(samples: readonly TokenSample[], seed: number): FitResult {
  return goodnessOfFit(samples, seed);
}

/** The first look's level: a run whose Monte Carlo p-value is below it is confirmed on fresh seeds. */
export const SCREEN_RATE = 1e-3;
/** The confirmation's level: the law fails only when both reject, so false alarms are SCREEN x CONFIRM = 1e-6. */
export const CONFIRM_RATE = 1e-3;
/**
 * Where the source cannot rerun the case (recorded traces): one look at this level (the Monte Carlo resolution
 * it needs, 4 / alpha simulations, is what a lower level would cost on every run near the line).
 */
export const UNCONFIRMED_RATE = 1e-4;

interface Look {
  samples: PositionSample[];
  ties: number;
  impossible?: PositionSample;
  pValue?: number;
}

async function look(
  testCase: Readonly<Case>,
  outputs: readonly Readonly<RequestOutput>[],
  oracle: ReferenceOracle,
  alpha: number,
): Promise<Look> {
  const { samples, ties } = await distributionSamples(testCase, outputs, oracle);
  const impossible = samples.find((sample) => !(sample.probs[sample.token] > 0));
  if (impossible || samples.length < MIN_SAMPLES) return { samples, ties, impossible };
  const seed = jitterSeed(testCase);
  return { samples, ties, pValue: monteCarloFit(samples, seed, { alpha, seed }).pValue };
}

function impossibleFailure(sample: PositionSample, where: string): LawViolation {
  return {
    message: `${where}request ${sample.request} output token ${sample.index} is ${sample.token}, which the target's processed distribution there gives probability 0`,
    request: sample.request,
    index: sample.index,
    got: sample.token,
  };
}

function summary(found: Look): string {
  const fit = fitOf(found.samples, 0);
  return `${found.samples.length} sampled tokens, temperature score z ${fit.score.z.toFixed(2)} (${fit.score.z > 0 ? "sharper" : "flatter"} than the reference), Monte Carlo p = ${found.pValue!.toExponential(2)}`;
}

/**
 * The law over a run, confirmed on fresh seeds before it fails: a token of probability 0 fails at once (it cannot
 * be drawn at all); otherwise the Monte Carlo p-value (monte-carlo-fit.ts) below SCREEN_RATE asks `confirm` for
 * the case on fresh seeds, and the law fails only when that run's p-value is below CONFIRM_RATE too. Without a
 * confirmation run, one look at UNCONFIRMED_RATE.
 */
export async function checkSamplingDistribution(
  testCase: Readonly<Case>,
  outputs: readonly Readonly<RequestOutput>[],
  oracle: ReferenceOracle,
  confirm?: () => Promise<Readonly<RunResult> | undefined>,
): Promise<LawResult> {
  const tally = new LawTally(SAMPLING_DISTRIBUTION);
  const first = await look(testCase, outputs, oracle, SCREEN_RATE);
  tally.ties = first.ties;
  tally.checked = first.samples.length;
  if (first.impossible) {
    tally.fail(impossibleFailure(first.impossible, ""));
    return tally.result();
  }
  if (first.pValue === undefined)
    return {
      ...notCheckable(SAMPLING_DISTRIBUTION, `${first.samples.length} sampled tokens, the test needs ${MIN_SAMPLES}`),
      ties: first.ties,
    };
  if (first.pValue >= SCREEN_RATE) return tally.result();
  const rerun = await confirm?.();
  if (!rerun) {
    const single = await look(testCase, outputs, oracle, UNCONFIRMED_RATE);
    if (single.pValue! < UNCONFIRMED_RATE)
      tally.fail({
        message: `${summary(single)} < ${UNCONFIRMED_RATE} (no fresh-seed run to confirm with: one look at the stricter level)`,
      });
    return tally.result();
  }
  const freshCase = freshSeedsCase(testCase);
  const second = await look(freshCase, rerun.outputs, oracle, CONFIRM_RATE);
  tally.checked += second.samples.length;
  tally.ties += second.ties;
  if (second.impossible) tally.fail(impossibleFailure(second.impossible, "on fresh seeds: "));
  else if (second.pValue !== undefined && second.pValue < CONFIRM_RATE)
    tally.fail({
      message: `the sampled tokens do not follow the target's processed distribution, confirmed on fresh seeds: ${summary(first)} < ${SCREEN_RATE}; ${FRESH_SEEDS.describe}: ${summary(second)} < ${CONFIRM_RATE}`,
    });
  return tally.result();
}

export const law: Law = {
  name: SAMPLING_DISTRIBUTION,
  summary:
    "stochastic requests' tokens follow the target's processed distribution (PIT chi-square and temperature score, Monte Carlo p-values, confirmed on fresh seeds; false alarms 1e-6)",
  appliesTo: (testCase) => testCase.workload.requests.some((request) => isStochastic(request.sampling)),
  needs: { oracle: true, confirmation: FRESH_SEEDS },
  check: ({ testCase, run, oracle, confirm }) => checkSamplingDistribution(testCase, run.outputs, oracle, confirm),
};
