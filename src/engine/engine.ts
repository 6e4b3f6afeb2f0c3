// The step loop. A step: admit arrivals, one decode round for requests already decoding, then the
// step's prefill chunks. Aborts land between any two forwards through the context's checkpoint.
import type { ModelSpec } from "../model/spec.ts";
import type { EngineConfig } from "./config.ts";
import { EngineContext, type EngineSessions } from "./context.ts";
import { Faults } from "./faults.ts";
import type { ForwardMemo } from "./forward-memo.ts";
import { KvPool, type IntegrityViolation } from "./kv-pool.ts";
import { runSpeculativeRound, runTargetDecode } from "./phases/decode-round.ts";
import { runPrefill } from "./phases/prefill.ts";
import { Request, type RequestInit } from "./request.ts";
import { TraceRecorder } from "./trace-recorder.ts";

export interface PoolCheck {
  step: number;
  pool: string;
  violations: IntegrityViolation[];
}

export interface EngineOptions {
  trace: boolean;
  /** Run the per-step KV conservation checks (checkIntegrity on every pool); they cost O(pool slots) per step. */
  checkPools?: boolean;
  /** Called before every forward (step, index of the forward within the step). */
  betweenForwards?: (engine: Engine, step: number, forwardInStep: number) => void;
  /** Exact repeats of forwards of earlier runs (of the same case) are not run again (forward-memo.ts). */
  forwardMemo?: ForwardMemo;
}

export class Engine {
  readonly context: EngineContext;
  readonly requests = new Map<number, Request>();
  /** Integrity and accounting violations found after each step (KV conservation). */
  readonly poolChecks: PoolCheck[] = [];
  private readonly waiting: Request[] = [];
  private readonly checkPoolsEachStep: boolean;

  constructor(config: EngineConfig, spec: ModelSpec, sessions: EngineSessions, options: EngineOptions) {
    const poolOf = (name: string, layers: number) =>
      new KvPool({
        name,
        numSlots: config.poolSlots,
        pageSize: config.pageSize,
        layers,
        kvDim: spec.kvHeads * spec.headDim,
        dtype: spec.dtype,
      });
    const speculative = config.mode === "speculative";
    const multiLayer = speculative && config.multiLayer === true;
    const pools = {
      target: poolOf("target", spec.layers),
      draft: speculative && !multiLayer ? poolOf("draft", sessions.draftLayers ?? 1) : undefined,
      draftModules: multiLayer
        ? Array.from({ length: config.numSteps }, (_, k) => poolOf(`draft-${k}`, sessions.draftLayers ?? 1))
        : undefined,
    };
    this.checkPoolsEachStep = options.checkPools ?? true;
    const recorder = new TraceRecorder(options.trace);
    for (const pool of [pools.target, ...(pools.draft ? [pools.draft] : []), ...(pools.draftModules ?? [])])
      pool.onRelease = (slots) => recorder.release(pool.name, slots);
    this.context = new EngineContext(
      config,
      spec,
      sessions,
      pools,
      new Faults(config.faults),
      recorder,
      (step, forwardInStep) => options.betweenForwards?.(this, step, forwardInStep),
      options.forwardMemo,
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
    if (request.active) this.context.recorder.note({ kind: "abort", request: id, step: this.context.step });
    request.finish("abort");
    this.context.releaseRequest(request);
  }

  /**
   * Mutates: retracts an active request (as on memory pressure): frees its slots in every pool; it
   * resumes by re-prefilling every verified token, keeping the pending bonus.
   */
  retract(id: number): void {
    const request = this.requests.get(id);
    if (!request?.active) return;
    this.context.recorder.note({ kind: "retract", request: id, step: this.context.step });
    // The fault matters once a draft state exists (a request retracted mid-prefill has none to keep).
    const stale = this.context.faults.has("stale-draft-kv-after-retract") && request.draftRoot !== undefined;
    if (stale) {
      // The bug keeps the draft pools' persisted KV; the round's temporary rows are gone either way.
      this.context.pools.target.freeRequest(id);
      for (const pool of this.context.draftPools()) pool.freeTemporary(id);
    } else {
      this.context.releaseRequest(request);
    }
    request.resetForResume(stale);
    request.skipDraftOnResume = stale;
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
    // Arrival order (ids break ties), including requests a retract just sent back to prefill.
    const prefilling = [...this.requests.values()].filter((request) => request.status === "prefilling");
    if (prefilling.length > 0) await runPrefill(context, prefilling);
    // Aborts and retracts scheduled after the step's last forward.
    context.checkpoint([], new Map());
    if (this.checkPoolsEachStep) this.checkPools();
    context.step += 1;
  }

  /** Mutates: hands every pool's K/V buffers back for reuse (the run is over; the engine is unusable after). */
  release(): void {
    for (const pool of [this.context.pools.target, ...this.context.draftPools()]) pool.release();
  }

  /** KV conservation: integrity, and between steps no slot beyond the active requests' persisted KV. */
  private checkPools(): void {
    for (const pool of [this.context.pools.target, ...this.context.draftPools()]) {
      const violations = [...pool.checkIntegrity()];
      for (const id of pool.requests()) {
        const request = this.requests.get(id);
        if (!request?.active)
          violations.push({
            pool: pool.name,
            request: id,
            message: `request ${id} is ${request?.status ?? "unknown"} but still holds slots`,
          });
        else if (pool.temporarySlots(id).length > 0)
          violations.push({
            pool: pool.name,
            request: id,
            message: `request ${id} holds ${pool.temporarySlots(id).length} temporary slots between steps`,
          });
      }
      if (violations.length > 0) this.poolChecks.push({ step: this.context.step, pool: pool.name, violations });
    }
  }
}
