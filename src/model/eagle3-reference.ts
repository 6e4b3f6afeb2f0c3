// The EAGLE-3 float64 references, over the same primitives as reference-forward.ts (written from the math):
// the draft input fc(norm?(aux)) + hidden, the EAGLE-3 head (midlayer over concat(input_layernorm(embedding),
// hidden_norm(input)), the residual its input, its own norm and LM head over the draft vocabulary), and the
// EAGLE-3 mirror (the mirror's logits in draft order plus the tap over the draft input).
import { embed, matmul, referenceTarget, rmsNorm, runLayers, type HeadOutput } from "./reference-forward.ts";
import { MIRROR_LOGIT_SCALE, type DraftSpec, type ModelSpec } from "./spec.ts";
import type { Eagle3Input, Eagle3MirrorWeights, Eagle3Weights, TargetWeights } from "./weights.ts";

/**
 * The EAGLE-3 draft input of each row: fc(norm?(aux)) + hidden. A row fed auxiliary states has a zero hidden
 * input and vice versa, so this is fc over the aux rows, or the hidden rows as they are.
 */
export function eagle3DraftInput(
  spec: ModelSpec,
  input: Eagle3Input,
  auxIn: Float64Array,
  hiddenIn: Float64Array,
  rows: number,
): Float64Array {
  const auxWidth = input.fc.length / spec.hidden;
  const fcIn = input.inputNorm ? rmsNorm(auxIn, rows, auxWidth, input.inputNorm, spec.rmsEps) : auxIn;
  const out = matmul(fcIn, rows, auxWidth, input.fc, spec.hidden);
  for (let i = 0; i < out.length; i++) out[i] += hiddenIn[i];
  return out;
}

/** EAGLE-3 head over one causal sequence of rows; logits over the draft vocabulary (draft ids). */
export function referenceEagle3(
  spec: ModelSpec,
  target: TargetWeights,
  eagle3: Eagle3Weights,
  tokens: readonly number[],
  auxIn: Float64Array,
  hiddenIn: Float64Array,
  positions: readonly number[],
): HeadOutput {
  const rows = tokens.length;
  const input = eagle3DraftInput(spec, eagle3, auxIn, hiddenIn, rows);
  const stack = runLayers(spec, [eagle3.layer], input, positions, undefined, embed(spec, target, tokens));
  const normed = rmsNorm(stack.residual, rows, spec.hidden, eagle3.norm, spec.rmsEps);
  return {
    logits: matmul(normed, rows, spec.hidden, eagle3.lmHead, eagle3.d2t.length),
    hidden: stack.residual,
  };
}

/**
 * EAGLE-3 mirror over one causal sequence: the mirror's logits with columns in draft order, plus the tap over
 * the draft input. Computed as the target over [BOS, ...tokens], as referenceMirror does.
 */
export function referenceEagle3Mirror(
  spec: ModelSpec,
  weights: TargetWeights,
  draft: DraftSpec,
  mirror: Eagle3MirrorWeights,
  tokens: readonly number[],
  auxIn: Float64Array,
  hiddenIn: Float64Array,
): HeadOutput {
  const rows = tokens.length;
  const full = referenceTarget(spec, weights, [spec.bosId, ...tokens]);
  const hidden = full.hidden.slice(spec.hidden);
  const logits = matmul(hidden, rows, spec.hidden, mirror.lmHead, spec.vocab).map((v) => v * MIRROR_LOGIT_SCALE);
  const input = eagle3DraftInput(spec, mirror, auxIn, hiddenIn, rows);
  for (let r = 0; r < rows; r++) {
    let dot = 0;
    for (let c = 0; c < spec.hidden; c++) dot += mirror.tap[c] * input[r * spec.hidden + c];
    const shift = draft.tapDelta * MIRROR_LOGIT_SCALE * dot;
    for (let c = 0; c < spec.vocab; c++) logits[r * spec.vocab + c] += shift;
  }
  return { logits, hidden };
}
