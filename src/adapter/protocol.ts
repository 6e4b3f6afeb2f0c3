// The external-engine protocol: JSON Lines on the engine's stdin and stdout, one message in flight at a
// time. The first exchange is the handshake: specconf sends a hello line, the engine answers with its name,
// version and capabilities (what it can load and run, which trace fields it emits). Generated cases are then
// drawn only from what the engine declared. Each later request line carries a case (its full model spec,
// config and workload), the models' digests and the paths of the exported model files in the formats the
// engine asked for; the engine answers with one line: the outputs per request and, optionally, a trace.
// stdout carries nothing else (logs go to stderr). Closing stdin asks the engine to exit.
// docs/adapter.md documents it; schemas/adapter-*.schema.json are emitted from these definitions.
import { Type, type Static } from "@sinclair/typebox";
import { CaseSchema } from "../case/case.ts";
import { SAMPLING_OPTIONS } from "../sampling/params.ts";
import { TraceSchema } from "../trace/schema.ts";
import { ReportedOutputSchema } from "../trace/outputs-line.ts";

export const PROTOCOL = "specconf-engine";
export const PROTOCOL_VERSION = 2;

const Digest = Type.String({ pattern: "^[0-9a-f]{64}$" });

/** Model file formats specconf exports on demand (content-addressed under its model cache). */
export const MODEL_FORMATS = ["onnx", "hf", "gguf"] as const;
export type ModelFormat = (typeof MODEL_FORMATS)[number];

export const HelloRequestSchema = Type.Object(
  {
    protocol: Type.Literal(PROTOCOL),
    version: Type.Literal(PROTOCOL_VERSION),
    /** The first line specconf writes; nothing else is sent before the engine answers it. */
    hello: Type.Object(
      {
        specconf: Type.String({ description: "specconf's version" }),
        /** The formats specconf can export; the engine picks from these. */
        modelFormats: Type.Array(Type.Union(MODEL_FORMATS.map((format) => Type.Literal(format)))),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

/**
 * What an engine supports. Every field narrows the generated cases; an optional field left out means the
 * narrowest choice (chains only, one request, no chunking, page 1, float32, S up to 16: docs/adapter.md).
 */
export const CapabilitiesSchema = Type.Object(
  {
    /** Engine modes it runs: target-only greedy and/or speculative. */
    modes: Type.Array(Type.Union([Type.Literal("target-only"), Type.Literal("speculative")]), { minItems: 1 }),
    /**
     * Draft kinds it can run (case /draft/kind). Model drafts are loaded from the exported files: mirror and
     * truncated-mirror as a standalone draft model (a Llama checkpoint: the target's copy, or its first
     * layers), eagle as an EAGLE head, eagle3 as an EAGLE-3 head (LlamaForCausalLMEagle3, with d2t/t2d); ngram
     * needs no model (prompt lookup).
     */
    drafts: Type.Array(Type.String({ minLength: 1 })),
    /** The model files it loads; each request names them (models.files). */
    modelFormats: Type.Array(Type.Union(MODEL_FORMATS.map((format) => Type.Literal(format)))),
    /** Largest S (draft steps per round) it accepts. */
    maxNumSteps: Type.Optional(Type.Integer({ minimum: 1 })),
    /** Largest topk (1: chains only). */
    maxTopk: Type.Optional(Type.Integer({ minimum: 1 })),
    multiLayer: Type.Optional(Type.Boolean()),
    /** Prefill in chunks of the case's chunkSize and tokenBudget. */
    chunkedPrefill: Type.Optional(Type.Boolean()),
    /** KV page sizes it can run with (default [1]). */
    pageSizes: Type.Optional(Type.Array(Type.Integer({ minimum: 1 }), { minItems: 1 })),
    /** Most requests in one case (run as one batch where the engine batches). */
    maxBatch: Type.Optional(Type.Integer({ minimum: 1 })),
    /** Requests arriving at later steps (arrivalStep > 0). */
    arrivals: Type.Optional(Type.Boolean()),
    aborts: Type.Optional(Type.Boolean()),
    retracts: Type.Optional(Type.Boolean()),
    graphReplay: Type.Optional(Type.Boolean()),
    /** Graph replay on padded row buckets (case /engine/graphBuckets), padding rows poisoned (/engine/paddingPoisonSeed). */
    paddedReplay: Type.Optional(Type.Boolean()),
    /** Overlap scheduling (case /engine/overlap): a step planned before the previous step's results are processed. */
    overlap: Type.Optional(Type.Boolean()),
    /** A prefix cache sharing target and draft KV of common prompt prefixes between requests (/engine/prefixCache). */
    prefixCache: Type.Optional(Type.Boolean()),
    dtypes: Type.Optional(Type.Array(Type.Union([Type.Literal("float32"), Type.Literal("float64")]), { minItems: 1 })),
    /**
     * The request sampling options it honors (case /workload/requests/i/sampling): stopTokenIds,
     * minNewTokens, repetitionPenalty, presencePenalty, frequencyPenalty, logitBias, logprobs, and for
     * stochastic sampling temperature, topK, topP, minP, seed (law "sampling distribution" needs temperature
     * and seed: replicas of a request with distinct seeds in one batch; "sampling replay" needs the trace's
     * row draws). Absent: none, and no generated case carries sampling options.
     */
    sampling: Type.Optional(Type.Array(Type.Union(SAMPLING_OPTIONS.map((option) => Type.Literal(option))))),
    /**
     * What its outputs and traces show: "acceptLens", "firstRoundDrafts" (outputs fields), "trace" (events with
     * rows), and trace row/event fields it fills ("slot", "hidden", "aux", "predict", "draftPredict", "margin",
     * "topLogit", "rawPredict", "attended", "verify", "scores", "lifecycle", "draws"). Laws needing anything else are
     * "not checkable".
     */
    observes: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
  },
  { additionalProperties: false },
);

export const HelloResponseSchema = Type.Object(
  {
    hello: Type.Object(
      {
        /** The engine and the library versions it runs on (recorded in reports and failure files). */
        name: Type.String({ minLength: 1 }),
        version: Type.String(),
        capabilities: CapabilitiesSchema,
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

const ModelFiles = Type.Object(
  {
    /** The target model's file (gguf, onnx) or checkpoint directory (hf), absolute. */
    target: Type.String(),
    /** The draft model's file or directory; absent for target-only cases and model-free drafts (ngram). */
    draft: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

export const AdapterRequestSchema = Type.Object(
  {
    protocol: Type.Literal(PROTOCOL),
    version: Type.Literal(PROTOCOL_VERSION),
    /** Echoed in the response. */
    requestId: Type.Integer({ minimum: 0 }),
    /** The case to run; its model is always the full spec ({ "spec": ... }), never a preset name. */
    case: CaseSchema,
    /**
     * sha256 of the ONNX bytes of the target and draft, and the exported files in each format the engine
     * declared (written by specconf before the request, content-addressed: the same model, the same path).
     */
    models: Type.Object(
      {
        target: Digest,
        draft: Type.Union([Digest, Type.Null()]),
        files: Type.Optional(
          Type.Object(
            { onnx: Type.Optional(ModelFiles), hf: Type.Optional(ModelFiles), gguf: Type.Optional(ModelFiles) },
            { additionalProperties: false },
          ),
        ),
      },
      { additionalProperties: false },
    ),
    /** Whether specconf wants a trace back (engines that cannot trace may ignore it). */
    wantTrace: Type.Boolean(),
  },
  { additionalProperties: false },
);

export const AdapterResponseSchema = Type.Union([
  Type.Object(
    {
      requestId: Type.Integer({ minimum: 0 }),
      /** One entry per workload request. */
      outputs: Type.Array(ReportedOutputSchema),
      trace: Type.Optional(TraceSchema),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      requestId: Type.Integer({ minimum: 0 }),
      /** The engine could not run the case. */
      error: Type.String(),
      /** true: the engine does not support this configuration (the case is skipped, not failed). */
      unsupported: Type.Optional(Type.Boolean()),
    },
    { additionalProperties: false },
  ),
]);

export type HelloRequest = Static<typeof HelloRequestSchema>;
export type HelloResponse = Static<typeof HelloResponseSchema>;
export type Capabilities = Static<typeof CapabilitiesSchema>;
export type AdapterRequest = Static<typeof AdapterRequestSchema>;
export type AdapterResponse = Static<typeof AdapterResponseSchema>;
