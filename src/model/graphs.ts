// ONNX graph writers: the target, the mirror family and the EAGLE head share one decoder-stack writer.
//
// Every graph has the same calling convention, so the engine treats models alike:
//   inputs  tokens [T] int64, positions [T] int64, (draft graphs) hidden_in [T, H],
//           k_cache, v_cache [layers, slots, kvDim] (gathered inside the graph; the engine feeds only the context
//           rows, gathered on the host, with ctx_slots 0..C-1: runtime/context-gather.ts),
//           ctx_slots [C] int64 (pool slots the batch attends to), mask [T, C + T] additive
//           (column j < C is ctx_slots[j], column C + t is the batch's own row t).
//           (hybrid models) rec_init [Z, W] (initial recurrent states), rec_src [T] int64 (each row's: a row of
//           rec_init, or Z + j for the state after row j of this forward): mamba2-graph.ts.
//   outputs logits [T, V], hidden [T, H], k_new, v_new [layers, T, kvDim] (RoPE applied; zeros in recurrent
//           layers), (hybrid models) rec_out [T, W] (every row's recurrent state after it).
// Paging and slot bookkeeping stay in TypeScript; the graph only gathers and computes.
import { GraphBuilder } from "./onnx-builder.ts";
import { referenceTarget, type PrefixKv } from "./reference-forward.ts";
import { MIRROR_LOGIT_SCALE, type DraftSpec, type ModelSpec } from "./spec.ts";
import { ropeByOperator, ropeBySwappedWeights } from "./rope-graph.ts";
import { hasFullLayer, layerWindows, OUTSIDE_WINDOW, stackWindow } from "./window.ts";
import { mambaDims } from "./mamba2.ts";
import { writeMambaBlock } from "./mamba2-graph.ts";
import type { EagleWeights, LayerWeights, TargetWeights } from "./weights.ts";

/**
 * The graph returns each row's TOP_K best logits and token ids (ties to the lower id, as ONNX TopK
 * defines it) and the row's log-softmax normalizer, so the engine never scans the vocabulary in
 * JavaScript nor copies [T, V] logits off the device: argmax, margin and tree expansion need only these.
 */
export const TOP_K = 8;

/** float64 attention scores are raised to this before the softmax (see the decoder stack's attention). */
export const FLOAT64_SCORE_FLOOR = -600;

/** The additive value of a column no row attends (the engine's: finite, so the prefix columns derive by * 0). */
const NOT_ATTENDED = -1e9;

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
  /**
   * Sliding-window attention: each layer's window (undefined: full attention). Windowed layers read the mask as
   * is, the others with OUTSIDE_WINDOW columns attended (window.ts); the prefix's columns are windowed here.
   */
  windows?: readonly (number | undefined)[];
  /** Target for EAGLE-3: also output layer_hidden [layers + 1, T, H], the residual stream before each layer and after the last. */
  layerStreams?: boolean;
}

/** Column-wise concatenation of [rows, width_i] matrices into one [rows, sum width_i]. */
function concatColumns(rows: number, parts: readonly { values: Float64Array; width: number }[]): Float64Array {
  const total = parts.reduce((sum, part) => sum + part.width, 0);
  const out = new Float64Array(rows * total);
  for (let row = 0; row < rows; row++) {
    let column = 0;
    for (const part of parts) {
      out.set(part.values.subarray(row * part.width, (row + 1) * part.width), row * total + column);
      column += part.width;
    }
  }
  return out;
}

/**
 * Writes one decoder-stack graph (every model here is one); exported for the EAGLE-3 writers (eagle3-graphs.ts).
 *
 * Written for few nodes: ONNX Runtime's CPU cost for these small models is per node (~1 us each, the
 * arithmetic is noise), and a property run is thousands of forwards. So RMSNormalization, RotaryEmbedding and
 * Attention are the opset-23 operators (float32; float64 keeps all three in primitives, where ORT would lose
 * float64 precision: see below), Q, K and V come out of one MatMul (Split after it), gate and up out of another, and the residual
 * stream carries a batch axis of one ([1, T, hidden], the layout Attention takes) from the embedding to the
 * LM head.
 */
export function writeStackGraph(spec: ModelSpec, target: TargetWeights, graph: StackGraph): Uint8Array {
  const { hidden, heads, kvHeads, headDim, intermediate, vocab } = spec;
  const kvDimension = kvHeads * headDim;
  const qDimension = heads * headDim;
  const layerCount = graph.layers.length;
  const g = new GraphBuilder(spec.dtype);
  const tokens = g.input("tokens", "int64", ["T"]);
  const positions = g.input("positions", "int64", ["T"]);
  const hiddenIn = graph.hasHiddenInput ? g.input("hidden_in", spec.dtype, ["T", hidden]) : undefined;
  const auxIn = graph.eagle3 ? g.input("aux_in", spec.dtype, ["T", graph.eagle3.auxWidth]) : undefined;
  const kCache = g.input("k_cache", spec.dtype, [layerCount, "S", kvDimension]);
  const vCache = g.input("v_cache", spec.dtype, [layerCount, "S", kvDimension]);
  const ctxSlots = g.input("ctx_slots", "int64", ["C"]);
  const maskInput = g.input("mask", spec.dtype, ["T", "CT"]);
  const mambaLayers = graph.layers.filter((layer) => layer.mamba).length;
  const stateWidth = spec.recurrent && mambaLayers > 0 ? mambaDims(spec.recurrent).width : 0;
  const recInit = stateWidth > 0 ? g.input("rec_init", spec.dtype, ["Z", mambaLayers * stateWidth]) : "";
  const recSrc = stateWidth > 0 ? g.input("rec_src", "int64", ["T"]) : "";

  const shape = (name: string, dims: number[]) => g.int64(g.fresh(name), [dims.length], dims);
  const axesLast = shape("axes_last", [-1]);
  const axis0 = shape("axis0", [0]);
  const axis1 = shape("axis1", [1]);
  // float32: the opset-23 RMSNormalization operator. float64 keeps the primitives: the operator's epsilon is a
  // float32 attribute (1e-5 becomes 9.99999975e-6), which moved float64 outputs by ~1e-12 of their scale
  // against the reference (measured), where summation order alone moves them by ~1e-15.
  const eps = g.scalar(spec.rmsEps);
  const rmsNorm = (x: string, gain: Float64Array, name: string, width = hidden) => {
    if (spec.dtype === "float32")
      return g.op("RMSNormalization", [x, g.weight(name, [width], gain)], { axis: -1, epsilon: spec.rmsEps });
    const meanSquare = g.op("ReduceMean", [g.op("Mul", [x, x]), axesLast], { keepdims: 1 });
    const normed = g.op("Div", [x, g.op("Sqrt", [g.op("Add", [meanSquare, eps])])]);
    return g.op("Mul", [normed, g.weight(name, [width], gain)]);
  };
  const batchOfOne = (x: string) => g.op("Unsqueeze", [x, axis0]); // [T, ...] -> [1, T, ...]

  // RoPE. float32: the opset-23 RotaryEmbedding operator, one node per projection. float64 (it has no float64
  // kernel): rotate-half folded into the projection (swapped-halves weights beside Q's and K's), then
  // x * cos + swapped * sin over per-width tables gathered once per forward.
  const ropePositions =
    graph.ropeOffset === 0 ? positions : g.op("Add", [positions, g.int64("rope_offset", [], [graph.ropeOffset])]);
  const rope =
    spec.dtype === "float32"
      ? ropeByOperator(g, spec, ropePositions, axis1)
      : ropeBySwappedWeights(g, spec, ropePositions);

  // Sliding windows: windowed layers read the mask as is (OUTSIDE_WINDOW is as good as masked to a softmax);
  // full-attention layers read OUTSIDE_WINDOW columns as attended. A graph without windows keeps its nodes.
  const windows = graph.windows ?? [];
  const window = windows.find((size) => size !== undefined);
  let mask =
    window !== undefined && hasFullLayer(graph.layers.map((_, l) => windows[l]))
      ? g.op("Where", [g.op("Equal", [maskInput, g.scalar(OUTSIDE_WINDOW)]), g.scalar(0), maskInput])
      : maskInput;
  let windowMask = maskInput;

  // Mirror prefix: constant columns that every row attends to, prepended to the mask as zeros.
  const prefixLength = graph.prefix?.length ?? 0;
  if (prefixLength > 0) {
    const firstColumn = g.op("Slice", [maskInput, shape("s0", [0]), shape("one", [1]), axis1]);
    const zeros = g.op("Mul", [firstColumn, g.scalar(0)]); // mask values are finite, so * 0 is exactly 0
    const prefixColumns =
      prefixLength === 1 ? zeros : g.op("Tile", [zeros, shape("prefix_repeats", [1, prefixLength])]);
    mask = g.op("Concat", [prefixColumns, mask], { axis: 1 });
    if (window !== undefined) {
      // The prefix sits at RoPE positions 0 .. prefixLength - 1: a windowed row attends the ones within its window.
      const prefixPositions = g.int64(
        "prefix_positions",
        [1, prefixLength],
        Array.from({ length: prefixLength }, (_, j) => j),
      );
      const distance = g.op("Sub", [g.op("Unsqueeze", [ropePositions, axis1]), prefixPositions]); // [T, prefix]
      const inWindow = g.op("Less", [distance, g.int64("window_size", [], [window])]);
      const windowColumns = g.op("Where", [inWindow, g.scalar(0), g.scalar(NOT_ATTENDED)]);
      windowMask = g.op("Concat", [windowColumns, windowMask], { axis: 1 });
    }
  }

  // EAGLE-3: the draft input, fc over the (optionally normed) auxiliary states plus the hidden input.
  let draftInput: string | undefined;
  if (graph.eagle3) {
    const { fc, inputNorm, auxWidth } = graph.eagle3;
    const fcIn = inputNorm ? rmsNorm(auxIn!, inputNorm, "input_norm", auxWidth) : auxIn!;
    draftInput = g.op("Add", [g.op("MatMul", [fcIn, g.weight("fc", [auxWidth, hidden], fc)]), hiddenIn!]);
  }

  let x: string;
  let embeddedTokens: string | undefined;
  if (graph.residualFromDraftInput) {
    embeddedTokens = batchOfOne(g.op("Gather", [g.weight("embed", [vocab, hidden], target.embed), tokens]));
    x = batchOfOne(draftInput!);
  } else if (graph.input.kind === "embed") {
    x = batchOfOne(g.op("Gather", [g.weight("embed", [vocab, hidden], target.embed), tokens]));
  } else {
    const embedded = g.op("Gather", [g.weight("embed", [vocab, hidden], target.embed), tokens]);
    const concat = g.op("Concat", [embedded, hiddenIn!], { axis: 1 });
    const fused = g.op("MatMul", [concat, g.weight("fc", [2 * hidden, hidden], graph.input.fc)]);
    x = batchOfOne(g.op("Add", [fused, g.weight("fc_bias", [hidden], graph.input.bias)]));
  }

  const ctxKeys = g.op("Gather", [kCache, ctxSlots], { axis: 1 }); // [layers, C, kvDim]
  const ctxValues = g.op("Gather", [vCache, ctxSlots], { axis: 1 });
  const one = g.scalar(1);
  const newKeys: string[] = [];
  const newValues: string[] = [];
  const projectionSplit = shape("qkv_split", [...rope.projectionWidths]);
  const mlpSplit = shape("mlp_split", [intermediate, intermediate]);

  // Attention over [1, T, heads * hd] queries and [1, S, kvHeads * hd] keys and values, the mask [T, S] added.
  // float32: the opset-23 operator. float64: ORT runs that operator through its function body, which loses
  // float64 precision (~3e-8 relative, measured), so float64 graphs keep attention in MatMul and Softmax.
  const headsShape = shape("q_heads", [-1, heads, headDim]);
  const kvHeadsShape = shape("kv_heads", [-1, kvHeads, headDim]);
  const attnFlatShape = shape("attn_flat", [-1, qDimension]);
  const expandShape = shape("gqa_expand", [kvHeads, heads / kvHeads, 1, 1]);
  const mergedHeadsShape = shape("gqa_merge", [heads, -1, headDim]);
  const attentionScale = g.scalar(1 / Math.sqrt(headDim));
  // float64 Softmax takes exp(score - row max) of every column; a masked column's (-1e9) underflows, and
  // glibc's exp takes its slow underflow path (a subnormal multiply and errno) for each one: in batches of
  // many requests, most columns. Raised to FLOAT64_SCORE_FLOOR first, a masked column's weight is about
  // e^-600 of the row's largest instead of 0: below a double's resolution against that largest weight (1 in
  // the sum), so probabilities and outputs keep the same bits (the same holds for any real score that low),
  // and the attention costs a third. float32's operator clamps inside its own exp.
  const scoreFloor = spec.dtype === "float64" ? g.scalar(FLOAT64_SCORE_FLOOR) : "";
  // [1, rows, kvHeads * hd] -> [heads, rows, hd], repeating each KV head for its query group.
  const toHeadMajor = (kv: string) => {
    const perHead = g.op("Transpose", [g.op("Reshape", [kv, kvHeadsShape])], { perm: [1, 0, 2] });
    if (heads === kvHeads) return perHead;
    const expanded = g.op("Expand", [g.op("Unsqueeze", [perHead, axis1]), expandShape]);
    return g.op("Reshape", [expanded, mergedHeadsShape]);
  };
  const attention = (q: string, keys: string, values: string, mask: string): string => {
    if (spec.dtype === "float32")
      return g.op("Attention", [q, keys, values, mask], {
        q_num_heads: heads,
        kv_num_heads: kvHeads,
        scale: 1 / Math.sqrt(headDim),
      });
    const qHeads = g.op("Transpose", [g.op("Reshape", [q, headsShape])], { perm: [1, 0, 2] }); // [heads, T, hd]
    const scores = g.op("MatMul", [qHeads, g.op("Transpose", [toHeadMajor(keys)], { perm: [0, 2, 1] })]);
    const masked = g.op("Add", [g.op("Mul", [scores, attentionScale]), mask]);
    // The softmax spelled out (max-shifted exp over its sum), not the Softmax operator: ORT's CUDA Softmax on
    // float64 computes to ~2e-8 relative (measured node by node against the CPU EP, every other node of the
    // graph within 1e-15: docs/findings/ort-cuda-float64-softmax-precision.md, issue 23).
    const floored = g.op("Max", [masked, scoreFloor]);
    const weights = g.op("Exp", [g.op("Sub", [floored, g.op("ReduceMax", [floored, axesLast], { keepdims: 1 })])]);
    const probs = g.op("Div", [weights, g.op("ReduceSum", [weights, axesLast], { keepdims: 1 })]);
    const attended = g.op("Transpose", [g.op("MatMul", [probs, toHeadMajor(values)])], { perm: [1, 0, 2] });
    return g.op("Reshape", [attended, attnFlatShape]); // [T, heads * hd]
  };

  const streams: string[] = [];
  const recurrentStates: string[] = [];
  const rowCount = stateWidth > 0 ? g.op("Shape", [tokens]) : "";
  const tableRows = stateWidth > 0 ? g.op("Shape", [recInit], { end: 1 }) : "";
  const kvZeros =
    stateWidth > 0
      ? g.op("Expand", [
          g.scalar(0),
          g.op("Concat", [shape("one_row", [1]), rowCount, shape("kv_width", [kvDimension])], { axis: 0 }),
        ])
      : "";
  graph.layers.forEach((layer, l) => {
    streams.push(x);
    if (layer.mamba) {
      // A recurrent layer: the Mamba2 block instead of attention; zero K/V rows keep the pool's layer layout.
      const block = writeMambaBlock(
        g,
        spec.recurrent!,
        hidden,
        layer.mamba,
        `l${l}_mamba`,
        {
          normed: rmsNorm(x, layer.attnNorm!, `l${l}_attn_norm`),
          recInit,
          recSrc,
          tableRows,
          rowCount,
          column: recurrentStates.length * stateWidth,
        },
        rmsNorm,
      );
      recurrentStates.push(block.states);
      newKeys.push(kvZeros);
      newValues.push(kvZeros);
      x = g.op("Add", [x, block.out]);
      x = writeMlp(l, x);
      return;
    }
    let normed: string;
    let attnIn = hidden;
    if (layer.embedNorm && layer.hiddenNorm) {
      // EAGLE-3 midlayer: attention over concat(input_layernorm(embedding), hidden_norm(hidden)).
      const embedPart = rmsNorm(embeddedTokens!, layer.embedNorm, `l${l}_input_layernorm`);
      const hiddenPart = rmsNorm(x, layer.hiddenNorm, `l${l}_hidden_norm`);
      normed = g.op("Concat", [embedPart, hiddenPart], { axis: -1 });
      attnIn = 2 * hidden;
    } else normed = layer.attnNorm ? rmsNorm(x, layer.attnNorm, `l${l}_attn_norm`) : x;
    // One projection for Q, K and V (and swap_halves(Q), swap_halves(K) where RoPE needs them).
    const projection = concatColumns(
      attnIn,
      rope.projectionBlocks(layer, attnIn).map((values, block) => ({ values, width: rope.projectionWidths[block] })),
    );
    const parts = g.node(
      "Split",
      [
        g.op("MatMul", [normed, g.weight(`l${l}_wqkv`, [attnIn, projection.length / attnIn], projection)]),
        projectionSplit,
      ],
      { axis: -1 },
      undefined,
      rope.projectionWidths.length,
    );
    const { q, k, v } = rope.apply(parts); // [1, T, heads * hd], [1, T, kvDim], [1, T, kvDim]
    newKeys.push(k);
    newValues.push(v);
    const layerIndex = g.int64(`layer_${l}`, [1], [l]);
    const keyParts = [g.op("Gather", [ctxKeys, layerIndex]), k]; // [1, C, kvDim], [1, T, kvDim]
    const valueParts = [g.op("Gather", [ctxValues, layerIndex]), v];
    if (graph.prefix) {
      keyParts.unshift(g.weight(`l${l}_prefix_k`, [1, prefixLength, kvDimension], graph.prefix.keys[l]));
      valueParts.unshift(g.weight(`l${l}_prefix_v`, [1, prefixLength, kvDimension], graph.prefix.values[l]));
    }
    const attended = attention(
      q,
      g.op("Concat", keyParts, { axis: 1 }),
      g.op("Concat", valueParts, { axis: 1 }),
      windows[l] === undefined ? mask : windowMask,
    );
    const projected = g.op("MatMul", [attended, g.weight(`l${l}_wo`, [qDimension, hidden], layer.wo)]);
    x = g.op("Add", [x, projected]);
    x = writeMlp(l, x);
  });
  function writeMlp(l: number, x: string): string {
    const layer = graph.layers[l];
    const mlpIn = rmsNorm(x, layer.mlpNorm, `l${l}_mlp_norm`);
    const gateUp = concatColumns(hidden, [
      { values: layer.wGate, width: intermediate },
      { values: layer.wUp, width: intermediate },
    ]);
    const [gate, up] = g.node(
      "Split",
      [g.op("MatMul", [mlpIn, g.weight(`l${l}_w_gate_up`, [hidden, 2 * intermediate], gateUp)]), mlpSplit],
      { axis: -1 },
      undefined,
      2,
    );
    // SiLU as gate / (1 + exp(-gate)): ORT has float64 kernels for these, not for Sigmoid on every build.
    const silu = g.op("Div", [gate, g.op("Add", [one, g.op("Exp", [g.op("Neg", [gate])])])]);
    const down = g.op("MatMul", [
      g.op("Mul", [silu, up]),
      g.weight(`l${l}_w_down`, [intermediate, hidden], layer.wDown),
    ]);
    return g.op("Add", [x, down]);
  }

  const rows = (batched: string, output?: string) => g.op("Squeeze", [batched, axis0], {}, output); // [1, T, ...] -> [T, ...]
  const head = graph.lmHead ?? { weights: target.lmHead, vocab };
  let logits: string;
  if (graph.hiddenBeforeNorm) {
    rows(x, "hidden");
    const normed = graph.finalNorm ? rmsNorm(x, graph.finalNorm, "final_norm") : x;
    logits = g.op("MatMul", [rows(normed), g.weight("lm_head", [hidden, head.vocab], head.weights)]);
  } else {
    rows(graph.finalNorm ? rmsNorm(x, graph.finalNorm, "final_norm") : x, "hidden");
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
  // The node that computed the logits names its output (no Identity node).
  g.lastNode().output[0] = "logits";
  const topK = Math.min(TOP_K, head.vocab);
  g.node("TopK", ["logits", g.int64("top_k", [1], [topK])], { axis: -1, largest: 1, sorted: 1 }, [
    "top_values",
    "top_indices",
  ]);
  writeLogNormalizer(g, "logits", "top_values", "log_normalizer");
  g.op("Concat", newKeys, { axis: 0 }, "k_new");
  g.op("Concat", newValues, { axis: 0 }, "v_new");
  if (graph.layerStreams) {
    streams.push(x);
    g.op("Concat", streams, { axis: 0 }, "layer_hidden");
  }
  g.output("logits", spec.dtype, ["T", head.vocab]);
  g.output("top_values", spec.dtype, ["T", topK]);
  g.output("top_indices", "int64", ["T", topK]);
  g.output("log_normalizer", spec.dtype, ["T", 1]);
  g.output("hidden", spec.dtype, ["T", hidden]);
  g.output("k_new", spec.dtype, [layerCount, "T", kvDimension]);
  g.output("v_new", spec.dtype, [layerCount, "T", kvDimension]);
  if (graph.layerStreams) g.output("layer_hidden", spec.dtype, [layerCount + 1, "T", hidden]);
  if (stateWidth > 0) {
    g.op("Concat", recurrentStates, { axis: 1 }, "rec_out");
    g.output("rec_out", spec.dtype, ["T", mambaLayers * stateWidth]);
  }
  return g.toBytes(graph.name);
}

/**
 * The log-softmax normalizer of each row of `logits` [T, V] as max + log(sum(exp(logits - max))), the max
 * read from `topValues` [T, k] (TopK's first column): every exponent is <= 0 and the row's largest
 * contributes exactly 1, so the sum lies in [1, V] on every EP and dtype. ONNX does not promise a stable
 * ReduceLogSumExp, and on the WebGPU EP a single ReduceLogSumExp over the mirror family's 2^16-scale logits
 * was non-finite (issue 23; docs/findings/ort-webgpu-reducelogsumexp-overflow.md).
 */
export function writeLogNormalizer(g: GraphBuilder, logits: string, topValues: string, output: string): string {
  const axisLast = g.int64(g.fresh("axis_last"), [1], [-1]);
  const rowMax = g.op("Slice", [
    topValues,
    g.int64(g.fresh("first"), [1], [0]),
    g.int64(g.fresh("second"), [1], [1]),
    axisLast,
  ]);
  const shiftedExp = g.op("Exp", [g.op("Sub", [logits, rowMax])]);
  const logSum = g.op("Log", [g.op("ReduceSum", [shiftedExp, axisLast], { keepdims: 1 })]);
  return g.op("Add", [logSum, rowMax], {}, output);
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
    ...(stackWindow(spec) !== undefined ? { windows: layerWindows(spec) } : {}),
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
    ...(stackWindow(spec, options.layerCount) !== undefined ? { windows: layerWindows(spec, options.layerCount) } : {}),
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
