// What the llama.cpp engine declares in its hello, and the check that keeps every case inside it: a case
// outside is answered { error, unsupported: true }, never run approximately.
// - modes: target-only greedy, and speculative with a standalone draft model (DraftSequenceTokenPredictor)
//   or prompt lookup (InputLookupTokenPredictor, draft kind "ngram").
// - drafts: the kinds with an exact standalone-Llama form (src/export/gguf.ts) plus ngram.
// - chains only (maxTopk 1); no chunked prefill (node-llama-cpp batches a prompt by its own batch size and
//   packs sequences as its dispatcher sees fit, so a case's chunkSize / tokenBudget cannot be honoured);
//   page size 1 (llama.cpp's KV cells); all requests start together (no arrivals, aborts or retracts).
// - float32 only: GGUF F32 weights; a float64 case would be compared at float64's tie epsilon.
// - observes: acceptLens and the first round's drafts (outputs), and a trace holding one verify event per
//   speculative round (root and drafts with positions, accept length, produced tokens): see round-recorder.ts.
import type { Case } from "../../case/case.ts";
import type { Capabilities } from "../protocol.ts";
import type { DraftKind } from "../../model/spec.ts";
import { resolveModelSpec } from "../../case/models.ts";
import { GGUF_DRAFT_KINDS } from "../../export/gguf.ts";
import { isChunked } from "../../laws/chunk-invariance.ts";

export const ENGINE_NAME = "llama.cpp";
/** Sequences per context; more requests in one case are unsupported. */
export const MAX_BATCH = 8;
/** DraftSequenceTokenPredictor's own default maximum. */
export const MAX_NUM_STEPS = 16;
export const ENGINE_DRAFT_KINDS: readonly DraftKind[] = [...GGUF_DRAFT_KINDS, "ngram"];

export const CAPABILITIES: Capabilities = {
  modes: ["target-only", "speculative"],
  drafts: [...ENGINE_DRAFT_KINDS],
  modelFormats: ["gguf"],
  maxNumSteps: MAX_NUM_STEPS,
  maxTopk: 1,
  multiLayer: false,
  chunkedPrefill: false,
  pageSizes: [1],
  maxBatch: MAX_BATCH,
  arrivals: false,
  aborts: false,
  retracts: false,
  graphReplay: false,
  dtypes: ["float32"],
  observes: ["acceptLens", "firstRoundDrafts", "trace", "verify"],
};

/** Why this engine cannot run `testCase` as specified (with the JSON path), or undefined when it can. */
export function unsupportedReason(testCase: Case): string | undefined {
  const spec = resolveModelSpec(testCase.model);
  const engine = testCase.engine;
  const workload = testCase.workload;
  if (spec.dtype !== "float32") return `/model/spec/dtype: ${spec.dtype} (llama.cpp runs F32 weights; float32 only)`;
  if (engine.faults.length > 0) return `/engine/faults: the reference engine's faults do not exist in llama.cpp`;
  if (engine.chunkSize !== null)
    return "/engine/chunkSize: chunked prefill is not controllable (node-llama-cpp batches by its own batch size)";
  if (isChunked(testCase))
    return `/engine/tokenBudget: ${engine.tokenBudget} splits a prompt (chunked prefill is not controllable)`;
  const promptRows = workload.requests.reduce((sum, request) => sum + request.prompt.length, 0);
  if (promptRows > engine.tokenBudget)
    return `/engine/tokenBudget: ${engine.tokenBudget} < ${promptRows} prompt tokens (prefill is not scheduled across steps)`;
  if (engine.pageSize !== 1) return `/engine/pageSize: ${engine.pageSize} (llama.cpp KV cells: page size 1)`;
  if (engine.graphReplay) return "/engine/graphReplay: not a llama.cpp mode";
  if (workload.requests.length > MAX_BATCH)
    return `/workload/requests: ${workload.requests.length} requests, at most ${MAX_BATCH} sequences per context`;
  const late = workload.requests.findIndex((request) => request.arrivalStep !== 0);
  if (late >= 0) return `/workload/requests/${late}/arrivalStep: requests arriving later are not supported`;
  if (workload.aborts.length > 0) return "/workload/aborts: aborts are not supported";
  if ((workload.retracts ?? []).length > 0) return "/workload/retracts: retracts are not supported";
  if (engine.mode === "speculative") {
    if (!testCase.draft) return "/draft: speculative mode needs a draft";
    if (!ENGINE_DRAFT_KINDS.includes(testCase.draft.kind))
      return `/draft/kind: ${testCase.draft.kind} has no standalone form llama.cpp can load (supported: ${ENGINE_DRAFT_KINDS.join(", ")})`;
    if (engine.topk !== 1) return `/engine/topk: ${engine.topk} (llama.cpp drafts chains: topk 1)`;
    if (engine.multiLayer) return "/engine/multiLayer: multi-layer drafting is not supported";
    if (engine.numSteps > MAX_NUM_STEPS) return `/engine/numSteps: at most ${MAX_NUM_STEPS}`;
  }
  const ids = new Set<number>();
  for (const [i, request] of workload.requests.entries()) {
    if (ids.has(request.id)) return `/workload/requests/${i}/id: duplicate request id ${request.id}`;
    ids.add(request.id);
    const outside = request.prompt.findIndex((token) => token >= spec.vocab);
    if (outside >= 0) return `/workload/requests/${i}/prompt/${outside}: token outside the vocabulary (${spec.vocab})`;
    const longest = request.prompt.length + request.maxNewTokens + engine.numDraftTokens + 1;
    if (longest > spec.maxPositions)
      return `/workload/requests/${i}: prompt + maxNewTokens + draft tokens (${longest}) exceed maxPositions ${spec.maxPositions}`;
  }
  return undefined;
}
