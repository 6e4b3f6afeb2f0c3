// The EAGLE-3 graph writers, over the shared decoder-stack writer (graphs.ts) and its calling convention plus
// aux_in [T, auxLayers * H]: the EAGLE-3 head in the checkpoint layout, and the EAGLE-3 mirror. A row fed
// auxiliary states (draft extend) has hidden_in zero; a draft-decode row has aux_in zero (fc(0) = 0 exactly).
import { layerWindows, stackWindow } from "./window.ts";
import { mirrorPrefix, writeStackGraph } from "./graphs.ts";
import { eagle3Options, MIRROR_LOGIT_SCALE, type DraftSpec, type ModelSpec } from "./spec.ts";
import type { Eagle3MirrorWeights, Eagle3Weights, TargetWeights } from "./weights.ts";

/** Width of an EAGLE-3 draft's aux_in: one hidden-size row per auxiliary layer. */
export function auxWidth(spec: ModelSpec, draft: DraftSpec): number {
  return eagle3Options(spec, draft).auxLayers.length * spec.hidden;
}

/**
 * The EAGLE-3 head (LlamaForCausalLMEagle3): draft input fc(norm?(aux)) + hidden, one midlayer whose
 * attention reads concat(input_layernorm(embedding), hidden_norm(input)) with the input as residual, the
 * head's own norm and LM head over the draft vocabulary; the hidden output is the residual before the norm.
 */
export function writeEagle3Graph(
  spec: ModelSpec,
  draft: DraftSpec,
  target: TargetWeights,
  eagle3: Eagle3Weights,
): Uint8Array {
  return writeStackGraph(spec, target, {
    name: `${spec.name}-eagle3`,
    layers: [eagle3.layer],
    ropeOffset: 0,
    input: { kind: "embed" },
    finalNorm: eagle3.norm,
    logitScale: 1,
    hasHiddenInput: true,
    eagle3: { fc: eagle3.fc, inputNorm: eagle3.inputNorm, auxWidth: auxWidth(spec, draft), tapDraftInput: false },
    residualFromDraftInput: true,
    hiddenBeforeNorm: true,
    lmHead: { weights: eagle3.lmHead, vocab: eagle3.d2t.length },
  });
}

/**
 * The EAGLE-3 mirror: the mirror (the target stack on the token after BOS, logits x 2^16) with its LM head's
 * columns in draft-vocabulary order (exact copies, so its draft argmax maps through d2t to the target's
 * greedy token) and a tap over the EAGLE-3 draft input: logits depend on every auxiliary state, argmax not.
 */
export function writeEagle3MirrorGraph(
  spec: ModelSpec,
  draft: DraftSpec,
  target: TargetWeights,
  mirror: Eagle3MirrorWeights,
): Uint8Array {
  return writeStackGraph(spec, target, {
    name: `${spec.name}-eagle3-mirror`,
    layers: target.layers,
    ropeOffset: 1,
    prefix: mirrorPrefix(spec, target, [spec.bosId], spec.layers),
    input: { kind: "embed" },
    finalNorm: target.finalNorm,
    logitScale: MIRROR_LOGIT_SCALE,
    tap: { vector: mirror.tap, delta: draft.tapDelta },
    hasHiddenInput: true,
    eagle3: { fc: mirror.fc, inputNorm: mirror.inputNorm, auxWidth: auxWidth(spec, draft), tapDraftInput: true },
    lmHead: { weights: mirror.lmHead, vocab: spec.vocab },
    ...(stackWindow(spec) !== undefined ? { windows: layerWindows(spec) } : {}),
  });
}
