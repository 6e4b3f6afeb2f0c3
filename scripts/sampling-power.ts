// The sampling distribution law's false-alarm rate and power, measured (issue 14): its property's cases
// (replicas of stochastic requests, distinct seeds) run clean on --clean fresh seeds, and with each sampling
// fault on --faulty seeds. Reports per setting how many runs the law fails (clean: the false alarms, against
// the stated 1e-4 per run), how calibrated its p-values are (clean runs: the share below 0.05 and 0.01 should
// be about 5% and 1%), how often the negative control (the same positions drawn at 0.7 times the
// temperature) is rejected, and per fault the runs to detect: 1 / (share of runs failing). Sampling replay's
// verdicts are reported next to it (it sees the recorded uniforms; third-party engines may not record any).
//   npx tsx scripts/sampling-power.ts [--clean 200] [--faulty 40] [--seed 1] [--json FILE]
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import fc from "fast-check";
import type { Case } from "../src/case/case.ts";
import type { FaultName } from "../src/engine/faults.ts";
import { checkLaws } from "../src/check/runner.ts";
import { LAWS } from "../src/laws/registry.ts";
import {
  controlSamples,
  distributionSamples,
  fitOf,
  jitterSeed,
  SAMPLING_DISTRIBUTION,
} from "../src/laws/sampling-distribution.ts";
import { SAMPLING_REPLAY } from "../src/laws/sampling-replay.ts";
import { FALSE_ALARM_RATE } from "../src/sampling/goodness-of-fit.ts";
import { referenceSource } from "../src/sources/reference.ts";
import { caseArbitrary } from "../src/properties/arbitraries/case.ts";
import distributionProperty from "../src/properties/laws/sampling-distribution.ts";
import type { SamplingOption } from "../src/sampling/params.ts";

const { values } = parseArgs({
  options: {
    clean: { type: "string", default: "200" },
    faulty: { type: "string", default: "40" },
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

const laws = LAWS.filter((law) => law.name === SAMPLING_DISTRIBUTION || law.name === SAMPLING_REPLAY);
const source = referenceSource();
const report = [];
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
  const tally = { runs: 0, fails: 0, notCheckable: 0, replayFails: 0, pBelow05: 0, pBelow01: 0, controlRejected: 0 };
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
    // The p-values themselves (calibration) and the control, recomputed from the same samples.
    const oracle = await source.oracle(testCase);
    const { samples: drawn } = await distributionSamples(testCase, check.run!.outputs, oracle);
    samples += drawn.length;
    const fit = fitOf(drawn, jitterSeed(testCase));
    if (fit.impossible === undefined && fit.pValue < 0.05) tally.pBelow05 += 1;
    if (fit.impossible === undefined && fit.pValue < 0.01) tally.pBelow01 += 1;
    if (fitOf(controlSamples(drawn), jitterSeed(testCase)).pValue < FALSE_ALARM_RATE) tally.controlRejected += 1;
  }
  const share = (count: number) => count / Math.max(1, tally.runs);
  const entry = {
    fault: setting.fault ?? "none (clean)",
    ...tally,
    meanSamples: Math.round(samples / Math.max(1, tally.runs)),
    failShare: share(tally.fails),
    runsToDetect: tally.fails > 0 ? tally.runs / tally.fails : null,
    replayFailShare: share(tally.replayFails),
    seconds: Math.round((performance.now() - start) / 1000),
  };
  report.push(entry);
  console.log(
    `${entry.fault.padEnd(27)} runs ${tally.runs}, ~${entry.meanSamples} tokens each: distribution law fails ${tally.fails} (${(100 * entry.failShare).toFixed(1)}%, runs to detect ${entry.runsToDetect?.toFixed(2) ?? "-"}), not checkable ${tally.notCheckable}; p < 0.05 in ${tally.pBelow05}, p < 0.01 in ${tally.pBelow01}; control rejected ${tally.controlRejected}/${tally.runs}; sampling replay fails ${tally.replayFails} (${entry.seconds}s)`,
  );
}
if (values.json)
  writeFileSync(values.json, JSON.stringify({ seed, falseAlarmRate: FALSE_ALARM_RATE, report }, null, 2));
