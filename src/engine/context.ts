// What every phase needs: config, models, pools, the recorder and the between-forwards hook.
import type { ModelSpec } from "../model/spec.ts";
import type { ModelSession } from "../runtime/ort.ts";
import type { EngineConfig } from "./config.ts";
import type { Faults } from "./faults.ts";
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
}

export interface EnginePools {
  target: KvPool;
  draft?: KvPool;
}

export class EngineContext {
  step = 0;
  /** Forwards run so far in the current step (abort points are numbered by it). */
  forwardInStep = 0;

  constructor(
    readonly config: EngineConfig,
    readonly spec: ModelSpec,
    readonly sessions: EngineSessions,
    readonly pools: EnginePools,
    readonly faults: Faults,
    readonly recorder: TraceRecorder,
    /** Runs before every forward: aborts and retracts happen here, between any two forwards. */
    private readonly betweenForwards: (step: number, forwardInStep: number) => void,
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

  draftPool(): KvPool {
    if (!this.pools.draft) throw new Error("speculative phase without a draft pool");
    return this.pools.draft;
  }

  /** Gives the workload its chance to abort, then keeps the requests still active. */
  checkpoint(requests: readonly Request[]): Request[] {
    this.betweenForwards(this.step, this.forwardInStep);
    return requests.filter((request) => request.active);
  }

  async forward(plan: ForwardPlan): Promise<ForwardOutput> {
    this.forwardInStep += 1;
    return runForward({ step: this.step, faults: this.faults, recorder: this.recorder, vocab: this.spec.vocab }, plan);
  }

  /** Frees everything a request holds in every pool. Mutates the pools. */
  releaseRequest(request: Request): void {
    this.pools.target.freeRequest(request.id);
    this.pools.draft?.freeRequest(request.id);
  }
}
