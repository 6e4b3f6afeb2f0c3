// What every phase needs: config, models, pools, the recorder and the between-forwards hook.
import type { ModelSpec } from "../model/spec.ts";
import type { ForwardFeeds, ForwardResult, ModelSession } from "../runtime/ort.ts";
import { identityMap } from "./draft-vocabulary.ts";
import { GraphReplay } from "./graph-replay.ts";
import type { EngineConfig } from "./config.ts";
import type { Faults } from "./faults.ts";
import type { ForwardMemo } from "./forward-memo.ts";
import { runForward, type ForwardOutput, type ForwardPlan } from "./forward.ts";
import type { KvPool } from "./kv-pool.ts";
import type { Request } from "./request.ts";
import type { TraceRecorder } from "./trace-recorder.ts";

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
}

/** How an EAGLE-3 checkpoint is fed and what its draft ids mean. */
export interface Eagle3Feed {
  /** eagle_aux_hidden_state_layer_ids: each names a target layer whose output is captured. */
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

  constructor(
    readonly config: EngineConfig,
    readonly spec: ModelSpec,
    readonly sessions: EngineSessions,
    readonly pools: EnginePools,
    readonly faults: Faults,
    readonly recorder: TraceRecorder,
    /** Runs before every forward: aborts and retracts happen here, between any two forwards. */
    private readonly betweenForwards: (step: number, forwardInStep: number) => void,
    /** Shared with the other runs of a case (forward-memo.ts); none: every forward runs. */
    readonly memo?: ForwardMemo,
  ) {}

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

  /** Graph replay mode: draft decode runs through captured buffers (created with the first such forward). */
  draftDecodeRunner(): ((feeds: ForwardFeeds) => Promise<ForwardResult>) | undefined {
    if (!this.config.graphReplay) return undefined;
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
    return requests.filter((request) => request.active && epochs.get(request) === request.retracts);
  }

  async forward(plan: ForwardPlan): Promise<ForwardOutput> {
    this.forwardInStep += 1;
    const { step, faults, recorder, memo } = this;
    const eagle3 = this.eagle3Forward;
    return runForward({ step, faults, recorder, vocab: this.spec.vocab, memo, ...(eagle3 ? { eagle3 } : {}) }, plan);
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

  /** Frees everything a request holds in every pool. Mutates the pools. */
  releaseRequest(request: Request): void {
    this.pools.target.freeRequest(request.id);
    for (const pool of this.draftPools()) pool.freeRequest(request.id);
  }
}
