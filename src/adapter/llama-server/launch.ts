// The llama-server command line for a case's model set, with exact numerics: F32 KV cache for the target and
// the draft (-ctk/-ctv f32, --spec-draft-type-k/v f32; the default F16 cache moves logits by ~1e-3), flash
// attention off (-fa off: its accumulation order differs), one thread (-t 1: reductions split across threads
// change the last bits), no warm-up, greedy defaults (--temp 0). -v and LLAMA_TRACE=1 make the log carry the
// per-round data (log-rounds.ts). Drafts: a standalone draft model (draft-simple) or EAGLE-3 head
// (draft-eagle3) with --spec-draft-p-min 0 (no confidence cut), or prompt lookup (ngram-simple).
import type { Case } from "../../case/case.ts";
import { resolveModelSpec } from "../../case/models.ts";
import { MAX_BATCH } from "./capabilities.ts";

export interface ModelSet {
  target: string;
  draft?: string;
}

export type SpecType = "none" | "draft-simple" | "draft-eagle3" | "ngram-simple";

export function specTypeOf(testCase: Case): SpecType {
  if (testCase.engine.mode !== "speculative" || !testCase.draft) return "none";
  if (testCase.draft.kind === "ngram") return "ngram-simple";
  if (testCase.draft.kind === "eagle3") return "draft-eagle3";
  return "draft-simple";
}

/** One server per model set, speculation type and S: the arguments (host and port are added at start). */
export function serverArgs(testCase: Case, models: ModelSet): string[] {
  const spec = resolveModelSpec(testCase.model);
  const specType = specTypeOf(testCase);
  const args = ["-m", models.target, "-ctk", "f32", "-ctv", "f32", "-fa", "off", "-t", "1", "-tb", "1"];
  // Every slot holds a whole request: the context is split evenly between the slots.
  args.push("-np", String(MAX_BATCH), "-c", String(MAX_BATCH * spec.maxPositions), "--no-warmup", "--temp", "0");
  args.push("-v", "--no-webui");
  // The case's context per request is each slot's context: the server caps a slot's context at it (n_ctx_slot()),
  // stops a request that fills it and drafts only what fits before it (get_n_draft_max). -c cannot say it: the
  // context per sequence is padded to a multiple of 256.
  if (testCase.engine.contextLength !== undefined)
    args.push("--kv-unified-per-slot", String(testCase.engine.contextLength));
  // S is a server flag: this llama.cpp compiles the per-request "speculative.n_max/n_min/p_min" fields out
  // (tools/server/server-schema.cpp, `#if 0`), so a request's own values would be ignored silently.
  const steps = String(testCase.engine.numSteps);
  if (specType === "draft-simple" || specType === "draft-eagle3") {
    if (!models.draft) throw new Error(`${specType} needs a draft model file`);
    args.push("-md", models.draft, "--spec-type", specType, "--spec-draft-type-k", "f32", "--spec-draft-type-v", "f32");
    // n_min = n_max = S, p_min 0: exactly S drafts per round, or no round when fewer fit.
    args.push("--spec-draft-p-min", "0", "--spec-draft-n-max", steps, "--spec-draft-n-min", steps);
  } else if (specType === "ngram-simple") {
    // Prompt lookup proposes up to S tokens (size_m), fewer or none when the lookup finds less.
    args.push("--spec-type", "ngram-simple", "--spec-ngram-simple-size-m", steps);
  }
  return args;
}

/** Each slot's context: the case's context per request, else the model's positions. */
export function slotContextOf(testCase: Case): number {
  return testCase.engine.contextLength ?? resolveModelSpec(testCase.model).maxPositions;
}

/** A key naming the server a case needs (cases with the same key share one running server). */
export function serverKey(testCase: Case, models: ModelSet): string {
  return serverArgs(testCase, models).join(" ");
}
