// The step loop. A step: admit arrivals, one decode round for requests already decoding, then the
// step's prefill chunks. Aborts land between any two forwards through the context's checkpoint.
import type { ModelSpec } from "../model/spec.ts";
import type { EngineConfig } from "./config.ts";
import { EngineContext, type EngineSessions } from "./context.ts";
import { Faults } from "./faults.ts";
import { KvPool, type IntegrityViolation } from "./kv-pool.ts";
import { runSpeculativeRound, runTargetDecode } from "./phases/decode-round.ts";
import { runPrefill } from "./phases/prefill.ts";
import { Request, type RequestInit } from "./request.ts";
import { planPrefillChunks } from "./scheduler.ts";
import { TraceRecorder } from "./trace-recorder.ts";

export interface PoolCheck {
  step: number;
  pool: string;
  violations: IntegrityViolation[];
}

export interface EngineOptions {
  trace: boolean;
  /** Called before every forward (step, index of the forward within the step). */
  betweenForwards?: (engine: Engine, step: number, forwardInStep: number) => void;
}

export class Engine {
  readonly context: EngineContext;
  readonly requests = new Map<number, Request>();
  /** Integrity and accounting violations found after each step (KV conservation). */
  readonly poolChecks: PoolCheck[] = [];
  private readonly waiting: Request[] = [];

  constructor(config: EngineConfig, spec: ModelSpec, sessions: EngineSessions, options: EngineOptions) {
    const poolOf = (name: string, layers: number) =>
      new KvPool({ name, numSlots: config.poolSlots, pageSize: config.pageSize, layers, kvDim: spec.kvHeads * spec.headDim, dtype: spec.dtype });
    const speculative = config.mode === "speculative";
    const pools = { target: poolOf("target", spec.layers), draft: speculative ? poolOf("draft", sessions.draftLayers ?? 1) : undefined };
    this.context = new EngineContext(config, spec, sessions, pools, new Faults(config.faults), new TraceRecorder(options.trace), (step, forwardInStep) =>
      options.betweenForwards?.(this, step, forwardInStep),
    );
  }

  get step(): number {
    return this.context.step;
  }

  /** Mutates: queues a request; it is admitted before the step numbered arrivalStep. */
  addRequest(init: RequestInit): Request {
    if (this.requests.has(init.id)) throw new Error(`duplicate request id ${init.id}`);
    const request = new Request(init);
    this.requests.set(init.id, request);
    this.waiting.push(request);
    return request;
  }

  /** Mutates: aborts a waiting or active request, freeing every slot it holds in every pool. */
  abort(id: number): void {
    const request = this.requests.get(id);
    if (!request || request.status === "finished") return;
    const waitingIndex = this.waiting.indexOf(request);
    if (waitingIndex >= 0) this.waiting.splice(waitingIndex, 1);
    request.finish("abort");
    this.context.releaseRequest(request);
  }

  hasWork(): boolean {
    return this.waiting.length > 0 || [...this.requests.values()].some((request) => request.active);
  }

  async runStep(): Promise<void> {
    const context = this.context;
    context.forwardInStep = 0;
    for (const request of [...this.waiting]) {
      if (request.arrivalStep <= context.step) {
        this.waiting.splice(this.waiting.indexOf(request), 1);
        request.status = "prefilling";
      }
    }
    const active = [...this.requests.values()].filter((request) => request.active);
    const decoding = active.filter((request) => request.status === "decoding");
    if (decoding.length > 0) {
      if (context.config.mode === "target-only") await runTargetDecode(context, decoding);
      else await runSpeculativeRound(context, decoding);
    }
    const prefilling = active.filter((request) => request.status === "prefilling" && request.active);
    const chunks = planPrefillChunks(prefilling, context.config.chunkSize, context.config.tokenBudget);
    if (chunks.length > 0) await runPrefill(context, chunks);
    // Aborts scheduled after the step's last forward.
    context.checkpoint([]);
    this.checkPools();
    context.step += 1;
  }

  /** KV conservation: integrity, and between steps no slot beyond the active requests' persisted KV. */
  private checkPools(): void {
    const { target, draft } = this.context.pools;
    for (const pool of draft ? [target, draft] : [target]) {
      const violations = [...pool.checkIntegrity()];
      for (const id of pool.requests()) {
        const request = this.requests.get(id);
        if (!request?.active) violations.push({ pool: pool.name, request: id, message: `request ${id} is ${request?.status ?? "unknown"} but still holds slots` });
        else if (pool.temporarySlots(id).length > 0) violations.push({ pool: pool.name, request: id, message: `request ${id} holds ${pool.temporarySlots(id).length} temporary slots between steps` });
      }
      if (violations.length > 0) this.poolChecks.push({ step: this.context.step, pool: pool.name, violations });
    }
  }
}
