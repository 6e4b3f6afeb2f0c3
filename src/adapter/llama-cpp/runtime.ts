// The one place that starts llama.cpp (through node-llama-cpp) and fixes its numerics. The prebuilt CPU
// binary is loaded with nothing built or downloaded at run time (gpu false, build "never"). Contexts use an
// F32 KV cache and flash attention off: the defaults (F16 cache, flash "auto") move logits by up to 1e-2,
// far above the float32 tie epsilon; with these settings llama.cpp agrees with an independent float32
// forward to ~1e-5 (ECOSYSTEM.md). llama.cpp's own log lines go to stderr; stdout is the protocol's.
import {
  getLlama,
  getModuleVersion,
  LlamaLogLevel,
  type Llama,
  type LlamaContext,
  type LlamaModel,
} from "node-llama-cpp";

export interface RuntimeSettings {
  /** CPU threads per context (llama.cpp's n_threads). */
  threads: number;
  /** Models kept loaded (least recently used ones are disposed beyond this). */
  maxModels?: number;
  log?: (message: string) => void;
}

export class LlamaRuntime {
  private readonly models = new Map<string, Promise<LlamaModel>>();

  private constructor(
    readonly llama: Llama,
    readonly settings: RuntimeSettings,
    /** node-llama-cpp's own version. */
    readonly bindingVersion: string,
  ) {}

  static async start(settings: RuntimeSettings): Promise<LlamaRuntime> {
    const log = settings.log ?? ((message: string) => process.stderr.write(message));
    const llama = await getLlama({
      gpu: false,
      build: "never",
      usePrebuiltBinaries: true,
      progressLogs: false,
      logLevel: LlamaLogLevel.warn,
      logger: (level, message) => log(`llama.cpp [${level}] ${message.trimEnd()}\n`),
    });
    return new LlamaRuntime(llama, settings, await getModuleVersion());
  }

  /** "<llama.cpp release> (node-llama-cpp <version>, prebuilt cpu)": the hello's version, recorded in traces. */
  version(): string {
    const { release } = this.llama.llamaCppRelease;
    return `${release} (node-llama-cpp ${this.bindingVersion}, ${this.llama.buildType} ${this.llama.gpu || "cpu"})`;
  }

  /** Loads (once) the GGUF at `path`; the same path must always hold the same bytes (content-addressed). */
  model(path: string): Promise<LlamaModel> {
    let model = this.models.get(path);
    if (model) {
      this.models.delete(path);
      this.models.set(path, model); // most recently used last
      return model;
    }
    model = this.llama.loadModel({ modelPath: path, gpuLayers: 0, useMmap: true });
    this.models.set(path, model);
    model.catch(() => this.models.delete(path));
    const limit = this.settings.maxModels ?? 8;
    while (this.models.size > limit) {
      const [oldest, loading] = this.models.entries().next().value!;
      this.models.delete(oldest);
      void loading.then((loaded) => loaded.dispose()).catch(() => undefined);
    }
    return model;
  }

  /** A context of `sequences` sequences of `contextSize` tokens each, with the pinned numerics. */
  context(model: LlamaModel, sequences: number, contextSize: number): Promise<LlamaContext> {
    return model.createContext({
      sequences,
      contextSize,
      // One llama_decode per sequence batch as long as it fits: a request's first decode holds its prompt.
      batchSize: contextSize,
      flashAttention: false,
      experimentalKvCacheKeyType: "F32",
      experimentalKvCacheValueType: "F32",
      threads: this.settings.threads,
      ignoreMemorySafetyChecks: true,
      failedCreationRemedy: false,
    });
  }

  async dispose(): Promise<void> {
    for (const model of this.models.values()) await model.then((loaded) => loaded.dispose()).catch(() => undefined);
    this.models.clear();
    await this.llama.dispose();
  }
}
