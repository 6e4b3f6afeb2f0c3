// Law "sampling distribution": the tokens stochastic requests emit follow the target's processed
// distribution. Every output token of every stochastic request in the run is one sample of the cache-free
// distribution at its position (prompt ++ the output before it, processed, temperature, min-p, top-k,
// top-p: stochastic.ts); the samples' randomized PITs must be uniform and their temperature score centred
// (goodness-of-fit.ts: chi-square over 10 bins and the score's z, false-alarm rate 1e-4 per run), and no token
// may have reference probability 0. Reads outputs
// only, so it applies to any engine, with or without traces or uniforms: what `validate` and `check
// --engine` can show of speculative sampling's losslessness. Its property draws workloads of replicas (a
// request repeated with distinct seeds) for enough samples; runs with fewer than MIN_SAMPLES informative
// tokens (a position whose distribution holds one token tells nothing) are not checkable. The negative
// control (controlSamples: the same positions drawn from a biased sampler, the temperature 0.7 times the
// right one) is what scripts/sampling-power.ts and the tests run to show the test's power at these sizes.
import type { Case } from "../case/case.ts";
import type { RequestOutput } from "../trace/run-result.ts";
import { isStochastic, requestSampling } from "../sampling/params.ts";
import {
  biased,
  FALSE_ALARM_RATE,
  goodnessOfFit,
  MIN_SAMPLES,
  type FitResult,
  type TokenSample,
} from "../sampling/goodness-of-fit.ts";
import { distributionOf, drawToken } from "../sampling/stochastic.ts";
import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";
import type { Law } from "./definition.ts";
import { LawTally, notCheckable, type LawResult } from "./law.ts";
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

export async function checkSamplingDistribution(
  testCase: Readonly<Case>,
  outputs: readonly Readonly<RequestOutput>[],
  oracle: ReferenceOracle,
): Promise<LawResult> {
  const { samples, ties } = await distributionSamples(testCase, outputs, oracle);
  const tally = new LawTally(SAMPLING_DISTRIBUTION);
  tally.ties = ties;
  const fit = fitOf(samples, jitterSeed(testCase));
  if (fit.impossible !== undefined) {
    const sample = samples[fit.impossible];
    tally.checked = samples.length;
    tally.fail({
      message: `request ${sample.request} output token ${sample.index} is ${sample.token}, which the target's processed distribution there gives probability 0`,
      request: sample.request,
      index: sample.index,
      got: sample.token,
    });
    return tally.result();
  }
  if (samples.length < MIN_SAMPLES)
    return {
      ...notCheckable(SAMPLING_DISTRIBUTION, `${samples.length} sampled tokens, the test needs ${MIN_SAMPLES}`),
      ties,
    };
  const { test, score } = fit;
  tally.checked = samples.length;
  if (fit.pValue < FALSE_ALARM_RATE) {
    tally.fail({
      message: `${samples.length} sampled tokens do not follow the target's processed distribution: temperature score z ${score.z.toFixed(2)} (${score.z > 0 ? "sharper" : "flatter"} than the reference), PIT chi-square ${test.statistic.toFixed(1)} over ${test.degrees} degrees of freedom, p = ${fit.pValue.toExponential(2)} < ${FALSE_ALARM_RATE} (PIT bins ${test.counts.join(" ")})`,
    });
    return tally.result();
  }
  return tally.result();
}

export const law: Law = {
  name: SAMPLING_DISTRIBUTION,
  summary:
    "stochastic requests' tokens follow the target's processed distribution (PIT chi-square, temperature score; false alarms 1e-4)",
  appliesTo: (testCase) => testCase.workload.requests.some((request) => isStochastic(request.sampling)),
  needs: { oracle: true },
  check: ({ testCase, run, oracle }) => checkSamplingDistribution(testCase, run.outputs, oracle),
};
