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
import { GGUF_DRAFT_KINDS } from "../../export/gguf.ts";
import { chainEngineUnsupportedReason, chainCapabilities, type ChainEngineLimits } from "../gguf-chain-engine.ts";

export const ENGINE_NAME = "llama.cpp";
/** Sequences per context; more requests in one case are unsupported. */
export const MAX_BATCH = 8;
/** DraftSequenceTokenPredictor's own default maximum. */
export const MAX_NUM_STEPS = 16;
export const ENGINE_DRAFT_KINDS: readonly DraftKind[] = [...GGUF_DRAFT_KINDS, "ngram"];

export const CAPABILITIES: Capabilities = chainCapabilities({
  drafts: [...ENGINE_DRAFT_KINDS],
  maxNumSteps: MAX_NUM_STEPS,
  maxBatch: MAX_BATCH,
  arrivals: false,
  aborts: false,
});

const LIMITS: ChainEngineLimits = {
  engine: ENGINE_NAME,
  maxBatch: MAX_BATCH,
  maxNumSteps: MAX_NUM_STEPS,
  draftKinds: ENGINE_DRAFT_KINDS,
  batchLimit: `at most ${MAX_BATCH} sequences per context`,
};

/** Why this engine cannot run `testCase` as specified (with the JSON path), or undefined when it can. */
export function unsupportedReason(testCase: Case): string | undefined {
  const common = chainEngineUnsupportedReason(testCase, LIMITS);
  if (common) return common;
  const { engine, workload } = testCase;
  // node-llama-cpp evaluates each sequence's prompt in one go: a budget below the prompts is not honoured.
  const promptRows = workload.requests.reduce((sum, request) => sum + request.prompt.length, 0);
  if (promptRows > engine.tokenBudget)
    return `/engine/tokenBudget: ${engine.tokenBudget} < ${promptRows} prompt tokens (prefill is not scheduled across steps)`;
  const late = workload.requests.findIndex((request) => request.arrivalStep !== 0);
  if (late >= 0) return `/workload/requests/${late}/arrivalStep: requests arriving later are not supported`;
  if (workload.aborts.length > 0) return "/workload/aborts: aborts are not supported";
  return undefined;
}
