// The one engine interface: run(case) -> { outputs, trace }. Replay, golden suites and the external
// adapter all go through it.
import type { Case } from "../case/case.ts";
import { caseModelSpec, checkCaseBounds, checkPoolSize, stepBound } from "../case/limits.ts";
import { buildDraft, buildTarget, type DraftModel, type TargetModel } from "../model/build.ts";
import { getPreset } from "../model/presets.ts";
import { draftToTarget } from "../model/weights.ts";
import { isEagle3, isHead, type ModelSpec } from "../model/spec.ts";
import { ModelSession, runtimeInfo, type RuntimeOptions } from "../runtime/ort.ts";
import { TRACE_FORMAT_VERSION, type Trace } from "../trace/schema.ts";
import { mapPacked, traceRequest } from "../trace/records.ts";
import type { LogprobEntry } from "../sampling/params.ts";
import { checkSampling } from "../sampling/check.ts";
import { ConfigError, validateEngineConfig } from "./config.ts";
import type { EngineSessions } from "./context.ts";
import { Engine, type PoolCheck } from "./engine.ts";
import type { PrefixHitRecord } from "./phases/prefix-hit.ts";
import type { ForwardMemo } from "./forward-memo.ts";

export interface RequestOutput {
  id: number;
  tokens: number[];
  finishReason: "length" | "eos" | "stop" | "abort" | "unfinished";
  /** The stop id that ended the request (finish reason "stop"). */
  stopTokenId?: number;
  /** Output tokens when the request finished (EOS, stop or length; SGLang's finished_len). */
  finishedLength?: number;
  /** One entry per output token, for requests asking for logprobs. */
  logprobs?: LogprobEntry[];
  /** accept_len of each verify round (speculative mode). */
  acceptLens: number[];
  /** Rounds that ended the request (EOS / max new tokens), excluded from full-acceptance rates. */
  cutRounds: number;
  /** The first round emits the first output token (no separate prefill sample); see the outputs schema. */
  roundsIncludeFirstToken?: boolean;
}

/** What only the reference engine knows about its own run: a third-party run has none of it. */
export interface EngineInternals {
  poolChecks: PoolCheck[];
  /** Slots still held in any pool after the run (KV conservation: must be 0). */
  slotsInUseAtEnd: number;
  steps: number;
  /** The KV every prefix hit reused, as it was at the hit (the prefix-cache draft KV law). */
  prefixHits?: PrefixHitRecord[];
}

export interface RunResult {
  outputs: RequestOutput[];
  trace: Trace;
  internals?: EngineInternals;
}

export interface LoadedModels {
  spec: ModelSpec;
  target: TargetModel;
  draft?: DraftModel;
}

/** The case's model spec; an unknown preset is a ConfigError at /model/preset. */
export function resolveModelSpec(modelRef: Case["model"]): ModelSpec {
  caseModelSpec(modelRef);
  return "preset" in modelRef ? getPreset(modelRef.preset) : modelRef.spec;
}

export function loadModels(testCase: Case): LoadedModels {
  const spec = resolveModelSpec(testCase.model);
  // EAGLE-3 drafts read the target's auxiliary states: its graph also outputs the residual streams.
  const target = buildTarget(spec, isEagle3(testCase.draft?.kind));
  const numModules =
    testCase.engine.mode === "speculative" && testCase.engine.multiLayer ? testCase.engine.numSteps : 1;
  const draft =
    testCase.draft && testCase.draft.kind !== "ngram" ? buildDraft(target, testCase.draft, numModules) : undefined;
  return { spec, target, draft };
}

const sessionCache = new Map<string, Promise<ModelSession>>();

/** Sessions are cached by model digest and runtime options: building one costs tens of milliseconds. */
export function sessionFor(
  bytes: Uint8Array,
  digest: string,
  spec: ModelSpec,
  runtime: RuntimeOptions,
): Promise<ModelSession> {
  const key = `${digest}:${JSON.stringify(runtime)}`;
  let session = sessionCache.get(key);
  if (!session) {
    session = ModelSession.create(bytes, spec.dtype, spec.hidden, runtime);
    sessionCache.set(key, session);
    session.catch(() => sessionCache.delete(key));
  }
  return session;
}

/** Checks what the schema cannot: consistency between config, model and workload. Throws ConfigError. */
export function checkCaseConsistency(testCase: Case, spec: ModelSpec): void {
  checkCaseBounds(testCase, spec);
  validateEngineConfig(testCase.engine);
  if (testCase.engine.mode === "speculative" && !testCase.draft)
    throw new ConfigError("/draft", "speculative mode needs a draft model");
  const ids = new Set<number>();
  const multiLayer = testCase.engine.mode === "speculative" && testCase.engine.multiLayer === true;
  if (testCase.engine.mode === "speculative" && testCase.draft?.kind === "ngram") {
    if (testCase.engine.topk !== 1)
      throw new ConfigError("/engine/topk", "ngram (prompt lookup) drafting proposes chains: topk must be 1");
    if (multiLayer) throw new ConfigError("/engine/multiLayer", "ngram (prompt lookup) drafting has no draft modules");
  }
  if (multiLayer) {
    if (testCase.engine.topk !== 1) throw new ConfigError("/engine/topk", "multi-layer drafting needs topk 1");
    if (testCase.draft?.kind === "eagle" || isEagle3(testCase.draft?.kind))
      throw new ConfigError(
        "/draft/kind",
        `multi-layer drafting needs a mirror-family draft (modules), not ${testCase.draft?.kind}`,
      );
    if (spec.preamble.length < testCase.engine.numSteps) {
      throw new ConfigError(
        "/engine/numSteps",
        `multi-layer drafting with ${testCase.engine.numSteps} modules needs a preamble of ${testCase.engine.numSteps} tokens; the model's has ${spec.preamble.length}`,
      );
    }
  }
  testCase.workload.requests.forEach((request, i) => {
    if (ids.has(request.id)) throw new ConfigError(`/workload/requests/${i}/id`, `duplicate request id ${request.id}`);
    ids.add(request.id);
    request.prompt.forEach((token, t) => {
      if (token >= spec.vocab)
        throw new ConfigError(
          `/workload/requests/${i}/prompt/${t}`,
          `token ${token} is outside the vocabulary (${spec.vocab})`,
        );
    });
    if (multiLayer) {
      const preamble = spec.preamble.slice(0, testCase.engine.numSteps);
      const at = preamble.findIndex((token, t) => request.prompt[t] !== token);
      if (at >= 0)
        throw new ConfigError(
          `/workload/requests/${i}/prompt/${at}`,
          `multi-layer mirror modules need prompts starting with the preamble [${preamble.join(", ")}]`,
        );
    }
    const mirror = testCase.draft && !isHead(testCase.draft.kind) && testCase.draft.kind !== "ngram";
    if (mirror && testCase.engine.mode === "speculative" && request.prompt[0] !== spec.bosId) {
      throw new ConfigError(
        `/workload/requests/${i}/prompt/0`,
        `mirror drafts need prompts starting with BOS (${spec.bosId})`,
      );
    }
    checkSampling(request, `/workload/requests/${i}`, spec);
    const longest = request.prompt.length + request.maxNewTokens + testCase.engine.numDraftTokens + 1;
    if (longest > spec.maxPositions) {
      throw new ConfigError(
        `/workload/requests/${i}`,
        `prompt + maxNewTokens + draft tokens (${longest}) exceed the model's maxPositions ${spec.maxPositions}`,
      );
    }
  });
  testCase.workload.aborts.forEach((abort, i) => {
    if (!ids.has(abort.request))
      throw new ConfigError(`/workload/aborts/${i}/request`, `no request with id ${abort.request}`);
  });
  (testCase.workload.retracts ?? []).forEach((retract, i) => {
    if (!ids.has(retract.request))
      throw new ConfigError(`/workload/retracts/${i}/request`, `no request with id ${retract.request}`);
  });
  checkPoolSize(testCase);
}

export interface RunOptions {
  /** Record the trace (default true). */
  trace?: boolean;
  /** Per-step pool integrity checks (default: on when tracing). Off, only the end-of-run leak count remains. */
  checkPools?: boolean;
  /**
   * Safety net against a scheduling bug: a run that needs more steps is reported, not looped forever.
   * Default: the case's step bound (src/case/limits.ts), which no correct run reaches.
   */
  maxSteps?: number;
  onStep?: (step: number, engine: Engine) => void;
  /**
   * Shared by the runs of one case (the law runner's run, baseline and twins): a forward whose inputs
   * exactly repeat an earlier one's returns its outputs without running (forward-memo.ts). Bit-identical.
   */
  forwardMemo?: ForwardMemo;
}

/** Sessions for a case's models (cached), shaped as the engine takes them. */
export async function engineSessions(testCase: Case, models: LoadedModels): Promise<EngineSessions> {
  const runtime = testCase.engine.runtime;
  const target = await sessionFor(models.target.graph.bytes, models.target.graph.digest, models.spec, runtime);
  const draftGraphs = testCase.engine.mode === "speculative" ? (models.draft?.graphs ?? []) : [];
  const drafts = await Promise.all(
    draftGraphs.map((graph) => sessionFor(graph.bytes, graph.digest, models.spec, runtime)),
  );
  const multiLayer = testCase.engine.multiLayer === true;
  const eagle3 = testCase.engine.mode === "speculative" ? models.draft?.eagle3 : undefined;
  return {
    target,
    draft: multiLayer ? undefined : drafts[0],
    draftModules: multiLayer ? drafts : undefined,
    draftLayers: draftGraphs[0]?.layers,
    ...(eagle3
      ? { eagle3: { auxLayers: eagle3.options.auxLayers, draftToTarget: draftToTarget(eagle3.input.d2t) } }
      : {}),
  };
}

export async function runCase(testCase: Case, options: RunOptions = {}): Promise<RunResult> {
  // Consistency first: a bad case gets its JSON path, not an error from deep inside model building.
  checkCaseConsistency(testCase, resolveModelSpec(testCase.model));
  const models = loadModels(testCase);
  const sessions = await engineSessions(testCase, models);
  const draftGraphs = testCase.engine.mode === "speculative" ? (models.draft?.graphs ?? []) : [];
  const engine = new Engine(testCase.engine, models.spec, sessions, {
    trace: options.trace ?? true,
    checkPools: options.checkPools ?? options.trace ?? true,
    drafter: testCase.draft?.kind === "ngram" ? "ngram" : "model",
    forwardMemo: options.forwardMemo,
    betweenForwards: (self, step, forwardInStep) => {
      for (const abort of testCase.workload.aborts) {
        if (abort.step === step && abort.beforeForward === forwardInStep) self.abort(abort.request);
      }
      for (const retract of testCase.workload.retracts ?? []) {
        if (retract.step === step && retract.beforeForward === forwardInStep) self.retract(retract.request);
      }
    },
  });
  try {
    return await runEngine(testCase, engine, models, draftGraphs, options);
  } finally {
    engine.release();
  }
}

/** Steps the engine until the workload is done; the outputs and the trace. */
async function runEngine(
  testCase: Case,
  engine: Engine,
  models: LoadedModels,
  draftGraphs: readonly { digest: string }[],
  options: RunOptions,
): Promise<RunResult> {
  const runtime = testCase.engine.runtime;
  for (const request of testCase.workload.requests) engine.addRequest(request);
  const lastAbortStep = Math.max(
    0,
    ...[...testCase.workload.aborts, ...(testCase.workload.retracts ?? [])].map((event) => event.step),
  );
  const maxSteps = options.maxSteps ?? stepBound(testCase);
  while (engine.hasWork() || engine.step <= lastAbortStep) {
    if (engine.step >= maxSteps) throw new Error(`run did not finish within ${maxSteps} steps`);
    await engine.runStep();
    options.onStep?.(engine.step, engine);
  }
  engine.finish();
  const outputs: RequestOutput[] = testCase.workload.requests.map(({ id }) => {
    const request = engine.requests.get(id)!;
    const finished = request.finishReason !== undefined && request.finishReason !== "abort";
    return {
      id,
      tokens: [...request.output],
      finishReason: request.finishReason ?? "unfinished",
      ...(request.stopTokenId !== undefined ? { stopTokenId: request.stopTokenId } : {}),
      ...(finished ? { finishedLength: request.output.length } : {}),
      ...(request.sampling.logprobs !== undefined ? { logprobs: [...request.logprobs] } : {}),
      acceptLens: [...request.acceptLens],
      cutRounds: request.cutRounds,
    };
  });
  const pools = engine.context.pools;
  const slotsInUseAtEnd = [pools.target, ...engine.context.draftPools()].reduce(
    (sum, pool) => sum + pool.numUsedSlots(),
    0,
  );
  const info = runtimeInfo(runtime);
  const trace: Trace = {
    formatVersion: TRACE_FORMAT_VERSION,
    engine: { name: "specconf-reference", version: "0.1.0", ...info, dtype: models.spec.dtype },
    models: {
      target: models.target.graph.digest,
      draft: draftGraphs.length > 0 ? draftGraphs.map((graph) => graph.digest) : undefined,
    },
    config: { ...testCase.engine, draft: testCase.draft },
    requests: mapPacked(outputs, (output) =>
      traceRequest({
        id: output.id,
        prompt: [...engine.requests.get(output.id)!.prompt],
        output: output.tokens,
        finishReason: output.finishReason,
        stopTokenId: output.stopTokenId,
        finishedLength: output.finishedLength,
        logprobs: output.logprobs,
      }),
    ),
    events: engine.context.recorder.events,
    // Absent fields stay undefined rather than left out: one shape for every trace (trace/records.ts).
    lifecycle: engine.context.recorder.lifecycle.length > 0 ? engine.context.recorder.lifecycle : undefined,
  };
  const prefixHits = engine.context.prefixHits;
  return {
    outputs,
    trace,
    internals: {
      poolChecks: engine.poolChecks,
      slotsInUseAtEnd,
      steps: engine.step,
      ...(prefixHits.length > 0 ? { prefixHits } : {}),
    },
  };
}
