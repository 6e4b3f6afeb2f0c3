// ONNX graph writers: the target, the mirror family and the EAGLE head share one decoder-stack writer.
//
// Every graph has the same calling convention, so the engine treats models alike:
//   inputs  tokens [T] int64, positions [T] int64, (draft graphs) hidden_in [T, H],
//           k_cache, v_cache [layers, slots, kvDim] (the whole pool, gathered inside the graph),
//           ctx_slots [C] int64 (pool slots the batch attends to), mask [T, C + T] additive
//           (column j < C is ctx_slots[j], column C + t is the batch's own row t).
//   outputs logits [T, V], hidden [T, H], k_new, v_new [layers, T, kvDim] (RoPE applied).
// Paging and slot bookkeeping stay in TypeScript; the graph only gathers and computes.
import { GraphBuilder } from "./onnx-builder.ts";
import { referenceTarget, type PrefixKv } from "./reference-forward.ts";
import { MIRROR_LOGIT_SCALE, type DraftSpec, type ModelSpec } from "./spec.ts";
import type { EagleWeights, LayerWeights, TargetWeights } from "./weights.ts";

/** Positions beyond maxPositions that the RoPE tables still cover (mirror modules run at anchor + k + 1). */
export const ROPE_TABLE_SLACK = 16;

/**
 * The graph returns each row's TOP_K best logits and token ids (ties to the lower id, as ONNX TopK
 * defines it) and the row's log-softmax normalizer, so the engine never scans the vocabulary in
 * JavaScript nor copies [T, V] logits off the device: argmax, margin and tree expansion need only these.
 */
export const TOP_K = 8;

export interface StackGraph {
  name: string;
  layers: readonly LayerWeights[];
  /** Added to the positions input before RoPE (the mirror runs anchor i at RoPE position i + 1). */
  ropeOffset: number;
  /** Constant K/V attended by every row before the context (the mirror's BOS row). */
  prefix?: PrefixKv;
  input: { kind: "embed" } | { kind: "eagle-fc"; fc: Float64Array; bias: Float64Array };
  finalNorm?: Float64Array;
  logitScale: number;
  tap?: { vector: Float64Array; delta: number };
  hasHiddenInput: boolean;
  /**
   * EAGLE-3 input path: an aux_in [T, auxWidth] input (the target's auxiliary states), and the draft input
   * fc(norm?(aux_in)) + hidden_in. Rows fed aux carry zeros in hidden_in and vice versa (fc(0) = 0, exactly),
   * so one graph serves draft-extend rows (aux) and draft-decode rows (the draft's own hidden).
   */
  eagle3?: { fc: Float64Array; inputNorm?: Float64Array; auxWidth: number; tapDraftInput: boolean };
  /** EAGLE-3 head: the layers read the draft input (not the embedding) as the residual stream. */
  residualFromDraftInput?: boolean;
  /** EAGLE-3 head: the hidden output is the residual stream before the final norm (the next step's input). */
  hiddenBeforeNorm?: boolean;
  /** An LM head of its own (EAGLE-3: over the draft vocabulary); default the target's. */
  lmHead?: { weights: Float64Array; vocab: number };
  /** Target for EAGLE-3: also output layer_hidden [layers + 1, T, H], the residual stream before each layer and after the last. */
  layerStreams?: boolean;
}

function ropeTables(spec: ModelSpec): { cos: Float64Array; sinSigned: Float64Array; rows: number } {
  const rows = spec.maxPositions + ROPE_TABLE_SLACK;
  const half = spec.headDim / 2;
  const cos = new Float64Array(rows * spec.headDim);
  const sinSigned = new Float64Array(rows * spec.headDim);
  for (let p = 0; p < rows; p++) {
    for (let i = 0; i < half; i++) {
      const angle = p * Math.pow(spec.ropeTheta, (-2 * i) / spec.headDim);
      cos[p * spec.headDim + i] = cos[p * spec.headDim + i + half] = Math.cos(angle);
      // rotate_half(x) * sin == swap_halves(x) * [-sin, sin]: one Concat instead of a Neg and a Concat.
      sinSigned[p * spec.headDim + i] = -Math.sin(angle);
      sinSigned[p * spec.headDim + i + half] = Math.sin(angle);
    }
  }
  return { cos, sinSigned, rows };
}

/** Writes one decoder-stack graph (every model here is one); exported for the EAGLE-3 writers (eagle3-graphs.ts). */
export function writeStackGraph(spec: ModelSpec, target: TargetWeights, graph: StackGraph): Uint8Array {
  const { hidden, heads, kvHeads, headDim, intermediate, vocab } = spec;
  const kvDimension = kvHeads * headDim;
  const groupSize = heads / kvHeads;
  const layerCount = graph.layers.length;
  const g = new GraphBuilder(spec.dtype);
  const tokens = g.input("tokens", "int64", ["T"]);
  const positions = g.input("positions", "int64", ["T"]);
  const hiddenIn = graph.hasHiddenInput ? g.input("hidden_in", spec.dtype, ["T", hidden]) : undefined;
  const auxIn = graph.eagle3 ? g.input("aux_in", spec.dtype, ["T", graph.eagle3.auxWidth]) : undefined;
  const kCache = g.input("k_cache", spec.dtype, [layerCount, "S", kvDimension]);
  const vCache = g.input("v_cache", spec.dtype, [layerCount, "S", kvDimension]);
  const ctxSlots = g.input("ctx_slots", "int64", ["C"]);
  let mask = g.input("mask", spec.dtype, ["T", "CT"]);

  const shape = (name: string, dims: number[]) => g.int64(g.fresh(name), [dims.length], dims);
  const axesLast = shape("axes_last", [-1]);
  const axis0 = shape("axis0", [0]);
  const axis1 = shape("axis1", [1]);

  // RoPE tables gathered once per forward and shared by every layer.
  const tables = ropeTables(spec);
  const cosTable = g.weight("rope_cos", [tables.rows, headDim], tables.cos);
  const sinTable = g.weight("rope_sin_signed", [tables.rows, headDim], tables.sinSigned);
  const ropePositions =
    graph.ropeOffset === 0 ? positions : g.op("Add", [positions, g.int64("rope_offset", [], [graph.ropeOffset])]);
  const cos = g.op("Unsqueeze", [g.op("Gather", [cosTable, ropePositions]), axis1]); // [T, 1, hd]
  const sin = g.op("Unsqueeze", [g.op("Gather", [sinTable, ropePositions]), axis1]);
  const half = headDim / 2;
  const sliceStartA = shape("s0", [0]);
  const sliceEndA = shape("s_half", [half]);
  const sliceEndB = shape("s_full", [headDim]);
  const rope = (x: string) => {
    const first = g.op("Slice", [x, sliceStartA, sliceEndA, axesLast]);
    const second = g.op("Slice", [x, sliceEndA, sliceEndB, axesLast]);
    const swapped = g.op("Concat", [second, first], { axis: -1 });
    return g.op("Add", [g.op("Mul", [x, cos]), g.op("Mul", [swapped, sin])]);
  };
  const eps = g.scalar(spec.rmsEps);
  const rmsNorm = (x: string, gain: Float64Array, name: string) => {
    const meanSquare = g.op("ReduceMean", [g.op("Mul", [x, x]), axesLast], { keepdims: 1 });
    const normed = g.op("Div", [x, g.op("Sqrt", [g.op("Add", [meanSquare, eps])])]);
    return g.op("Mul", [normed, g.weight(name, [hidden], gain)]);
  };

  // Mirror prefix: constant columns that every row attends to, prepended to the mask as zeros.
  const prefixLength = graph.prefix?.length ?? 0;
  if (prefixLength > 0) {
    const firstColumn = g.op("Slice", [mask, sliceStartA, shape("one", [1]), axis1]);
    const zeros = g.op("Mul", [firstColumn, g.scalar(0)]); // mask values are finite, so * 0 is exactly 0
    const prefixColumns =
      prefixLength === 1 ? zeros : g.op("Tile", [zeros, shape("prefix_repeats", [1, prefixLength])]);
    mask = g.op("Concat", [prefixColumns, mask], { axis: 1 });
  }

  // EAGLE-3: the draft input, fc over the (optionally normed) auxiliary states plus the hidden input.
  let draftInput: string | undefined;
  if (graph.eagle3) {
    const { fc, inputNorm, auxWidth } = graph.eagle3;
    let fcIn = auxIn!;
    if (inputNorm) {
      const meanSquare = g.op("ReduceMean", [g.op("Mul", [fcIn, fcIn]), axesLast], { keepdims: 1 });
      const normed = g.op("Div", [fcIn, g.op("Sqrt", [g.op("Add", [meanSquare, eps])])]);
      fcIn = g.op("Mul", [normed, g.weight("input_norm", [auxWidth], inputNorm)]);
    }
    draftInput = g.op("Add", [g.op("MatMul", [fcIn, g.weight("fc", [auxWidth, hidden], fc)]), hiddenIn!]);
  }

  let x: string;
  let embeddedTokens: string | undefined;
  if (graph.residualFromDraftInput) {
    embeddedTokens = g.op("Gather", [g.weight("embed", [vocab, hidden], target.embed), tokens]);
    x = draftInput!;
  } else if (graph.input.kind === "embed") {
    x = g.op("Gather", [g.weight("embed", [vocab, hidden], target.embed), tokens]);
  } else {
    const embedded = g.op("Gather", [g.weight("embed", [vocab, hidden], target.embed), tokens]);
    const concat = g.op("Concat", [embedded, hiddenIn!], { axis: 1 });
    const fused = g.op("MatMul", [concat, g.weight("fc", [2 * hidden, hidden], graph.input.fc)]);
    x = g.op("Add", [fused, g.weight("fc_bias", [hidden], graph.input.bias)]);
  }

  const ctxKeys = g.op("Gather", [kCache, ctxSlots], { axis: 1 }); // [layers, C, kvDim]
  const ctxValues = g.op("Gather", [vCache, ctxSlots], { axis: 1 });
  const headsShape = shape("q_heads", [-1, heads, headDim]);
  const kvHeadsShape = shape("kv_heads", [-1, kvHeads, headDim]);
  const kvFlatShape = shape("kv_flat", [-1, kvDimension]);
  const attnFlatShape = shape("attn_flat", [-1, heads * headDim]);
  const expandShape = shape("gqa_expand", [kvHeads, groupSize, 1, 1]);
  const mergedHeadsShape = shape("gqa_merge", [heads, -1, headDim]);
  const attentionScale = g.scalar(1 / Math.sqrt(headDim));
  const one = g.scalar(1);
  const newKeys: string[] = [];
  const newValues: string[] = [];

  // [rows, kvHeads, hd] -> [heads, rows, hd], repeating each KV head for its query group.
  const toHeadMajor = (kv: string) => {
    const perHead = g.op("Transpose", [g.op("Reshape", [kv, kvHeadsShape])], { perm: [1, 0, 2] });
    if (groupSize === 1) return perHead;
    const expanded = g.op("Expand", [g.op("Unsqueeze", [perHead, axis1]), expandShape]);
    return g.op("Reshape", [expanded, mergedHeadsShape]);
  };

  const streams: string[] = [];
  graph.layers.forEach((layer, l) => {
    streams.push(x);
    let normed: string;
    let attnIn = hidden;
    if (layer.embedNorm && layer.hiddenNorm) {
      // EAGLE-3 midlayer: attention over concat(input_layernorm(embedding), hidden_norm(hidden)).
      const embedPart = rmsNorm(embeddedTokens!, layer.embedNorm, `l${l}_input_layernorm`);
      const hiddenPart = rmsNorm(x, layer.hiddenNorm, `l${l}_hidden_norm`);
      normed = g.op("Concat", [embedPart, hiddenPart], { axis: -1 });
      attnIn = 2 * hidden;
    } else normed = layer.attnNorm ? rmsNorm(x, layer.attnNorm, `l${l}_attn_norm`) : x;
    const q = rope(
      g.op("Reshape", [
        g.op("MatMul", [normed, g.weight(`l${l}_wq`, [attnIn, heads * headDim], layer.wq)]),
        headsShape,
      ]),
    );
    const k = rope(
      g.op("Reshape", [g.op("MatMul", [normed, g.weight(`l${l}_wk`, [attnIn, kvDimension], layer.wk)]), kvHeadsShape]),
    );
    const kFlat = g.op("Reshape", [k, kvFlatShape]);
    const vFlat = g.op("MatMul", [normed, g.weight(`l${l}_wv`, [attnIn, kvDimension], layer.wv)]);
    newKeys.push(g.op("Unsqueeze", [kFlat, axis0]));
    newValues.push(g.op("Unsqueeze", [vFlat, axis0]));
    const layerIndex = g.int64(`layer_${l}`, [], [l]);
    const keyParts = [g.op("Gather", [ctxKeys, layerIndex]), kFlat];
    const valueParts = [g.op("Gather", [ctxValues, layerIndex]), vFlat];
    if (graph.prefix) {
      keyParts.unshift(g.weight(`l${l}_prefix_k`, [prefixLength, kvDimension], graph.prefix.keys[l]));
      valueParts.unshift(g.weight(`l${l}_prefix_v`, [prefixLength, kvDimension], graph.prefix.values[l]));
    }
    const allKeys = toHeadMajor(g.op("Concat", keyParts, { axis: 0 }));
    const allValues = toHeadMajor(g.op("Concat", valueParts, { axis: 0 }));
    const qHeads = g.op("Transpose", [q], { perm: [1, 0, 2] }); // [heads, T, hd]
    const scores = g.op("MatMul", [qHeads, g.op("Transpose", [allKeys], { perm: [0, 2, 1] })]);
    const probs = g.op("Softmax", [g.op("Add", [g.op("Mul", [scores, attentionScale]), mask])], { axis: -1 });
    const attended = g.op("Transpose", [g.op("MatMul", [probs, allValues])], { perm: [1, 0, 2] }); // [T, heads, hd]
    const projected = g.op("MatMul", [
      g.op("Reshape", [attended, attnFlatShape]),
      g.weight(`l${l}_wo`, [heads * headDim, hidden], layer.wo),
    ]);
    x = g.op("Add", [x, projected]);
    const mlpIn = rmsNorm(x, layer.mlpNorm, `l${l}_mlp_norm`);
    const gate = g.op("MatMul", [mlpIn, g.weight(`l${l}_w_gate`, [hidden, intermediate], layer.wGate)]);
    const up = g.op("MatMul", [mlpIn, g.weight(`l${l}_w_up`, [hidden, intermediate], layer.wUp)]);
    // SiLU as gate / (1 + exp(-gate)): ORT has float64 kernels for these, not for Sigmoid on every build.
    const silu = g.op("Div", [gate, g.op("Add", [one, g.op("Exp", [g.op("Neg", [gate])])])]);
    const down = g.op("MatMul", [
      g.op("Mul", [silu, up]),
      g.weight(`l${l}_w_down`, [intermediate, hidden], layer.wDown),
    ]);
    x = g.op("Add", [x, down]);
  });

  const hiddenOut = graph.finalNorm ? rmsNorm(x, graph.finalNorm, "final_norm") : x;
  const head = graph.lmHead ?? { weights: target.lmHead, vocab };
  let logits: string;
  if (graph.hiddenBeforeNorm) {
    g.op("Identity", [x], {}, "hidden");
    logits = g.op("MatMul", [hiddenOut, g.weight("lm_head", [hidden, head.vocab], head.weights)]);
  } else {
    g.op("Identity", [hiddenOut], {}, "hidden");
    logits = g.op("MatMul", ["hidden", g.weight("lm_head", [hidden, head.vocab], head.weights)]);
  }
  if (graph.logitScale !== 1) logits = g.op("Mul", [logits, g.scalar(graph.logitScale)]);
  if (graph.tap) {
    // The tap adds delta * (w . hidden_in) to every logit of a row: the logits now depend on the hidden
    // input (so plumbing bugs show in draft logits) while softmax and argmax stay the mirror's exactly.
    // The EAGLE-3 mirror taps its draft input instead, so they depend on every auxiliary state as well.
    const tapped = graph.eagle3?.tapDraftInput ? draftInput! : hiddenIn!;
    const tapColumn = g.op("MatMul", [tapped, g.weight("tap", [hidden, 1], graph.tap.vector)]);
    logits = g.op("Add", [logits, g.op("Mul", [tapColumn, g.scalar(graph.tap.delta * graph.logitScale)])]);
  }
  g.op("Identity", [logits], {}, "logits");
  const topK = Math.min(TOP_K, head.vocab);
  g.node("TopK", ["logits", g.int64("top_k", [1], [topK])], { axis: -1, largest: 1, sorted: 1 }, [
    "top_values",
    "top_indices",
  ]);
  // log-sum-exp from primitives (float64 kernels exist for each): max + log(sum(exp(logits - max))).
  const rowMax = g.op("ReduceMax", ["logits", axesLast], { keepdims: 1 });
  const sumExp = g.op("ReduceSum", [g.op("Exp", [g.op("Sub", ["logits", rowMax])]), axesLast], { keepdims: 1 });
  g.op("Add", [rowMax, g.op("Log", [sumExp])], {}, "log_normalizer");
  g.op("Concat", newKeys, { axis: 0 }, "k_new");
  g.op("Concat", newValues, { axis: 0 }, "v_new");
  if (graph.layerStreams) {
    streams.push(x);
    g.op(
      "Concat",
      streams.map((stream) => g.op("Unsqueeze", [stream, axis0])),
      { axis: 0 },
      "layer_hidden",
    );
  }
  g.output("logits", spec.dtype, ["T", head.vocab]);
  g.output("top_values", spec.dtype, ["T", topK]);
  g.output("top_indices", "int64", ["T", topK]);
  g.output("log_normalizer", spec.dtype, ["T", 1]);
  g.output("hidden", spec.dtype, ["T", hidden]);
  g.output("k_new", spec.dtype, [layerCount, "T", kvDimension]);
  g.output("v_new", spec.dtype, [layerCount, "T", kvDimension]);
  if (graph.layerStreams) g.output("layer_hidden", spec.dtype, [layerCount + 1, "T", hidden]);
  return g.toBytes(graph.name);
}

/**
 * The target. With layerStreams (EAGLE-3 drafts need the target's auxiliary states) it also outputs every
 * residual stream: layer_hidden[j] is the input of layer j, so layer i's output is stream i + 1 and the
 * last stream is the output before the final norm. The same model; a separate graph (and digest), so the
 * plain target's bytes do not change.
 */
export function writeTargetGraph(spec: ModelSpec, weights: TargetWeights, layerStreams = false): Uint8Array {
  return writeStackGraph(spec, weights, {
    name: layerStreams ? `${spec.name}-target-aux` : `${spec.name}-target`,
    layers: weights.layers,
    ropeOffset: 0,
    input: { kind: "embed" },
    finalNorm: weights.finalNorm,
    logitScale: 1,
    hasHiddenInput: false,
    ...(layerStreams ? { layerStreams } : {}),
  });
}

/**
 * Constant K/V of the fixed tokens a mirror skips (BOS for module 0, preamble[0..k] for module k),
 * computed by the float64 reference: a causal prefix's K/V depends only on the prefix itself.
 */
export function mirrorPrefix(
  spec: ModelSpec,
  weights: TargetWeights,
  prefixTokens: readonly number[],
  layerCount: number,
): PrefixKv {
  const reference = referenceTarget(spec, weights, prefixTokens, undefined, layerCount);
  return { keys: reference.keys, values: reference.values, length: prefixTokens.length };
}

export interface MirrorGraphOptions {
  /** Weights the mirror runs: the target's, or the noisy mirror's perturbed copy. */
  stack: TargetWeights;
  layerCount: number;
  /** The module's step k: row i runs at RoPE position i + k + 1 after preamble[0..k]. 0 for a chain draft. */
  step: number;
  tap?: { vector: Float64Array; delta: number };
}

export function writeMirrorGraph(spec: ModelSpec, draft: DraftSpec, options: MirrorGraphOptions): Uint8Array {
  const prefixTokens = spec.preamble.slice(0, options.step + 1);
  if (prefixTokens.length !== options.step + 1)
    throw new Error(`mirror module ${options.step} needs a preamble of ${options.step + 1} tokens`);
  return writeStackGraph(spec, options.stack, {
    name: `${spec.name}-${draft.kind}-step${options.step}`,
    layers: options.stack.layers.slice(0, options.layerCount),
    ropeOffset: options.step + 1,
    prefix: mirrorPrefix(spec, options.stack, prefixTokens, options.layerCount),
    input: { kind: "embed" },
    finalNorm: options.stack.finalNorm,
    logitScale: MIRROR_LOGIT_SCALE,
    tap: options.tap,
    hasHiddenInput: true,
  });
}

export function writeEagleGraph(spec: ModelSpec, target: TargetWeights, eagle: EagleWeights): Uint8Array {
  return writeStackGraph(spec, target, {
    name: `${spec.name}-eagle`,
    layers: [eagle.layer],
    ropeOffset: 0,
    input: { kind: "eagle-fc", fc: eagle.fc, bias: eagle.fcBias },
    logitScale: 1,
    hasHiddenInput: true,
  });
}
