// Engine benchmark: how much time the reference engine adds on top of ONNX Runtime, what speculative
// decoding buys in tokens/s, and what tracing costs, measured side by side in one run.
//
//   npx tsx scripts/bench-engine.ts [--preset tiny --preset medium] [--ep cpu] [--threads 1]
//                                   [--reps N] [--replay N] [--json] [--quick]
//
// Method
// - Each configuration (preset x variant) runs through runCase(), the engine's one interface, with
//   trace off and on: warm-up runs first (they also build the models and sessions), then --reps timed
//   runs per trace mode, interleaved off/on. Numbers are medians over the timed runs, except the
//   "best" column (fastest run's decode rounds vs the fastest replay pass of the same forwards: the least
//   disturbed estimate when other processes share the cores). A full GC runs before each timed run, so a run pays for its own
//   garbage only.
// - Both wall time (performance.now) and process CPU time (process.cpuUsage: all threads, user + system,
//   so V8's background GC counts too) are taken. Wall time is what the targets are stated in; CPU time
//   does not count the time this process waits for a core, so it is the steadier number on a shared
//   machine (the header prints the load average and warns when it exceeds the core count).
// - The target and draft ModelSessions are the cached instances runCase gets from sessionFor(); their
//   `run` method is wrapped on the instance: in timed runs the wrapper adds up the time spent inside
//   run(); in one extra capture run (trace off: tracing does not change the feeds) it also keeps the
//   exact ForwardFeeds of every call.
// - Raw ORT: the captured feeds are turned into ort.Tensors once and replayed through the underlying
//   InferenceSession.run in the engine's order (target and draft forwards interleaved as in the run, so
//   cache effects match), --replay passes; raw cost = sum over calls of the median per call. The same
//   is done through ModelSession.run (adds tensor wrapping and output unpacking). k_cache / v_cache are
//   the pool's live buffers on the CPU EP, and on GPU EPs the context rows tensorsFor gathered
//   (runtime/context-gather.ts), which the calls of one session share: same shapes and memory, contents as
//   at replay time (ORT's cost does not depend on the values).
// - Engine overhead = engine time / raw ORT time of the same forwards. "Per round" uses the decode steps
//   only: all requests arrive at step 0 and prefill in one chunk, so step 0 is the prefill and every
//   later step is one decode round (1 forward in target-only mode; numSteps - 1 draft decodes, verify
//   and draft extend in speculative mode).
// - Attribution (where the engine's time goes) wraps four engine methods on their prototypes, only
//   while a timed run is in flight: Engine.runStep, EngineContext.forward (runForward),
//   TraceRecorder.record (trace row building) and KvPool.checkIntegrity (the per-step KV conservation
//   check). The wrappers cost well under 1 us per call.
// - Prompts: the preset's preamble (starts with BOS, as mirror drafts require) plus tokens from a seeded
//   LCG (scripts/bench-util.ts), so every run and machine sees the same workload.
import os from "node:os";
import { parseArgs } from "node:util";
import v8 from "node:v8";
import vm from "node:vm";
import ort from "onnxruntime-node";
import type { Case } from "../src/case/case.ts";
import { defaultEngineConfig, type EngineConfig } from "../src/case/engine-config.ts";
import { EngineContext } from "../src/engine/context.ts";
import { Engine } from "../src/engine/step-loop.ts";
import { KvPool } from "../src/engine/kv-pool.ts";
import { loadModels } from "../src/case/models.ts";
import { runCase } from "../src/engine/run-case.ts";
import { sessionFor } from "../src/runtime/sessions.ts";
import { TraceRecorder } from "../src/engine/trace-recorder.ts";
import { getPreset, presetNames } from "../src/model/presets.ts";
import { defaultDraftSpec, type DraftKind } from "../src/model/spec.ts";
import {
  ENGINE_OUTPUTS,
  EXECUTION_PROVIDERS,
  ModelSession,
  runtimeInfo,
  type ExecutionProvider,
  type ForwardFeeds,
  type ForwardResult,
  type RuntimeOptions,
} from "../src/runtime/ort.ts";
import { fmt, Lcg, mean, median, sum, table } from "./bench-util.ts";

// ---------------------------------------------------------------------------------------------------
// Options

const { values: args } = parseArgs({
  options: {
    preset: { type: "string", multiple: true },
    ep: { type: "string", default: "cpu" },
    threads: { type: "string", default: "1" },
    reps: { type: "string" },
    replay: { type: "string" },
    "pool-slots": { type: "string" },
    json: { type: "boolean", default: false },
    quick: { type: "boolean", default: false },
    help: { type: "boolean", short: "h", default: false },
  },
});

if (args.help) {
  console.log(
    "usage: npx tsx scripts/bench-engine.ts [--preset NAME]... [--ep cpu|cuda|webgpu] [--threads N] [--reps N] [--replay N] [--pool-slots N] [--json] [--quick]\n" +
      "  --preset      repeatable; default tiny and medium\n" +
      "  --reps        timed runs per configuration and trace mode (default 5, --quick 2)\n" +
      "  --replay      raw ORT replay passes (default 4, --quick 2)\n" +
      "  --pool-slots  engine poolSlots (default: defaultEngineConfig's); the per-step pool check scales with it\n" +
      "  --quick       smaller workload and fewer repetitions (about 15 s)\n" +
      "  --json        print one JSON object instead of the tables",
  );
  process.exit(0);
}

type Variant = "target-only" | DraftKind | "mirror-tree" | "mirror-multi-layer";

const QUICK = args.quick!;
const EP = args.ep as ExecutionProvider;
if (!EXECUTION_PROVIDERS.includes(EP)) throw new Error(`--ep must be one of ${EXECUTION_PROVIDERS.join(", ")}`);
const THREADS = Number(args.threads);
if (!Number.isInteger(THREADS) || THREADS < 1) throw new Error("--threads must be an integer >= 1");
const PRESETS = args.preset && args.preset.length > 0 ? args.preset : ["tiny", "medium"];
for (const name of PRESETS)
  if (!presetNames().includes(name)) throw new Error(`unknown preset ${name} (known: ${presetNames().join(", ")})`);
const REPS = Number(args.reps ?? (QUICK ? 2 : 5));
const POOL_SLOTS = args["pool-slots"] === undefined ? undefined : Number(args["pool-slots"]);
if (POOL_SLOTS !== undefined && (!Number.isInteger(POOL_SLOTS) || POOL_SLOTS < 1))
  throw new Error("--pool-slots must be an integer >= 1");
const REPLAY = Number(args.replay ?? (QUICK ? 2 : 4));
const WARMUP = 1;
const NUM_STEPS = 3;
const PROMPT_SEED = 20240601;
const WORKLOAD = QUICK
  ? { requests: 2, promptLength: 16, maxNewTokens: 12 }
  : { requests: 4, promptLength: 24, maxNewTokens: 48 };
const VARIANTS: Variant[] = [
  "target-only",
  "mirror",
  "noisy-mirror",
  "truncated-mirror",
  "eagle",
  "mirror-tree",
  "mirror-multi-layer",
];
/** Drafting variants beyond chains: a tree (topk 2, N 8) and multi-layer modules, both with mirror drafts. */
const VARIANT_ENGINE: Partial<Record<Variant, Partial<EngineConfig>>> = {
  "mirror-tree": { topk: 2, numDraftTokens: 8 },
  "mirror-multi-layer": { multiLayer: true },
};
/** The acceptance criterion reported against (medium preset, trace off, wall time). */
const OVERHEAD_TARGET = 1.3;
const JUDGED_PRESET = "medium";

const log = (message: string) => process.stderr.write(`${message}\n`);

// A full GC before each timed run (the flag is set at run time so plain `npx tsx` works).
v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;

function cpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

// ---------------------------------------------------------------------------------------------------
// Workload

function makeCase(presetName: string, variant: Variant): Case {
  const spec = getPreset(presetName);
  const rng = new Lcg(PROMPT_SEED);
  const requests = Array.from({ length: WORKLOAD.requests }, (_, id) => {
    const suffix = Array.from({ length: WORKLOAD.promptLength - spec.preamble.length }, () => rng.int(3, spec.vocab));
    return { id, prompt: [...spec.preamble, ...suffix], maxNewTokens: WORKLOAD.maxNewTokens, arrivalStep: 0 };
  });
  const runtime: RuntimeOptions = { ep: EP, threads: THREADS, graphOptimizationLevel: "basic" };
  return {
    formatVersion: 1,
    model: { preset: presetName },
    draft:
      variant === "target-only"
        ? null
        : defaultDraftSpec(variant in VARIANT_ENGINE ? "mirror" : (variant as DraftKind)),
    engine: defaultEngineConfig({
      mode: variant === "target-only" ? "target-only" : "speculative",
      numSteps: NUM_STEPS,
      ...VARIANT_ENGINE[variant],
      runtime,
      ...(POOL_SLOTS === undefined ? {} : { poolSlots: POOL_SLOTS }),
    }),
    workload: { requests, aborts: [] },
  };
}

// ---------------------------------------------------------------------------------------------------
// Probing

type Role = "target" | "draft";

interface CapturedCall {
  role: Role;
  session: ModelSession;
  step: number;
  feeds: ForwardFeeds;
}

/** What one timed run measured. Times in ms. */
interface Probe {
  capture: boolean;
  /** Steps completed so far (onStep increments it): the step the next forward belongs to. */
  step: number;
  forwards: number;
  inRunMs: number;
  inRunCpuMs: number;
  forwardMs: number;
  recordMs: number;
  checkMs: number;
  runStepMs: number;
  stepInRunMs: number[];
  calls: CapturedCall[];
}

let probe: Probe | undefined;
const originalRun = ModelSession.prototype.run;
const patchedSessions = new WeakSet<ModelSession>();

/** Wraps `run` on the cached session instance (the one runCase gets from sessionFor). */
function instrumentSession(session: ModelSession, role: Role): void {
  if (patchedSessions.has(session)) return;
  patchedSessions.add(session);
  session.run = async function (this: ModelSession, feeds: ForwardFeeds): Promise<ForwardResult> {
    const p = probe;
    if (!p) return originalRun.call(this, feeds);
    const cpu = cpuMs();
    const start = performance.now();
    const result = await originalRun.call(this, feeds);
    const elapsed = performance.now() - start;
    p.inRunCpuMs += cpuMs() - cpu;
    p.inRunMs += elapsed;
    p.forwards += 1;
    p.stepInRunMs[p.step] = (p.stepInRunMs[p.step] ?? 0) + elapsed;
    if (p.capture) p.calls.push({ role, session: this, step: p.step, feeds: { ...feeds } });
    return result;
  };
}

async function instrumentCase(testCase: Case): Promise<void> {
  const models = loadModels(testCase);
  const runtime = testCase.engine.runtime;
  instrumentSession(
    await sessionFor(
      models.target.graph.bytes,
      models.target.graph.digest,
      models.spec,
      runtime,
      models.target.graph.window,
    ),
    "target",
  );
  // Every draft graph: one for chain/tree drafting, one per module in multi-layer mode.
  const draftGraphs = testCase.engine.mode === "speculative" ? (models.draft?.graphs ?? []) : [];
  for (const graph of draftGraphs)
    instrumentSession(await sessionFor(graph.bytes, graph.digest, models.spec, runtime, graph.window), "draft");
}

const attributed: string[] = [];

/** Times a prototype method while a probe is active. Missing methods are reported, not fatal. */
function timeMethod(
  proto: object,
  name: string,
  label: string,
  add: (p: Probe, ms: number) => void,
  isAsync: boolean,
): void {
  const target = proto as Record<string, unknown>;
  const original = target[name];
  if (typeof original !== "function") {
    log(`note: ${label} not found; its time is left in "other"`);
    return;
  }
  attributed.push(label);
  target[name] = isAsync
    ? async function (this: unknown, ...callArgs: unknown[]) {
        const p = probe;
        if (!p) return original.apply(this, callArgs);
        const start = performance.now();
        try {
          return await original.apply(this, callArgs);
        } finally {
          add(p, performance.now() - start);
        }
      }
    : function (this: unknown, ...callArgs: unknown[]) {
        const p = probe;
        if (!p) return original.apply(this, callArgs);
        const start = performance.now();
        try {
          return original.apply(this, callArgs);
        } finally {
          add(p, performance.now() - start);
        }
      };
}

timeMethod(Engine.prototype, "runStep", "Engine.runStep", (p, ms) => (p.runStepMs += ms), true);
timeMethod(EngineContext.prototype, "forward", "EngineContext.forward", (p, ms) => (p.forwardMs += ms), true);
timeMethod(TraceRecorder.prototype, "record", "TraceRecorder.record", (p, ms) => (p.recordMs += ms), false);
timeMethod(KvPool.prototype, "checkIntegrity", "KvPool.checkIntegrity", (p, ms) => (p.checkMs += ms), false);

// ---------------------------------------------------------------------------------------------------
// Engine runs

interface RunSample {
  wallMs: number;
  cpuMs: number;
  /** Wall and CPU time of each step, from one onStep to the next (step 0 also holds runCase's set-up). */
  stepWallMs: number[];
  stepCpuMs: number[];
  forwards: number;
  steps: number;
  tokens: number;
  acceptLens: number[];
  probe: Probe;
}

async function timedRun(testCase: Case, trace: boolean, capture = false): Promise<RunSample> {
  gc();
  const p: Probe = {
    capture,
    step: 0,
    forwards: 0,
    inRunMs: 0,
    inRunCpuMs: 0,
    forwardMs: 0,
    recordMs: 0,
    checkMs: 0,
    runStepMs: 0,
    stepInRunMs: [],
    calls: [],
  };
  const stepWallMs: number[] = [];
  const stepCpuMs: number[] = [];
  probe = p;
  const startCpu = cpuMs();
  const start = performance.now();
  let lastWall = start;
  let lastCpu = startCpu;
  const result = await runCase(testCase, {
    trace,
    onStep: () => {
      const now = performance.now();
      const cpu = cpuMs();
      stepWallMs.push(now - lastWall);
      stepCpuMs.push(cpu - lastCpu);
      lastWall = now;
      lastCpu = cpu;
      p.step += 1;
    },
  });
  const wallMs = performance.now() - start;
  const totalCpuMs = cpuMs() - startCpu;
  probe = undefined;
  return {
    wallMs,
    cpuMs: totalCpuMs,
    stepWallMs,
    stepCpuMs,
    forwards: p.forwards,
    steps: stepWallMs.length,
    tokens: sum(result.outputs.map((output) => output.tokens.length)),
    acceptLens: result.outputs.flatMap((output) => output.acceptLens),
    probe: p,
  };
}

// ---------------------------------------------------------------------------------------------------
// Raw replay

/** The same tensors ModelSession.run builds from the feeds. */
function ortInputs(session: ModelSession, feeds: ForwardFeeds): Record<string, ort.Tensor> {
  return session.tensorsFor(feeds);
}

interface ReplayTimes {
  /** Median wall time of each captured call, in call order. */
  callMs: number[];
  /** Wall time of the decode-step calls in the fastest pass: the least disturbed estimate on a shared machine. */
  decodeBestMs: number;
  /** Median over passes of the CPU time of the prefill-step calls and of the decode-step calls. */
  prefillCpuMs: number;
  decodeCpuMs: number;
}

async function replayCalls(
  calls: readonly CapturedCall[],
  passes: number,
  runOne: (index: number) => Promise<unknown>,
  warm = true,
): Promise<ReplayTimes> {
  const times = calls.map(() => [] as number[]);
  const decodeWall: number[] = [];
  const prefillCpu: number[] = [];
  const decodeCpu: number[] = [];
  const firstDecode = calls.findIndex((call) => call.step >= 1);
  const boundary = firstDecode < 0 ? calls.length : firstDecode;
  if (warm) for (let i = 0; i < calls.length; i++) await runOne(i); // untimed pass: warms caches as the engine's earlier runs did
  for (let pass = 0; pass < passes; pass++) {
    gc();
    let cpu = cpuMs();
    for (let i = 0; i < calls.length; i++) {
      if (i === boundary) {
        const now = cpuMs();
        prefillCpu.push(now - cpu);
        cpu = now;
      }
      const start = performance.now();
      await runOne(i);
      times[i].push(performance.now() - start);
    }
    const now = cpuMs();
    if (boundary === calls.length) prefillCpu.push(now - cpu);
    else decodeCpu.push(now - cpu);
    decodeWall.push(sum(times.slice(boundary).map((t) => t[pass])));
  }
  return {
    callMs: times.map(median),
    decodeBestMs: Math.min(...decodeWall),
    prefillCpuMs: median(prefillCpu),
    decodeCpuMs: decodeCpu.length > 0 ? median(decodeCpu) : 0,
  };
}

// ---------------------------------------------------------------------------------------------------
// One configuration

interface Attribution {
  /** ms per run, median over the timed runs. */
  ortMs: number;
  forwardJsMs: number;
  traceRowsMs: number;
  poolChecksMs: number;
  phaseLogicMs: number;
  setupFinalizeMs: number;
}

interface ModeStats {
  wallMs: number;
  cpuMs: number;
  forwards: number;
  steps: number;
  decodeSteps: number;
  enginePerForwardMs: number;
  enginePerForwardCpuMs: number;
  /** Time inside ModelSession.run during the engine run, per forward (wall, CPU). */
  inRunPerForwardMs: number;
  inRunPerForwardCpuMs: number;
  /** Engine time / raw ORT time of the same forwards (whole run). */
  overhead: number;
  overheadCpu: number;
  /** Decode steps only: engine time per round, raw ORT time of the round's forwards, ratio. */
  roundMs: number;
  roundRawMs: number;
  roundOverhead: number;
  roundCpuMs: number;
  roundRawCpuMs: number;
  roundOverheadCpu: number;
  /** Fastest run's decode rounds vs the fastest replay pass of the same forwards: robust to other processes. */
  roundBestMs: number;
  roundRawBestMs: number;
  roundOverheadBest: number;
  tokensPerSecond: number;
  decodeTokensPerSecond: number;
  attribution: Attribution;
}

interface ConfigResult {
  preset: string;
  variant: Variant;
  forwards: number;
  targetForwards: number;
  draftForwards: number;
  steps: number;
  rounds: number;
  tokens: number;
  meanAcceptLen: number | null;
  raw: {
    perForwardMs: number;
    perForwardCpuMs: number;
    /** NaN under --quick (not measured). */
    sessionRunPerForwardMs: number;
    targetPerForwardMs: number;
    draftPerForwardMs: number | null;
    totalMs: number;
    totalCpuMs: number;
  };
  traceOff: ModeStats;
  traceOn: ModeStats;
  /** trace on / trace off, runCase wall and CPU time. */
  traceCost: number;
  traceCostCpu: number;
  seconds: number;
}

function modeStats(
  samples: readonly RunSample[],
  raw: { wallMs: number; cpuMs: number; decodeWallMs: number; decodeCpuMs: number; decodeBestMs: number },
  numRequests: number,
): ModeStats {
  const first = samples[0];
  const decodeSteps = first.steps - 1;
  const med = (pick: (sample: RunSample) => number) => median(samples.map(pick));
  const decodeWall = (s: RunSample) => sum(s.stepWallMs.slice(1));
  const decodeCpu = (s: RunSample) => sum(s.stepCpuMs.slice(1));
  const wallMs = med((s) => s.wallMs);
  const cpu = med((s) => s.cpuMs);
  const roundMs = med((s) => decodeWall(s) / decodeSteps);
  const roundCpuMs = med((s) => decodeCpu(s) / decodeSteps);
  const roundRawMs = raw.decodeWallMs / decodeSteps;
  const roundRawCpuMs = raw.decodeCpuMs / decodeSteps;
  const roundBestMs = Math.min(...samples.map((s) => decodeWall(s) / decodeSteps));
  const roundRawBestMs = raw.decodeBestMs / decodeSteps;
  const attribution: Attribution = {
    ortMs: med((s) => s.probe.inRunMs),
    forwardJsMs: med((s) => s.probe.forwardMs - s.probe.inRunMs - s.probe.recordMs),
    traceRowsMs: med((s) => s.probe.recordMs),
    poolChecksMs: med((s) => s.probe.checkMs),
    phaseLogicMs: med((s) => s.probe.runStepMs - s.probe.forwardMs - s.probe.checkMs),
    setupFinalizeMs: med((s) => s.wallMs - s.probe.runStepMs),
  };
  return {
    wallMs,
    cpuMs: cpu,
    forwards: first.forwards,
    steps: first.steps,
    decodeSteps,
    enginePerForwardMs: wallMs / first.forwards,
    enginePerForwardCpuMs: cpu / first.forwards,
    inRunPerForwardMs: med((s) => s.probe.inRunMs / s.forwards),
    inRunPerForwardCpuMs: med((s) => s.probe.inRunCpuMs / s.forwards),
    overhead: wallMs / raw.wallMs,
    overheadCpu: cpu / raw.cpuMs,
    roundMs,
    roundRawMs,
    roundOverhead: roundMs / roundRawMs,
    roundCpuMs,
    roundRawCpuMs,
    roundOverheadCpu: roundCpuMs / roundRawCpuMs,
    roundBestMs,
    roundRawBestMs,
    roundOverheadBest: roundBestMs / roundRawBestMs,
    tokensPerSecond: med((s) => (s.tokens / s.wallMs) * 1000),
    decodeTokensPerSecond: med((s) => ((s.tokens - numRequests) / decodeWall(s)) * 1000),
    attribution,
  };
}

async function benchConfig(presetName: string, variant: Variant): Promise<ConfigResult> {
  const started = performance.now();
  const testCase = makeCase(presetName, variant);
  // The first run builds the models and sessions (cached by digest: a later variant of the preset reuses the target's).
  for (let i = 0; i < WARMUP; i++) {
    await runCase(testCase, { trace: false });
    if (!QUICK) await runCase(testCase, { trace: true });
  }
  const warmSeconds = (performance.now() - started) / 1000;
  await instrumentCase(testCase);
  const off: RunSample[] = [];
  const on: RunSample[] = [];
  for (let rep = 0; rep < REPS; rep++) {
    off.push(await timedRun(testCase, false));
    on.push(await timedRun(testCase, true));
  }
  const captured = await timedRun(testCase, false, true);
  for (const sample of [...off, ...on]) {
    if (sample.forwards !== captured.forwards || sample.steps !== captured.steps || sample.tokens !== captured.tokens) {
      throw new Error(
        `${presetName}/${variant}: runs differ in forwards/steps/tokens; the workload is not deterministic`,
      );
    }
  }
  const calls = captured.probe.calls;
  const prepared = calls.map((call) => ortInputs(call.session, call.feeds));
  // The same outputs the engine fetches (top-K, normalizer, hidden, new K/V), not the full logits.
  const raw = await replayCalls(calls, REPLAY, async (i) => calls[i].session.runTensors(prepared[i], ENGINE_OUTPUTS));
  // ModelSession.run replay (differs from the raw replay by tensor wrapping and output unpacking only):
  // fewer passes, no warm pass (the raw replay just ran the same calls); skipped by --quick.
  const viaSession = QUICK
    ? undefined
    : await replayCalls(
        calls,
        Math.max(2, Math.ceil(REPLAY / 2)),
        (i) => originalRun.call(calls[i].session, calls[i].feeds),
        false,
      );
  const rawWallMs = sum(raw.callMs);
  const rawDecodeWallMs = sum(raw.callMs.filter((_, i) => calls[i].step >= 1));
  const rawTotals = {
    wallMs: rawWallMs,
    cpuMs: raw.prefillCpuMs + raw.decodeCpuMs,
    decodeWallMs: rawDecodeWallMs,
    decodeCpuMs: raw.decodeCpuMs,
    decodeBestMs: raw.decodeBestMs,
  };
  const roleMs = (role: Role) => raw.callMs.filter((_, i) => calls[i].role === role);
  const numRequests = testCase.workload.requests.length;
  const traceOff = modeStats(off, rawTotals, numRequests);
  const traceOn = modeStats(on, rawTotals, numRequests);
  const seconds = (performance.now() - started) / 1000;
  log(
    `  ${presetName.padEnd(7)} ${variant.padEnd(17)} ${calls.length} forwards, ${captured.steps} steps, ${seconds.toFixed(1)} s (warm-up ${warmSeconds.toFixed(1)} s)`,
  );
  return {
    preset: presetName,
    variant,
    forwards: calls.length,
    targetForwards: roleMs("target").length,
    draftForwards: roleMs("draft").length,
    steps: captured.steps,
    rounds: captured.steps - 1,
    tokens: captured.tokens,
    meanAcceptLen: captured.acceptLens.length > 0 ? mean(captured.acceptLens) : null,
    raw: {
      perForwardMs: rawWallMs / calls.length,
      perForwardCpuMs: rawTotals.cpuMs / calls.length,
      sessionRunPerForwardMs: viaSession ? sum(viaSession.callMs) / calls.length : Number.NaN,
      targetPerForwardMs: mean(roleMs("target")),
      draftPerForwardMs: roleMs("draft").length > 0 ? mean(roleMs("draft")) : null,
      totalMs: rawWallMs,
      totalCpuMs: rawTotals.cpuMs,
    },
    traceOff,
    traceOn,
    traceCost: traceOn.wallMs / traceOff.wallMs,
    traceCostCpu: traceOn.cpuMs / traceOff.cpuMs,
    seconds,
  };
}

// ---------------------------------------------------------------------------------------------------
// Main

function machineInfo() {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model.trim() ?? "unknown",
    cores: cpus.length,
    availableParallelism: os.availableParallelism(),
    totalMemGiB: Number((os.totalmem() / 2 ** 30).toFixed(1)),
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    node: process.version,
    ortVersion: runtimeInfo({ ep: EP, threads: THREADS, graphOptimizationLevel: "basic" }).ortVersion,
    ep: EP,
    intraOpThreads: THREADS,
    loadAverageAtStart: os.loadavg().map((value) => Number(value.toFixed(2))),
    loadAverageAtEnd: [] as number[],
  };
}

const started = performance.now();
const machine = machineInfo();
log(
  `bench-engine: presets ${PRESETS.join(", ")}; ${REPS} reps, ${WARMUP} warm-up, ${REPLAY} replay passes${QUICK ? " (quick)" : ""}; load average ${machine.loadAverageAtStart[0]}`,
);
const results: ConfigResult[] = [];
for (const presetName of PRESETS) {
  for (const variant of VARIANTS) results.push(await benchConfig(presetName, variant));
}
machine.loadAverageAtEnd = os.loadavg().map((value) => Number(value.toFixed(2)));
const totalSeconds = (performance.now() - started) / 1000;
const busy = Math.max(machine.loadAverageAtStart[0], machine.loadAverageAtEnd[0]) > machine.cores;

const find = (presetName: string, variant: Variant) =>
  results.find((r) => r.preset === presetName && r.variant === variant)!;

interface SummaryLine {
  name: string;
  value: number;
  valueCpu?: number;
  valueBest?: number;
  target?: number;
  pass?: boolean;
  text: string;
}

const summary: SummaryLine[] = [];
for (const presetName of PRESETS) {
  const targetOnly = find(presetName, "target-only");
  const mirror = find(presetName, "mirror");
  const judged = presetName === JUDGED_PRESET;
  const overheadLine = (
    name: string,
    value: number,
    valueCpu: number,
    what: string,
    judge: boolean,
    valueBest?: number,
  ) => {
    const target = judge && judged ? OVERHEAD_TARGET : undefined;
    const pass = target === undefined ? undefined : value <= target;
    const suffix = target === undefined ? "" : ` — target <= ${target.toFixed(2)}x ${pass ? "PASS" : "FAIL"}`;
    const best = valueBest === undefined ? "" : `, best-of-runs ${fmt.x(valueBest)}`;
    summary.push({
      name,
      value,
      valueCpu,
      valueBest,
      target,
      pass,
      text: `engine overhead vs raw ORT: ${fmt.x(value)} (${presetName}, ${what}; CPU time ${fmt.x(valueCpu)}${best})${suffix}`,
    });
  };
  overheadLine(
    `${presetName}.target-only.traceOff.round`,
    targetOnly.traceOff.roundOverhead,
    targetOnly.traceOff.roundOverheadCpu,
    "target-only decode step, trace off",
    true,
    targetOnly.traceOff.roundOverheadBest,
  );
  overheadLine(
    `${presetName}.mirror.traceOff.round`,
    mirror.traceOff.roundOverhead,
    mirror.traceOff.roundOverheadCpu,
    `speculative round, mirror S=${NUM_STEPS}, trace off`,
    true,
    mirror.traceOff.roundOverheadBest,
  );
  overheadLine(
    `${presetName}.target-only.traceOff.run`,
    targetOnly.traceOff.overhead,
    targetOnly.traceOff.overheadCpu,
    "target-only whole runCase, trace off",
    true,
  );
  overheadLine(
    `${presetName}.target-only.traceOn.round`,
    targetOnly.traceOn.roundOverhead,
    targetOnly.traceOn.roundOverheadCpu,
    "target-only decode step, trace on",
    false,
  );
  overheadLine(
    `${presetName}.mirror.traceOn.round`,
    mirror.traceOn.roundOverhead,
    mirror.traceOn.roundOverheadCpu,
    "speculative round, mirror, trace on",
    false,
  );
  const traceCosts = VARIANTS.map((v) => find(presetName, v).traceCost);
  const traceCostsCpu = VARIANTS.map((v) => find(presetName, v).traceCostCpu);
  summary.push({
    name: `${presetName}.traceCost`,
    value: median(traceCosts),
    valueCpu: median(traceCostsCpu),
    text: `tracing cost, trace on / off: ${fmt.x(median(traceCosts))} (${presetName}, median over variants; CPU time ${fmt.x(median(traceCostsCpu))}); target-only ${fmt.x(targetOnly.traceCost)}, mirror ${fmt.x(mirror.traceCost)}`,
  });
  for (const r of [targetOnly, mirror]) {
    const a = r.traceOff.attribution;
    const parts: [string, number][] = [
      ["pool checks (KvPool.checkIntegrity)", a.poolChecksMs],
      ["runForward JS", a.forwardJsMs],
      ["phase logic", a.phaseLogicMs],
      ["runCase set-up", a.setupFinalizeMs],
      ["ORT slowed inside the engine (in-run minus raw replay)", a.ortMs - r.raw.totalMs],
    ];
    parts.sort((x, y) => y[1] - x[1]);
    const steps = r.traceOff.steps;
    summary.push({
      name: `${presetName}.${r.variant}.traceOff.topCost`,
      value: parts[0][1] / r.traceOff.wallMs,
      text: `where the time outside ORT goes (${presetName} ${r.variant}, trace off, us/step): ${parts
        .slice(0, 3)
        .map(([what, ms]) => `${what} ${fmt.n((ms / steps) * 1000, 0)} (${fmt.pct(ms / r.traceOff.wallMs)})`)
        .join(", ")}`,
    });
  }
  const best = VARIANTS.filter((v) => v !== "target-only")
    .map((v) => find(presetName, v))
    .sort((a, b) => b.traceOff.tokensPerSecond - a.traceOff.tokensPerSecond)[0];
  const speedup = (r: ConfigResult) => r.traceOff.tokensPerSecond / targetOnly.traceOff.tokensPerSecond;
  summary.push({
    name: `${presetName}.speculativeSpeedup`,
    value: speedup(mirror),
    text: `speculative vs target-only tokens/s (trace off): mirror ${fmt.x(speedup(mirror))} at accept length ${fmt.n(mirror.meanAcceptLen ?? NaN, 2)}; best ${best.variant} ${fmt.x(speedup(best))} (${presetName})`,
  });
}

const settings = {
  presets: PRESETS,
  variants: VARIANTS,
  reps: REPS,
  warmup: WARMUP,
  replayPasses: REPLAY,
  numSteps: NUM_STEPS,
  poolSlots: makeCase(PRESETS[0], "target-only").engine.poolSlots,
  workload: WORKLOAD,
  promptSeed: PROMPT_SEED,
  quick: QUICK,
  attributed,
};

if (args.json) {
  console.log(JSON.stringify({ machine, settings, results, summary, busy, totalSeconds }, null, 2));
} else {
  const out: string[] = [];
  out.push(`machine: ${machine.cpu}, ${machine.cores} cores, ${machine.totalMemGiB} GiB, ${machine.platform}`);
  out.push(
    `node ${machine.node}, onnxruntime-node ${machine.ortVersion}, EP ${machine.ep}, intraOpNumThreads ${machine.intraOpThreads}`,
  );
  out.push(
    `load average at start ${machine.loadAverageAtStart.join(" ")}, at end ${machine.loadAverageAtEnd.join(" ")}`,
  );
  if (busy)
    out.push(
      `WARNING: load average above ${machine.cores} cores: other processes share the CPUs, wall-clock numbers are noisy; the CPU-time columns are steadier.`,
    );
  out.push(
    `workload: ${WORKLOAD.requests} requests x (prompt ${WORKLOAD.promptLength}, ${WORKLOAD.maxNewTokens} new tokens), all at step 0, numSteps ${NUM_STEPS}; ` +
      `poolSlots ${settings.poolSlots}; ${REPS} timed runs per trace mode (medians), ${WARMUP} warm-up, raw replay ${REPLAY} passes, prompt seed ${PROMPT_SEED}`,
  );
  out.push("");
  out.push(
    "1. Engine vs raw ORT. Per forward in us, per decode round in ms; overhead = engine / raw ORT (wall medians;",
  );
  out.push("   cpu = CPU-time medians; best = fastest run vs fastest replay pass).");
  out.push("   engine = runCase wall / forwards; in-run = inside ModelSession.run during the engine run;");
  out.push(
    "   raw = InferenceSession.run replaying the captured tensors; MS.run = ModelSession.run replaying the captured feeds.",
  );
  const overheadRows: string[][] = [];
  for (const r of results) {
    for (const [mode, s] of [
      ["off", r.traceOff],
      ["on", r.traceOn],
    ] as const) {
      overheadRows.push([
        `${r.preset} ${r.variant}`,
        mode,
        String(r.forwards),
        fmt.us(s.enginePerForwardMs),
        fmt.us(s.inRunPerForwardMs),
        fmt.us(r.raw.sessionRunPerForwardMs),
        fmt.us(r.raw.perForwardMs),
        fmt.x(s.overhead),
        fmt.x(s.overheadCpu),
        fmt.ms(s.roundMs),
        fmt.ms(s.roundRawMs),
        fmt.x(s.roundOverhead),
        fmt.x(s.roundOverheadCpu),
        fmt.x(s.roundOverheadBest),
      ]);
    }
  }
  out.push(
    table(
      [
        "config",
        "trace",
        "fwds",
        "engine",
        "in-run",
        "MS.run",
        "raw",
        "ovh",
        "ovh cpu",
        "round",
        "raw round",
        "round ovh",
        "round cpu",
        "round best",
      ],
      overheadRows,
    ),
  );
  out.push("");
  out.push(
    "2. Throughput (trace off). tok/s = emitted tokens / runCase wall; decode tok/s leaves out step 0 (prefill).",
  );
  const throughputRows = results.map((r) => {
    const base = find(r.preset, "target-only");
    return [
      `${r.preset} ${r.variant}`,
      String(r.tokens),
      String(r.rounds),
      r.meanAcceptLen === null ? "-" : fmt.n(r.meanAcceptLen, 2),
      `${r.targetForwards}/${r.draftForwards}`,
      fmt.us(r.raw.targetPerForwardMs),
      r.raw.draftPerForwardMs === null ? "-" : fmt.us(r.raw.draftPerForwardMs),
      fmt.ms(r.traceOff.wallMs),
      fmt.n(r.traceOff.tokensPerSecond, 0),
      fmt.n(r.traceOff.decodeTokensPerSecond, 0),
      fmt.x(r.traceOff.tokensPerSecond / base.traceOff.tokensPerSecond),
    ];
  });
  out.push(
    table(
      [
        "config",
        "tokens",
        "rounds",
        "accept len",
        "fwds t/d",
        "raw t us",
        "raw d us",
        "wall ms",
        "tok/s",
        "decode tok/s",
        "vs target-only",
      ],
      throughputRows,
    ),
  );
  out.push("");
  out.push("3. Tracing cost: runCase time, trace on / trace off.");
  out.push(
    table(
      ["config", "off ms", "on ms", "on/off", "off cpu ms", "on cpu ms", "on/off cpu"],
      results.map((r) => [
        `${r.preset} ${r.variant}`,
        fmt.ms(r.traceOff.wallMs),
        fmt.ms(r.traceOn.wallMs),
        fmt.x(r.traceCost),
        fmt.ms(r.traceOff.cpuMs),
        fmt.ms(r.traceOn.cpuMs),
        fmt.x(r.traceCostCpu),
      ]),
    ),
  );
  out.push("");
  out.push("4. Where the engine's wall time goes, us per step (share of runCase wall). ORT = inside ModelSession.run;");
  out.push("   runForward = context/mask/tensor building, K/V write-back, argmax; trace rows = TraceRecorder.record;");
  out.push(
    "   pool checks = KvPool.checkIntegrity after every step; phase logic = rest of runStep; setup = runCase outside runStep.",
  );
  const attributionRows: string[][] = [];
  for (const r of results) {
    for (const [mode, s] of [
      ["off", r.traceOff],
      ["on", r.traceOn],
    ] as const) {
      const a = s.attribution;
      const cell = (ms: number) => `${fmt.n((ms / s.steps) * 1000, 0)} (${fmt.pct(ms / s.wallMs)})`;
      attributionRows.push([
        `${r.preset} ${r.variant}`,
        mode,
        String(s.steps),
        cell(a.ortMs),
        cell(a.forwardJsMs),
        cell(a.traceRowsMs),
        cell(a.poolChecksMs),
        cell(a.phaseLogicMs),
        cell(a.setupFinalizeMs),
      ]);
    }
  }
  out.push(
    table(
      ["config", "trace", "steps", "ORT", "runForward", "trace rows", "pool checks", "phase logic", "setup"],
      attributionRows,
    ),
  );
  out.push("");
  out.push("Summary");
  for (const line of summary) out.push(`  ${line.text}`);
  out.push(`  (benchmark took ${totalSeconds.toFixed(1)} s${busy ? "; machine was busy" : ""})`);
  console.log(out.join("\n"));
}
