// What every phase needs: config, models, pools, the recorder and the between-forwards hook.
import { contextLimitsOf, type ContextLimits } from "../case/context-limit.ts";
import type { ModelSpec } from "../model/spec.ts";
import type { ForwardFeeds, ForwardResult, ModelSession } from "../runtime/ort.ts";
import { identityMap } from "./draft-vocabulary.ts";
import { GraphReplay } from "./graph-replay.ts";
import type { EngineConfig } from "../case/engine-config.ts";
import type { Faults } from "../case/faults.ts";
import type { ForwardMemo } from "./forward-memo.ts";
import { forwardPlan, runForward, type ForwardOutput, type ForwardPlan } from "./forward.ts";
import { FutureRing, placeholderOf } from "./future-ring.ts";
import type { HiddenRows } from "./hidden-rows.ts";
import type { KvPool } from "./kv-pool.ts";
import { PaddedReplay, type ReplayOutput } from "./padded-replay.ts";
import type { PrefixCache } from "./prefix-cache.ts";
import { cachePrefix } from "./phases/prefix-hit.ts";
import type { PrefixHitRecord } from "../trace/run-result.ts";
import type { Request } from "./request.ts";
import type { TopK } from "./topk.ts";
import type { VerifyResult } from "../trace/schema.ts";
import type { LogprobEntry } from "../sampling/params.ts";
import type { TraceRecorder } from "./trace-recorder.ts";

/** Where drafts come from: a draft model (chain, tree, multi-layer) or prompt lookup (no model, no draft KV). */
export type Drafter = "model" | "ngram";

/** Overlap: outputs the device computed, processed (emitted, finish checked) once the next step is planned. */
export interface PendingResult {
  request: Request;
  /** Tokens to emit, before EOS, stop-id and max-new-tokens cuts. */
  candidates: number[];
  /** Each candidate's logprob entry (requests asking for logprobs). */
  logprobs?: (LogprobEntry | undefined)[];
  /** The verify result (speculative rounds): emitted and finished are filled when processed. */
  result?: VerifyResult;
  /** The producing forward. */
  event: number;
  /** The request's retract count when produced: a retract since discards it. */
  epoch: number;
  /** Stochastic requests: the stream's uniforms taken once this result was drawn. */
  drawsAfter?: number;
  /** Speculative rounds: the round's draft chain (the grammar matcher's fault site reads it). */
  draftChain?: number[];
}

export interface EngineSessions {
  target: ModelSession;
  /** Chain/tree drafting: one session. */
  draft?: ModelSession;
  /** Layers of the draft graph (sizes the draft KV pool). */
  draftLayers?: number;
  /** Multi-layer drafting: module k's session at index k. */
  draftModules?: ModelSession[];
  /** EAGLE-3 drafts: what the checkpoint's config and maps say (layer ids, draft vocabulary), as the engine read them. */
  eagle3?: Eagle3Feed;
  /** The draft is a standalone model over the tokens (model/spec.ts isStandaloneDraft): the draft-model path. */
  standaloneDraft?: boolean;
}

/** How an EAGLE-3 checkpoint is fed and what its draft ids mean. */
export interface Eagle3Feed {
  /** eagle_aux_hidden_state_layer_ids: id k names the input of target layer k (k = layers: the last output). */
  auxLayers: readonly number[];
  /** The target id of each draft id (d + d2t[d]); undefined when the checkpoint has no d2t. */
  draftToTarget: Int32Array;
}

export interface EnginePools {
  target: KvPool;
  draft?: KvPool;
  /** Multi-layer drafting: module k's own pool (and req_to_token table) at index k. */
  draftModules?: KvPool[];
}

export class EngineContext {
  step = 0;
  /** Forwards run so far in the current step (abort points are numbered by it). */
  forwardInStep = 0;
  private lastGap = "";
  graphReplay: GraphReplay | undefined;
  /** Padded graph replay: one per session (its graphs and shared static buffers). */
  readonly paddedReplays = new Map<ModelSession, PaddedReplay>();
  /** The accept kernel's persistent output buffer ([rows, S + 1]), as a device tensor would keep it between rounds. */
  readonly acceptBuffer: number[] = [];
  /** Overlap: the future-token ring, created with its first entry. */
  ring: FutureRing | undefined;
  /** The prefix cache (engine.prefixCache). */
  prefixCache: PrefixCache | undefined;
  /** Overlap: this step's outputs, processed at the start of the next step (after it is planned). */
  pending: PendingResult[] = [];
  /** The KV each prefix hit reused, as it was at the hit (engine internals for the prefix-cache draft KV law). */
  readonly prefixHits: PrefixHitRecord[] = [];

  constructor(
    readonly config: EngineConfig,
    readonly spec: ModelSpec,
    readonly sessions: EngineSessions,
    readonly pools: EnginePools,
    readonly faults: Faults,
    readonly recorder: TraceRecorder,
    /**
     * Runs before every forward: aborts and retracts happen here, between any two forwards. endOfStep: after the
     * step's last forward, for every point numbered forwardInStep or later (a schedule's "past the last forward").
     */
    private readonly betweenForwards: (step: number, forwardInStep: number, endOfStep?: boolean) => void,
    readonly drafter: Drafter = "model",
    /** Shared with the other runs of a case (forward-memo.ts); none: every forward runs. */
    readonly memo?: ForwardMemo,
  ) {}

  /** Speculative with prompt lookup: no draft model, no draft pool. */
  get ngram(): boolean {
    return this.config.mode === "speculative" && this.drafter === "ngram";
  }

  /** The target's and the draft's contexts (case/context-limit.ts); no draft model: the draft's is Infinity. */
  get contextLimits(): ContextLimits {
    return contextLimitsOf(this.config, this.spec, this.ngram ? { kind: "ngram" } : { kind: "mirror" });
  }

  get overlap(): boolean {
    return this.config.overlap === true;
  }

  get numSteps(): number {
    return this.config.numSteps;
  }

  get numDraftTokens(): number {
    return this.config.numDraftTokens;
  }

  draftSession(): ModelSession {
    if (!this.sessions.draft) throw new Error("speculative phase without a draft model");
    return this.sessions.draft;
  }

  /**
   * Graph replay mode without buckets: draft decode runs through buffers captured per exact batch shape
   * (created with the first such forward). With buckets, padded replay takes every decode-side forward.
   */
  draftDecodeRunner(): ((feeds: ForwardFeeds) => Promise<ReplayOutput>) | undefined {
    if (!this.config.graphReplay || this.config.graphBuckets) return undefined;
    this.graphReplay ??= new GraphReplay(this.draftSession(), this.faults, this.spec.hidden);
    const replay = this.graphReplay;
    return (feeds) => replay.run(feeds);
  }

  draftPool(): KvPool {
    if (!this.pools.draft) throw new Error("speculative phase without a draft pool");
    return this.pools.draft;
  }

  /** Snapshot of how often each request was retracted, taken when a phase starts. */
  epochs(requests: readonly Request[]): ReadonlyMap<Request, number> {
    return new Map(requests.map((request) => [request, request.retracts]));
  }

  /**
   * Gives the workload its chance to abort or retract, then keeps the requests still active and not
   * retracted since `epochs` was taken (a retracted request re-prefills; it leaves the phase it was in).
   */
  checkpoint(requests: readonly Request[], epochs: ReadonlyMap<Request, number>): Request[] {
    // One abort point per gap between forwards, however many phases look at it.
    const gap = `${this.step}:${this.forwardInStep}`;
    if (gap !== this.lastGap) {
      this.lastGap = gap;
      this.betweenForwards(this.step, this.forwardInStep);
    }
    return requests.filter((request) => request.running && epochs.get(request) === request.retracts);
  }

  /**
   * After the step's last forward: the points numbered from here on land now, however many forwards the step
   * ran (issue 25: an abort scheduled past a short step's last forward was never applied). Points at this gap
   * that a phase's checkpoint already gave their turn are not given it twice.
   */
  endOfStep(): void {
    const gap = `${this.step}:${this.forwardInStep}`;
    const from = gap === this.lastGap ? this.forwardInStep + 1 : this.forwardInStep;
    this.lastGap = gap;
    this.betweenForwards(this.step, from, true);
  }

  async forward(plan: ForwardPlan): Promise<ForwardOutput> {
    this.forwardInStep += 1;
    const padded = plan.replayable && !plan.runner && this.config.graphReplay && this.config.graphBuckets;
    const runnable = padded ? forwardPlan({ ...plan, runner: this.paddedRunner(plan.session) }) : plan;
    const { step, faults, recorder, memo } = this;
    const eagle3 = this.eagle3Forward;
    return runForward(
      { step, faults, recorder, vocab: this.spec.vocab, memo, ...(eagle3 ? { eagle3 } : {}) },
      runnable,
    );
  }

  private paddedRunner(session: ModelSession): NonNullable<ForwardPlan["runner"]> {
    let replay = this.paddedReplays.get(session);
    if (!replay) {
      replay = new PaddedReplay(session, this.faults, {
        buckets: this.config.graphBuckets!,
        poisonSeed: this.config.paddingPoisonSeed ?? 0,
        vocab: this.spec.vocab,
        maxPositions: this.spec.maxPositions,
        hiddenSize: this.spec.hidden,
      });
      this.paddedReplays.set(session, replay);
    }
    const runner = replay;
    return (feeds, writes) => runner.run(feeds, writes);
  }

  // --- overlap: the future ring ---

  /**
   * Mutates: gives the request a ring entry for this step's outputs (what the next launch resolves), as the
   * plan of this step is made. No-op without overlap.
   */
  allocateFuture(request: Request, expects: { token: boolean; draft: boolean }, running: number): void {
    if (!this.overlap) return;
    this.ring ??= new FutureRing(running, this.faults.has("future-ring-wrap"));
    request.futureEntry = this.ring.allocate(request.id, expects);
    request.plannedFrom = request.futureEntry;
    request.plannedExpects = expects;
  }

  /** Mutates: a producing forward stores the request's next root token in its ring entry. */
  publishToken(request: Request, token: number, event: number): void {
    if (!this.ring || request.futureEntry === undefined) return;
    this.ring.writeToken(request.futureEntry, request.id, token);
    this.recorder.future(event, { placeholder: placeholderOf(request.futureEntry), request: request.id, token });
  }

  /** Mutates: a draft extend stores the request's next draft root in its ring entry. */
  publishDraft(request: Request, root: TopK, hidden: HiddenRows, event: number): void {
    if (!this.ring || request.futureEntry === undefined) return;
    this.ring.writeDraft(request.futureEntry, request.id, root, hidden);
    this.recorder.future(event, {
      placeholder: placeholderOf(request.futureEntry),
      request: request.id,
      draft: [...root.tokens],
    });
  }

  /**
   * Mutates: launch resolves each request's placeholders from its ring entry (the previous step's outputs)
   * and releases the entry. Requests whose inputs were known when planned read their own state.
   */
  resolveLaunch(requests: readonly Request[]): void {
    for (const request of requests) {
      request.launch = undefined;
      const index = request.plannedFrom;
      if (!this.ring || index === undefined) continue;
      const entry = this.ring.read(index);
      const expects = request.plannedExpects ?? { token: false, draft: false };
      const placeholder = placeholderOf(index);
      request.launch = {
        ...(expects.token ? { token: entry?.token ?? placeholder, tokenPlaceholder: placeholder } : {}),
        ...(expects.draft
          ? {
              draftRoot: entry?.draftRoot ?? request.draftRoot,
              draftHidden: entry?.draftHidden ?? request.draftHidden,
              draftPlaceholder: placeholder,
            }
          : {}),
      };
      this.ring.release(index);
      request.plannedFrom = undefined;
    }
  }

  /** EAGLE-3: aux_in's width and the draft-to-target map the engine drafts with. */
  private get eagle3Forward(): { auxWidth: number; draftToTarget: Int32Array } | undefined {
    const feed = this.sessions.eagle3;
    if (!feed) return undefined;
    this.eagle3Map ??= this.faults.has("eagle3-d2t-missing")
      ? identityMap(feed.draftToTarget.length) // the checkpoint's d2t not loaded: draft id d read as target id d
      : feed.draftToTarget;
    return { auxWidth: feed.auxLayers.length * this.spec.hidden, draftToTarget: this.eagle3Map };
  }

  private eagle3Map: Int32Array | undefined;

  /** Every draft-side pool: the chain/tree draft pool or the multi-layer modules' pools. */
  draftPools(): KvPool[] {
    return [...(this.pools.draft ? [this.pools.draft] : []), ...(this.pools.draftModules ?? [])];
  }

  modulePool(module: number): KvPool {
    const pool = this.pools.draftModules?.[module];
    if (!pool) throw new Error(`no pool for draft module ${module}`);
    return pool;
  }

  moduleSession(module: number): ModelSession {
    const session = this.sessions.draftModules?.[module];
    if (!session) throw new Error(`no session for draft module ${module}`);
    return session;
  }

  /**
   * Frees everything a request holds in every pool. A request that finished (EOS or length) first leaves its
   * whole sequence's pages to the prefix cache, as SGLang's cache_finished_req does. Mutates the pools.
   */
  releaseRequest(request: Request): void {
    if (this.prefixCache && request.status === "finished" && request.finishReason !== "abort")
      cachePrefix(this, request);
    this.pools.target.freeRequest(request.id);
    for (const pool of this.draftPools()) pool.freeRequest(request.id);
  }
}
