// The reference oracle the laws consult: cache-free target and draft recomputations, memoized per
// token sequence (several laws ask about the same request, and a case's run and its baseline usually
// share their sequences). Laws announce what they will ask for (prepare*), and the oracle computes it in a
// few packed forwards (reference/batched.ts) instead of one forward per request and per draft row; the
// one-at-a-time path (reference/cache-free.ts) stays selectable, as the baseline of that batching.
import type { LoadedModels } from "../case/models.ts";
import { sessionFor } from "../runtime/sessions.ts";
import { draftLogitScale, type ModelSpec } from "../model/spec.ts";
import type { ModelSession, RuntimeOptions } from "../runtime/ort.ts";
import {
  recomputeDraftRow,
  recomputeModuleRow,
  teacherForcedTarget,
  type DraftRowReference,
  type RowPrediction,
  type TeacherForcedTarget,
} from "./cache-free.ts";
import { draftKv, targetKv, type KvRows } from "./cache-free-kv.ts";
import { eagle3ReadingOf, type Eagle3Reading } from "./eagle3-reading.ts";
import { processTarget, type ProcessedTarget } from "./processed.ts";
import { needsLogits, type RequestSampling } from "../sampling/params.ts";
import { recomputeDraftRows, recomputeModuleRows, teacherForcedTargets } from "./batched.ts";
import type { TraceRequest } from "../trace/schema.ts";
import { epsilonFor } from "../trace/compare.ts";

/** How references are computed: packed forwards (default) or one forward per request and draft row. */
export type ReferenceBatching = "packed" | "per-row";

let defaultBatching: ReferenceBatching = "packed";

/** Selects how oracles created from now on compute (benchmarks compare both; tests prove them equal). */
export function setReferenceBatching(batching: ReferenceBatching): void {
  defaultBatching = batching;
}

export interface DraftRowRequest {
  sequence: readonly number[];
  rootPosition: number;
  pathTokens: readonly number[];
}

export interface ModuleRowRequest {
  sequence: readonly number[];
  module: number;
  lastAnchor: number;
  rootPosition: number;
  drafts: readonly number[];
}

export class ReferenceOracle {
  private readonly targetMemo = new Map<string, Promise<TeacherForcedTarget>>();
  private readonly processedMemo = new Map<string, Promise<ProcessedTarget>>();
  private readonly draftMemo = new Map<string, Promise<DraftRowReference>>();
  /** Draft rows already computed (what a packed batch can build on). */
  private readonly draftDone = new Map<string, DraftRowReference>();
  private readonly moduleMemo = new Map<string, Promise<RowPrediction>>();
  readonly epsilon: number;
  /** Draft ties and logit tolerances scale with the draft's logit scale (the mirror's 2^16). */
  readonly draftEpsilon: number;

  private constructor(
    readonly spec: ModelSpec,
    private readonly target: ModelSession,
    private readonly draft: ModelSession | undefined,
    private readonly modules: readonly ModelSession[],
    readonly draftLayers: number,
    runtime: RuntimeOptions,
    scale: number,
    readonly batching: ReferenceBatching,
    /** EAGLE-3 drafts: what the checkpoint's config and maps say (layer ids, norm_before_fc, d2t). */
    readonly eagle3?: Eagle3Reading,
  ) {
    this.epsilon = epsilonFor(spec.dtype, runtime.ep);
    this.draftEpsilon = this.epsilon * scale;
  }

  static async create(
    models: LoadedModels,
    runtime: RuntimeOptions,
    batching: ReferenceBatching = defaultBatching,
  ): Promise<ReferenceOracle> {
    const target = await sessionFor(
      models.target.graph.bytes,
      models.target.graph.digest,
      models.spec,
      runtime,
      models.target.graph.window,
      models.target.graph.recurrentInitial,
    );
    const graphs = models.draft?.graphs ?? [];
    const sessions = await Promise.all(
      graphs.map((graph) =>
        sessionFor(graph.bytes, graph.digest, models.spec, runtime, graph.window, graph.recurrentInitial),
      ),
    );
    const scale = models.draft ? draftLogitScale(models.draft.spec) : 1;
    return new ReferenceOracle(
      models.spec,
      target,
      sessions[0],
      sessions,
      graphs[0]?.layers ?? 0,
      runtime,
      scale,
      batching,
      eagle3ReadingOf(models.spec, models.draft),
    );
  }

  get hasDraft(): boolean {
    return this.draft !== undefined;
  }

  /**
   * Teacher-forced target over a verified sequence (prompt + output). With the request's sampling options,
   * the positions that sample output tokens predict from the processed logits (their argmax and margin).
   */
  targetOver(tokens: readonly number[], sampling?: RequestSampling): Promise<TeacherForcedTarget> {
    if (sampling && needsLogits(sampling.params)) return this.processedOver(tokens, sampling);
    const key = sequenceKey(tokens);
    let memo = this.targetMemo.get(key);
    if (!memo) {
      memo = teacherForcedTarget(this.target, this.spec, tokens);
      this.targetMemo.set(key, memo);
    }
    return memo;
  }

  /** The processed reference of a request with sampling options: predictions and every sampling row. */
  processedOver(tokens: readonly number[], sampling: RequestSampling): Promise<ProcessedTarget> {
    const key = `${sequenceKey(tokens)}|${sampling.promptLength}|${JSON.stringify(sampling.params)}`;
    let memo = this.processedMemo.get(key);
    if (!memo) {
      memo = teacherForcedTarget(this.target, this.spec, tokens, true).then((target) =>
        processTarget(target, sampling, this.spec.vocab, this.spec.eosId),
      );
      this.processedMemo.set(key, memo);
    }
    return memo;
  }

  /** Computes the targets of these sequences not computed yet, packed. */
  async prepareTargets(sequences: readonly (readonly number[])[]): Promise<void> {
    if (this.batching === "per-row") return;
    const missing = new Map<string, readonly number[]>();
    for (const tokens of sequences) {
      const key = sequenceKey(tokens);
      if (tokens.length > 0 && !this.targetMemo.has(key)) missing.set(key, tokens);
    }
    if (missing.size === 0) return;
    const batch = teacherForcedTargets(this.target, this.spec, [...missing.values()]);
    [...missing.keys()].forEach((key, i) =>
      this.targetMemo.set(
        key,
        batch.then((targets) => targets[i]),
      ),
    );
    await batch;
  }

  /**
   * The targets of every request's verified sequence (prompt + output) of a trace, packed: what the
   * single-run laws read. Each law asks for the whole trace's, so the batches do not depend on which laws
   * run or in which order.
   */
  async prepareRequests(requests: readonly TraceRequest[] | undefined): Promise<void> {
    await this.prepareTargets(
      (requests ?? [])
        .filter((request) => request.output.length > 0)
        .map((request) => [...request.prompt, ...request.output]),
    );
  }

  /**
   * A draft row recomputed without a cache: rooted at position L of `sequence` (x_L the bonus), at the
   * end of the draft path `pathTokens` ([] is the draft-extend row at anchor L - 1, which yields the
   * root's candidates). Memoized per path.
   */
  draftRow(
    sequence: readonly number[],
    rootPosition: number,
    pathTokens: readonly number[],
  ): Promise<DraftRowReference> {
    if (!this.draft) throw new Error("no draft model");
    const key = draftKey(sequence, rootPosition, pathTokens);
    let memo = this.draftMemo.get(key);
    if (!memo) {
      memo =
        this.batching === "packed"
          ? this.prepareDraftRows([{ sequence, rootPosition, pathTokens }]).then(() => this.draftDone.get(key)!)
          : this.perRowDraft(sequence, rootPosition, pathTokens);
      this.draftMemo.set(key, memo);
    }
    return memo;
  }

  /** One forward per row; the parents' rows first (their hidden outputs feed the row's path). */
  private async perRowDraft(
    sequence: readonly number[],
    rootPosition: number,
    pathTokens: readonly number[],
  ): Promise<DraftRowReference> {
    // By causality the whole sequence's forward holds every prefix's hidden states: one forward per request.
    const target = await this.targetOver(sequence);
    const pathHidden = [];
    for (let depth = 0; depth < pathTokens.length; depth++)
      pathHidden.push((await this.draftRow(sequence, rootPosition, pathTokens.slice(0, depth))).hidden);
    return recomputeDraftRow(
      this.draft!,
      this.spec,
      this.draftLayers,
      target,
      rootPosition,
      pathTokens,
      pathHidden,
      this.eagle3,
    );
  }

  /** Computes these draft rows and their ancestors not computed yet, one packed forward per depth. */
  async prepareDraftRows(requests: readonly DraftRowRequest[]): Promise<void> {
    if (this.batching === "per-row" || !this.draft) return;
    const pending = requests.filter(
      (request) => !this.draftDone.has(draftKey(request.sequence, request.rootPosition, request.pathTokens)),
    );
    if (pending.length === 0) return;
    await this.prepareTargets(pending.map((request) => request.sequence));
    const targets = await Promise.all(pending.map((request) => this.targetOver(request.sequence)));
    const computed = await recomputeDraftRows(
      this.draft,
      this.spec,
      this.draftLayers,
      pending.map((request, i) => ({ ...request, target: targets[i] })),
      (query) => this.draftDone.get(draftKey(query.target.tokens, query.rootPosition, query.pathTokens)),
      this.eagle3,
    );
    for (const { query, result } of computed) {
      const key = draftKey(query.target.tokens, query.rootPosition, query.pathTokens);
      this.draftDone.set(key, result);
      if (!this.draftMemo.has(key)) this.draftMemo.set(key, Promise.resolve(result));
    }
  }

  /**
   * Multi-layer: module k's row at lastAnchor recomputed without a cache, over the verified tokens up to
   * the round's root x_L followed by the round's drafts (none for a persisted extend row).
   */
  moduleRow(
    sequence: readonly number[],
    module: number,
    lastAnchor: number,
    rootPosition: number,
    drafts: readonly number[],
  ): Promise<RowPrediction> {
    const request = { sequence, module, lastAnchor, rootPosition, drafts };
    const key = moduleKey(request);
    if (this.batching === "packed" && !this.moduleMemo.has(key)) void this.prepareModuleRows([request]);
    let memo = this.moduleMemo.get(key);
    if (!memo) {
      memo = this.perRowModule(request);
      this.moduleMemo.set(key, memo);
    }
    return memo;
  }

  private async perRowModule(request: ModuleRowRequest): Promise<RowPrediction> {
    const { sequence, module, lastAnchor, rootPosition, drafts } = request;
    const session = this.modules[module];
    if (!session) throw new Error(`no draft module ${module}`);
    const target = await this.targetOver(sequence);
    return recomputeModuleRow(session, this.spec, this.draftLayers, target, module, lastAnchor, [
      ...sequence.slice(0, rootPosition + 1),
      ...drafts,
    ]);
  }

  /**
   * The K/V a pool's model writes for positions [0, length) of `tokens` without any cache: the target, the
   * chain/tree draft (module undefined), or multi-layer module k.
   */
  async kvRows(pool: "target" | "draft", tokens: readonly number[], length: number, module?: number): Promise<KvRows> {
    if (pool === "target") return targetKv(this.target, this.spec, tokens, length);
    const session = module === undefined ? this.draft : this.modules[module];
    if (!session) throw new Error(`no draft ${module === undefined ? "model" : `module ${module}`}`);
    return draftKv(session, this.spec, this.draftLayers, await this.targetOver(tokens), (module ?? 0) + 1, length);
  }

  /** Computes these module rows not computed yet, one packed forward per module. */
  async prepareModuleRows(requests: readonly ModuleRowRequest[]): Promise<void> {
    if (this.batching === "per-row") return;
    const pending = new Map<string, ModuleRowRequest>();
    for (const request of requests) {
      const key = moduleKey(request);
      if (!this.moduleMemo.has(key)) pending.set(key, request);
    }
    if (pending.size === 0) return;
    const list = [...pending.values()];
    // Memoized before the first await, so a row asked for meanwhile joins this batch.
    const batch = (async () => {
      await this.prepareTargets(list.map((request) => request.sequence));
      const targets = await Promise.all(list.map((request) => this.targetOver(request.sequence)));
      return recomputeModuleRows(
        this.modules,
        this.spec,
        this.draftLayers,
        list.map((request, i) => ({ ...request, target: targets[i] })),
      );
    })();
    [...pending.keys()].forEach((key, i) =>
      this.moduleMemo.set(
        key,
        batch.then((predictions) => predictions[i]),
      ),
    );
    await batch;
  }
}

/** A sequence's text key, computed once per array (laws ask about the same sequence array many times). */
const sequenceKeys = new WeakMap<readonly number[], string>();

function sequenceKey(sequence: readonly number[]): string {
  let key = sequenceKeys.get(sequence);
  if (key === undefined) sequenceKeys.set(sequence, (key = sequence.join(",")));
  return key;
}

function draftKey(sequence: readonly number[], rootPosition: number, pathTokens: readonly number[]): string {
  return `${sequenceKey(sequence)}|${rootPosition}|${pathTokens.join(",")}`;
}

function moduleKey(request: ModuleRowRequest): string {
  return `${sequenceKey(request.sequence)}|${request.module}|${request.lastAnchor}|${request.rootPosition}|${request.drafts.join(",")}`;
}
