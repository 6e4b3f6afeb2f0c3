// The standalone draft model a draft-model engine loads for a mirror-family draft (mirror, truncated-mirror,
// noisy-mirror), shared by the HF and GGUF writers. The mirror family's ONNX graphs multiply their logits by
// MIRROR_LOGIT_SCALE (2^16: model/spec.ts, the `Mul` after the LM head in model/graphs.ts writeStackGraph), and
// the references score trees with those logits (log-softmax of scaled logits: the greedy chain's nodes score
// ~0, any other child about -2^16 times its logit gap). A standalone Llama without the scale has the same argmax
// but other scores, so a correct K > 1 tree drafted from it can rank a second root child above the chain's
// depth-2 node and fail mirror acceptance (issue 34, part 6), and a confidence cut (llama.cpp's p_min) can
// shorten its chains. The scale is therefore carried in the LM head: every element times 2^16, exact in binary
// floating point (a power of two), so the exported model's logits are the graph's scaled logits bit for bit in
// any float format whose range holds them (float32, bfloat16; not float16, whose maximum is 65504).
import type { LoadedModels } from "../case/models.ts";
import { draftLogitScale, type DraftSpec } from "../model/spec.ts";
import type { TargetWeights } from "../model/weights.ts";

/**
 * What a standalone draft's export holds beyond the weights it copies, carried in its cache name
 * (standaloneDraftName) so that a model cache written by an older export is not read: 1, the LM head scaled by
 * the draft's logit scale.
 */
export const STANDALONE_DRAFT_VERSION = 1;

/** The cache name (before any format suffix) of the standalone draft exported from the ONNX graph `digest`. */
export function standaloneDraftName(digest: string): string {
  return `${digest}.draft${STANDALONE_DRAFT_VERSION}`;
}

/** `weights` with the LM head times `scale` (a power of two: exact), every other tensor shared. */
export function withLogitScale(weights: TargetWeights, scale: number): TargetWeights {
  if (scale === 1) return weights;
  return { ...weights, lmHead: weights.lmHead.map((value) => value * scale) };
}

/**
 * The weights of the standalone draft of `draft` (its LM head carrying the draft's logit scale), or a note
 * saying why the kind has none.
 */
export function standaloneDraftWeights(models: LoadedModels, draft: DraftSpec): TargetWeights | string {
  const stack = unscaledDraftWeights(models, draft);
  return typeof stack === "string" ? stack : withLogitScale(stack, draftLogitScale(draft));
}

function unscaledDraftWeights(models: LoadedModels, draft: DraftSpec): TargetWeights | string {
  const target = models.target.weights;
  switch (draft.kind) {
    case "mirror":
      return target;
    case "truncated-mirror":
      return { ...target, layers: target.layers.slice(0, Math.min(draft.truncatedLayers, target.layers.length)) };
    case "noisy-mirror":
      if (!models.draft || models.draft.spec.kind !== "noisy-mirror")
        throw new Error("noisy-mirror: the case's draft model was not built");
      return models.draft.stack;
    case "tapped-mirror":
      return "tapped-mirror: its logits depend on the target's hidden state, which a standalone Llama does not see";
    case "eagle":
      return "eagle: an EAGLE head is not a standalone Llama (see the HF export's eagle checkpoint)";
    case "eagle3":
      return "eagle3: an EAGLE-3 head is not a standalone Llama (see the HF export's eagle3 checkpoint)";
    case "eagle3-mirror":
      return "eagle3-mirror: its logits depend on the target's auxiliary hidden states, which a standalone Llama does not see";
    case "ngram":
      return "ngram: prompt lookup has no model";
  }
}
