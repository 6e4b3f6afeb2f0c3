// What an EAGLE-3 checkpoint says, read the way vLLM reads it: the auxiliary layer ids and
// norm_before_fc from config.json (eagle_config first, then the top level), the draft vocabulary from
// draft_vocab_size and the d2t offsets (target id = draft id + d2t[d]; no d2t is the identity, as vLLM's
// zero-filled buffer makes it). The laws' references come from this reading of the exported config, not from
// the engine's own reading of the case: an engine (ours included) that mistakes the checkpoint shows.
import { eagle3Config } from "../export/eagle3-hf.ts";
import type { DraftModel } from "../model/build.ts";
import type { ModelSpec } from "../model/spec.ts";

export interface Eagle3Reading {
  /** eagle_aux_hidden_state_layer_ids: id k names the input of target layer k (layer_hidden[k]; k = layers: the last output). */
  auxLayers: number[];
  normBeforeFc: boolean;
  draftVocab: number;
  /** Target id of each draft id. */
  draftToTarget: Int32Array;
  /** 1 where the target id is in the draft vocabulary (the image of draftToTarget). */
  inDraftVocabulary: Uint8Array;
}

function integers(value: unknown, what: string): number[] {
  if (!Array.isArray(value) || !value.every((item) => Number.isInteger(item)))
    throw new Error(`EAGLE-3 config: ${what} must be a list of integers`);
  return value as number[];
}

/** Reads a config.json object and the checkpoint's d2t tensor (absent: the identity). */
export function readEagle3Config(
  config: Record<string, unknown>,
  vocab: number,
  d2t: ArrayLike<number> | undefined,
): Eagle3Reading {
  const eagle = (config.eagle_config ?? {}) as Record<string, unknown>;
  const auxLayers = integers(
    eagle.eagle_aux_hidden_state_layer_ids ?? config.eagle_aux_hidden_state_layer_ids,
    "eagle_aux_hidden_state_layer_ids",
  );
  const normBeforeFc = Boolean(eagle.norm_before_fc ?? config.norm_before_fc ?? false);
  const draftVocab = (config.draft_vocab_size as number | undefined) ?? vocab;
  if (d2t && d2t.length !== draftVocab)
    throw new Error(`EAGLE-3 checkpoint: d2t has ${d2t.length} entries, draft_vocab_size is ${draftVocab}`);
  const draftToTarget = Int32Array.from({ length: draftVocab }, (_, draftId) => draftId + (d2t ? d2t[draftId] : 0));
  const inDraftVocabulary = new Uint8Array(vocab);
  for (const target of draftToTarget) {
    if (target < 0 || target >= vocab)
      throw new Error(`EAGLE-3 checkpoint: d2t maps outside the vocabulary (${target})`);
    inDraftVocabulary[target] = 1;
  }
  return { auxLayers, normBeforeFc, draftVocab, draftToTarget, inDraftVocabulary };
}

/** The reading of a built EAGLE-3 draft's checkpoint (undefined for other drafts). */
export function eagle3ReadingOf(spec: ModelSpec, draft: DraftModel | undefined): Eagle3Reading | undefined {
  const checkpoint = draft?.eagle3;
  if (!checkpoint) return undefined;
  const config = eagle3Config(spec, checkpoint.input, checkpoint.options.auxLayers, {
    digest: draft.graphs[0].digest,
    role: "eagle3",
  });
  // Through JSON, as an engine gets it from config.json.
  return readEagle3Config(JSON.parse(JSON.stringify(config)), spec.vocab, checkpoint.input.d2t);
}
