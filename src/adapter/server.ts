// The reference engine behind the external-engine protocol: reads request lines from `input`, runs each
// case with runCase and writes one response line to `output`. `specconf adapter` serves it on
// stdin/stdout; it is both the protocol's worked example and what the adapter test drives end to end.
import type { Readable, Writable } from "node:stream";
import { createInterface } from "node:readline";
import { preflightCase } from "../case/preflight.ts";
import type { FaultName } from "../case/faults.ts";
import { runCase } from "../engine/run-case.ts";
import { BadInputError } from "../errors/bad-input.ts";
import { requestOutputsOf } from "./reference-outputs.ts";
import { SAMPLING_OPTIONS } from "../sampling/params.ts";
import { validateAgainst } from "../schema/validator.ts";
import {
  AdapterRequestSchema,
  HelloRequestSchema,
  type AdapterRequest,
  type AdapterResponse,
  type Capabilities,
  type HelloResponse,
} from "./protocol.ts";

/** The reference engine runs every case specconf generates: its handshake declares all of it. */
export const REFERENCE_CAPABILITIES: Capabilities = {
  modes: ["target-only", "speculative"],
  drafts: ["mirror", "tapped-mirror", "noisy-mirror", "truncated-mirror", "eagle", "eagle3", "eagle3-mirror", "ngram"],
  modelFormats: [],
  maxNumSteps: 8,
  maxTopk: 8,
  multiLayer: true,
  chunkedPrefill: true,
  pageSizes: [1, 2, 3, 4, 8, 16],
  maxBatch: 64,
  arrivals: true,
  aborts: true,
  retracts: true,
  graphReplay: true,
  paddedReplay: true,
  overlap: true,
  prefixCache: true,
  dtypes: ["float32", "float64"],
  sampling: [...SAMPLING_OPTIONS],
  draftSchedule: true,
  observes: [
    "acceptLens",
    "firstRoundDrafts",
    "trace",
    "slot",
    "hidden",
    "predict",
    "margin",
    "topLogit",
    "aux",
    "draftPredict",
    "rawPredict",
    "attended",
    "verify",
    "draws",
    "lifecycle",
    "released",
    "batches",
    "references",
    "placeholders",
    "futures",
  ],
};

export interface ServeOptions {
  /** Faults switched on in every case (to show what a broken engine looks like through the protocol). */
  faults?: readonly FaultName[];
  log?: (message: string) => void;
}

export async function respond(value: unknown, options: ServeOptions = {}): Promise<AdapterResponse | HelloResponse> {
  if (typeof value === "object" && value !== null && "hello" in value) {
    const hello = validateAgainst(HelloRequestSchema, value, "hello");
    if (!hello.ok)
      return { requestId: 0, error: `invalid hello: ${hello.errors[0].path || "/"} ${hello.errors[0].message}` };
    const faults = options.faults?.length ? ` (faults: ${options.faults.join(", ")})` : "";
    return { hello: { name: `specconf-reference${faults}`, version: "0.1.0", capabilities: REFERENCE_CAPABILITIES } };
  }
  const requestId =
    typeof value === "object" && value !== null && Number.isInteger((value as { requestId?: unknown }).requestId)
      ? (value as { requestId: number }).requestId
      : 0;
  const checked = validateAgainst<AdapterRequest>(AdapterRequestSchema, value, "adapter request");
  if (!checked.ok)
    return { requestId, error: `invalid request: ${checked.errors[0].path || "/"} ${checked.errors[0].message}` };
  const request = checked.value;
  const faults = [...new Set([...request.case.engine.faults, ...(options.faults ?? [])])];
  const testCase = { ...request.case, engine: { ...request.case.engine, faults } };
  try {
    preflightCase(testCase); // the resource limits too: a client cannot make the server build anything huge
    const result = await runCase(testCase, { trace: request.wantTrace });
    const outputs = requestOutputsOf(result, testCase.engine.topk === 1);
    return request.wantTrace ? { requestId, outputs, trace: result.trace } : { requestId, outputs };
  } catch (error) {
    if (error instanceof BadInputError) return { requestId, error: error.message, unsupported: true };
    return { requestId, error: error instanceof Error ? error.message : String(error) };
  }
}

/** Serves until `input` ends. Requests are answered in order, one at a time. */
export async function serve(input: Readable, output: Writable, options: ServeOptions = {}): Promise<void> {
  const lines = createInterface({ input, crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.trim() === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      options.log?.(`ignoring a line that is not JSON: ${(error as Error).message}`);
      output.write(`${JSON.stringify({ requestId: 0, error: "request line is not JSON" })}\n`);
      continue;
    }
    const response = await respond(value, options);
    await new Promise<void>((resolve, reject) =>
      output.write(`${JSON.stringify(response)}\n`, (error) => (error ? reject(error) : resolve())),
    );
  }
}
