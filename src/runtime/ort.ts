// The only module that imports onnxruntime-node. Sessions are created with pinned threads and graph
// optimization level so that runs repeat bit for bit; what was pinned is recorded in every trace.
//
// Forwards go straight to onnxruntime-node's native session (dist/binding.js, typed in its binding.d.ts:
// "a simple synchronized inference session object wrap"), which the public InferenceSession wraps in a
// setImmediate, a promise, argument validation and a second Tensor per output. The engine runs tens of
// thousands of forwards of a few dozen microseconds each, so that wrapping cost ~10% of a law check
// (measured side by side, scripts/bench-laws.ts). What the public API adds on creation is kept: the EP is
// checked against the providers the binary lists, options are passed unchanged. Because the native run
// never yields, run() yields to the event loop itself every YIELD_MS so signals and progress stay live.
import { createRequire } from "node:module";
import ort from "onnxruntime-node";
import { BadInputError } from "../errors/bad-input.ts";
import { ContextGather } from "./context-gather.ts";
import type { Dtype } from "../model/spec.ts";

// ORT's own logger would print a multi-line native error (for example for a missing provider) before
// ours; every failure is rethrown as a RuntimeError with the reason, so only fatal lines are kept.
ort.env.logLevel = "fatal";

export type ExecutionProvider = "cpu" | "cuda" | "webgpu";
export const EXECUTION_PROVIDERS: readonly ExecutionProvider[] = ["cpu", "cuda", "webgpu"];
export type GraphOptimizationLevel = "disabled" | "basic" | "extended" | "all";

export interface RuntimeOptions {
  ep: ExecutionProvider;
  /** intraOpNumThreads; inter-op parallelism is off (sequential execution). */
  threads: number;
  graphOptimizationLevel: GraphOptimizationLevel;
  /** Feed the gathered context on the CPU EP too (gathersContext): the GPU EPs' feed, run where CI runs. */
  gatherContext?: boolean;
}

export const DEFAULT_RUNTIME: RuntimeOptions = { ep: "cpu", threads: 1, graphOptimizationLevel: "basic" };

/** Recorded in traces and golden files. */
export interface RuntimeInfo extends RuntimeOptions {
  ortVersion: string;
}

export function runtimeInfo(options: RuntimeOptions): RuntimeInfo {
  return { ortVersion: ort.env.versions.common ?? "unknown", ...options };
}

export type FloatArray = Float32Array | Float64Array;

export interface ForwardFeeds {
  tokens: BigInt64Array;
  positions: BigInt64Array;
  /** Draft graphs only: [T, hidden]. */
  hiddenIn?: FloatArray;
  /** EAGLE-3 drafts only: [T, auxLayers * hidden], the target's auxiliary states (zeros on draft-decode rows). */
  auxIn?: FloatArray;
  /** The pool, [layers, slots, kvDim]; only the ctxSlots rows reach the graph (context-gather.ts). */
  kCache: FloatArray;
  vCache: FloatArray;
  cacheDims: readonly [number, number, number];
  /** [C] pool slots the batch attends to, in mask column order. */
  ctxSlots: BigInt64Array;
  /** [T, C + T] additive. */
  mask: FloatArray;
  /** Hybrid models: [Z, W] initial recurrent states and [T] each row's source (model/mamba2-graph.ts). */
  recInit?: FloatArray;
  recSrc?: BigInt64Array;
  /** Also copy the full [T, V] logits back (tests and exports); the engine needs only the top-K. */
  withLogits?: boolean;
}

export interface ForwardResult {
  /** [T, vocab]: present only when asked for with withLogits. */
  logits?: FloatArray;
  /** [T, topK] best logits per row, descending (ties to the lower token id), and their token ids. */
  topValues: FloatArray;
  topIndices: BigInt64Array;
  topK: number;
  /** [T]: log(sum(exp(logits))) per row, for log-softmax scores. */
  logNormalizer: FloatArray;
  hidden: FloatArray; // [T, hidden]
  kNew: FloatArray; // [layers, T, kvDim]
  vNew: FloatArray;
  /** Targets built for EAGLE-3 drafts: [layers + 1, T, hidden], the residual stream before each layer and after the last. */
  layerHidden?: FloatArray;
  /** Hybrid models: [T, W], every row's recurrent state after it. */
  recOut?: FloatArray;
}

/**
 * A forward's outputs with every field present, in one order (absent ones undefined): results built from ORT's
 * outputs, the memo's copies, padded replay's slices and EAGLE-3's mapped ids share one shape, so the code
 * reading them stays monomorphic.
 */
export function forwardResult(fields: ForwardResult): ForwardResult {
  return {
    logits: fields.logits,
    topValues: fields.topValues,
    topIndices: fields.topIndices,
    topK: fields.topK,
    logNormalizer: fields.logNormalizer,
    hidden: fields.hidden,
    kNew: fields.kNew,
    vNew: fields.vNew,
    layerHidden: fields.layerHidden,
    recOut: fields.recOut,
  };
}

/**
 * A forward returned a non-finite number (an EP computing outside its range: issue 23's WebGPU normalizer).
 * Thrown before anything reads the outputs, so no trace row, oracle value or law ever holds one (JSON cannot,
 * and a NaN compares false, which would let a law hold vacuously). `where` is what the caller adds (the
 * engine's step, phase and request).
 */
export class NonFiniteOutputError extends Error {
  constructor(
    readonly output: string,
    readonly row: number,
    readonly value: number,
    readonly ep: ExecutionProvider,
    readonly where?: string,
  ) {
    super(`${where ? `${where}: ` : ""}output ${output} of row ${row} is ${value} on EP '${ep}'`);
    this.name = "NonFiniteOutputError";
  }
}

/** The first non-finite value of the outputs every reader uses (top-K, normalizer, hidden), as an error. */
export function nonFiniteOutput(
  result: ForwardResult,
  hiddenSize: number,
  ep: ExecutionProvider,
): NonFiniteOutputError | undefined {
  const fields: [string, FloatArray, number][] = [
    ["top_values", result.topValues, result.topK],
    ["log_normalizer", result.logNormalizer, 1],
    ["hidden", result.hidden, hiddenSize],
  ];
  for (const [output, values, width] of fields)
    for (let i = 0; i < values.length; i++)
      if (!Number.isFinite(values[i])) return new NonFiniteOutputError(output, Math.floor(i / width), values[i], ep);
  return undefined;
}

/** What the engine fetches from every forward (benchmarks replay raw runs with the same list). */
export const ENGINE_OUTPUTS = ["top_values", "top_indices", "log_normalizer", "hidden", "k_new", "v_new"];

/** A session ONNX Runtime cannot create on this machine (a missing provider): bad input of --ep (exit 2). */
export class RuntimeError extends BadInputError {
  constructor(
    message: string,
    readonly ep: ExecutionProvider,
    override readonly cause?: unknown,
  ) {
    super(message, { flag: "--ep" }, { cause });
    this.name = "RuntimeError";
  }
}

/** Explains a missing GPU provider with the fix, instead of ORT's bare shared-library error. */
function providerHint(ep: ExecutionProvider): string {
  if (ep === "cuda") {
    return "the CUDA EP libraries are missing: run `npm run gpu:cuda12` (internet: onnxruntime-node's CUDA 12 provider), or copy the CUDA 13 provider .so files next to libonnxruntime.so.1 and set LD_LIBRARY_PATH (see docs/gpu.md)";
  }
  if (ep === "webgpu")
    return "the WebGPU EP needs a Vulkan loader (libvulkan1) and the GPU's ICD (VK_DRIVER_FILES); see docs/gpu.md";
  return "";
}

/** onnxruntime-node's native session (its dist/binding.d.ts). */
interface NativeSession {
  loadModel(
    buffer: ArrayBufferLike,
    byteOffset: number,
    byteLength: number,
    options: ort.InferenceSession.SessionOptions,
  ): void;
  readonly inputMetadata: readonly { name: string }[];
  readonly outputMetadata: readonly { name: string }[];
  run(
    feeds: Record<string, ort.Tensor>,
    fetches: Record<string, null>,
    options: ort.InferenceSession.RunOptions,
  ): Record<string, ort.Tensor>;
  dispose(): void;
}

interface NativeBinding {
  binding: {
    InferenceSession: new () => NativeSession;
    listSupportedBackends(): { name: string }[];
  };
  /** Passes ort.env.logLevel and the Tensor constructor to the binding, once per process. */
  initOrt(): void;
}

const native = createRequire(import.meta.url)("onnxruntime-node/dist/binding.js") as NativeBinding;

/** A long synchronous stretch of forwards gives the event loop (signals, progress, timers) a turn this often. */
const YIELD_MS = 20;
let lastYield = performance.now();

async function yieldNowAndThen(): Promise<void> {
  const now = performance.now();
  if (now - lastYield < YIELD_MS) return;
  lastYield = now;
  await new Promise<void>((resolve) => setImmediate(resolve));
  lastYield = performance.now();
}

export class ModelSession {
  /** The fetch list per output set, built once (the binding reads its keys). */
  private readonly fetchesFor = new Map<string, Record<string, null>>();
  /** The context K/V rows of the forward being built (only they are fed, not the pool). */
  private readonly contextGather = new ContextGather();

  private constructor(
    private readonly session: NativeSession,
    readonly dtype: Dtype,
    readonly hiddenSize: number,
    readonly hasHiddenInput: boolean,
    readonly ep: ExecutionProvider,
    /** EAGLE-3 drafts: the graph takes aux_in. */
    readonly hasAuxInput: boolean,
    /** Targets built for EAGLE-3 drafts: the graph outputs layer_hidden. */
    readonly hasLayerStreams: boolean,
    /**
     * Sliding-window attention: the window of the graph's windowed layers, as its builder says (the graph reads
     * OUTSIDE_WINDOW mask columns as attended by its full layers only: model/window.ts). Undefined: none.
     */
    readonly window: number | undefined,
    /**
     * Hybrid models: the graph takes rec_init/rec_src and returns rec_out; `initial` is a request's state before
     * its first row (zeros for a target; a mirror's is the state after the prefix it skips). Undefined: none.
     */
    readonly recurrent: { width: number; initial: Float64Array } | undefined,
    /** RuntimeOptions.gatherContext: gather on the CPU EP too. */
    private readonly gatherOnCpu: boolean,
  ) {}

  static async create(
    bytes: Uint8Array,
    dtype: Dtype,
    hiddenSize: number,
    options: RuntimeOptions,
    window?: number,
    recurrentInitial?: Float64Array,
  ): Promise<ModelSession> {
    if (options.ep === "webgpu" && dtype === "float64") {
      throw new RuntimeError(
        "the WebGPU EP has no float64 kernels: use a float32 model spec with --ep webgpu",
        options.ep,
      );
    }
    if (options.ep === "cuda") {
      // cuBLAS and cuDNN use TF32 (a 10-bit mantissa) for float32 matmuls on Ampere and later by default,
      // moving logits by ~1e-3 relative: beyond the float32 tolerances. onnxruntime-node exposes no
      // use_tf32 option, so pin it off process-wide (a user may still override it explicitly).
      process.env.NVIDIA_TF32_OVERRIDE ??= "0";
    }
    try {
      native.initOrt();
      // As InferenceSession.create: a provider the binary does not list cannot be used.
      const available = native.binding.listSupportedBackends().map((backend) => backend.name);
      if (!available.includes(options.ep))
        throw new Error(`no available backend found: '${options.ep}' is not among ${available.join(", ")}`);
      const session = new native.binding.InferenceSession();
      session.loadModel(bytes.buffer, bytes.byteOffset, bytes.byteLength, {
        executionProviders: [options.ep],
        intraOpNumThreads: options.threads,
        interOpNumThreads: 1,
        executionMode: "sequential",
        graphOptimizationLevel: options.graphOptimizationLevel,
        logSeverityLevel: 3,
      });
      const inputNames = session.inputMetadata.map((input) => input.name);
      const outputNames = session.outputMetadata.map((output) => output.name);
      return new ModelSession(
        session,
        dtype,
        hiddenSize,
        inputNames.includes("hidden_in"),
        options.ep,
        inputNames.includes("aux_in"),
        outputNames.includes("layer_hidden"),
        window,
        inputNames.includes("rec_init")
          ? { width: recurrentInitial?.length ?? 0, initial: recurrentInitial ?? new Float64Array(0) }
          : undefined,
        options.gatherContext === true,
      );
    } catch (error) {
      const reason = error instanceof Error ? error.message.split("\n")[0] : String(error);
      const hint = providerHint(options.ep);
      throw new RuntimeError(
        `cannot create an ONNX Runtime session on EP '${options.ep}': ${hint || reason}${hint ? ` (${reason})` : ""}`,
        options.ep,
        error,
      );
    }
  }

  /**
   * Whether forwards on this EP are fed the context rows gathered on the host (context-gather.ts) instead of
   * the whole pool. Every EP but the CPU copies each input to its device on every run, so there the pool cost a
   * copy per forward. The CPU EP reads a host tensor in place: the pool costs nothing there, and gathering
   * would add a copy (+1 ms, ~10%, per `large` target forward, measured). Both feeds give the same bits
   * (test/runtime/context-gather.test.ts, and law context-gather invariance on the cases that set
   * `gatherContext`: the CPU EP then gathers too, so the GPU EPs' feed runs under the CPU check). Read on every
   * forward, so a test can switch it.
   */
  static gathersContext(ep: ExecutionProvider, gatherContext = false): boolean {
    return ep !== "cpu" || gatherContext;
  }

  /**
   * The ort.Tensors run() passes for these feeds: the arrays wrapped without copies, except the context K/V on
   * EPs that gather it (gathersContext): k_cache / v_cache are then the context rows and ctx_slots 0..C-1, so
   * the graph computes the same values, and those two tensors view this session's gather buffers and hold
   * until its next tensorsFor.
   */
  tensorsFor(feeds: ForwardFeeds): Record<string, ort.Tensor> {
    const rows = feeds.tokens.length;
    const floatType = this.dtype === "float32" ? "float32" : "float64";
    const context = ModelSession.gathersContext(this.ep, this.gatherOnCpu)
      ? this.contextGather.gather(feeds.kCache, feeds.vCache, feeds.cacheDims, feeds.ctxSlots)
      : { keys: feeds.kCache, values: feeds.vCache, dims: feeds.cacheDims, slots: feeds.ctxSlots };
    const inputs: Record<string, ort.Tensor> = {
      tokens: new ort.Tensor("int64", feeds.tokens, [rows]),
      positions: new ort.Tensor("int64", feeds.positions, [rows]),
      k_cache: new ort.Tensor(floatType, context.keys, [...context.dims]),
      v_cache: new ort.Tensor(floatType, context.values, [...context.dims]),
      ctx_slots: new ort.Tensor("int64", context.slots, [context.slots.length]),
      mask: new ort.Tensor(floatType, feeds.mask, [rows, feeds.ctxSlots.length + rows]),
    };
    if (this.hasHiddenInput) {
      if (!feeds.hiddenIn) throw new Error("draft forward without hidden_in");
      inputs.hidden_in = new ort.Tensor(floatType, feeds.hiddenIn, [rows, this.hiddenSize]);
    }
    if (this.hasAuxInput) {
      if (!feeds.auxIn) throw new Error("EAGLE-3 draft forward without aux_in");
      inputs.aux_in = new ort.Tensor(floatType, feeds.auxIn, [rows, rows > 0 ? feeds.auxIn.length / rows : 0]);
    }
    if (this.recurrent) {
      if (!feeds.recInit || !feeds.recSrc) throw new Error("hybrid forward without rec_init and rec_src");
      const width = this.recurrent.width;
      inputs.rec_init = new ort.Tensor(floatType, feeds.recInit, [feeds.recInit.length / width, width]);
      inputs.rec_src = new ort.Tensor("int64", feeds.recSrc, [rows]);
    }
    return inputs;
  }

  /** The outputs run() fetches: the engine's, layer_hidden where the graph has it, logits when asked. */
  outputsFor(feeds: ForwardFeeds): string[] {
    return [
      ...ENGINE_OUTPUTS,
      ...(this.hasLayerStreams ? ["layer_hidden"] : []),
      ...(this.recurrent ? ["rec_out"] : []),
      ...(feeds.withLogits ? ["logits"] : []),
    ];
  }

  /** The native run on prepared tensors, synchronous (benchmarks replay raw calls with it). */
  runTensors(inputs: Record<string, ort.Tensor>, outputs: readonly string[]): Record<string, ort.Tensor> {
    const key = outputs.join(",");
    let fetches = this.fetchesFor.get(key);
    if (!fetches) this.fetchesFor.set(key, (fetches = Object.fromEntries(outputs.map((name) => [name, null]))));
    return this.session.run(inputs, fetches, {});
  }

  async run(feeds: ForwardFeeds): Promise<ForwardResult> {
    await yieldNowAndThen();
    const out = this.runTensors(this.tensorsFor(feeds), this.outputsFor(feeds));
    const result = forwardResult({
      logits: feeds.withLogits ? (out.logits.data as FloatArray) : undefined,
      topValues: out.top_values.data as FloatArray,
      topIndices: out.top_indices.data as BigInt64Array,
      topK: out.top_values.dims[1],
      logNormalizer: out.log_normalizer.data as FloatArray,
      hidden: out.hidden.data as FloatArray,
      kNew: out.k_new.data as FloatArray,
      vNew: out.v_new.data as FloatArray,
      layerHidden: this.hasLayerStreams ? (out.layer_hidden.data as FloatArray) : undefined,
      recOut: this.recurrent ? (out.rec_out.data as FloatArray) : undefined,
    });
    const nonFinite = nonFiniteOutput(result, this.hiddenSize, this.ep);
    if (nonFinite) throw nonFinite;
    return result;
  }

  async release(): Promise<void> {
    this.session.dispose();
  }
}

/** A tensor of a probe graph (runGraph): float32, float64 or int64 data with its dims. */
export interface ProbeTensor {
  data: FloatArray | BigInt64Array;
  dims: readonly number[];
}

/**
 * Runs a graph of any signature once on an EP, with the pinned options a ModelSession has: numerics probes
 * (a subgraph's behaviour per EP, in tests and scripts/gpu) that are not the engine's calling convention. A
 * provider this machine lacks is a RuntimeError, as for ModelSession.
 */
export async function runGraph(
  bytes: Uint8Array,
  options: RuntimeOptions,
  feeds: Record<string, ProbeTensor>,
  outputs: readonly string[],
): Promise<Record<string, ProbeTensor>> {
  if (options.ep === "cuda") process.env.NVIDIA_TF32_OVERRIDE ??= "0";
  let session: ort.InferenceSession;
  try {
    session = await ort.InferenceSession.create(bytes, {
      executionProviders: [options.ep],
      intraOpNumThreads: options.threads,
      interOpNumThreads: 1,
      executionMode: "sequential",
      graphOptimizationLevel: options.graphOptimizationLevel,
      logSeverityLevel: 3,
    });
  } catch (error) {
    const reason = error instanceof Error ? error.message.split("\n")[0] : String(error);
    throw new RuntimeError(`cannot create an ONNX Runtime session on EP '${options.ep}': ${reason}`, options.ep, error);
  }
  try {
    const tensors = Object.fromEntries(
      Object.entries(feeds).map(([name, tensor]) => [
        name,
        new ort.Tensor(
          tensor.data instanceof BigInt64Array ? "int64" : tensor.data instanceof Float64Array ? "float64" : "float32",
          tensor.data,
          [...tensor.dims],
        ),
      ]),
    );
    const out = await session.run(tensors, [...outputs]);
    return Object.fromEntries(
      outputs.map((name) => [name, { data: out[name].data as FloatArray | BigInt64Array, dims: out[name].dims }]),
    );
  } finally {
    await session.release();
  }
}
