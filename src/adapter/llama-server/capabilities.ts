// What the llama-server engine declares in its hello, and the check that keeps every case inside it (a case
// outside is answered { error, unsupported: true } with the JSON path, never run approximately). Each entry is
// something the server really does, reached through its own flags and request fields:
// - drafts: standalone draft models (--spec-type draft-simple: mirror, truncated and noisy mirror), the
//   EAGLE-3 head (draft-eagle3, GGUF arch eagle3 from src/export/gguf-eagle3.ts) and prompt lookup (ngram:
//   ngram-simple). Chains only (its drafters draft chains; topk 1).
// - maxBatch: the server's parallel slots (-np); each request of a case is pinned to its own slot (id_slot) and
//   all are sent at once, so the server batches them (continuous batching).
// - arrivals and aborts: a later request is sent, and an aborted one's connection closed (the server cancels
//   its task), once the server has run that many steps of the case (run-case.ts, completion.ts).
// - prefixCache: the request field cache_prompt (reuse of the slot's KV for the common prefix of the previous
//   prompt it served, and the server's prompt cache); a case without it sends cache_prompt false.
// - sampling: logit bias (logit_bias, added to the logits as specconf's bias is), the repetition penalty (the
//   penalties sampler over a window of the whole sequence: completion.ts), logprobs (n_probs: see
//   docs/llama-server.md for which logits they are taken from), temperature with a seed (samplers
//   ["temperature"]: the full softmax at that temperature, the case's other options absent), a token grammar
//   (the request's `grammar`, GBNF over token elements: grammar.ts; its drafts are unmasked, as llama.cpp drafts).
// - contextLimits: the case's contextLength is each slot's context (--kv-unified-per-slot: launch.ts); the server
//   stops a request that fills it and drafts only what fits before it. A draft context of its own
//   (draftContextLength) has no flag in this llama.cpp: such a case is refused with its path.
// - requestSlots: the case's slots are server slots 0..R-1, taken in the case's admission order (run-case.ts).
// - text and the sampling option stop: the request's `stop` strings, matched on the text the exported vocabulary
//   spells (src/export/gguf.ts); the request streamed, its events the deltas. Not includeStopStrInOutput: the
//   server always cuts the text where the stop string starts.
// Not declared, because the server does not expose them as the laws define them: stop token ids (it stops on
// strings), min new tokens, presence and frequency penalties (llama.cpp counts the prompt's tokens too, vLLM
// only the output's), top-k/top-p/min-p with temperature (llama.cpp applies temperature
// after them), chunked prefill, page sizes, retracts, trees, multi-layer drafts.
import type { Capabilities } from "../protocol.ts";
import type { Case } from "../../case/case.ts";
import type { DraftKind } from "../../model/spec.ts";
import { chainCapabilities, chainEngineUnsupportedReason, type ChainEngineLimits } from "../gguf-chain-engine.ts";
import { samplingOptionsOf, type SamplingOption } from "../../sampling/params.ts";

export const ENGINE_NAME = "llama-server";
/**
 * Parallel slots of every server (-np): requests per case. 48 holds the sampling distribution law's replicas
 * (32-48 copies of a request in one batch); a slot costs only its share of the KV cache (-c = slots x maxPositions).
 */
export const MAX_BATCH = 48;
export const MAX_NUM_STEPS = 16;
export const SERVER_DRAFT_KINDS: readonly DraftKind[] = [
  "mirror",
  "noisy-mirror",
  "truncated-mirror",
  "eagle3",
  "ngram",
];
export const SERVER_SAMPLING: readonly SamplingOption[] = [
  "logitBias",
  "repetitionPenalty",
  "logprobs",
  "temperature",
  "seed",
  "grammar",
  "stop",
];

export const CAPABILITIES: Capabilities = chainCapabilities({
  drafts: [...SERVER_DRAFT_KINDS],
  maxNumSteps: MAX_NUM_STEPS,
  maxBatch: MAX_BATCH,
  arrivals: true,
  aborts: true,
  prefixCache: true,
  sampling: [...SERVER_SAMPLING],
  // Issue 29: sliding windows as granite_swa, scaled RoPE as rope.scaling.*, hybrids as granitehybrid (only
  // Mamba2 blocks twice the model's width load: other hybrids stay out, src/export/gguf-families.ts).
  modelFamilies: ["sliding-window", "rope-scaling", "hybrid"],
  contextLimits: true,
  requestSlots: true,
  text: true,
});

const LIMITS: ChainEngineLimits = {
  engine: ENGINE_NAME,
  maxBatch: MAX_BATCH,
  maxNumSteps: MAX_NUM_STEPS,
  draftKinds: SERVER_DRAFT_KINDS,
  batchLimit: `the server has ${MAX_BATCH} slots`,
  capsLookahead: true,
};

/** Why the server cannot run `testCase` as specified (with the JSON path), or undefined when it can. */
export function unsupportedReason(testCase: Case): string | undefined {
  const common = chainEngineUnsupportedReason(testCase, LIMITS);
  if (common) return common;
  const { engine, workload } = testCase;
  if (engine.overlap) return "/engine/overlap: not a llama-server mode";
  // The draft context follows the target's in this llama.cpp (no draft context size flag; -cd is gone), and no
  // drafter consults the draft model's own context: a shorter draft context cannot be set.
  if (engine.draftContextLength !== undefined && engine.mode === "speculative")
    return "/engine/draftContextLength: llama-server's draft context is the target's (no flag sets it apart)";
  if (engine.requestSlots !== undefined && engine.requestSlots > MAX_BATCH)
    return `/engine/requestSlots: ${engine.requestSlots} (the server has ${MAX_BATCH} slots)`;
  for (const [i, request] of workload.requests.entries()) {
    const undeclared = samplingOptionsOf(request.sampling).find((option) => !SERVER_SAMPLING.includes(option));
    if (undeclared) return `/workload/requests/${i}/sampling/${undeclared}: not declared`;
  }
  return undefined;
}
