// Law "aux provenance": an EAGLE-3 draft is fed the residual streams its checkpoint names, id k the input of
// target layer k (k = the layer count: the last layer's output), as vLLM (LlamaModel.forward), the EAGLE authors
// (modeling_llama_kv.py) and llama.cpp (common/speculative.cpp) read eagle_aux_hidden_state_layer_ids; so every
// draft-extend row carries exactly those auxiliary states, in the checkpoint's order, each read from the
// residual stream (not after the final norm: that is the LM head's input) of a target forward row of the
// same request at the row's anchor position. A trace's aux[].layer numbers streams the same way
// (docs/tracing.md). Draft-decode rows continue from the draft's own hidden state and carry none. Bug classes:
// states never captured (fc skipped, the final hidden passed instead), layer ids off by one or read in the
// other convention (as the output of layer k: SGLang before PR 25454), the wrong side of a norm, states of
// another request or position (a ragged-batch gather), states from a draft forward.
import { isEagle3 } from "../model/spec.ts";
import type { Trace, TraceEvent } from "../trace/schema.ts";
import type { Law } from "./definition.ts";
import { LawTally, notCheckable, type LawResult } from "./law.ts";

export const AUX_PROVENANCE = "aux provenance";

const TARGET_PHASES = new Set(["prefill", "verify", "decode"]);

export function checkAuxProvenance(trace: Trace, auxLayers: readonly number[]): LawResult {
  const draftEvents = trace.events.filter((event) => event.phase === "draft-extend" || event.phase === "draft-decode");
  if (!draftEvents.some((event) => event.phase === "draft-extend"))
    return notCheckable(AUX_PROVENANCE, "the trace has no draft extend");
  if (!draftEvents.some((event) => event.rows.some((row) => row.aux || row.hidden)))
    return notCheckable(AUX_PROVENANCE, "draft rows carry no input provenance");
  const byIndex = new Map<number, TraceEvent>(trace.events.map((event) => [event.index, event]));
  const tally = new LawTally(AUX_PROVENANCE);
  const named = `the checkpoint's ${auxLayers.length} auxiliary layers (streams ${auxLayers.join(", ")})`;
  for (const event of draftEvents) {
    event.rows.forEach((row, rowIndex) => {
      const where = { request: row.request, event: event.index, index: rowIndex };
      const label = `${event.phase} event ${event.index} row ${rowIndex} (request ${row.request}, position ${row.position})`;
      tally.checked += 1;
      if (event.phase === "draft-decode") {
        if (row.aux)
          tally.fail({
            ...where,
            message: `${label} is fed auxiliary states; a draft step continues from the draft's own hidden state`,
          });
        return;
      }
      if (!row.aux) {
        const fed = row.hidden ? ` a hidden state (event ${row.hidden.event} row ${row.hidden.row})` : " nothing";
        tally.fail({ ...where, message: `${label} is fed${fed}, not ${named}: fc never sees them` });
        return;
      }
      if (row.aux.length !== auxLayers.length) {
        tally.fail({ ...where, message: `${label} is fed ${row.aux.length} auxiliary states, not ${named}` });
        return;
      }
      row.aux.forEach((source, part) => {
        const sourceRow = byIndex.get(source.event)?.rows[source.row];
        const sourceEvent = byIndex.get(source.event);
        const state = `auxiliary state ${part} of ${label}`;
        if (source.layer !== auxLayers[part])
          tally.fail({
            ...where,
            message: `${state} is ${streamName(source.layer)}; the checkpoint's id ${auxLayers[part]} names ${streamName(auxLayers[part])}`,
            expected: auxLayers[part],
            got: source.layer,
          });
        else if (source.normed)
          tally.fail({
            ...where,
            message: `${state} was read after the final norm; auxiliary states are the residual stream`,
          });
        else if (!sourceEvent || !sourceRow)
          tally.fail({ ...where, message: `${state} points at missing event ${source.event} row ${source.row}` });
        else if (!TARGET_PHASES.has(sourceEvent.phase))
          tally.fail({
            ...where,
            message: `${state} comes from ${sourceEvent.phase} event ${sourceEvent.index}, not a target forward`,
          });
        else if (sourceRow.request !== row.request || sourceRow.position !== row.position)
          tally.fail({
            ...where,
            message: `${state} comes from ${sourceEvent.phase} event ${sourceEvent.index} row ${source.row} (request ${sourceRow.request}, position ${sourceRow.position}); expected request ${row.request} at position ${row.position}`,
          });
      });
    });
  }
  return tally.result();
}

/**
 * A residual stream in words: stream k is the input of target layer k (0: the embeddings) and the output of
 * layer k - 1 (the last stream: the last layer's output; the law needs no layer count to say so).
 */
function streamName(stream: number): string {
  if (stream === 0) return "stream 0 (the embeddings, the input of target layer 0)";
  return `stream ${stream} (the input of target layer ${stream}, the output of layer ${stream - 1})`;
}

export const law: Law = {
  name: AUX_PROVENANCE,
  summary:
    "EAGLE-3 draft-extend rows are fed the checkpoint's auxiliary layers, pre-norm, from the same request and position",
  appliesTo: (testCase) => testCase.engine.mode === "speculative" && isEagle3(testCase.draft?.kind),
  needs: {},
  unavailable: ({ oracle }) => (oracle.eagle3 ? undefined : "the draft has no EAGLE-3 checkpoint"),
  check: ({ run, oracle }) => checkAuxProvenance(run.trace, oracle.eagle3!.auxLayers),
};
