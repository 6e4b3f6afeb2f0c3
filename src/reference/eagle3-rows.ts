// The EAGLE-3 parts of the cache-free draft references, computed from the checkpoint's reading
// (eagle3-reading.ts) and written from the convention, not from the engine's capture code: layer id k names
// the input of target layer k, the residual stream the target's layer_hidden[k] holds (k = the layer count:
// the last layer's output, before the final norm), as vLLM, the EAGLE authors and llama.cpp read it
// (docs/design.md, "EAGLE-3 auxiliary layers"); draft argmaxes are draft ids, drafted as their d2t images.
import type { ModelSpec } from "../model/spec.ts";
import type { FloatArray } from "../runtime/ort.ts";
import type { RowPrediction, TeacherForcedTarget } from "./cache-free.ts";
import type { Eagle3Reading } from "./eagle3-reading.ts";

export function zeros(dtype: ModelSpec["dtype"], length: number): FloatArray {
  return dtype === "float32" ? new Float32Array(length) : new Float64Array(length);
}

/** [anchors, auxLayers * H]: anchor i's auxiliary states, the named layers' inputs at position i. */
export function auxStates(
  spec: ModelSpec,
  target: TeacherForcedTarget,
  reading: Eagle3Reading,
  anchors: number,
  firstAnchor = 0,
): FloatArray {
  const streams = target.layerHidden;
  if (!streams) throw new Error("the reference target has no layer streams (an EAGLE-3 case builds them)");
  const width = spec.hidden;
  const positions = target.tokens.length;
  const rowWidth = reading.auxLayers.length * width;
  const out = zeros(spec.dtype, anchors * rowWidth);
  for (let i = 0; i < anchors; i++) {
    reading.auxLayers.forEach((layer, part) => {
      const from = (layer * positions + firstAnchor + i) * width;
      out.set(streams.subarray(from, from + width), i * rowWidth + part * width);
    });
  }
  return out;
}

/** A draft row's prediction with its draft-vocabulary argmax mapped to the target id it drafts. */
export function toTargetPrediction(prediction: RowPrediction, reading: Eagle3Reading): RowPrediction {
  return { ...prediction, argmax: reading.draftToTarget[prediction.argmax], draftArgmax: prediction.argmax };
}
