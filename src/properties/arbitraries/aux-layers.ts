// EAGLE-3 auxiliary layer sets (issue 34, item 7): an EAGLE-3 case draws its checkpoint's
// eagle_aux_hidden_state_layer_ids (how many, which, in what order) instead of always the default, so an engine
// that ignores the checkpoint's list (or reads it sorted, or only its first entries) is drafting from other states
// than the case names, and draft reference and aux provenance see it. Ids are drawn raw and mapped once the
// preset is known (its layer count); one draw in three keeps the default (the field absent), which is where
// shrinking goes.
import fc from "fast-check";
import { defaultDraftSpec, isEagle3, SpecError, validateEagle3Options } from "../../model/spec.ts";
import type { DraftSpec, ModelSpec } from "../../model/spec.ts";
import type { IntRange } from "./space.ts";

/** Raw ids: wide enough that every preset's ids are drawn about evenly. */
const RAW_IDS = 64;

/** A checkpoint's layer ids, raw (mapped by withAuxLayers), or undefined: the default set. */
export function auxLayersArbitrary(counts: IntRange): fc.Arbitrary<number[] | undefined> {
  return fc.option(fc.array(fc.nat({ max: RAW_IDS - 1 }), { minLength: counts.min, maxLength: counts.max }), {
    nil: undefined,
    freq: 3,
  });
}

/**
 * The largest id the spec validation accepts: n_layers where an id names a layer's input and n_layers the last
 * layer's output (vLLM, the EAGLE authors and llama.cpp read ids so), n_layers - 1 where ids name layer outputs.
 * Asked of the validation itself, so the draw follows whichever convention src/model/spec.ts encodes.
 */
export function maxAuxLayerId(spec: ModelSpec): number {
  try {
    validateEagle3Options(spec, { ...defaultDraftSpec("eagle3"), auxLayers: [spec.layers] });
    return spec.layers;
  } catch (error) {
    if (error instanceof SpecError) return spec.layers - 1;
    throw error;
  }
}

/** The draft with the drawn layer ids (EAGLE-3 drafts only; any other draft, or the default draw, unchanged). */
export function withAuxLayers(draft: DraftSpec | null, raw: number[] | undefined, spec: ModelSpec): DraftSpec | null {
  if (!draft || raw === undefined || !isEagle3(draft.kind)) return draft;
  const ids = maxAuxLayerId(spec) + 1;
  return { ...draft, auxLayers: raw.map((value) => value % ids) };
}
