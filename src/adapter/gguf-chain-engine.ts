// What the two llama.cpp engines (node-llama-cpp: llama-cpp/, llama.cpp's own server: llama-server/) share in
// their hello and in the check that keeps a case inside it: both run the GGUF exports (F32 weights, so float32
// only), draft chains (topk 1, no multi-layer drafting), keep KV in llama.cpp's cells (page size 1), cannot
// split a prompt as a case's chunkSize / tokenBudget says, have no graph replay, and take prompts of the
// target's vocabulary whose longest sequence (prompt, new tokens, and one round's drafts and bonus where the
// engine does not cap its drafting at the context) fits the model's positions. What differs (draft kinds, batch size, prefix cache, sampling, arrivals) each engine's
// capabilities.ts adds.
import type { Case } from "../case/case.ts";
import { resolveModelSpec } from "../case/models.ts";
import type { DraftKind } from "../model/spec.ts";
import { isChunked } from "../laws/chunk-invariance.ts";
import type { Capabilities } from "./protocol.ts";

/** What an engine declares that differs between the two. */
export type OwnCapabilities = Pick<Capabilities, "drafts" | "maxNumSteps" | "maxBatch" | "arrivals" | "aborts"> &
  Partial<Capabilities>;

/** The hello's capabilities: what both llama.cpp engines declare alike, then the engine's own. */
export function chainCapabilities(own: OwnCapabilities): Capabilities {
  return {
    modes: ["target-only", "speculative"],
    modelFormats: ["gguf"],
    maxTopk: 1,
    multiLayer: false,
    chunkedPrefill: false,
    pageSizes: [1],
    retracts: false,
    graphReplay: false,
    dtypes: ["float32"],
    observes: ["acceptLens", "firstRoundDrafts", "trace", "verify"],
    ...own,
  };
}

export interface ChainEngineLimits {
  /** The engine's name in messages ("llama.cpp", "llama-server"). */
  engine: string;
  maxBatch: number;
  maxNumSteps: number;
  draftKinds: readonly DraftKind[];
  /** Why more requests than maxBatch cannot run (e.g. "the server has 48 slots"). */
  batchLimit: string;
  /**
   * The engine drafts only what fits before a request's context (llama-server: get_n_draft_max), so a request
   * needs room for its prompt and new tokens only; otherwise also for one round's drafts and bonus.
   */
  capsLookahead?: boolean;
}

/** The checks both engines make, in one order: the first reason with its JSON path, or undefined. */
export function chainEngineUnsupportedReason(testCase: Case, limits: ChainEngineLimits): string | undefined {
  const spec = resolveModelSpec(testCase.model);
  const { engine, workload } = testCase;
  if (spec.dtype !== "float32") return `/model/spec/dtype: ${spec.dtype} (GGUF F32 weights; float32 only)`;
  if (engine.faults.length > 0) return `/engine/faults: the reference engine's faults do not exist in ${limits.engine}`;
  if (engine.chunkSize !== null) return "/engine/chunkSize: chunked prefill is not declared";
  if (isChunked(testCase)) return `/engine/tokenBudget: ${engine.tokenBudget} splits a prompt (not declared)`;
  if (engine.pageSize !== 1) return `/engine/pageSize: ${engine.pageSize} (llama.cpp KV cells: page size 1)`;
  if (engine.graphReplay || engine.graphBuckets) return `/engine/graphReplay: not a ${limits.engine} mode`;
  if (workload.requests.length > limits.maxBatch)
    return `/workload/requests: ${workload.requests.length} requests, ${limits.batchLimit}`;
  if ((workload.retracts ?? []).length > 0) return `/workload/retracts: ${limits.engine} has no retract`;
  if (engine.mode === "speculative") {
    if (!testCase.draft) return "/draft: speculative mode needs a draft";
    if (!limits.draftKinds.includes(testCase.draft.kind))
      return `/draft/kind: ${testCase.draft.kind} has no form ${limits.engine} loads (supported: ${limits.draftKinds.join(", ")})`;
    if (engine.topk !== 1) return `/engine/topk: ${engine.topk} (${limits.engine} drafts chains: topk 1)`;
    if (engine.multiLayer) return "/engine/multiLayer: multi-layer drafting is not supported";
    if (engine.numSteps > limits.maxNumSteps) return `/engine/numSteps: at most ${limits.maxNumSteps}`;
  }
  const ids = new Set<number>();
  for (const [i, request] of workload.requests.entries()) {
    if (ids.has(request.id)) return `/workload/requests/${i}/id: duplicate request id ${request.id}`;
    ids.add(request.id);
    const outside = request.prompt.findIndex((token) => token >= spec.vocab);
    if (outside >= 0) return `/workload/requests/${i}/prompt/${outside}: token outside the vocabulary (${spec.vocab})`;
    const spare = limits.capsLookahead ? 0 : engine.numDraftTokens + 1;
    const longest = request.prompt.length + request.maxNewTokens + spare;
    if (longest > spec.maxPositions)
      return `/workload/requests/${i}: prompt + maxNewTokens${spare ? " + draft tokens" : ""} (${longest}) exceed maxPositions ${spec.maxPositions}`;
  }
  return undefined;
}
