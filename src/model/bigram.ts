// The bigram target family (issue 34): every attention output projection is zero, so each residual stream at a
// position is a function of that position's token alone (the FFNs see nothing else) and the next token depends
// on the current token only: a bigram model, whose greedy next-token table is one argmax per token. Its token
// embedding is a constant channel plus a one-hot per token: what the EAGLE-3 oracle head (eagle3-oracle.ts)
// reads through the embedding every EAGLE-3 engine shares with the target (SGLang's set_embed, vLLM's shared
// embed_tokens, llama.cpp's token_embd in the head's GGUF, a copy of the target's). Both are just weights: the
// graphs, the float64 forward and the exports compute a bigram target exactly as any Llama.
import type { ModelSpec } from "./spec.ts";
import type { TargetWeights } from "./weights.ts";

/** The embedding's constant channel (channel 0); token t's one-hot sits in channel 1 + t. */
export const BIGRAM_CONSTANT = 1;

/** Why a spec cannot be a bigram target, as (field, reason); undefined when it can. */
export function bigramMisfit(spec: ModelSpec): [string, string] | undefined {
  if (!spec.bigram) return undefined;
  if (spec.hidden < spec.vocab + 1)
    return ["bigram", `needs hidden >= vocab + 1 (${spec.vocab + 1}): a constant channel and a one-hot per token`];
  if (spec.recurrent) return ["bigram", "recurrent layers mix positions: a hybrid is not a bigram model"];
  return undefined;
}

/** The bigram family's weights: the generated ones with the one-hot embedding and every attention output zero. */
export function applyBigram(spec: ModelSpec, weights: TargetWeights): TargetWeights {
  if (!spec.bigram) return weights;
  const embed = new Float64Array(spec.vocab * spec.hidden);
  for (let token = 0; token < spec.vocab; token++) {
    embed[token * spec.hidden] = BIGRAM_CONSTANT;
    embed[token * spec.hidden + 1 + token] = 1;
  }
  return {
    ...weights,
    embed,
    layers: weights.layers.map((layer) => ({ ...layer, wo: new Float64Array(layer.wo.length) })),
  };
}
