// The reference engine behind the external-engine protocol: reads request lines from `input`, runs each
// case with runCase and writes one response line to `output`. `specconf adapter` serves it on
// stdin/stdout; it is both the protocol's worked example and what the adapter test drives end to end.
import { MODEL_FAMILIES } from "../model/spec.ts";
import type { Readable, Writable } from "node:stream";
import { preflightCase } from "../case/preflight.ts";
import type { FaultName } from "../case/faults.ts";
import { runCase } from "../engine/run-case.ts";
import { BadInputError } from "../errors/bad-input.ts";
import { requestOutputsOf } from "./reference-outputs.ts";
import { SAMPLING_OPTIONS } from "../sampling/params.ts";
import type { AdapterResponse, Capabilities, HelloResponse } from "./protocol.ts";
import { helloIssue, isHello, parseRequest, serveLines } from "./respond.ts";

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
  contextLimits: true,
  requestSlots: true,
  text: true,
  modelFamilies: [...MODEL_FAMILIES],
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
  if (isHello(value)) {
    const issue = helloIssue(value);
    if (issue) return { requestId: 0, error: `invalid hello: ${issue}` };
    const faults = options.faults?.length ? ` (faults: ${options.faults.join(", ")})` : "";
    return { hello: { name: `specconf-reference${faults}`, version: "0.1.0", capabilities: REFERENCE_CAPABILITIES } };
  }
  const parsed = parseRequest(value);
  if (!("request" in parsed)) return parsed;
  const { requestId, request } = parsed;
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
export function serve(input: Readable, output: Writable, options: ServeOptions = {}): Promise<void> {
  return serveLines(input, output, {
    answer: (value) => respond(value, options),
    notJson: (message) => options.log?.(`ignoring a line that is not JSON: ${message}`),
  });
}
