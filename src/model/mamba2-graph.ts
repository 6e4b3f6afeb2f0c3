// The Mamba2 block (mamba2.ts) in the ONNX graphs: projections batched over the forward's rows, the recurrence
// a Loop over rows. A packed ragged forward holds rows of many requests (and, in verify, a tree of drafts), so
// each row names where its state comes from: rec_src[t] < Z is a row of rec_init (a request's committed state,
// or a temporary state an earlier forward left), Z + j the state after row j of this forward (its parent).
// Every row's state after it comes out (rec_out), so verify yields one state per draft position and the engine
// commits the accepted one (engine/recurrent-states.ts). Real engines pass the same thing as state indices
// (vLLM's state_indices_tensor with num_accepted_tokens, SGLang's mamba cache indices and intermediate states).
import type { GraphBuilder } from "./onnx-builder.ts";
import { mambaDims, type MambaWeights, type RecurrentSpec } from "./mamba2.ts";

export interface MambaGraphInputs {
  /** [1, T, hidden]: the layer's normed input. */
  normed: string;
  /** [Z, stackWidth]: the initial states table; this layer's columns start at `column`. */
  recInit: string;
  /** [T] int64 into [rec_init rows ++ this forward's rows]. */
  recSrc: string;
  /** int64 [1]: Z (rec_init's rows). */
  tableRows: string;
  /** int64 [1]: T. */
  rowCount: string;
  column: number;
}

/** Writes one Mamba2 block; returns its output [1, T, hidden] and every row's state after it [T, width]. */
export function writeMambaBlock(
  g: GraphBuilder,
  recurrent: RecurrentSpec,
  hidden: number,
  weights: MambaWeights,
  name: string,
  inputs: MambaGraphInputs,
  rmsNorm: (x: string, gain: Float64Array, name: string, width: number) => string,
): { out: string; states: string } {
  const { heads, headDim, stateSize: n, convKernel: k } = recurrent;
  const { inner, convDim, convWidth, width } = mambaDims(recurrent);
  const ints = (label: string, values: number[]) => g.int64(g.fresh(`${name}_${label}`), [values.length], values);
  const axis0 = ints("axis0", [0]);
  const one = g.scalar(1);
  const silu = (x: string) => g.op("Div", [x, g.op("Add", [one, g.op("Exp", [g.op("Neg", [x])])])]);

  const projWidth = inner + convDim + heads;
  const projected = g.op("Squeeze", [
    g.op("MatMul", [inputs.normed, g.weight(`${name}_in_proj`, [hidden, projWidth], weights.inProj)]),
    axis0,
  ]); // [T, projWidth]
  const [z, xbc, dtRaw] = g.node(
    "Split",
    [projected, ints("split", [inner, convDim, heads])],
    { axis: -1 },
    undefined,
    3,
  );
  // dt = softplus(dt + dt_bias) (PyTorch's threshold: linear above 20); dA = exp(dt * A), A = -exp(A_log).
  const dtIn = g.op("Add", [dtRaw, g.weight(`${name}_dt_bias`, [heads], weights.dtBias)]);
  const dt = g.op("Where", [
    g.op("Greater", [dtIn, g.scalar(20)]),
    dtIn,
    g.op("Log", [g.op("Add", [one, g.op("Exp", [dtIn])])]),
  ]);
  const a = Float64Array.from(weights.aLog, (value) => -Math.exp(value));
  const dA = g.op("Exp", [g.op("Mul", [dt, g.weight(`${name}_a`, [heads], a)])]);

  // The states table: this layer's columns of rec_init, then a zero row per row of the forward (written in order).
  const layerInit = g.op("Slice", [
    inputs.recInit,
    ints("c0", [inputs.column]),
    ints("c1", [inputs.column + width]),
    ints("axis1", [1]),
  ]);
  const zeros = g.op("Expand", [g.scalar(0), g.op("Concat", [inputs.rowCount, ints("w", [width])], { axis: 0 })]);
  const table = g.op("Concat", [layerInit, zeros], { axis: 0 });

  // The body: one row. Outer names (xbc, dt, dA, rec_src, weights) are read from the enclosing graph.
  const body = g.child(`${name}_body_`);
  const iter = body.input(body.fresh("iter"), "int64", []);
  const cond = body.input(body.fresh("cond"), "bool", []);
  const buffer = body.input(body.fresh("buffer"), g.dtype, ["R", width]);
  const bInts = (label: string, values: number[]) => body.int64(body.fresh(label), [values.length], values);
  const bAxis0 = bInts("axis0", [0]);
  const previous = body.op("Gather", [buffer, body.op("Gather", [inputs.recSrc, iter])], { axis: 0 }); // [width]
  const convPrevious = body.op("Reshape", [
    body.op("Slice", [previous, bInts("s", [0]), bInts("e", [convWidth]), bAxis0]),
    bInts("conv_shape", [k - 1, convDim]),
  ]);
  const current = body.op("Unsqueeze", [body.op("Gather", [xbc, iter], { axis: 0 }), bAxis0]); // [1, convDim]
  const window = body.op("Concat", [convPrevious, current], { axis: 0 }); // [K, convDim]
  const convSum = body.op("Add", [
    body.op(
      "ReduceSum",
      [body.op("Mul", [window, g.weight(`${name}_conv_w`, [k, convDim], weights.convWeight)]), bAxis0],
      {
        keepdims: 0,
      },
    ),
    g.weight(`${name}_conv_b`, [convDim], weights.convBias),
  ]);
  const bOne = body.scalar(1);
  const conv = body.op("Div", [convSum, body.op("Add", [bOne, body.op("Exp", [body.op("Neg", [convSum])])])]);
  const [x, b, c] = body.node("Split", [conv, bInts("split", [inner, n, n])], { axis: 0 }, undefined, 3);
  const xh = body.op("Reshape", [x, bInts("xh", [heads, headDim])]);
  const bAxis1 = bInts("axis1", [1]);
  const dtRow = body.op("Unsqueeze", [body.op("Gather", [dt, iter], { axis: 0 }), bAxis1]); // [H, 1]
  const dARow = body.op("Reshape", [body.op("Gather", [dA, iter], { axis: 0 }), bInts("da", [heads, 1, 1])]);
  const dBx = body.op("Mul", [
    body.op("Unsqueeze", [body.op("Mul", [xh, dtRow]), bInts("axis2", [2])]),
    body.op("Reshape", [b, bInts("b", [1, 1, n])]),
  ]); // [H, P, N]
  const ssmPrevious = body.op("Reshape", [
    body.op("Slice", [previous, bInts("s2", [convWidth]), bInts("e2", [width]), bAxis0]),
    bInts("ssm", [heads, headDim, n]),
  ]);
  const ssm = body.op("Add", [body.op("Mul", [ssmPrevious, dARow]), dBx]);
  const y = body.op("Add", [
    body.op("ReduceSum", [body.op("Mul", [ssm, body.op("Reshape", [c, bInts("c", [1, 1, n])])]), bInts("last", [2])], {
      keepdims: 0,
    }),
    body.op("Mul", [xh, g.weight(`${name}_d`, [heads, 1], weights.d)]),
  ]);
  const flat = bInts("flat", [-1]);
  const state = body.op(
    "Concat",
    [
      body.op("Reshape", [body.op("Slice", [window, bInts("w1", [1]), bInts("wk", [k]), bAxis0]), flat]),
      body.op("Reshape", [ssm, flat]),
    ],
    { axis: 0 },
  );
  const at = body.op("Unsqueeze", [
    body.op("Add", [body.op("Squeeze", [inputs.tableRows, bAxis0]), iter]),
    bInts("at", [0, 1]),
  ]);
  const bufferOut = body.op("ScatterND", [buffer, at, body.op("Unsqueeze", [state, bAxis0])]);
  const condOut = body.op("Identity", [cond]);
  const yRow = body.op("Reshape", [y, bInts("y", [inner])]);
  body.output(condOut, "bool", []);
  body.output(bufferOut, g.dtype, ["R", width]);
  body.output(yRow, g.dtype, [inner]);

  const tripCount = g.op("Squeeze", [inputs.rowCount, axis0]);
  const [finalTable, ys] = g.node(
    "Loop",
    [tripCount, g.bool(g.fresh(`${name}_true`), true), table],
    { body: { graph: body.toGraph(`${name}_rows`) } },
    undefined,
    2,
  );
  const states = g.op("Slice", [finalTable, inputs.tableRows, ints("end", [Number.MAX_SAFE_INTEGER]), axis0]);
  // Gated RMSNorm (norm_before_gate = false), then out_proj.
  const gated = rmsNorm(g.op("Mul", [ys, silu(z)]), weights.normWeight, `${name}_norm`, inner);
  const out = g.op("MatMul", [gated, g.weight(`${name}_out_proj`, [inner, hidden], weights.outProj)]);
  return { out: g.op("Unsqueeze", [out, axis0]), states };
}
