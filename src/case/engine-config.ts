// Engine configuration: schema (TypeBox, so the case file validates it) and semantic validation.
import { CloneType, Type, type Static } from "@sinclair/typebox";
import { BadInputError } from "../errors/bad-input.ts";
import { FAULT_NAMES } from "./faults.ts";

/** Counts and sizes are 32-bit integers (src/case/case.ts says why). */
const INT32_MAX = 2 ** 31 - 1;

export const RuntimeSchema = Type.Object(
  {
    ep: Type.Union([Type.Literal("cpu"), Type.Literal("cuda"), Type.Literal("webgpu")], {
      description: "ONNX Runtime execution provider: cpu, cuda or webgpu.",
    }),
    threads: Type.Integer({
      minimum: 1,
      maximum: INT32_MAX,
      description: "ONNX Runtime intra-op threads (pinned; recorded in traces and golden files).",
    }),
    graphOptimizationLevel: Type.Union(
      [Type.Literal("disabled"), Type.Literal("basic"), Type.Literal("extended"), Type.Literal("all")],
      { description: "ONNX Runtime graph optimization level (pinned; recorded in traces and golden files)." },
    ),
    gatherContext: Type.Optional(
      Type.Boolean({
        description:
          "Feed every forward the context K/V rows gathered on the host with ctx_slots 0..C-1 (what the GPU EPs are always fed: src/runtime/context-gather.ts) even on the CPU EP, which otherwise reads the pool in place; the same bits either way (law context-gather invariance), so the CPU check runs the GPU EPs' feed.",
      }),
    ),
  },
  { additionalProperties: false },
);

export const EngineConfigSchema = Type.Object(
  {
    mode: Type.Union([Type.Literal("target-only"), Type.Literal("speculative")], {
      description: "target-only (greedy, the lossless baseline) or speculative.",
    }),
    numSteps: Type.Integer({ minimum: 1, maximum: INT32_MAX, description: "S: draft steps per round." }),
    topk: Type.Integer({ minimum: 1, maximum: INT32_MAX, description: "K: candidates per node; 1 is chain drafting." }),
    numDraftTokens: Type.Integer({
      minimum: 1,
      maximum: INT32_MAX,
      description: "N: verify rows per request (K = 1: S + 1).",
    }),
    chunkSize: Type.Union([Type.Integer({ minimum: 1, maximum: INT32_MAX }), Type.Null()], {
      description: "C: prefill chunk size; null processes each prompt in one chunk.",
    }),
    pageSize: Type.Integer({
      minimum: 1,
      maximum: INT32_MAX,
      description: "KV page size P: slots are allocated in pages of P.",
    }),
    tokenBudget: Type.Integer({
      minimum: 1,
      maximum: INT32_MAX,
      description: "Prefill rows per step (verify and draft rows always run).",
    }),
    poolSlots: Type.Integer({
      minimum: 1,
      maximum: INT32_MAX,
      description: "Slots per pool (a multiple of pageSize).",
    }),
    faults: Type.Array(Type.Union(FAULT_NAMES.map((name) => Type.Literal(name))), {
      description: "Named faults switched on (docs/design.md section 6); empty for a correct engine.",
    }),
    graphReplay: Type.Optional(
      Type.Boolean({
        description: "Draft decode through captured static buffers replayed per batch shape (as CUDA graphs).",
      }),
    ),
    multiLayer: Type.Optional(
      Type.Boolean({
        description:
          "Multi-layer (MTP-style) drafting: S draft modules, module k with its own weights and pool at step k.",
      }),
    ),
    graphBuckets: Type.Optional(
      Type.Array(Type.Integer({ minimum: 1 }), {
        minItems: 1,
        description:
          "Padded graph replay: with graphReplay, the decode-side forwards (target decode and verify, draft decode, draft extend after verify) run on graphs captured per padded row bucket (ascending, e.g. [1, 2, 4, 8]); padding rows are filled with poison on every replay. Batches above the largest bucket run eagerly; without graphReplay the buckets are not used.",
      }),
    ),
    paddingPoisonSeed: Type.Optional(
      Type.Integer({
        minimum: 0,
        description:
          "Seed of the padding rows' poison (tokens, positions, slots, hidden rows); real rows must not depend on it.",
      }),
    ),
    overlap: Type.Optional(
      Type.Boolean({
        description:
          "Overlap scheduling (SGLang's overlap scheduler, vLLM async scheduling): step t + 1 is planned before step t's results are processed; tokens not yet known are placeholders into a future-token ring, resolved at launch from step t's outputs (docs/scheduling.md).",
      }),
    ),
    prefixCache: Type.Optional(
      Type.Boolean({
        description:
          "Prefix cache (SGLang's radix cache): page-aligned prompt prefixes keyed with the draft's lookahead tokens share target and draft KV between requests, reference-counted, evicted (LRU) under pool pressure.",
      }),
    ),
    contextLength: Type.Optional(
      Type.Integer({
        minimum: 2,
        maximum: INT32_MAX,
        description:
          "The engine's context per request (vLLM max_model_len, a llama.cpp slot's context, SGLang context_length), at most the model's maxPositions: prompt + output tokens at most this, no target row at a position at or past it; speculation drafts only what fits (src/case/context-limit.ts). Absent: the model's maxPositions.",
      }),
    ),
    draftContextLength: Type.Optional(
      Type.Integer({
        minimum: 2,
        maximum: INT32_MAX,
        description:
          "The draft model's own context, shorter than the target's (vLLM speculative_config.max_model_len): no draft row feeds a token at a position at or past it (a row at anchor a feeds position a + 1); past it the request decodes without speculation. Absent: the target's context.",
      }),
    ),
    requestSlots: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: INT32_MAX,
        description:
          "Request slots (llama.cpp's server slots, SGLang's req_to_token rows): a request is admitted into the lowest free slot and holds it until it ends; later requests reuse it, and the drafter's per-slot state (prompt lookup's n-gram history) must start fresh for each (src/engine/slot-drafter.ts). Absent: every request on a fresh slot of its own.",
      }),
    ),
    runtime: CloneType(RuntimeSchema, {
      description: "ONNX Runtime settings: execution provider, threads, graph optimization level.",
    }),
  },
  { additionalProperties: false },
);

export type EngineConfig = Static<typeof EngineConfigSchema>;

/**
 * The most draft tokens a verify tree holds (root included) with topk children per node over numSteps draft
 * steps, as SGLang sizes it: 1 + topk + (numSteps - 1) * topk^2. The one home of the formula.
 */
export function maxTreeTokens(numSteps: number, topk: number): number {
  return 1 + topk + (numSteps - 1) * topk * topk;
}

export function defaultEngineConfig(overrides: Partial<EngineConfig> = {}): EngineConfig {
  const numSteps = overrides.numSteps ?? 3;
  const topk = overrides.topk ?? 1;
  return {
    mode: "speculative",
    numSteps,
    topk,
    numDraftTokens: topk === 1 ? numSteps + 1 : Math.min(numSteps + 1, maxTreeTokens(numSteps, topk)),
    chunkSize: null,
    pageSize: 1,
    tokenBudget: 256,
    poolSlots: 4096,
    faults: [],
    runtime: { ep: "cpu", threads: 1, graphOptimizationLevel: "basic" },
    ...overrides,
  };
}

/** A case that parses but cannot run (exit 2); `field` is its JSON path in the case ("/engine/topk"). */
export class ConfigError extends BadInputError {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message, { jsonPath: field });
    this.name = "ConfigError";
  }
}

export function validateEngineConfig(config: EngineConfig): void {
  const { numSteps, topk, numDraftTokens } = config;
  if (numSteps < 1) throw new ConfigError("/engine/numSteps", `must be >= 1, got ${numSteps}`);
  if (topk < 1) throw new ConfigError("/engine/topk", `must be >= 1, got ${topk}`);
  if (topk === 1 && numDraftTokens !== numSteps + 1) {
    throw new ConfigError(
      "/engine/numDraftTokens",
      `with topk 1 must be numSteps + 1 = ${numSteps + 1}, got ${numDraftTokens}`,
    );
  }
  if (topk > 1) {
    const max = maxTreeTokens(numSteps, topk);
    if (numDraftTokens < 2 || numDraftTokens > max) {
      throw new ConfigError(
        "/engine/numDraftTokens",
        `with topk ${topk} and numSteps ${numSteps} must be in [2, ${max}], got ${numDraftTokens}`,
      );
    }
  }
  if (config.chunkSize !== null && config.chunkSize < 1)
    throw new ConfigError("/engine/chunkSize", `must be >= 1, got ${config.chunkSize}`);
  if (config.pageSize < 1) throw new ConfigError("/engine/pageSize", `must be >= 1, got ${config.pageSize}`);
  if (config.tokenBudget < 1) throw new ConfigError("/engine/tokenBudget", `must be >= 1, got ${config.tokenBudget}`);
  if (config.graphBuckets !== undefined) {
    const buckets = config.graphBuckets;
    const at = buckets.findIndex(
      (bucket, i) => !Number.isInteger(bucket) || bucket < 1 || (i > 0 && bucket <= buckets[i - 1]),
    );
    if (at >= 0)
      throw new ConfigError(
        `/engine/graphBuckets/${at}`,
        `buckets must be ascending integers >= 1, got [${buckets.join(", ")}]`,
      );
  }
  if (config.poolSlots % config.pageSize !== 0) {
    throw new ConfigError(
      "/engine/poolSlots",
      `must be a multiple of pageSize ${config.pageSize}, got ${config.poolSlots}`,
    );
  }
}
