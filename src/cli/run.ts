// `specconf run`: runs a case in target-only and speculative mode, checks the laws that apply, and
// prints outputs, accept lengths, ties and verdicts (or one JSON object with --json).
import type { Case } from "../case/case.ts";
import { defaultCase } from "../case/default-case.ts";
import { maxPoolSlots, requiredPoolSlots } from "../case/limits.ts";
import { loadCaseFile } from "../case/load.ts";
import { preflightCase } from "../case/preflight.ts";
import { ConfigError, maxTreeTokens } from "../case/engine-config.ts";
import { FAULT_NAMES, type FaultName } from "../case/faults.ts";
import { runCase } from "../engine/run-case.ts";
import type { RunResult } from "../trace/run-result.ts";
import { BadInputError } from "../errors/bad-input.ts";
import { runCommandBody } from "../errors/exit.ts";
import { checkLaws } from "../check/runner.ts";
import { referenceSource } from "../sources/reference.ts";
import { RunFailure, targetOnlyCase } from "../check/source.ts";
import type { LawResult } from "../laws/law.ts";
import { presetNames } from "../model/presets.ts";
import { DRAFT_KINDS } from "../model/spec.ts";
import { EXECUTION_PROVIDERS } from "../runtime/ort.ts";
import { stableJson } from "../schema/atomic-write.ts";
import { defineFlags, parseFlags, rejectCombined, renderHelp, UsageError } from "./args.ts";
import { LIMIT_FLAG_SPECS, limitsFrom } from "./limit-flags.ts";
import { nothingChecked } from "./nothing-checked.ts";
import { checkOutputPaths, writeOutputFile } from "./output-paths.ts";
import { createProgress } from "./progress.ts";
import { summarize, type RunSummary } from "./run-summary.ts";

const FLAGS = defineFlags({
  case: { type: "string", valueName: "FILE", description: "run this case file instead of the built-in default" },
  preset: { type: "choice", choices: presetNames(), default: "tiny", description: "model preset" },
  draft: {
    type: "choice",
    choices: DRAFT_KINDS,
    default: "mirror",
    description: "draft model, or ngram (prompt lookup: 0..S drafts, no model)",
  },
  steps: { type: "integer", min: 1, default: 3, description: "draft steps per round (S)" },
  topk: { type: "integer", min: 1, default: 1, description: "candidates per draft node (K); > 1 drafts a tree" },
  "draft-tokens": {
    type: "integer",
    min: 2,
    description: "verify rows per request (N); default S + 1 for a chain, min(2(S + 1), 1 + K + (S - 1)K^2) for a tree",
  },
  "multi-layer": {
    type: "boolean",
    description: "multi-layer (MTP-style) drafting: one mirror module and pool per draft step",
  },
  replay: { type: "boolean", description: "run draft decode through captured graphs (graph replay mode)" },
  buckets: {
    type: "string",
    valueName: "B1,B2,...",
    description: "padded graph replay: decode-side forwards on graphs per row bucket, padding rows poisoned",
  },
  overlap: { type: "boolean", description: "overlap scheduling: a step planned before the last one's results" },
  "prefix-cache": { type: "boolean", description: "share the KV of common prompt prefixes (reference-counted)" },
  "retract-every": {
    type: "integer",
    min: 2,
    description: "retract every request every N steps (each resumes by re-prefilling)",
  },
  chunk: { type: "string", default: "none", valueName: "N|none", description: "prefill chunk size" },
  page: { type: "integer", min: 1, default: 1, description: "KV page size" },
  budget: { type: "integer", min: 1, default: 256, description: "prefill token budget per step" },
  requests: { type: "integer", min: 1, default: 4, description: "generated requests" },
  "max-new-tokens": { type: "integer", min: 1, default: 16, description: "tokens to generate per request" },
  ep: {
    type: "choice",
    choices: EXECUTION_PROVIDERS,
    default: "cpu",
    description: "ONNX Runtime execution provider (with --case: overrides the case's)",
  },
  threads: {
    type: "integer",
    min: 1,
    default: 1,
    description: "ONNX Runtime intra-op threads, at most this machine's cores (with --case: overrides the case's)",
  },
  seed: { type: "integer", description: "prompt generator seed (default: SPECCONF_SEED, else 1)" },
  fault: { type: "choice", choices: FAULT_NAMES, multiple: true, description: "switch a named fault on" },
  trace: { type: "string", valueName: "FILE", description: "write the speculative run's trace here" },
  json: { type: "boolean", description: "print one JSON object" },
  ...LIMIT_FLAG_SPECS,
});

type Values = ReturnType<typeof parseFlags<typeof FLAGS>>["values"];

/** Flags that build the default case: a case file sets all of this itself, so they cannot go with --case. */
const CASE_BUILDING_FLAGS = [
  "preset",
  "draft",
  "steps",
  "topk",
  "draft-tokens",
  "multi-layer",
  "replay",
  "buckets",
  "overlap",
  "prefix-cache",
  "retract-every",
  "chunk",
  "page",
  "budget",
  "requests",
  "max-new-tokens",
  "seed",
  "fault",
] as const;

/** The flag behind each part of a case built from flags, so an impossible combination names the flag. */
const FLAG_OF_PATH: readonly [RegExp, (typeof CASE_BUILDING_FLAGS)[number] | "threads"][] = [
  [/^\/engine\/numSteps/, "steps"],
  [/^\/engine\/topk/, "topk"],
  [/^\/engine\/numDraftTokens/, "draft-tokens"],
  [/^\/engine\/chunkSize/, "chunk"],
  [/^\/engine\/pageSize/, "page"],
  [/^\/engine\/tokenBudget/, "budget"],
  [/^\/engine\/runtime\/threads/, "threads"],
  [/^\/engine\/multiLayer/, "multi-layer"],
  [/^\/engine\/graphBuckets/, "buckets"],
  [/^\/draft/, "draft"],
  [/^\/model/, "preset"],
  [/^\/workload\/requests\/\d+/, "max-new-tokens"],
  [/^\/workload\/requests$/, "requests"],
  [/^\/engine\/poolSlots/, "requests"],
  [/^\/workload/, "retract-every"],
];

/** --buckets: ascending integers >= 1, comma-separated (the engine refuses an unsorted list at /engine/graphBuckets). */
function parseBuckets(raw: string): number[] {
  const parts = raw.split(",").map((part) => part.trim());
  const buckets = parts.map(Number);
  if (
    parts.some((part) => !/^\d+$/.test(part)) ||
    buckets.some((bucket) => !Number.isSafeInteger(bucket) || bucket < 1)
  )
    throw new UsageError(`--buckets must be integers >= 1 separated by commas, got '${raw}'`, "--buckets");
  return buckets;
}

function parseChunk(raw: string): number | null {
  if (raw === "none") return null;
  if (!/^[+-]?\d+$/.test(raw.trim()))
    throw new UsageError(`--chunk must be an integer >= 1 or 'none', got '${raw}'`, "--chunk");
  const value = Number(raw.trim());
  if (!Number.isSafeInteger(value) || value < 1 || value > 2 ** 31 - 1)
    throw new UsageError(`--chunk ${raw.trim()} is out of range: must be an integer >= 1 or 'none'`, "--chunk");
  return value;
}

function seedFromEnvironment(): number {
  const raw = process.env.SPECCONF_SEED;
  if (raw === undefined || raw.trim() === "") return 1;
  if (!/^[+-]?\d+$/.test(raw.trim()) || !Number.isSafeInteger(Number(raw)))
    throw new UsageError(`SPECCONF_SEED must be an integer, got '${raw}'`);
  return Number(raw);
}

function caseFromFile(values: Values, given: ReadonlySet<string>): Case {
  const file = values.case!;
  rejectCombined(given, CASE_BUILDING_FLAGS, "--case (the case file sets it: edit the file instead)");
  const loaded = loadCaseFile(file);
  const runtime = {
    ...loaded.engine.runtime,
    ...(given.has("ep") ? { ep: values.ep } : {}),
    ...(given.has("threads") ? { threads: values.threads } : {}),
  };
  const testCase = { ...loaded, engine: { ...loaded.engine, runtime } };
  preflightCase(testCase, { limits: limitsFrom(values), file });
  return testCase;
}

function caseFromFlags(values: Values): Case {
  const limits = limitsFrom(values);
  // Before any prompt is generated: a million requests is refused at once.
  if (values.requests > limits.maxRequests)
    throw new UsageError(
      `--requests ${values.requests} is above the limit of ${limits.maxRequests} (raise it with --max-requests)`,
      "--requests",
    );
  const numSteps = values.steps;
  const topk = values.topk;
  const numDraftTokens =
    values["draft-tokens"] ?? (topk === 1 ? numSteps + 1 : Math.min(2 * (numSteps + 1), maxTreeTokens(numSteps, topk)));
  const testCase = defaultCase({
    preset: values.preset,
    draft: values.draft,
    seed: values.seed ?? seedFromEnvironment(),
    numRequests: values.requests,
    maxNewTokens: values["max-new-tokens"],
    engine: {
      mode: "speculative",
      numSteps,
      topk,
      numDraftTokens,
      multiLayer: values["multi-layer"],
      graphReplay: values.replay || values.buckets !== undefined ? true : undefined,
      ...(values.buckets !== undefined ? { graphBuckets: parseBuckets(values.buckets) } : {}),
      ...(values.overlap ? { overlap: true } : {}),
      ...(values["prefix-cache"] ? { prefixCache: true } : {}),
      chunkSize: parseChunk(values.chunk),
      pageSize: values.page,
      tokenBudget: values.budget,
      faults: values.fault as FaultName[],
      runtime: { ep: values.ep, threads: values.threads, graphOptimizationLevel: "basic" },
    },
  });
  const every = values["retract-every"];
  if (every !== undefined) testCase.workload.retracts = retractSchedule(testCase, every);
  // The pool holds every request at its longest at once (at least the default 4096 slots, at most what one
  // K/V buffer may hold: a workload past that is refused at /engine/poolSlots, i.e. --requests).
  testCase.engine.poolSlots = Math.min(
    Math.max(testCase.engine.poolSlots, requiredPoolSlots(testCase)),
    maxPoolSlots(testCase),
  );
  try {
    preflightCase(testCase, { limits });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    const name = FLAG_OF_PATH.find(([pattern]) => pattern.test(error.field))?.[1];
    if (name === undefined) throw error;
    throw new UsageError(`--${name} ${String(values[name])}: ${error.detail}`, `--${name}`);
  }
  return testCase;
}

/**
 * Every request retracted at steps N, 2N, ... while it can still be running, at a forward that cycles
 * through the step (so retracts land mid-prefill, between draft and verify, and before extend).
 */
function retractSchedule(testCase: Case, every: number): NonNullable<Case["workload"]["retracts"]> {
  const longest = Math.max(
    ...testCase.workload.requests.map((request) => request.arrivalStep + request.prompt.length + request.maxNewTokens),
  );
  const retracts: NonNullable<Case["workload"]["retracts"]> = [];
  for (let step = every, round = 0; step <= longest; step += every, round++) {
    for (const request of testCase.workload.requests)
      retracts.push({
        request: request.id,
        step,
        beforeForward: (round + request.id) % (testCase.engine.numSteps + 2),
      });
  }
  return retracts;
}

async function runWithProgress(testCase: Case, label: string, json: boolean): Promise<RunResult> {
  const total = testCase.workload.requests.reduce((sum, request) => sum + request.maxNewTokens, 0);
  const progress = createProgress({ label, total, enabled: !json, unit: "tokens" });
  try {
    return await runCase(testCase, {
      onStep: (_, engine) =>
        progress.update([...engine.requests.values()].reduce((sum, request) => sum + request.output.length, 0)),
    });
  } catch (error) {
    // Bad input (the case, the model spec, the EP) is not the engine crashing.
    if (error instanceof BadInputError) throw error;
    throw new RunFailure("crash", error instanceof Error ? `${error.name}: ${error.message}` : String(error));
  } finally {
    progress.finish();
  }
}

export function runCommand(argv: string[]): Promise<number> {
  return runCommandBody("run", () => run(argv));
}

async function run(argv: string[]): Promise<number> {
  const { values, help, given } = parseFlags(FLAGS, argv);
  if (help) {
    process.stdout.write(
      renderHelp(FLAGS, {
        usage: "specconf run [flags]",
        summary: "Run a case in target-only and speculative mode and check the laws.",
      }),
    );
    return 0;
  }
  // Every input and output is checked before any model is built.
  const testCase = values.case !== undefined ? caseFromFile(values, given) : caseFromFlags(values);
  if (values.trace !== undefined)
    checkOutputPaths(
      [{ flag: "--trace", path: values.trace, kind: "file" }],
      values.case !== undefined ? [{ flag: "--case", path: values.case }] : [],
    );
  // The reference engine with a progress line per run; every law that applies, twins included.
  const source = {
    ...referenceSource(),
    run: (runCase: Case) => runWithProgress(runCase, runCase.engine.mode, values.json),
    targetOnly: (runCase: Case) => runWithProgress(targetOnlyCase(runCase), "target-only", values.json),
  };
  const check = await checkLaws(source, testCase);
  if (!check.run) throw new Error(check.crash ?? "the run failed");
  const speculative = check.run;
  const targetOnly = check.baseline ?? speculative;
  const laws = check.results;
  if (values.trace) writeOutputFile("--trace", values.trace, stableJson(speculative.trace));
  const summary = summarize(testCase, speculative, targetOnly, laws);
  process.stdout.write(values.json ? `${JSON.stringify(summary)}\n` : renderSummary(summary, laws, values.trace));
  if (laws.some((law) => law.status === "fails")) return 1;
  return nothingChecked(
    "run",
    laws.map((law) => law.status),
  );
}

function renderSummary(summary: RunSummary, laws: readonly LawResult[], tracePath: string | undefined): string {
  const lines: string[] = [];
  const { engine } = summary;
  const drafting = engine.multiLayer
    ? `multi-layer S=${engine.numSteps}`
    : `S=${engine.numSteps} K=${engine.topk} N=${engine.numDraftTokens}`;
  const extras = [engine.graphReplay ? "graph replay" : "", engine.retracts ? `${engine.retracts} retracts` : ""]
    .filter(Boolean)
    .join(", ");
  lines.push(
    `model ${summary.model} (${engine.dtype}), draft ${summary.draft ?? "none"}, ${drafting}, chunk ${engine.chunkSize ?? "none"}, page ${engine.pageSize}, EP ${engine.ep}, ORT ${engine.ortVersion}${extras ? `, ${extras}` : ""}`,
  );
  lines.push("");
  lines.push("request  prompt  output tokens                                   accept lens");
  for (const output of summary.outputs) {
    const tokens = output.tokens.join(" ");
    lines.push(
      `${String(output.id).padStart(7)}  ${String(output.promptLength).padStart(6)}  ${tokens.length > 46 ? `${tokens.slice(0, 43)}...` : tokens.padEnd(46)}  ${output.acceptLens.join("")} (${output.finishReason})`,
    );
  }
  lines.push("");
  lines.push(
    `mean accept length ${summary.meanAcceptLen.toFixed(3)}, full-accept rate ${summary.fullAcceptRate === null ? "n/a" : summary.fullAcceptRate.toFixed(3)}, ties ${summary.ties}`,
  );
  lines.push(
    `accept-length histogram: ${summary.acceptLenHistogram
      .map((count, len) => (len === 0 ? "" : `${len}:${count}`))
      .filter(Boolean)
      .join("  ")}`,
  );
  lines.push("");
  for (const law of laws) {
    const verdict = law.status === "holds" ? "holds" : law.status === "fails" ? "FAILS" : "not checkable";
    const detail = law.violation ? `: ${law.violation.message}` : law.reason ? `: ${law.reason}` : "";
    lines.push(`  ${law.law.padEnd(24)} ${verdict}${law.ties ? ` (${law.ties} ties)` : ""}${detail}`);
  }
  if (tracePath) lines.push("", `trace written to ${tracePath}`);
  return `${lines.join("\n")}\n`;
}
