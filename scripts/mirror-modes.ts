// Mirror drafts in every scheduling mode (issue 13): generated cases with a mirror or tapped-mirror draft (and
// no sampling options, which process the target's logits away from the mirror's argmax) and one mode forced on (overlap, the prefix cache with tight pools, padded buckets, all three at once, and none
// as the baseline), every law checked. Reports per mode the rounds that accepted all S drafts among the rounds
// not cut by EOS, a stop id or max new tokens, ties, and the verdicts of mirror acceptance and lossless: the
// README's table. A mode that lowered acceptance would show here before any output changed.
//
// --presets picks the model family (issue 29: `--presets swa,swa-f64`, the sliding-window presets; `--presets
// hybrid,hybrid-f64`, the hybrid presets, in the modes the engine runs them with: no graph replay (padded buckets)
// or multi-layer drafting, case/consistency.ts).
//
//   npx tsx scripts/mirror-modes.ts [--runs 100] [--seed 1] [--presets tiny,tiny-f64,...] [--json]
import fc from "fast-check";
import { caseArbitrary } from "../src/properties/arbitraries/case.ts";
import { PROPERTY_PRESETS, space, type CaseSpace } from "../src/properties/arbitraries/space.ts";
import { defineFlags, parseFlags } from "../src/cli/args.ts";
import { checkLaws } from "../src/check/runner.ts";
import { readRounds } from "../src/laws/rounds.ts";
import { referenceSource } from "../src/sources/reference.ts";
import { getPreset } from "../src/model/presets.ts";

const FLAGS = defineFlags({
  runs: { type: "integer", min: 1, default: 100, description: "generated cases per mode" },
  seed: { type: "integer", default: 1, description: "fast-check seed" },
  presets: {
    type: "string",
    default: PROPERTY_PRESETS.join(","),
    valueName: "LIST",
    description: "model presets, comma-separated (default the property presets)",
  },
  json: { type: "boolean", description: "print one JSON object" },
});

const MODES: Record<string, Partial<CaseSpace>> = {
  "none (baseline)": { overlap: [false], prefixCache: [false], padded: [false] },
  overlap: { overlap: [true], prefixCache: [false], padded: [false] },
  "prefix cache": { overlap: [false], prefixCache: [true], padded: [false], requests: { min: 2, max: 3 } },
  "padded buckets": { overlap: [false], prefixCache: [false], padded: [true] },
  "all three": { overlap: [true], prefixCache: [true], padded: [true], requests: { min: 2, max: 3 } },
};

interface ModeNumbers {
  cases: number;
  rounds: number;
  uncutRounds: number;
  fullRounds: number;
  mirrorAcceptance: Record<string, number>;
  lossless: Record<string, number>;
  otherFailures: string[];
}

const { values } = parseFlags(FLAGS, process.argv.slice(2));
const source = referenceSource();
const report: Record<string, ModeNumbers> = {};
const hybrid = values.presets.split(",").some((name) => getPreset(name).recurrent !== undefined);
const HYBRID_SPACE: Partial<CaseSpace> = { multiLayer: [false], graphReplay: [false] };
for (const [mode, overrides] of Object.entries(MODES)) {
  if (hybrid && overrides.padded?.[0]) continue;
  const cases = fc.sample(
    // Greedy requests without processing options: a processed target is no longer the mirror's argmax.
    caseArbitrary(
      space({
        presets: values.presets.split(","),
        drafts: ["mirror", "tapped-mirror"],
        draftWeights: {},
        sampling: { options: [] },
        ...(hybrid ? HYBRID_SPACE : {}),
        ...overrides,
      }),
    ),
    { seed: values.seed, numRuns: values.runs },
  );
  const numbers: ModeNumbers = {
    cases: 0,
    rounds: 0,
    uncutRounds: 0,
    fullRounds: 0,
    mirrorAcceptance: {},
    lossless: {},
    otherFailures: [],
  };
  for (const testCase of cases) {
    const check = await checkLaws(source, testCase);
    numbers.cases += 1;
    const S = testCase.engine.numSteps;
    // The greedy chain fits the tree only when N - 1 >= S (mirror acceptance's own condition).
    const chainFits = testCase.engine.numDraftTokens - 1 >= S;
    for (const round of readRounds(check.run!.trace)) {
      numbers.rounds += 1;
      if (round.result.finished || !chainFits) continue;
      numbers.uncutRounds += 1;
      if (round.result.acceptLen === S + 1) numbers.fullRounds += 1;
    }
    for (const result of check.results) {
      const tally =
        result.law === "mirror acceptance"
          ? numbers.mirrorAcceptance
          : result.law === "lossless"
            ? numbers.lossless
            : undefined;
      if (tally) tally[result.status] = (tally[result.status] ?? 0) + 1;
      else if (result.status === "fails") numbers.otherFailures.push(`${result.law}: ${result.violation?.message}`);
    }
  }
  report[mode] = numbers;
}

if (values.json) process.stdout.write(`${JSON.stringify({ seed: values.seed, runs: values.runs, modes: report })}\n`);
else {
  const lines = [
    `mirror and tapped-mirror drafts on ${values.presets}, ${values.runs} generated cases per mode, seed ${values.seed}`,
    "| mode | rounds accepting all S (of rounds not cut) | mirror acceptance (holds / not checkable / fails) | lossless (holds / fails) | other laws failing |",
    "| --- | --- | --- | --- | --- |",
  ];
  for (const [mode, numbers] of Object.entries(report)) {
    const share = numbers.uncutRounds ? ((100 * numbers.fullRounds) / numbers.uncutRounds).toFixed(1) : "-";
    const verdicts = (tally: Record<string, number>, keys: string[]) => keys.map((key) => tally[key] ?? 0).join(" / ");
    lines.push(
      `| ${mode} | ${numbers.fullRounds} / ${numbers.uncutRounds} (${share}%) | ${verdicts(numbers.mirrorAcceptance, ["holds", "not-checkable", "fails"])} | ${verdicts(numbers.lossless, ["holds", "fails"])} | ${numbers.otherFailures.length} |`,
    );
  }
  process.stdout.write(`${lines.join("\n")}\n`);
  for (const failure of Object.values(report).flatMap((numbers) => numbers.otherFailures)) console.error(failure);
}
