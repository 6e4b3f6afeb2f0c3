// EP numerics probes for the GPU box (issue 23), next to scripts/gpu/run-on-gpu.sh:
//   normalizer: a single ReduceLogSumExp, and the graphs' normalizer (writeLogNormalizer), on rows of
//     2^16-scale logits, per EP: is the EP's ReduceLogSumExp stable, and is ours? Writes the minimal
//     ReduceLogSumExp graph next to the report (docs/findings/ort-webgpu-reducelogsumexp-overflow.md).
//   ops: every node of a float64 model graph made an output, run on the CPU EP and on another EP with the
//     same feeds: the largest difference per node relative to that tensor's scale, in node order, each node's
//     growth over its inputs' differences marked: which op loses float64 precision on that EP.
//   eps: the GPU EPs that open a session here, one a line (run-on-gpu.sh check).
// Usage: npx tsx scripts/gpu/ep-numerics.ts eps [--ep EP ...]
//        npx tsx scripts/gpu/ep-numerics.ts normalizer [--ep EP ...] [--out FILE.onnx]
//        npx tsx scripts/gpu/ep-numerics.ts ops --ep cuda [--preset tiny-f64] [--rows 16] [--seed 1] [--json FILE]
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { ModelProtoSchema, TensorProto_DataType, ValueInfoProtoSchema, type ModelProto } from "onnx-buf";
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";
import { uniformInt } from "pure-rand/distribution/uniformInt";
import { buildDraft, buildTarget } from "../../src/model/build.ts";
import { writeLogNormalizer } from "../../src/model/graphs.ts";
import { GraphBuilder } from "../../src/model/onnx-builder.ts";
import { getPreset } from "../../src/model/presets.ts";
import { defaultDraftSpec, kvDim, MIRROR_LOGIT_SCALE, type Dtype } from "../../src/model/spec.ts";
import {
  DEFAULT_RUNTIME,
  runGraph,
  type ExecutionProvider,
  type FloatArray,
  type ProbeTensor,
} from "../../src/runtime/ort.ts";

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    ep: { type: "string", multiple: true },
    out: { type: "string" },
    preset: { type: "string", default: "tiny-f64" },
    rows: { type: "string", default: "16" },
    seed: { type: "string", default: "1" },
    json: { type: "string" },
  },
});

function lseReference(row: ArrayLike<number>): number {
  let max = -Infinity;
  for (let i = 0; i < row.length; i++) max = Math.max(max, row[i]);
  let sum = 0;
  for (let i = 0; i < row.length; i++) sum += Math.exp(row[i] - max);
  return max + Math.log(sum);
}

/** logits [1, V] -> log_normalizer [1, 1]: one ReduceLogSumExp, or TopK and writeLogNormalizer. */
function normalizerGraph(dtype: Dtype, vocab: number, single: boolean): Uint8Array {
  const g = new GraphBuilder(dtype);
  g.input("logits", dtype, [1, vocab]);
  if (single) g.op("ReduceLogSumExp", ["logits", g.int64("axes", [1], [-1])], { keepdims: 1 }, "log_normalizer");
  else {
    g.node("TopK", ["logits", g.int64("k", [1], [1])], { axis: -1, largest: 1, sorted: 1 }, ["top_values", "top_i"]);
    writeLogNormalizer(g, "logits", "top_values", "log_normalizer");
  }
  g.output("log_normalizer", dtype, [1, 1]);
  return g.toBytes(single ? "reduce-log-sum-exp" : "log-normalizer");
}

async function normalizer(eps: ExecutionProvider[]): Promise<void> {
  const vocab = 32000;
  const rng = xoroshiro128plus(7);
  const gauss = () => {
    // Irwin-Hall (12 uniforms) as a normal draw: enough for a spread of logits.
    let sum = 0;
    for (let i = 0; i < 12; i++) sum += uniformInt(rng, 0, 1 << 30) / (1 << 30);
    return sum - 6;
  };
  const rows: [string, Float32Array][] = [
    ["2^16 x N(0, 4) (a mirror row)", Float32Array.from({ length: vocab }, () => gauss() * 4 * MIRROR_LOGIT_SCALE)],
    ["N(0, 4) (a target row)", Float32Array.from({ length: vocab }, () => gauss() * 4)],
    ["all 100", new Float32Array(vocab).fill(100)],
    ["all -100", new Float32Array(vocab).fill(-100)],
    ["all 80", new Float32Array(vocab).fill(80)],
  ];
  const single = normalizerGraph("float32", vocab, true);
  if (args.out) writeFileSync(args.out, single);
  console.log(`| EP | graph | row | got | float64 reference |`);
  console.log(`| --- | --- | --- | --- | --- |`);
  for (const ep of eps)
    for (const [graphName, bytes] of [
      ["ReduceLogSumExp", single],
      ["max + log(sum(exp(x - max)))", normalizerGraph("float32", vocab, false)],
    ] as const)
      for (const [rowName, row] of rows) {
        let got: string;
        try {
          const out = await runGraph(bytes, { ...DEFAULT_RUNTIME, ep }, { logits: { data: row, dims: [1, vocab] } }, [
            "log_normalizer",
          ]);
          got = String(out.log_normalizer.data[0]);
        } catch (error) {
          got = `error: ${(error instanceof Error ? error.message.split("\n")[0] : String(error)).slice(-160)}`;
        }
        console.log(`| ${ep} | ${graphName} | ${rowName} | ${got} | ${lseReference(row)} |`);
      }
}

/** Every node output of a model as a graph output; dtypes by ONNX's rules for the ops these graphs use. */
function exposeEveryNode(bytes: Uint8Array): {
  bytes: Uint8Array;
  outputs: { name: string; op: string; inputs: string[] }[];
} {
  const model: ModelProto = fromBinary(ModelProtoSchema, bytes);
  const graph = model.graph!;
  const dtypeOf = new Map<string, number>();
  for (const input of graph.input)
    if (input.type?.value.case === "tensorType") dtypeOf.set(input.name, input.type.value.value.elemType);
  for (const init of graph.initializer) dtypeOf.set(init.name, init.dataType);
  const existing = new Set(graph.output.map((output) => output.name));
  const outputs: { name: string; op: string; inputs: string[] }[] = [];
  for (const node of graph.node) {
    node.output.forEach((name, i) => {
      if (name === "") return;
      const elemType = node.opType === "TopK" && i === 1 ? TensorProto_DataType.INT64 : dtypeOf.get(node.input[0]);
      if (elemType === undefined) throw new Error(`${node.opType} ${name}: input dtype unknown`);
      dtypeOf.set(name, elemType);
      outputs.push({ name, op: node.opType, inputs: node.input.filter((input) => input !== "") });
      if (!existing.has(name))
        graph.output.push(
          create(ValueInfoProtoSchema, { name, type: { value: { case: "tensorType", value: { elemType } } } }),
        );
    });
  }
  return { bytes: toBinary(ModelProtoSchema, model), outputs };
}

/** max |a - b| / max(1e-300, max |a|) over a tensor (int64: 0 when equal, 1 otherwise). */
function relativeDifference(a: ProbeTensor["data"], b: ProbeTensor["data"]): number {
  if (a instanceof BigInt64Array) return a.every((value, i) => value === (b as BigInt64Array)[i]) ? 0 : 1;
  let diff = 0;
  let scale = 0;
  for (let i = 0; i < a.length; i++) {
    diff = Math.max(diff, Math.abs(a[i] - (b as FloatArray)[i]));
    scale = Math.max(scale, Math.abs(a[i]));
  }
  return diff / Math.max(scale, 1e-300);
}

async function ops(ep: ExecutionProvider): Promise<void> {
  const spec = getPreset(args.preset!);
  const rows = Number(args.rows);
  const rng = xoroshiro128plus(Number(args.seed));
  const target = buildTarget(spec);
  const draft = buildDraft(target, defaultDraftSpec("tapped-mirror"));
  const slots = 64;
  const ctx = 24;
  const float = (n: number, scale: number) => {
    const values = spec.dtype === "float32" ? new Float32Array(n) : new Float64Array(n);
    for (let i = 0; i < n; i++) values[i] = (uniformInt(rng, 0, 1 << 30) / (1 << 30) - 0.5) * 2 * scale;
    return values;
  };
  const report: Record<string, unknown>[] = [];
  // One Softmax node on float64 scores (the minimal graph of the finding), against the float64 reference.
  const single = new GraphBuilder("float64");
  single.input("scores", "float64", [8, 64]);
  single.op("Softmax", ["scores"], { axis: -1 }, "probs");
  single.output("probs", "float64", [8, 64]);
  const scores = float(8 * 64, 8) as Float64Array;
  const probs: Record<string, ProbeTensor["data"]> = {};
  for (const on of ["cpu", ep] as const)
    probs[on] = (
      await runGraph(
        single.toBytes("softmax-f64"),
        { ...DEFAULT_RUNTIME, ep: on },
        { scores: { data: scores, dims: [8, 64] } },
        ["probs"],
      )
    ).probs.data;
  const exact = new Float64Array(8 * 64);
  for (let r = 0; r < 8; r++) {
    const row = scores.subarray(r * 64, (r + 1) * 64);
    const max = Math.max(...row);
    const sum = row.reduce((total, value) => total + Math.exp(value - max), 0);
    row.forEach((value, c) => (exact[r * 64 + c] = Math.exp(value - max) / sum));
  }
  console.log(
    `\none float64 Softmax node [8, 64], relative difference to the float64 reference: cpu ${relativeDifference(exact, probs.cpu).toExponential(2)}, ${ep} ${relativeDifference(exact, probs[ep]).toExponential(2)}`,
  );
  for (const [name, graph, hiddenIn] of [
    ["target", target.graph, false],
    ["tapped mirror", draft.graphs[0], true],
  ] as const) {
    const { bytes, outputs } = exposeEveryNode(graph.bytes);
    const mask = float(rows * (ctx + rows), 0);
    for (let t = 0; t < rows; t++) for (let s = t + 1; s < rows; s++) mask[t * (ctx + rows) + ctx + s] = -1e9;
    for (let t = 0; t < rows; t++) mask[t * (ctx + rows) + (t % ctx)] = -1e9; // one masked context column per row
    const feeds: Record<string, ProbeTensor> = {
      tokens: {
        data: BigInt64Array.from({ length: rows }, () => BigInt(uniformInt(rng, 3, spec.vocab - 1))),
        dims: [rows],
      },
      positions: { data: BigInt64Array.from({ length: rows }, (_, t) => BigInt(ctx + t)), dims: [rows] },
      k_cache: { data: float(graph.layers * slots * kvDim(spec), 2), dims: [graph.layers, slots, kvDim(spec)] },
      v_cache: { data: float(graph.layers * slots * kvDim(spec), 2), dims: [graph.layers, slots, kvDim(spec)] },
      ctx_slots: { data: BigInt64Array.from({ length: ctx }, (_, c) => BigInt((c * 7) % slots)), dims: [ctx] },
      mask: { data: mask, dims: [rows, ctx + rows] },
      ...(hiddenIn ? { hidden_in: { data: float(rows * spec.hidden, 1), dims: [rows, spec.hidden] } } : {}),
    };
    const names = outputs.map((output) => output.name);
    const cpu = await runGraph(bytes, DEFAULT_RUNTIME, feeds, names);
    const other = await runGraph(bytes, { ...DEFAULT_RUNTIME, ep }, feeds, names);
    const differenceOf = new Map<string, number>();
    console.log(`\n${name} (${spec.name}, ${spec.dtype}): relative difference ${ep} vs cpu per node, in node order`);
    console.log(`| node | op | difference | largest input difference | growth |`);
    console.log(`| --- | --- | --- | --- | --- |`);
    for (const output of outputs) {
      const difference = relativeDifference(cpu[output.name].data, other[output.name].data);
      differenceOf.set(output.name, difference);
      const inputDifference = Math.max(0, ...output.inputs.map((input) => differenceOf.get(input) ?? 0));
      const growth = difference / Math.max(inputDifference, 1e-16);
      report.push({ graph: name, node: output.name, op: output.op, difference, inputDifference });
      const flag = difference > 1e-13 && growth > 100 ? " **" : "";
      console.log(
        `| ${output.name} | ${output.op} | ${difference.toExponential(2)} | ${inputDifference.toExponential(2)} | ${growth.toExponential(1)}${flag} |`,
      );
    }
  }
  if (args.json) writeFileSync(args.json, JSON.stringify({ ep, preset: spec.name, rows, report }, null, 1));
}

/** The GPU EPs (of those asked, default cuda and webgpu) that open a session and run a graph here, one a line. */
async function availableEps(eps: ExecutionProvider[]): Promise<void> {
  const bytes = normalizerGraph("float32", 4, false);
  for (const ep of eps) {
    try {
      await runGraph(bytes, { ...DEFAULT_RUNTIME, ep }, { logits: { data: new Float32Array(4), dims: [1, 4] } }, [
        "log_normalizer",
      ]);
      console.log(ep);
    } catch {
      // not on this machine
    }
  }
}

const eps = (args.ep ?? (positionals[0] === "eps" ? ["cuda", "webgpu"] : ["cpu"])) as ExecutionProvider[];
if (positionals[0] === "eps") await availableEps(eps);
else if (positionals[0] === "normalizer") await normalizer(eps);
else if (positionals[0] === "ops") for (const ep of eps) await ops(ep);
else {
  console.error("usage: ep-numerics.ts eps|normalizer|ops [--ep EP ...]");
  process.exit(2);
}
