// What a target forward hands to the draft extend: the hidden state of each row (EAGLE, mirrors), or for an
// EAGLE-3 draft the row's auxiliary states, the outputs of the layers the checkpoint names
// (eagle_aux_hidden_state_layer_ids), concatenated in the checkpoint's order. A checkpoint's layer id i
// names layer i's output, which is the residual stream entering layer i + 1 (the target graph's
// layer_hidden[i + 1]); SGLang captures at a layer's input and adds the 1 (sglang PR 25454 fixed where).
// The states come from the residual stream, before the final norm: the norm belongs to the LM head.
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
  // Layer i's output is stream i + 1; the off-by-one fault reads stream i, the layer's input.
  const shift = context.faults.has("eagle3-aux-layer-off-by-one") ? 0 : 1;
  const auxWidth = feed.auxLayers.length * width;
  const values: FloatArray =
    streams instanceof Float32Array
      ? new Float32Array(rows.length * auxWidth)
      : new Float64Array(rows.length * auxWidth);
  const provenance: AuxSource[][] = rows.map((row, i) =>
    feed.auxLayers.map((layer, part) => {
      const stream = layer + shift;
      const from = (stream * forwardRows + row) * width;
      values.set(streams.subarray(from, from + width), i * auxWidth + part * width);
      return { event: output.event, row, layer: stream - 1, normed: false };
    }),
  );
  return new AuxRows(auxWidth, values, provenance);
}
