// The validation layer in front of the engine: every limit a case can break that its schema cannot
// express, checked before any model is built or session created, each reported as a ConfigError with the
// case's JSON path (exit 2). Two kinds:
//   - what the reference engine can run at all (fixed): the model's sizes, S/K/N against the model, the pool
//     against the workload, steps within the engine's step bound, a truncated draft within the target;
//   - resource limits (defaults below, raised by a flag where a real user may need more): requests, total
//     tokens, model parameters, threads against the machine. README lists both.
import { availableParallelism } from "node:os";
import type { Case } from "./case.ts";
import { pagesNeeded } from "./admission.ts";
import { ConfigError } from "./engine-config.ts";
import { TOP_K } from "../model/graphs.ts";
import { PRESETS, presetNames } from "../model/presets.ts";
import { auxWidth } from "../model/eagle3-graphs.ts";
import {
  eagle3Options,
  isEagle3,
  SpecError,
  validateEagle3Options,
  validateModelSpec,
  type ModelSpec,
} from "../model/spec.ts";

/** Limits a user may raise (each has a flag on the commands that run cases). */
export interface ResourceLimits {
  /** Requests in one case (--max-requests). */
  maxRequests: number;
  /** Prompt plus new tokens over all requests of a case, and aborts plus retracts (--max-total-tokens). */
  maxTotalTokens: number;
  /** Estimated parameters of the target and every draft graph together (--max-parameters). */
  maxParameters: number;
  /** ONNX Runtime intra-op threads: this machine's cores (`run --threads` overrides a case file's). */
  maxThreads: number;
}

export const DEFAULT_LIMITS: Readonly<ResourceLimits> = {
  maxRequests: 1024,
  maxTotalTokens: 262_144,
  maxParameters: 400_000_000,
  maxThreads: availableParallelism(),
};

/** The flag that raises each resource limit. */
export const LIMIT_FLAGS: Readonly<Record<keyof ResourceLimits, string>> = {
  maxRequests: "--max-requests",
  maxTotalTokens: "--max-total-tokens",
  maxParameters: "--max-parameters",
  maxThreads: "--threads",
};

/** What the reference engine can run at all (not raised by flags). */
export const FIXED_LIMITS = {
  /** Draft steps per round S (multi-layer drafting builds one module per step). */
  maxDraftSteps: 64,
  /** Candidates per node K: the graphs return the TOP_K best tokens of each row. */
  maxTopk: TOP_K,
  /** Arrival, abort and retract steps. */
  maxEventStep: 100_000,
  maxVocab: 1 << 24,
  maxPositions: 1 << 20,
  maxLayers: 1024,
  /** Bytes of one K or V buffer of one pool (a typed array handed to ONNX Runtime as is). */
  maxPoolBufferBytes: 2 ** 31,
} as const;

function fail(path: string, message: string): never {
  throw new ConfigError(path, message);
}

/** The case's model spec; an unknown preset is a ConfigError at /model/preset. */
export function caseModelSpec(model: Case["model"]): ModelSpec {
  if ("spec" in model) return model.spec;
  if (!Object.hasOwn(PRESETS, model.preset))
    fail("/model/preset", `unknown preset '${model.preset}' (known: ${presetNames().join(", ")})`);
  return PRESETS[model.preset];
}

/** Graphs a case builds besides the target: one draft graph, or one module per step in multi-layer mode. */
function draftGraphCount(testCase: Case): number {
  if (testCase.engine.mode !== "speculative" || !testCase.draft || testCase.draft.kind === "ngram") return 0;
  return testCase.engine.multiLayer ? testCase.engine.numSteps : 1;
}

/** Weights and constant tables of one decoder stack of `layers` layers with embedding, norm and LM head. */
function stackParameters(spec: ModelSpec, layers: number): number {
  const qDim = spec.heads * spec.headDim;
  const kvDim = spec.kvHeads * spec.headDim;
  const perLayer =
    2 * spec.hidden + spec.hidden * (qDim + 2 * kvDim) + qDim * spec.hidden + 3 * spec.hidden * spec.intermediate;
  const rope = spec.maxPositions * spec.headDim;
  return 2 * spec.vocab * spec.hidden + spec.hidden + layers * perLayer + rope;
}

/** Estimated parameters of everything the case builds (target and draft graphs). */
export function estimatedParameters(testCase: Case, spec: ModelSpec): number {
  const target = stackParameters(spec, spec.layers);
  const draft = testCase.draft;
  const graphs = draftGraphCount(testCase);
  if (!draft || graphs === 0) return target;
  const perDraft =
    draft.kind === "eagle"
      ? stackParameters(spec, 1) + 2 * spec.hidden * spec.hidden + spec.hidden
      : draft.kind === "eagle3"
        ? stackParameters(spec, 1) + (auxWidth(spec, draft) + 3 * spec.hidden) * spec.hidden
        : draft.kind === "eagle3-mirror"
          ? stackParameters(spec, spec.layers) + (auxWidth(spec, draft) + 1) * spec.hidden
          : stackParameters(
              spec,
              draft.kind === "truncated-mirror" ? Math.min(draft.truncatedLayers, spec.layers) : spec.layers,
            );
  return target + graphs * perDraft;
}

/**
 * Slots one pool needs when every request is at its longest at once: per request, persisted pages for
 * prompt + max new tokens + N positions and temporary pages for the larger of N verify rows and S*K draft
 * rows, plus S (multi-layer temporaries): with this many no request ever waits for admission. `run` sizes
 * its pool with it; the smallest pool a case may have is minimumPoolSlots.
 */
export function requiredPoolSlots(testCase: Case): number {
  const { numSteps, topk, numDraftTokens, pageSize } = testCase.engine;
  const pages = (slots: number) => Math.ceil(slots / pageSize);
  const temporary = pages(Math.max(numDraftTokens, numSteps * topk) + numSteps);
  const perRequest = testCase.workload.requests.map(
    (request) => pages(request.prompt.length + request.maxNewTokens + numDraftTokens) + temporary,
  );
  return Math.max(pageSize * perRequest.reduce((sum, count) => sum + count, 0), minimumPoolSlots(testCase));
}

/** The most slots a pool of this case's model may have (one K/V buffer within maxPoolBufferBytes), whole pages. */
export function maxPoolSlots(testCase: Case): number {
  const spec = caseModelSpec(testCase.model);
  const slotBytes = spec.layers * spec.kvHeads * spec.headDim * (spec.dtype === "float64" ? 8 : 4);
  const slots = Math.floor(FIXED_LIMITS.maxPoolBufferBytes / slotBytes);
  return Math.max(testCase.engine.pageSize, slots - (slots % testCase.engine.pageSize));
}

/** Steps a run of the case can take at most: its last scheduled event, then one token or prefill row per step. */
export function stepBound(testCase: Case): number {
  const { requests, aborts, retracts = [] } = testCase.workload;
  const lastEvent = Math.max(
    0,
    ...requests.map((request) => request.arrivalStep),
    ...[...aborts, ...retracts].map((event) => event.step),
  );
  const tokens = requests.reduce((sum, request) => sum + request.prompt.length + request.maxNewTokens, 0);
  return lastEvent + 2 + tokens * (1 + retracts.length);
}

function checkModel(testCase: Case, spec: ModelSpec): void {
  const at = "spec" in testCase.model ? "/model/spec" : "/model/preset";
  try {
    validateModelSpec(spec);
  } catch (error) {
    if (error instanceof SpecError) fail("spec" in testCase.model ? `${at}/${error.field}` : at, error.reason);
    throw error;
  }
  const bounds: [keyof ModelSpec, number][] = [
    ["vocab", FIXED_LIMITS.maxVocab],
    ["maxPositions", FIXED_LIMITS.maxPositions],
    ["layers", FIXED_LIMITS.maxLayers],
  ];
  for (const [field, max] of bounds)
    if ((spec[field] as number) > max) fail(`${at}/${field}`, `${spec[field]} is above the limit of ${max}`);
  if (spec.residualScale && spec.residualScale.fromLayer >= spec.layers)
    fail(`${at}/residualScale/fromLayer`, `must be below layers (${spec.layers}), got ${spec.residualScale.fromLayer}`);
}

function checkEngine(testCase: Case, spec: ModelSpec): void {
  const { numSteps, topk, pageSize, poolSlots } = testCase.engine;
  if (numSteps > FIXED_LIMITS.maxDraftSteps)
    fail("/engine/numSteps", `${numSteps} is above the limit of ${FIXED_LIMITS.maxDraftSteps} draft steps`);
  const maxTopk = Math.min(FIXED_LIMITS.maxTopk, spec.vocab);
  if (topk > maxTopk)
    fail(
      "/engine/topk",
      `${topk} is above ${maxTopk} (the graphs return the ${FIXED_LIMITS.maxTopk} best tokens of a row; vocab ${spec.vocab})`,
    );
  if (numSteps + 1 >= spec.maxPositions)
    fail("/engine/numSteps", `${numSteps} draft steps do not fit the model's maxPositions ${spec.maxPositions}`);
  if (pageSize > poolSlots) fail("/engine/pageSize", `${pageSize} is larger than poolSlots ${poolSlots}`);
  const draft = testCase.draft;
  if (draft?.kind === "truncated-mirror" && draft.truncatedLayers > spec.layers)
    fail("/draft/truncatedLayers", `${draft.truncatedLayers} is more than the target's ${spec.layers} layers`);
  for (const field of ["auxLayers", "normBeforeFc", "draftVocab"] as const)
    if (draft && !isEagle3(draft.kind) && draft[field] !== undefined)
      fail(`/draft/${field}`, `is an EAGLE-3 checkpoint option; a ${draft.kind} draft has none`);
  if (draft && isEagle3(draft.kind)) {
    try {
      validateEagle3Options(spec, draft);
    } catch (error) {
      if (error instanceof SpecError) fail(`/${error.field.replace(".", "/")}`, error.reason);
      throw error;
    }
    const draftVocab = eagle3Options(spec, draft).draftVocab;
    if (topk > Math.min(FIXED_LIMITS.maxTopk, draftVocab))
      fail("/engine/topk", `${topk} is above the draft vocabulary's ${draftVocab} tokens`);
  }
  const bufferBytes = poolSlots * spec.layers * spec.kvHeads * spec.headDim * (spec.dtype === "float64" ? 8 : 4);
  if (bufferBytes > FIXED_LIMITS.maxPoolBufferBytes)
    fail(
      "/engine/poolSlots",
      `${poolSlots} slots need ${bufferBytes} bytes per K/V buffer, above the limit of ${FIXED_LIMITS.maxPoolBufferBytes}`,
    );
}

function checkWorkload(testCase: Case): void {
  const { requests, aborts, retracts = [] } = testCase.workload;
  requests.forEach((request, i) => {
    if (request.arrivalStep > FIXED_LIMITS.maxEventStep)
      fail(
        `/workload/requests/${i}/arrivalStep`,
        `${request.arrivalStep} is above the limit of ${FIXED_LIMITS.maxEventStep} steps`,
      );
  });
  for (const [name, events] of [
    ["aborts", aborts],
    ["retracts", retracts],
  ] as const)
    events.forEach((event, i) => {
      if (event.step > FIXED_LIMITS.maxEventStep)
        fail(`/workload/${name}/${i}/step`, `${event.step} is above the limit of ${FIXED_LIMITS.maxEventStep} steps`);
    });
}

/** What the reference engine can run at all: checked by runCase for every case (ConfigError with a JSON path). */
export function checkCaseBounds(testCase: Case, spec: ModelSpec): void {
  checkModel(testCase, spec);
  checkEngine(testCase, spec);
  checkWorkload(testCase);
}

/**
 * The smallest pool a case runs to the end with: the largest one request's admission reservation
 * (case/admission.ts). Admission makes later requests wait for room (and the prefix cache evict), so a pool
 * below requiredPoolSlots serializes requests but never runs out.
 */
export function minimumPoolSlots(testCase: Case): number {
  const reservation = Math.max(
    0,
    ...testCase.workload.requests.map((request) => pagesNeeded(request, testCase.engine)),
  );
  return testCase.engine.pageSize * reservation;
}

/** The pool against the workload: after the per-request checks (ids, lengths) have passed. */
export function checkPoolSize(testCase: Case): void {
  const minimum = minimumPoolSlots(testCase);
  if (testCase.engine.poolSlots < minimum)
    fail(
      "/engine/poolSlots",
      `${testCase.engine.poolSlots} slots are too few for this workload: its largest request alone needs ${minimum} (admission queues the others)`,
    );
}

function raise(limits: ResourceLimits, key: keyof ResourceLimits): string {
  return `the limit of ${limits[key]} (raise it with ${LIMIT_FLAGS[key]})`;
}

/**
 * The resource limits that bound the case's size (requests, models, threads): checked first, before the
 * per-request checks walk the workload.
 */
export function checkSizeLimits(testCase: Case, spec: ModelSpec, limits: ResourceLimits = DEFAULT_LIMITS): void {
  const requests = testCase.workload.requests.length;
  if (requests > limits.maxRequests)
    fail("/workload/requests", `${requests} requests are above ${raise(limits, "maxRequests")}`);
  const parameters = estimatedParameters(testCase, spec);
  if (parameters > limits.maxParameters)
    fail(
      "spec" in testCase.model ? "/model/spec" : "/model/preset",
      `the models have about ${parameters} parameters, above ${raise(limits, "maxParameters")}`,
    );
  const threads = testCase.engine.runtime.threads;
  if (threads > limits.maxThreads)
    fail("/engine/runtime/threads", `${threads} threads are more than this machine's ${limits.maxThreads} cores`);
}

/** The work limits (tokens, aborts and retracts): checked after each request is known to fit the model. */
export function checkWorkLimits(testCase: Case, limits: ResourceLimits = DEFAULT_LIMITS): void {
  const { requests, aborts, retracts = [] } = testCase.workload;
  const tokens = requests.reduce((sum, request) => sum + request.prompt.length + request.maxNewTokens, 0);
  if (tokens > limits.maxTotalTokens)
    fail("/workload/requests", `${tokens} prompt and new tokens in all are above ${raise(limits, "maxTotalTokens")}`);
  if (aborts.length + retracts.length > limits.maxTotalTokens)
    fail(
      "/workload",
      `${aborts.length + retracts.length} aborts and retracts are above ${raise(limits, "maxTotalTokens")}`,
    );
}

/** Every resource limit (DEFAULT_LIMITS unless raised by flags). */
export function checkResourceLimits(testCase: Case, spec: ModelSpec, limits: ResourceLimits = DEFAULT_LIMITS): void {
  checkSizeLimits(testCase, spec, limits);
  checkWorkLimits(testCase, limits);
}
