// The external-engine protocol: JSON Lines on the engine's stdin and stdout, one request in flight at a
// time. specconf writes a request line (a case with its full model spec, config and workload, and the
// models' digests); the engine answers with one line: the outputs per request and, optionally, a trace.
// stdout carries nothing else (logs go to stderr). Closing stdin asks the engine to exit.
// docs/adapter.md documents it; schemas/adapter-*.schema.json are emitted from these definitions.
import { Type, type Static } from "@sinclair/typebox";
import { CaseSchema } from "../case/case.ts";
import { TraceSchema } from "../trace/schema.ts";
import { RequestOutputSchema } from "../validate/outputs-schema.ts";

export const PROTOCOL = "specconf-engine";
export const PROTOCOL_VERSION = 1;

const Digest = Type.String({ pattern: "^[0-9a-f]{64}$" });

export const AdapterRequestSchema = Type.Object(
  {
    protocol: Type.Literal(PROTOCOL),
    version: Type.Literal(PROTOCOL_VERSION),
    /** Echoed in the response. */
    requestId: Type.Integer({ minimum: 0 }),
    /** The case to run; its model is always the full spec ({ "spec": ... }), never a preset name. */
    case: CaseSchema,
    /** sha256 of the ONNX bytes of the target and draft (specconf export writes checkpoints under these digests). */
    models: Type.Object({ target: Digest, draft: Type.Union([Digest, Type.Null()]) }, { additionalProperties: false }),
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
      outputs: Type.Array(RequestOutputSchema),
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

export type AdapterRequest = Static<typeof AdapterRequestSchema>;
export type AdapterResponse = Static<typeof AdapterResponseSchema>;
