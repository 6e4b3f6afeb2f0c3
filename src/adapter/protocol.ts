// The external-engine protocol: JSON Lines on the engine's stdin and stdout, one message in flight at a
// time. The first exchange is the handshake: specconf sends a hello line, the engine answers with its name,
// version and capabilities (what it can load and run, which trace fields it emits). Generated cases are then
// drawn only from what the engine declared. Each later request line carries a case (its full model spec,
// config and workload), the models' digests and the paths of the exported model files in the formats the
// engine asked for; the engine answers with one line: the outputs per request and, optionally, a trace.
// stdout carries nothing else (logs go to stderr). Closing stdin asks the engine to exit.
// docs/adapter.md documents it; schemas/adapter-*.schema.json are emitted from these definitions.
import { CloneType, Type, type Static } from "@sinclair/typebox";
import { CaseSchema } from "../case/case.ts";
import { SAMPLING_OPTIONS } from "../sampling/params.ts";
import { MODEL_FAMILIES } from "../model/spec.ts";
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
    protocol: Type.Literal(PROTOCOL, { description: 'Always "specconf-engine".' }),
    version: Type.Literal(PROTOCOL_VERSION, { description: "The protocol version (2)." }),
    hello: Type.Object(
      {
        specconf: Type.String({ description: "specconf's version" }),
        modelFormats: Type.Array(Type.Union(MODEL_FORMATS.map((format) => Type.Literal(format))), {
          description: "The formats specconf can export; the engine picks from these.",
        }),
      },
      {
        additionalProperties: false,
        description: "The first line specconf writes; nothing else is sent before the engine answers it.",
      },
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
    modes: Type.Array(Type.Union([Type.Literal("target-only"), Type.Literal("speculative")]), {
      minItems: 1,
      description: "Engine modes it runs: target-only greedy and/or speculative.",
    }),
    drafts: Type.Array(Type.String({ minLength: 1 }), {
      description:
        "Draft kinds it can run (case /draft/kind). Model drafts are loaded from the exported files: mirror and truncated-mirror as a standalone draft model (a Llama checkpoint: the target's copy, or its first layers), eagle as an EAGLE head, eagle3 as an EAGLE-3 head (LlamaForCausalLMEagle3, with d2t/t2d); ngram needs no model (prompt lookup).",
    }),
    modelFormats: Type.Array(Type.Union(MODEL_FORMATS.map((format) => Type.Literal(format))), {
      description: "The model files it loads; each request names them (models.files).",
    }),
    maxNumSteps: Type.Optional(
      Type.Integer({ minimum: 1, description: "Largest S (draft steps per round) it accepts." }),
    ),
    maxTopk: Type.Optional(Type.Integer({ minimum: 1, description: "Largest topk (1: chains only)." })),
    multiLayer: Type.Optional(
      Type.Boolean({
        description: "Multi-layer (MTP-style) drafting: a module and pool per draft step (case /engine/multiLayer).",
      }),
    ),
    chunkedPrefill: Type.Optional(
      Type.Boolean({ description: "Prefill in chunks of the case's chunkSize and tokenBudget." }),
    ),
    pageSizes: Type.Optional(
      Type.Array(Type.Integer({ minimum: 1 }), {
        minItems: 1,
        description: "KV page sizes it can run with (default [1]).",
      }),
    ),
    maxBatch: Type.Optional(
      Type.Integer({
        minimum: 1,
        description: "Most requests in one case (run as one batch where the engine batches).",
      }),
    ),
    arrivals: Type.Optional(Type.Boolean({ description: "Requests arriving at later steps (arrivalStep > 0)." })),
    aborts: Type.Optional(Type.Boolean({ description: "Aborts between forwards (case /workload/aborts)." })),
    retracts: Type.Optional(
      Type.Boolean({ description: "Retracts between forwards, resumed by re-prefilling (case /workload/retracts)." }),
    ),
    graphReplay: Type.Optional(
      Type.Boolean({ description: "Draft decode on captured, replayed graphs (case /engine/graphReplay)." }),
    ),
    paddedReplay: Type.Optional(
      Type.Boolean({
        description:
          "Graph replay on padded row buckets (case /engine/graphBuckets), padding rows poisoned (/engine/paddingPoisonSeed).",
      }),
    ),
    overlap: Type.Optional(
      Type.Boolean({
        description:
          "Overlap scheduling (case /engine/overlap): a step planned before the previous step's results are processed.",
      }),
    ),
    prefixCache: Type.Optional(
      Type.Boolean({
        description:
          "A prefix cache sharing target and draft KV of common prompt prefixes between requests (/engine/prefixCache).",
      }),
    ),
    dtypes: Type.Optional(
      Type.Array(Type.Union([Type.Literal("float32"), Type.Literal("float64")]), {
        minItems: 1,
        description: "Model dtypes it runs (default [float32]).",
      }),
    ),
    modelFamilies: Type.Optional(
      Type.Array(Type.Union(MODEL_FAMILIES.map((family) => Type.Literal(family))), {
        description:
          'Model families it runs beside plain Llama (issue 29): "sliding-window" (some layers attend a window), "rope-scaling" (linear or YaRN RoPE), "hybrid" (Mamba2 layers between attention layers). Exports carry each in an architecture that computes it exactly (docs/export.md). Absent: none, and no generated case uses them.',
      }),
    ),
    draftSchedule: Type.Optional(
      Type.Boolean({
        description:
          "Per-request speculation schedules (case /workload/requests/i/draftSchedule): draft steps per round, 0 switching speculation off for a round, with chain drafting (topk 1), no multi-layer, no overlap.",
      }),
    ),
    contextLimits: Type.Optional(
      Type.Boolean({
        description:
          "Context limits (case /engine/contextLength and /engine/draftContextLength): requests whose prompt + output reach the engine's context, speculation drafting only what fits before it, and a draft model with a shorter context of its own (past it, decoding without speculation); chain drafting (topk 1), no multi-layer, no overlap, no prefix cache with a draft context.",
      }),
    ),
    requestSlots: Type.Optional(
      Type.Boolean({
        description:
          "Request slots (case /engine/requestSlots): requests admitted into a fixed number of slots, later requests reusing a slot an earlier one held (llama.cpp's server slots); the trace's requests say which slot each ran on (`slot`).",
      }),
    ),
    text: Type.Optional(
      Type.Boolean({
        description:
          "The text layer (issue 28): requests with sampling.stop (even empty) are detokenized with the request's `vocabulary` (token id -> text; the exported GGUF's tokenizer.ggml.tokens), and their outputs (and trace requests) carry `text`, and where the engine can `stopString`, `deltas` (one per step that emitted tokens) and `usage`; a field left out makes its law not checkable. Stop strings themselves are the sampling options stop and includeStopStrInOutput.",
      }),
    ),
    sampling: Type.Optional(
      Type.Array(Type.Union(SAMPLING_OPTIONS.map((option) => Type.Literal(option))), {
        description:
          'The request sampling options it honors (case /workload/requests/i/sampling): stopTokenIds, minNewTokens, repetitionPenalty, presencePenalty, frequencyPenalty, logitBias, logprobs, and for stochastic sampling temperature, topK, topP, minP, seed (law "sampling distribution" needs temperature and seed: replicas of a request with distinct seeds in one batch; "sampling replay" needs the trace\'s row draws). Absent: none, and no generated case carries sampling options.',
      }),
    ),
    observes: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        description:
          'What its outputs and traces show: "acceptLens", "firstRoundDrafts" (outputs fields), "trace" (events with rows), and trace row/event fields it fills ("slot", "hidden", "aux", "predict", "draftPredict", "margin", "topLogit", "rawPredict", "attended", "verify", "scores", "lifecycle", "draws"). Laws needing anything else are "not checkable".',
      }),
    ),
  },
  { additionalProperties: false },
);

export const HelloResponseSchema = Type.Object(
  {
    hello: Type.Object(
      {
        name: Type.String({
          minLength: 1,
          description: "The engine and the library versions it runs on (recorded in reports and failure files).",
        }),
        version: Type.String({ description: "The engine's version string." }),
        capabilities: CloneType(CapabilitiesSchema, {
          description: "What it supports: every field narrows the generated cases.",
        }),
      },
      { additionalProperties: false, description: "The engine's answer to the hello." },
    ),
  },
  { additionalProperties: false },
);

const ModelFiles = Type.Object(
  {
    target: Type.String({
      description: "The target model's file (gguf, onnx) or checkpoint directory (hf), absolute.",
    }),
    draft: Type.Optional(
      Type.String({
        description: "The draft model's file or directory; absent for target-only cases and model-free drafts (ngram).",
      }),
    ),
  },
  { additionalProperties: false },
);

export const AdapterRequestSchema = Type.Object(
  {
    protocol: Type.Literal(PROTOCOL, { description: 'Always "specconf-engine".' }),
    version: Type.Literal(PROTOCOL_VERSION, { description: "The protocol version (2)." }),
    requestId: Type.Integer({ minimum: 0, description: "Echoed in the response." }),
    case: CloneType(CaseSchema, {
      description: 'The case to run; its model is always the full spec ({ "spec": ... }), never a preset name.',
    }),
    models: Type.Object(
      {
        target: CloneType(Digest, { description: "sha256 of the target's ONNX bytes." }),
        draft: Type.Union([Digest, Type.Null()], {
          description: "sha256 of the draft's ONNX bytes; null without a draft model.",
        }),
        files: Type.Optional(
          Type.Object(
            {
              onnx: Type.Optional(CloneType(ModelFiles, { description: "ONNX graphs." })),
              hf: Type.Optional(CloneType(ModelFiles, { description: "Hugging Face checkpoint directories." })),
              gguf: Type.Optional(CloneType(ModelFiles, { description: "GGUF files (llama.cpp)." })),
            },
            { additionalProperties: false, description: "The exported model files, per format the engine declared." },
          ),
        ),
      },
      {
        additionalProperties: false,
        description:
          "sha256 of the ONNX bytes of the target and draft, and the exported files in each format the engine declared (written by specconf before the request, content-addressed: the same model, the same path).",
      },
    ),
    wantTrace: Type.Boolean({
      description: "Whether specconf wants a trace back (engines that cannot trace may ignore it).",
    }),
    vocabulary: Type.Optional(
      Type.Array(Type.String(), {
        description:
          "Each token id's text (src/model/vocabulary.ts; empty for BOS and EOS), present when a request of the case has sampling.stop: what detokenizing engines spell their outputs and match stop strings with.",
      }),
    ),
  },
  { additionalProperties: false },
);

export const AdapterResponseSchema = Type.Union([
  Type.Object(
    {
      requestId: Type.Integer({ minimum: 0, description: "The request's requestId, echoed." }),
      outputs: Type.Array(ReportedOutputSchema, { description: "One entry per workload request." }),
      trace: Type.Optional(
        CloneType(TraceSchema, { description: "The run's trace (optional; schemas/trace.schema.json)." }),
      ),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      requestId: Type.Integer({ minimum: 0, description: "The request's requestId, echoed." }),
      error: Type.String({ description: "The engine could not run the case." }),
      unsupported: Type.Optional(
        Type.Boolean({
          description: "true: the engine does not support this configuration (the case is skipped, not failed).",
        }),
      ),
    },
    { additionalProperties: false },
  ),
]);

export type HelloRequest = Static<typeof HelloRequestSchema>;
export type HelloResponse = Static<typeof HelloResponseSchema>;
export type Capabilities = Static<typeof CapabilitiesSchema>;
export type AdapterRequest = Static<typeof AdapterRequestSchema>;
export type AdapterResponse = Static<typeof AdapterResponseSchema>;
