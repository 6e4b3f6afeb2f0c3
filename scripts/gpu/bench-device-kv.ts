// Device-resident KV on the WebGPU EP (issue 23, item 5): what a forward of the `large` target costs when the
// whole KV pool travels host -> device every run (the engine today: onnxruntime-node has no IO binding for
// CUDA, so every input is copied) against a pool that stays on the GPU: the graph scatters its new K/V rows
// into the pool itself (ScatterND, one extra node per pool) and returns the pool as a 'gpu-buffer' output
// (preferredOutputLocation), which the next run takes back as its input. Measured side by side, interleaved
// per repetition, for decode (1 row) and verify-sized (S + 1 rows) forwards and two pool sizes; the host path
// is also run on the other EPs asked for. The pool update is checked: after the runs, the device pool is read
// back once and must equal the host pool bit for bit.
//
//   npx tsx scripts/gpu/bench-device-kv.ts [--ep webgpu --ep cuda] [--preset large] [--steps 64] [--reps 3]
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { parseArgs } from "node:util";
import { ModelProtoSchema, NodeProtoSchema, TensorProto_DataType, ValueInfoProtoSchema } from "onnx-buf";
import ort from "onnxruntime-node";
import { buildTarget } from "../../src/model/build.ts";
import { getPreset } from "../../src/model/presets.ts";
import { kvDim } from "../../src/model/spec.ts";
import { median, table } from "../bench-util.ts";

const { values } = parseArgs({
  options: {
    ep: { type: "string", multiple: true, default: ["webgpu"] },
    preset: { type: "string", default: "large" },
    steps: { type: "string", default: "32" },
    reps: { type: "string", default: "2" },
    rows: { type: "string", multiple: true, default: ["1", "4"] },
    slots: { type: "string", multiple: true, default: ["512", "4096"] },
  },
});
const spec = getPreset(values.preset!);
const buildStart = performance.now();
const target = buildTarget(spec);
console.log(`built ${spec.name} in ${((performance.now() - buildStart) / 1000).toFixed(1)} s`);
const layers = spec.layers;
const width = kvDim(spec);
const steps = Number(values.steps);

/** The target graph plus write_index [layers, T, 2] and k_pool / v_pool = ScatterND(cache, write_index, new). */
function withPoolUpdate(bytes: Uint8Array): Uint8Array {
  const model = fromBinary(ModelProtoSchema, bytes);
  const graph = model.graph!;
  const tensorType = (elemType: number, dims: (number | string)[]) => ({
    value: {
      case: "tensorType" as const,
      value: {
        elemType,
        shape: {
          dim: dims.map((d) =>
            typeof d === "number"
              ? { value: { case: "dimValue" as const, value: BigInt(d) } }
              : { value: { case: "dimParam" as const, value: d } },
          ),
        },
      },
    },
  });
  graph.input.push(
    create(ValueInfoProtoSchema, {
      name: "write_index",
      type: tensorType(TensorProto_DataType.INT64, [layers, "T", 2]),
    }),
  );
  for (const [cache, rows, pool] of [
    ["k_cache", "k_new", "k_pool"],
    ["v_cache", "v_new", "v_pool"],
  ]) {
    graph.node.push(
      create(NodeProtoSchema, { opType: "ScatterND", input: [cache, "write_index", rows], output: [pool] }),
    );
    graph.output.push(
      create(ValueInfoProtoSchema, { name: pool, type: tensorType(TensorProto_DataType.FLOAT, [layers, "S", width]) }),
    );
  }
  return toBinary(ModelProtoSchema, model);
}

interface Feeds {
  tokens: BigInt64Array;
  positions: BigInt64Array;
  ctxSlots: BigInt64Array;
  mask: Float32Array;
  writeIndex: BigInt64Array;
  slots: number[];
}

/** Forward `step` of a decode that has `context` positions in slots 0..context-1 and writes `rows` more. */
function feedsAt(context: number, rows: number): Feeds {
  const slots = Array.from({ length: rows }, (_, r) => context + r);
  const mask = new Float32Array(rows * (context + rows));
  for (let r = 0; r < rows; r++) for (let s = r + 1; s < rows; s++) mask[r * (context + rows) + context + s] = -1e9;
  const writeIndex = new BigInt64Array(layers * rows * 2);
  for (let l = 0; l < layers; l++)
    for (let r = 0; r < rows; r++) {
      writeIndex[(l * rows + r) * 2] = BigInt(l);
      writeIndex[(l * rows + r) * 2 + 1] = BigInt(slots[r]);
    }
  return {
    tokens: BigInt64Array.from(slots, (s) => BigInt(3 + ((s * 7919) % (spec.vocab - 3)))),
    positions: BigInt64Array.from(slots, BigInt),
    ctxSlots: BigInt64Array.from({ length: context }, (_, c) => BigInt(c)),
    mask,
    writeIndex,
    slots,
  };
}

const small = (f: Feeds) => ({
  tokens: new ort.Tensor("int64", f.tokens, [f.tokens.length]),
  positions: new ort.Tensor("int64", f.positions, [f.positions.length]),
  ctx_slots: new ort.Tensor("int64", f.ctxSlots, [f.ctxSlots.length]),
  mask: new ort.Tensor("float32", f.mask, [f.tokens.length, f.ctxSlots.length + f.tokens.length]),
});

const options = (ep: string): ort.InferenceSession.SessionOptions => ({
  executionProviders: [ep],
  intraOpNumThreads: 1,
  interOpNumThreads: 1,
  executionMode: "sequential",
  graphOptimizationLevel: "basic",
  logSeverityLevel: 3,
});

/** The engine's way: the pool is a host array fed whole; k_new / v_new come back and are written in JS. */
async function hostRun(session: ort.InferenceSession, slots: number, rows: number): Promise<Float32Array[]> {
  const keys = new Float32Array(layers * slots * width);
  const vals = new Float32Array(layers * slots * width);
  for (let step = 0; step < steps; step++) {
    const f = feedsAt(step * rows, rows);
    const out = await session.run(
      {
        ...small(f),
        k_cache: new ort.Tensor("float32", keys, [layers, slots, width]),
        v_cache: new ort.Tensor("float32", vals, [layers, slots, width]),
      },
      ["top_values", "top_indices", "log_normalizer", "k_new", "v_new"],
    );
    const kNew = out.k_new.data as Float32Array;
    const vNew = out.v_new.data as Float32Array;
    for (let l = 0; l < layers; l++)
      for (let r = 0; r < rows; r++) {
        const from = (l * rows + r) * width;
        const to = (l * slots + f.slots[r]) * width;
        keys.set(kNew.subarray(from, from + width), to);
        vals.set(vNew.subarray(from, from + width), to);
      }
  }
  return [keys, vals];
}

/** The pool stays on the GPU: each run's k_pool / v_pool (gpu-buffer) is the next run's k_cache / v_cache. */
async function deviceRun(session: ort.InferenceSession, slots: number, rows: number): Promise<Float32Array[]> {
  let kPool: ort.Tensor = new ort.Tensor("float32", new Float32Array(layers * slots * width), [layers, slots, width]);
  let vPool: ort.Tensor = new ort.Tensor("float32", new Float32Array(layers * slots * width), [layers, slots, width]);
  for (let step = 0; step < steps; step++) {
    const f = feedsAt(step * rows, rows);
    const out = await session.run(
      {
        ...small(f),
        k_cache: kPool,
        v_cache: vPool,
        write_index: new ort.Tensor("int64", f.writeIndex, [layers, rows, 2]),
      },
      ["top_values", "top_indices", "log_normalizer", "k_pool", "v_pool"],
    );
    if (step > 0 && kPool.location === "gpu-buffer") {
      kPool.dispose();
      vPool.dispose();
    }
    kPool = out.k_pool;
    vPool = out.v_pool;
  }
  const read = [(await kPool.getData(true)) as Float32Array, (await vPool.getData(true)) as Float32Array];
  return read;
}

const rows: (string | number)[][] = [];
for (const ep of values.ep!) {
  const plain = await ort.InferenceSession.create(target.graph.bytes, options(ep));
  // WebGPU: the pool stays in GPU buffers. CUDA: onnxruntime-node has no device output location for it, so
  // only the host path runs. CPU: the fed-back output (a check of the pooled graph, no transfer to save).
  const pooled =
    ep === "cuda"
      ? undefined
      : await ort.InferenceSession.create(withPoolUpdate(target.graph.bytes), {
          ...options(ep),
          ...(ep === "webgpu" ? { preferredOutputLocation: { k_pool: "gpu-buffer", v_pool: "gpu-buffer" } } : {}),
        });
  for (const slots of values.slots!.map(Number))
    for (const forwardRows of values.rows!.map(Number)) {
      if (steps * forwardRows > slots) continue;
      const host: number[] = [];
      const device: number[] = [];
      let same = "-";
      for (let rep = 0; rep < Number(values.reps); rep++) {
        let start = performance.now();
        const hostPool = await hostRun(plain, slots, forwardRows);
        host.push((performance.now() - start) / steps);
        if (!pooled) continue;
        start = performance.now();
        const devicePool = await deviceRun(pooled, slots, forwardRows);
        device.push((performance.now() - start) / steps);
        same = hostPool.every((pool, i) => pool.every((value, j) => value === devicePool[i][j])) ? "yes" : "NO";
      }
      const hostMs = median(host);
      const deviceMs = pooled ? median(device) : NaN;
      rows.push([
        ep,
        spec.name,
        slots,
        forwardRows,
        hostMs.toFixed(2),
        pooled ? deviceMs.toFixed(2) : "-",
        pooled ? `${(hostMs / deviceMs).toFixed(2)}x` : "-",
        same,
      ]);
      console.log(rows[rows.length - 1].join("  ")); // as measured: a time-boxed run keeps what it has
    }
  await plain.release();
  await pooled?.release();
}
console.log(
  `ms per forward, median of ${values.reps} repetitions of ${steps} forwards (${spec.name}: ${layers} layers, KV width ${width}, float32)`,
);
console.log(
  table(
    ["EP", "preset", "pool slots", "rows", "host pool ms", "device pool ms", "speedup", "pools equal"],
    rows.map((row) => row.map(String)),
  ),
);
