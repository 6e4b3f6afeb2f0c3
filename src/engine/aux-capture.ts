// What a target forward hands to the draft extend: the hidden state of each row (EAGLE, mirrors), or for an
// EAGLE-3 draft the row's auxiliary states, read from the residual streams the checkpoint names
// (eagle_aux_hidden_state_layer_ids), concatenated in the checkpoint's order. An id k names the input of
// target layer k, the target graph's layer_hidden[k] (k = the layer count: the last layer's output), as vLLM
// (LlamaModel.forward), the EAGLE authors (modeling_llama_kv.py) and llama.cpp (common/speculative.cpp) read
// it (docs/design.md, "EAGLE-3 auxiliary layers"). The states come from the residual stream, before the final
// norm: the norm belongs to the LM head.
import type { FloatArray } from "../runtime/ort.ts";
import type { EngineContext } from "./context.ts";
import type { ForwardOutput } from "./forward.ts";
import { AuxRows, HiddenRows, type AuxSource, type DraftInputRows } from "./hidden-rows.ts";

/** The draft input of these rows of a target forward (prefill chunk rows, a verify path). */
export function captureDraftInput(
  context: EngineContext,
  output: ForwardOutput,
  rows: readonly number[],
): DraftInputRows {
  const width = context.spec.hidden;
  const feed = context.sessions.eagle3;
  // The fc-skipped fault: no capture, so the draft gets the target's final hidden state; it is H wide, and the
  // engine feeds an H-wide state straight to the draft's layer (the width check fc's application hangs on).
  if (!feed || context.faults.has("eagle3-fc-skipped"))
    return HiddenRows.fromForward(width, output.result.hidden, output.event, rows);
  const streams = output.result.layerHidden;
  if (!streams) throw new Error("an EAGLE-3 draft needs the target's layer streams (layer_hidden)");
  const forwardRows = output.predict.length;
  const auxWidth = feed.auxLayers.length * width;
  const values: FloatArray =
    streams instanceof Float32Array
      ? new Float32Array(rows.length * auxWidth)
      : new Float64Array(rows.length * auxWidth);
  const provenance: AuxSource[][] = rows.map((row, i) =>
    feed.auxLayers.map((layer, part) => {
      const stream = readStream(context, layer);
      const from = (stream * forwardRows + row) * width;
      values.set(streams.subarray(from, from + width), i * auxWidth + part * width);
      return { event: output.event, row, layer: stream, normed: false };
    }),
  );
  return new AuxRows(auxWidth, values, provenance);
}

/**
 * The stream id k is read from: k. The off-by-one fault reads k + 1, the output of layer k, as SGLang's
 * set_eagle3_layers_to_capture did for explicit ids before sglang PR 25454; past the last layer there is no
 * stream (SGLang captures nothing there), so the fault reads the last one there and keeps the row's width.
 */
function readStream(context: EngineContext, layer: number): number {
  if (!context.faults.has("eagle3-aux-layer-off-by-one")) return layer;
  return Math.min(layer + 1, context.spec.layers);
}
