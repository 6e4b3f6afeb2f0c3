// Execution-provider benchmark (issue 6): for each EP, how many generated law runs pass (ties counted),
// and tokens/s target-only vs speculative (mirror, truncated mirror, eagle) on a preset, measured side
// by side in one process (runs interleaved per repetition, medians reported).
//
//   npx tsx scripts/bench-gpu.ts --ep cpu --ep cuda --ep webgpu [--preset large] [--preset tiny]
//                                [--law-runs 24] [--reps 3] [--tokens 32] [--json FILE]
//                                [--draft truncated-mirror] (repeatable; default mirror, truncated-mirror, eagle)
import { writeFileSync } from "node:fs";
import os from "node:os";
import { parseArgs } from "node:util";
import type { Case } from "../src/case/case.ts";
import { defaultCase } from "../src/case/default-case.ts";
import { maxTreeTokens } from "../src/case/engine-config.ts";
import { runCase } from "../src/engine/run-case.ts";
import { checkLaws } from "../src/check/runner.ts";
import { referenceSource } from "../src/sources/reference.ts";
import type { DraftKind } from "../src/model/spec.ts";
import type { ExecutionProvider } from "../src/runtime/ort.ts";
import { ModelSession, runtimeInfo } from "../src/runtime/ort.ts";
import { median, table } from "./bench-util.ts";

const { values } = parseArgs({
  options: {
    ep: { type: "string", multiple: true, default: ["cpu"] },
    preset: { type: "string", multiple: true, default: ["large"] },
    "law-runs": { type: "string", default: "24" },
    reps: { type: "string", default: "3" },
    tokens: { type: "string", default: "32" },
    steps: { type: "string", default: "3" },
    "pool-slots": { type: "string", default: "512" },
    opt: { type: "string", default: "basic" },
    profile: { type: "boolean", default: false },
    threads: { type: "string", default: String(Math.min(8, os.cpus().length)) },
    json: { type: "string" },
    draft: { type: "string", multiple: true, default: ["mirror", "truncated-mirror", "eagle"] },
  },
});
const eps = values.ep as ExecutionProvider[];
const lawRuns = Number(values["law-runs"]);
const reps = Number(values.reps);
const maxNewTokens = Number(values.tokens);
const cpuThreads = Number(values.threads);
const DRAFTS = values.draft as DraftKind[];

function runtimeFor(ep: ExecutionProvider) {
  return {
    ep,
    threads: ep === "cpu" ? cpuThreads : 1,
    graphOptimizationLevel: values.opt as "disabled" | "basic" | "extended" | "all",
  };
}

/** Law runs on float32 tiny specs: a spread of S, K, chunk, page, replay and draft kinds, seeded. */
function lawCase(index: number, ep: ExecutionProvider): Case {
  const numSteps = 1 + (index % 4);
  const topk = [1, 1, 2, 4][index % 4];
  const numDraftTokens = topk === 1 ? numSteps + 1 : Math.min(2 * (numSteps + 1), maxTreeTokens(numSteps, topk));
  const draft = (["mirror", "tapped-mirror", "eagle", "noisy-mirror"] as const)[index % 4];
  return defaultCase({
    preset: "tiny",
    draft,
    seed: 1000 + index,
    numRequests: 3,
    maxNewTokens: 12,
    engine: {
      numSteps,
      topk,
      numDraftTokens,
      chunkSize: [null, 2, 5][index % 3],
      pageSize: [1, 2, 4][index % 3],
      graphReplay: index % 5 === 0,
      runtime: runtimeFor(ep),
    },
  });
}

interface LawTallyRow {
  ep: string;
  runs: number;
  passed: number;
  failed: number;
  ties: number;
  error?: string;
  failures: string[];
}

async function lawsOn(ep: ExecutionProvider): Promise<LawTallyRow> {
  const tally: LawTallyRow = { ep, runs: 0, passed: 0, failed: 0, ties: 0, failures: [] };
  try {
    for (let i = 0; i < lawRuns; i++) {
      const testCase = lawCase(i, ep);
      const laws = (await checkLaws(referenceSource(), testCase)).results;
      tally.runs += 1;
      tally.ties += laws.reduce((sum, law) => sum + law.ties, 0);
      const failing = laws.filter((law) => law.status === "fails");
      if (failing.length === 0) tally.passed += 1;
      else {
        tally.failed += 1;
        tally.failures.push(`case ${i}: ${failing.map((law) => `${law.law}: ${law.violation?.message}`).join("; ")}`);
      }
    }
  } catch (error) {
    tally.error = error instanceof Error ? error.message : String(error);
  }
  return tally;
}

interface SpeedRow {
  ep: string;
  preset: string;
  mode: string;
  tokensPerSecond: number;
  meanAcceptLen: number;
  ratio: number;
}

async function speedOn(ep: ExecutionProvider, preset: string): Promise<SpeedRow[]> {
  const base = (draft: DraftKind) =>
    defaultCase({
      preset,
      draft,
      seed: 7,
      numRequests: 2,
      maxNewTokens,
      engine: { numSteps: Number(values.steps), poolSlots: Number(values["pool-slots"]), runtime: runtimeFor(ep) },
    });
  const cases: [string, Case][] = [
    ["target-only", { ...base(DRAFTS[0]), engine: { ...base(DRAFTS[0]).engine, mode: "target-only" } }],
    ...DRAFTS.map((draft): [string, Case] => [draft, base(draft)]),
  ];
  const times = new Map<string, number[]>(cases.map(([name]) => [name, []]));
  const accept = new Map<string, number>();
  let tokens = 0;
  for (const [, testCase] of cases) await runCase(testCase, { trace: false }); // build models, sessions, warm up
  for (let rep = 0; rep < reps; rep++) {
    for (const [name, testCase] of cases) {
      const inOrtBefore = totalInsideRun();
      const start = performance.now();
      const result = await runCase(testCase, { trace: false });
      times.get(name)!.push((performance.now() - start) / 1000);
      if (values.profile)
        outsideOrt.set(`${ep} ${preset} ${name}`, [
          ...(outsideOrt.get(`${ep} ${preset} ${name}`) ?? []),
          (performance.now() - start - (totalInsideRun() - inOrtBefore)) / (performance.now() - start),
        ]);
      tokens = result.outputs.reduce((sum, output) => sum + output.tokens.length, 0);
      const lens = result.outputs.flatMap((output) => output.acceptLens);
      accept.set(name, lens.length ? lens.reduce((a, b) => a + b, 0) / lens.length : 1);
    }
  }
  const baseline = tokens / median(times.get("target-only")!);
  return cases.map(([name]) => {
    const tokensPerSecond = tokens / median(times.get(name)!);
    return {
      ep,
      preset,
      mode: name,
      tokensPerSecond,
      meanAcceptLen: accept.get(name)!,
      ratio: tokensPerSecond / baseline,
    };
  });
}

/** --profile: time inside ModelSession.run per model kind and row count (where a forward's cost goes). */
const forwardTimes = new Map<string, number[]>();
/** Share of a timed run spent outside ModelSession.run (engine JS, tensor building), per config. */
const outsideOrt = new Map<string, number[]>();
function totalInsideRun(): number {
  let total = 0;
  for (const list of forwardTimes.values()) for (const ms of list) total += ms;
  return total;
}
if (values.profile) {
  const run = ModelSession.prototype.run;
  ModelSession.prototype.run = async function (this: ModelSession, feeds) {
    const start = performance.now();
    const result = await run.call(this, feeds);
    const key = `${this.ep} ${this.hasHiddenInput ? "draft" : "target"} rows=${feeds.tokens.length}`;
    forwardTimes.set(key, [...(forwardTimes.get(key) ?? []), performance.now() - start]);
    return result;
  };
}

const laws: LawTallyRow[] = [];
const speed: SpeedRow[] = [];
const errors: Record<string, string> = {};
for (const ep of eps) {
  process.stderr.write(`[${ep}] law runs...\n`);
  const tally = await lawsOn(ep);
  laws.push(tally);
  if (tally.error) {
    errors[ep] = tally.error;
    process.stderr.write(`[${ep}] unavailable: ${tally.error}\n`);
    continue;
  }
  for (const preset of values.preset!) {
    process.stderr.write(`[${ep}] speed on ${preset}...\n`);
    try {
      speed.push(...(await speedOn(ep, preset)));
    } catch (error) {
      errors[`${ep}/${preset}`] = error instanceof Error ? error.message : String(error);
      process.stderr.write(`[${ep}] ${preset} failed: ${errors[`${ep}/${preset}`]}\n`);
    }
  }
}

const info = runtimeInfo(runtimeFor("cpu"));
console.log(
  `machine: ${os.cpus()[0]?.model ?? "unknown CPU"}, ${os.cpus().length} cores, node ${process.version}, ONNX Runtime ${info.ortVersion}; CPU EP threads ${cpuThreads}; graph optimization ${values.opt}`,
);
console.log("\nLaw runs (float32 tiny specs, tie-aware):");
console.log(
  table(
    ["EP", "runs", "passed", "failed", "ties", "note"],
    laws.map((row) => [
      row.ep,
      String(row.runs),
      String(row.passed),
      String(row.failed),
      String(row.ties),
      row.error ?? row.failures[0] ?? "",
    ]),
  ),
);
console.log(
  `\nTokens/s, speculative (S=${values.steps}) vs target-only, ${values["pool-slots"]} pool slots, trace off, median of ${reps} reps:`,
);
console.log(
  table(
    ["EP", "preset", "mode", "tokens/s", "accept len", "vs target-only"],
    speed.map((row) => [
      row.ep,
      row.preset,
      row.mode,
      row.tokensPerSecond.toFixed(1),
      row.meanAcceptLen.toFixed(2),
      `${row.ratio.toFixed(2)}x`,
    ]),
  ),
);
if (values.profile) {
  console.log("\nTime inside ModelSession.run (all EPs and presets together), ms:");
  console.log(
    table(
      ["forward", "calls", "median", "mean"],
      [...forwardTimes.entries()]
        .sort()
        .map(([key, list]) => [
          key,
          String(list.length),
          median(list).toFixed(3),
          (list.reduce((a, b) => a + b, 0) / list.length).toFixed(3),
        ]),
    ),
  );
  console.log("\nShare of timed runs spent outside ModelSession.run:");
  console.log(
    table(
      ["config", "outside ORT"],
      [...outsideOrt.entries()].map(([key, list]) => [key, `${(median(list) * 100).toFixed(1)}%`]),
    ),
  );
}
if (values.json)
  writeFileSync(
    values.json,
    JSON.stringify(
      {
        machine: {
          cpu: os.cpus()[0]?.model,
          cores: os.cpus().length,
          node: process.version,
          ortVersion: info.ortVersion,
        },
        laws,
        speed,
        errors,
      },
      null,
      2,
    ),
  );
