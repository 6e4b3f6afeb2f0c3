// Where one forward's time goes on an EP (issue 23, item 5): speculation pays only if a draft forward costs much
// less than a target forward. For the `large` target and its truncated mirror, at a decode shape (--rows rows
// attending --context context rows, fed as the engine feeds them since the context gather: [layers, C, kvDim]),
// it measures the wall time of a native run, the same run fetching one small output (what the output copies
// cost), ONNX Runtime's own profile of those runs (model_run against the sum of its node kernel times, the
// node count, the costliest op types), and a one-node graph's run (the fixed cost of any run on the EP).
//
//   npx tsx scripts/gpu/profile-forward.ts [--ep cuda] [--preset large] [--rows 2] [--context 60] [--runs 50]
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { parseArgs } from "node:util";
import ort from "onnxruntime-node";
import { buildDraft, buildTarget } from "../../src/model/build.ts";
import { GraphBuilder } from "../../src/model/onnx-builder.ts";
import { getPreset } from "../../src/model/presets.ts";
import { defaultDraftSpec, kvDim } from "../../src/model/spec.ts";
import { ENGINE_OUTPUTS } from "../../src/runtime/ort.ts";
import { median, table } from "../bench-util.ts";

const { values } = parseArgs({
  options: {
    ep: { type: "string", multiple: true, default: ["cuda"] },
    preset: { type: "string", default: "large" },
    rows: { type: "string", default: "2" },
    context: { type: "string", default: "60" },
    runs: { type: "string", default: "50" },
  },
});
const spec = getPreset(values.preset!);
const rows = Number(values.rows);
const context = Number(values.context);
const runs = Number(values.runs);
const target = buildTarget(spec);
const draft = buildDraft(target, defaultDraftSpec("truncated-mirror"));
const width = kvDim(spec);

/** One node: the floor of any run on the EP (input and output copies of a few bytes, dispatch, sync). */
function oneNodeGraph(): Uint8Array {
  const g = new GraphBuilder("float32");
  const x = g.input("x", "float32", [rows, 8]);
  g.op("Add", [x, g.scalar(1)], {}, "y");
  g.output("y", "float32", [rows, 8]);
  return g.toBytes("one_node");
}

function feedsFor(session: ort.InferenceSession, layers: number): Record<string, ort.Tensor> {
  const mask = new Float32Array(rows * (context + rows));
  for (let r = 0; r < rows; r++) for (let s = r + 1; s < rows; s++) mask[r * (context + rows) + context + s] = -1e9;
  const feeds: Record<string, ort.Tensor> = {
    tokens: new ort.Tensor(
      "int64",
      BigInt64Array.from({ length: rows }, (_, r) => BigInt(5 + r)),
      [rows],
    ),
    positions: new ort.Tensor(
      "int64",
      BigInt64Array.from({ length: rows }, (_, r) => BigInt(context + r)),
      [rows],
    ),
    k_cache: new ort.Tensor("float32", new Float32Array(layers * context * width).fill(0.01), [layers, context, width]),
    v_cache: new ort.Tensor("float32", new Float32Array(layers * context * width).fill(0.02), [layers, context, width]),
    ctx_slots: new ort.Tensor(
      "int64",
      BigInt64Array.from({ length: context }, (_, c) => BigInt(c)),
      [context],
    ),
    mask: new ort.Tensor("float32", mask, [rows, context + rows]),
  };
  if (session.inputNames.includes("hidden_in"))
    feeds.hidden_in = new ort.Tensor("float32", new Float32Array(rows * spec.hidden), [rows, spec.hidden]);
  return feeds;
}

const options = (ep: string, profile?: string): ort.InferenceSession.SessionOptions => ({
  executionProviders: [ep],
  intraOpNumThreads: 1,
  interOpNumThreads: 1,
  executionMode: "sequential",
  graphOptimizationLevel: "basic",
  logSeverityLevel: 3,
  ...(profile ? { enableProfiling: true, profileFilePrefix: profile } : {}),
});

async function wallMs(session: ort.InferenceSession, feeds: Record<string, ort.Tensor>, fetches: string[]) {
  for (let i = 0; i < 5; i++) await session.run(feeds, fetches);
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await session.run(feeds, fetches);
    times.push(performance.now() - start);
  }
  return median(times);
}

interface ProfileEvent {
  cat: string;
  name: string;
  dur: number;
  args?: { op_name?: string; provider?: string };
}

const summary: string[][] = [];
const opRows: string[][] = [];
const errors: string[] = [];
for (const ep of values.ep!) {
  // An EP that fails (the WebGPU EP's one-node run once failed to download its output on an H100) is reported
  // and the others still measured.
  try {
    await profileOn(ep);
  } catch (error) {
    errors.push(`${ep}: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`);
    console.log(errors[errors.length - 1]);
  }
}

async function profileOn(ep: string): Promise<void> {
  const oneNode = await ort.InferenceSession.create(oneNodeGraph(), options(ep));
  const floor = await wallMs(oneNode, { x: new ort.Tensor("float32", new Float32Array(rows * 8), [rows, 8]) }, ["y"]);
  await oneNode.release();
  for (const [name, graph] of [
    ["target", target.graph],
    ["truncated mirror", draft.graphs[0]],
  ] as const) {
    const session = await ort.InferenceSession.create(graph.bytes, options(ep));
    const feeds = feedsFor(session, graph.layers);
    const all = await wallMs(session, feeds, ENGINE_OUTPUTS);
    const one = await wallMs(session, feeds, ["log_normalizer"]);
    await session.release();
    // ORT writes <prefix>_<timestamp>.json; the binding does not return the name.
    const base = `specconf-profile-${process.pid}-${ep}-${graph.layers}`;
    const profiled = await ort.InferenceSession.create(graph.bytes, options(ep, `/tmp/${base}`));
    for (let i = 0; i < runs; i++) await profiled.run(feeds, ENGINE_OUTPUTS);
    profiled.endProfiling();
    await profiled.release();
    const found = readdirSync("/tmp").find((f) => f.startsWith(base) && f.endsWith(".json"));
    const file = found && `/tmp/${found}`;
    let modelRun = NaN;
    let kernels = NaN;
    let nodes = NaN;
    if (typeof file === "string") {
      const events = JSON.parse(readFileSync(file, "utf8")) as ProfileEvent[];
      rmSync(file, { force: true });
      // Node events precede their run's model_run event: split them per run, drop the first 5 runs (warm-up).
      const perRun: { modelRun: number; kernels: number; nodes: number; byOp: Map<string, number> }[] = [];
      let current = { kernels: 0, nodes: 0, byOp: new Map<string, number>() };
      for (const e of events) {
        if (e.cat === "Node" && e.name.endsWith("_kernel_time")) {
          const op = `${e.args?.op_name ?? "?"} (${e.args?.provider ?? "?"})`;
          current.kernels += e.dur / 1000;
          current.nodes += 1;
          current.byOp.set(op, (current.byOp.get(op) ?? 0) + e.dur / 1000);
        } else if (e.cat === "Session" && e.name === "model_run") {
          perRun.push({ modelRun: e.dur / 1000, ...current });
          current = { kernels: 0, nodes: 0, byOp: new Map() };
        }
      }
      const measured = perRun.slice(5);
      modelRun = median(measured.map((run) => run.modelRun));
      kernels = median(measured.map((run) => run.kernels));
      nodes = median(measured.map((run) => run.nodes));
      const ops = [...(measured[0]?.byOp.keys() ?? [])].map((op): [string, number] => [
        op,
        median(measured.map((run) => run.byOp.get(op) ?? 0)),
      ]);
      for (const [op, ms] of ops.sort((a, b) => b[1] - a[1]).slice(0, 6)) opRows.push([ep, name, op, ms.toFixed(3)]);
    }
    summary.push([
      ep,
      name,
      String(graph.layers),
      all.toFixed(3),
      one.toFixed(3),
      modelRun.toFixed(3),
      kernels.toFixed(3),
      nodes.toFixed(0),
      floor.toFixed(3),
    ]);
    console.log(summary[summary.length - 1].join("  "));
  }
}
console.log(`\n${spec.name}: ${rows} rows, ${context} context rows, median of ${runs} runs, ms`);
console.log(
  table(
    [
      "EP",
      "graph",
      "layers",
      "run (engine outputs)",
      "run (1 output)",
      "ORT model_run",
      "node kernels",
      "nodes",
      "1-node graph",
    ],
    summary,
  ),
);
console.log("\nCostliest op types per run (ORT profile), ms:");
console.log(table(["EP", "graph", "op (provider)", "ms per run"], opRows));
if (errors.length > 0) console.log(`\nFailed: ${errors.join("; ")}`);
