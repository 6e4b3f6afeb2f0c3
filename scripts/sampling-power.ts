// The sampling distribution law's false-alarm rate, calibration and power, measured (issues 14 and 25), today's
// rule (one look, asymptotic p < 1e-4) next to the law's (Monte Carlo p < 1e-3, confirmed on fresh seeds at 1e-3).
// Engine runs: the law's property's cases (replicas of stochastic requests, distinct seeds) run clean on --clean
// fresh seeds and with each sampling fault on --faulty seeds, checked through the runner (the confirmation run
// included); per setting the runs the law fails, the runs today's rule would fail on the same first-run
// samples, how often the negative control (the same positions drawn at 0.7 times the temperature) is rejected
// by each rule, and the runs to detect (1 / share failing). Clean tests at scale: --tests clean tests over the
// positions of the clean engine runs (each test redraws every position's token from its exact reference
// distribution, which is what a correct engine does, and its confirmation redraws again): the false alarms
// (target none; the bound is 1e-6 a test) and the calibration of the first look's p-values at 0.05, 0.01 and
// 1e-3 against binomial error, the asymptotic p-values' beside them.
//   npx tsx scripts/sampling-power.ts [--clean 200] [--faulty 40] [--tests 10000] [--seed 1] [--json FILE]
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import fc from "fast-check";
import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";
import type { Case } from "../src/case/case.ts";
import type { FaultName } from "../src/case/faults.ts";
import { FRESH_SEEDS } from "../src/laws/fresh-seeds.ts";
import { checkLaws } from "../src/check/runner.ts";
import { LAWS } from "../src/laws/registry.ts";
import {
  CONFIRM_RATE,
  controlSamples,
  distributionSamples,
  fitOf,
  jitterSeed,
  SAMPLING_DISTRIBUTION,
  SCREEN_RATE,
} from "../src/laws/sampling-distribution.ts";
import { SAMPLING_REPLAY } from "../src/laws/sampling-replay.ts";
import { FALSE_ALARM_RATE as TODAY_RATE, type TokenSample } from "../src/sampling/goodness-of-fit.ts";
import { monteCarloFit } from "../src/sampling/monte-carlo-fit.ts";
import { drawToken } from "../src/sampling/stochastic.ts";
import { referenceSource } from "../src/sources/reference.ts";
import { caseArbitrary } from "../src/properties/arbitraries/case.ts";
import distributionProperty from "../src/properties/laws/sampling-distribution.ts";
import type { SamplingOption } from "../src/sampling/params.ts";

const { values } = parseArgs({
  options: {
    clean: { type: "string", default: "200" },
    faulty: { type: "string", default: "40" },
    tests: { type: "string", default: "10000" },
    seed: { type: "string", default: "1" },
    json: { type: "string" },
  },
});
const seed = Number(values.seed);

/** Each setting: the fault and the sampling option it needs to show (processors skipped: min-p). */
const SETTINGS: { fault?: FaultName; required: SamplingOption[]; runs: number }[] = [
  { required: ["temperature"], runs: Number(values.clean) },
  { fault: "temperature-applied-twice", required: ["temperature"], runs: Number(values.faulty) },
  { fault: "recovery-from-target", required: ["temperature"], runs: Number(values.faulty) },
  { fault: "processing-bonus-only", required: ["temperature", "minP"], runs: Number(values.faulty) },
];

const mc = (samples: readonly TokenSample[], testSeed: number, alpha: number) =>
  monteCarloFit(samples, testSeed, { alpha, seed: testSeed }).pValue;
const possible = (samples: readonly TokenSample[]) => samples.every((sample) => sample.probs[sample.token] > 0);

const laws = LAWS.filter((law) => law.name === SAMPLING_DISTRIBUTION || law.name === SAMPLING_REPLAY);
const source = referenceSource();
const report = [];
/** The clean runs' positions (their distributions), for the clean tests at scale. */
const cleanPositions: TokenSample[][] = [];
for (const setting of SETTINGS) {
  const space = {
    ...distributionProperty.space,
    faults: setting.fault ? [setting.fault] : [],
    sampling: { ...distributionProperty.space.sampling, required: setting.required },
  };
  const cases: Case[] = fc.sample(caseArbitrary(space), {
    seed: seed + report.length * 100_003,
    numRuns: setting.runs,
  });
  const tally = {
    runs: 0,
    fails: 0,
    todayFails: 0,
    notCheckable: 0,
    replayFails: 0,
    controlRejected: 0,
    todayControlRejected: 0,
    confirmationsRun: 0,
  };
  let samples = 0;
  const start = performance.now();
  for (const testCase of cases) {
    const check = await checkLaws(source, testCase, { laws });
    const verdict = check.results.find((result) => result.law === SAMPLING_DISTRIBUTION)!;
    const replay = check.results.find((result) => result.law === SAMPLING_REPLAY);
    tally.runs += 1;
    if (verdict.status === "fails") tally.fails += 1;
    if (verdict.status === "not-checkable") tally.notCheckable += 1;
    if (replay?.status === "fails") tally.replayFails += 1;
    if (check.twins[FRESH_SEEDS.kind]) tally.confirmationsRun += 1;
    const oracle = await source.oracle(testCase);
    const { samples: drawn } = await distributionSamples(testCase, check.run!.outputs, oracle);
    samples += drawn.length;
    const testSeed = jitterSeed(testCase);
    // Today's rule on the same samples: one look, asymptotic p-value below 1e-4.
    if (fitOf(drawn, testSeed).pValue < TODAY_RATE) tally.todayFails += 1;
    if (!setting.fault && possible(drawn) && drawn.length >= 100) cleanPositions.push(drawn);
    // The negative control: today's rule on the run's positions; the law's on the run's and the fresh run's.
    if (drawn.length < 100) continue;
    const control = controlSamples(drawn);
    if (fitOf(control, testSeed).pValue < TODAY_RATE) tally.todayControlRejected += 1;
    if (mc(control, testSeed, SCREEN_RATE) < SCREEN_RATE) {
      const freshCase = FRESH_SEEDS.of(testCase);
      const fresh = check.twins[FRESH_SEEDS.kind]?.result ?? (await source.twin(testCase, FRESH_SEEDS));
      const { samples: freshDrawn } = await distributionSamples(freshCase, fresh.outputs, oracle);
      const freshControl = controlSamples(freshDrawn);
      if (freshDrawn.length >= 100 && mc(freshControl, jitterSeed(freshCase), CONFIRM_RATE) < CONFIRM_RATE)
        tally.controlRejected += 1;
    }
  }
  const share = (count: number) => count / Math.max(1, tally.runs);
  const entry = {
    fault: setting.fault ?? "none (clean)",
    ...tally,
    meanSamples: Math.round(samples / Math.max(1, tally.runs)),
    failShare: share(tally.fails),
    runsToDetect: tally.fails > 0 ? tally.runs / tally.fails : null,
    todayRunsToDetect: tally.todayFails > 0 ? tally.runs / tally.todayFails : null,
    seconds: Math.round((performance.now() - start) / 1000),
  };
  report.push(entry);
  console.log(
    `${entry.fault.padEnd(27)} runs ${tally.runs}, ~${entry.meanSamples} tokens each: law fails ${tally.fails} (runs to detect ${entry.runsToDetect?.toFixed(2) ?? "-"}; confirmation runs ${tally.confirmationsRun}), today's rule ${tally.todayFails} (${entry.todayRunsToDetect?.toFixed(2) ?? "-"}); not checkable ${tally.notCheckable}; control rejected ${tally.controlRejected}/${tally.runs} (today ${tally.todayControlRejected}); sampling replay fails ${tally.replayFails} (${entry.seconds}s)`,
  );
}

// Clean tests at scale over the clean runs' positions.
const tests = Number(values.tests);
const rng = xoroshiro128plus(seed ^ 0x7e57);
const redraw = (positions: readonly TokenSample[]): TokenSample[] =>
  positions.map((position) => ({
    probs: position.probs,
    token: drawToken(position.probs, uniformFloat64(rng), 1).token,
  }));
const scale = {
  tests: 0,
  falseAlarms: 0,
  confirmations: 0,
  below: { 0.05: 0, 0.01: 0, 0.001: 0 },
  asymptoticBelow: { 0.05: 0, 0.01: 0, 0.001: 0 },
};
const levels = [0.05, 0.01, 0.001] as const;
const scaleStart = performance.now();
for (let test = 0; test < tests && cleanPositions.length > 0; test++) {
  const positions = cleanPositions[test % cleanPositions.length];
  const drawn = redraw(positions);
  const testSeed = (seed * 1_000_003 + test) | 0;
  const pValue = mc(drawn, testSeed, SCREEN_RATE);
  const asymptotic = fitOf(drawn, testSeed).pValue;
  scale.tests += 1;
  for (const level of levels) {
    if (pValue < level) scale.below[level] += 1;
    if (asymptotic < level) scale.asymptoticBelow[level] += 1;
  }
  if (pValue >= SCREEN_RATE) continue;
  scale.confirmations += 1;
  if (mc(redraw(positions), testSeed ^ 0x5eed, CONFIRM_RATE) < CONFIRM_RATE) scale.falseAlarms += 1;
}
const binomial = (level: number) => Math.sqrt(scale.tests * level * (1 - level));
console.log(
  `clean tests ${scale.tests} over ${cleanPositions.length} clean runs' positions: false alarms ${scale.falseAlarms} (bound ${SCREEN_RATE * CONFIRM_RATE} a test; confirmations run ${scale.confirmations}) (${Math.round((performance.now() - scaleStart) / 1000)}s)`,
);
for (const level of levels)
  console.log(
    `  p < ${level}: Monte Carlo ${scale.below[level]}, asymptotic (today) ${scale.asymptoticBelow[level]}; expected ${(scale.tests * level).toFixed(1)} +- ${binomial(level).toFixed(1)}`,
  );
if (values.json)
  writeFileSync(
    values.json,
    JSON.stringify(
      { seed, screenRate: SCREEN_RATE, confirmRate: CONFIRM_RATE, todayRate: TODAY_RATE, report, scale },
      null,
      2,
    ),
  );
