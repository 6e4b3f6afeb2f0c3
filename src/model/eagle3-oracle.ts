// The EAGLE-3 oracle (issue 34): an EAGLE-3 head in the one-layer checkpoint layout (LlamaForCausalLMEagle3, and
// llama.cpp's eagle3 with norm_before_residual false, which compute the same: src/models/eagle3.cpp), whose greedy
// drafts are the target's greedy tokens exactly, for a bigram target (bigram.ts) only, and which reads them from
// every auxiliary state in the checkpoint's order. docs/design.md ("The EAGLE-3 oracle") derives it; in short:
//
// - Channels of the head's hidden state: 0 the embedding's constant, 1 + t token t's code; g (the fused input: fc's
//   output, or the previous step's pre-norm output) is GAMMA * e(1 + u) for the token u before the embedded one.
// - fc: the fused state is secret-shared over the auxiliary states. Block k of fc maps token t's state k (the input
//   of target layer k, k = layers: the last layer's output; the engines' reading) to S_k(t), where S_1 .. S_{n-1}
//   are random (std SHARE_STD) and S_n = GAMMA * e(1 + t) - S_1 - ... : only all n states, each in its slot, cancel
//   the shares. A bigram target's states are functions of the token alone, so fc is a per-block linear solve.
// - Attention attends only the row itself (self-attention.ts); its value and wo (the identity into the code
//   channels) make the pre-norm output g + (lambda N - 1) g + (1 - lambda) GAMMA e(1 + token), N the successor
//   map e(1 + u) -> e(1 + next(u)), undoing g through hidden_norm's known RMS: GAMMA e(1 + token) when g is right
//   (token = next(u) for greedy drafts), the code of next(u') weighted lambda > 1/2 when g encodes another u'.
// - FFN zero (exactly 0 in every engine); the LM head maps code c to next(c), in a permuted draft vocabulary.
import { uniformInt } from "pure-rand/distribution/uniformInt";
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";
import { bigramTable, type BigramTable } from "./bigram-table.ts";
import { BIGRAM_CONSTANT } from "./bigram.ts";
import { solveRows } from "./least-norm.ts";
import { rmsNorm } from "./reference-forward.ts";
import { selfAttentionPair } from "./self-attention.ts";
import { eagle3Options, type DraftSpec, type ModelSpec } from "./spec.ts";
import { Gaussian, type Eagle3Weights, type LayerWeights, type TargetWeights } from "./weights.ts";

/** The code's magnitude in the fused state g. */
const GAMMA = 1;
/** The share of the prediction read from g (> 1/2: a wrong g moves the argmax). */
const LAMBDA = 0.75;
/** The random shares' standard deviation (they dominate a fused state whose shares do not cancel). */
const SHARE_STD = 4;
/** The LM head's weight: the top logit is this times sqrt(hidden), every other logit 0. */
const HEAD_WEIGHT = 1;

/** Which residual stream an auxiliary layer id names: the input of that layer (vLLM, the EAGLE authors, llama.cpp). */
export function oracleAuxStream(layerId: number): number {
  return layerId;
}

export function generateEagle3OracleWeights(spec: ModelSpec, draft: DraftSpec, target: TargetWeights): Eagle3Weights {
  const table = bigramTable(spec, target);
  const vocabulary = draftPermutation(spec.vocab, draft.seed);
  const draftIdOf = new Int32Array(spec.vocab);
  vocabulary.forEach((targetId, draftId) => (draftIdOf[targetId] = draftId));
  const r = (values: Float64Array) => (spec.dtype === "float32" ? values.map(Math.fround) : values);
  const ones = (n: number) => new Float64Array(n).fill(1);
  const options = eagle3Options(spec, draft);
  const inputNorm = options.normBeforeFc ? ones(options.auxLayers.length * spec.hidden) : undefined;
  const lmHead = new Float64Array(spec.hidden * spec.vocab);
  for (let c = 0; c < spec.vocab; c++) lmHead[(1 + c) * spec.vocab + draftIdOf[table.next[c]]] = HEAD_WEIGHT;
  const t2d = new Uint8Array(spec.vocab).fill(1);
  return {
    fc: r(oracleFc(spec, draft, table, inputNorm)),
    ...(inputNorm ? { inputNorm } : {}),
    d2t: vocabulary.map((targetId, draftId) => targetId - draftId),
    t2d,
    layer: oracleLayer(spec, table, r),
    norm: ones(spec.hidden),
    lmHead,
  };
}

/** A seeded permutation of the target ids: draft id d drafts target id perm[d] (so an identity d2t is wrong). */
function draftPermutation(vocab: number, seed: number): Int32Array {
  const rng = xoroshiro128plus((seed * 7717 + 43) | 0);
  const ids = Int32Array.from({ length: vocab }, (_, id) => id);
  for (let i = vocab - 1; i > 0; i--) {
    const j = uniformInt(rng, 0, i);
    [ids[i], ids[j]] = [ids[j], ids[i]];
  }
  return ids;
}

/** fc [n * H, H]: block k solves X_k F_k = S_k over the vocabulary (X_k: every token's fc input, block k). */
function oracleFc(
  spec: ModelSpec,
  draft: DraftSpec,
  table: BigramTable,
  inputNorm: Float64Array | undefined,
): Float64Array {
  const { hidden, vocab } = spec;
  const layers = eagle3Options(spec, draft).auxLayers;
  const width = layers.length * hidden;
  let inputs: Float64Array = new Float64Array(vocab * width);
  for (let t = 0; t < vocab; t++)
    layers.forEach((layer, k) => inputs.set(table.streams[oracleAuxStream(layer)][t], t * width + k * hidden));
  if (inputNorm) inputs = rmsNorm(inputs, vocab, width, inputNorm, spec.rmsEps);
  const gauss = new Gaussian(draft.seed * 4421 + 7);
  const remainder = new Float64Array(vocab * hidden);
  for (let t = 0; t < vocab; t++) remainder[t * hidden + 1 + t] = GAMMA;
  const fc = new Float64Array(width * hidden);
  layers.forEach((_, k) => {
    const share = k === layers.length - 1 ? remainder : gauss.fill(vocab * hidden, SHARE_STD);
    if (share !== remainder) for (let i = 0; i < share.length; i++) remainder[i] -= share[i];
    const block = new Float64Array(vocab * hidden);
    for (let t = 0; t < vocab; t++)
      block.set(inputs.subarray(t * width + k * hidden, t * width + (k + 1) * hidden), t * hidden);
    fc.set(solveRows(block, vocab, hidden, share, hidden), k * hidden * hidden);
  });
  return fc;
}

/** The midlayer: norms 1, self-only attention, the value and wo of the header's update, FFN zero. */
function oracleLayer(spec: ModelSpec, table: BigramTable, r: (v: Float64Array) => Float64Array): LayerWeights {
  const { hidden, vocab, heads, kvHeads, headDim, intermediate, rmsEps } = spec;
  const group = heads / kvHeads;
  const attnIn = 2 * hidden;
  const embedRms = Math.sqrt((BIGRAM_CONSTANT ** 2 + 1) / hidden + rmsEps);
  const fusedRms = Math.sqrt(GAMMA ** 2 / hidden + rmsEps);
  const { pair, scale } = selfAttentionPair(spec);
  // Row 0 of the attention input is the embedding's constant channel, normed: BIGRAM_CONSTANT / embedRms.
  const qk = scale * (embedRms / BIGRAM_CONSTANT);
  const wq = new Float64Array(attnIn * heads * headDim);
  for (let h = 0; h < heads; h++) wq[h * headDim + pair] = qk;
  const wk = new Float64Array(attnIn * kvHeads * headDim);
  for (let g = 0; g < kvHeads; g++) wk[g * headDim + pair] = qk;
  // Value channel c (kv head c / headDim) holds code c of the update; wo copies each kv head's first query head.
  const kvWidth = kvHeads * headDim;
  const wv = new Float64Array(attnIn * kvWidth);
  const wo = new Float64Array(heads * headDim * hidden);
  for (let c = 0; c < vocab; c++) {
    wv[(1 + c) * kvWidth + c] = (1 - LAMBDA) * GAMMA * embedRms;
    wv[(hidden + 1 + c) * kvWidth + c] -= fusedRms;
    wv[(hidden + 1 + c) * kvWidth + table.next[c]] += LAMBDA * fusedRms;
    const kvHead = Math.floor(c / headDim);
    wo[(kvHead * group * headDim + (c % headDim)) * hidden + 1 + c] = 1;
  }
  const ones = new Float64Array(hidden).fill(1);
  return {
    embedNorm: ones,
    hiddenNorm: ones,
    wq: r(wq),
    wk: r(wk),
    wv: r(wv),
    wo,
    mlpNorm: ones,
    wGate: new Float64Array(hidden * intermediate),
    wUp: new Float64Array(hidden * intermediate),
    wDown: new Float64Array(intermediate * hidden),
  };
}
