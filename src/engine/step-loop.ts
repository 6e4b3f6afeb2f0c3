// The step loop. A step: admit arrivals, one decode round for requests already decoding, then the
// step's prefill chunks. Aborts land between any two forwards through the context's checkpoint.
// Overlap (docs/scheduling.md): the step's decode batch is planned before the previous step's results are
// processed, so a request that finished there runs this step as a zombie (its results discarded, then it is
// freed), and an abort or retract discards the results in flight.
import { vocabularyOf } from "../model/vocabulary.ts";
import type { ModelSpec } from "../model/spec.ts";
import { pagesNeeded } from "../case/admission.ts";
import type { EngineConfig } from "../case/engine-config.ts";
import { EngineContext, type Drafter, type EngineSessions } from "./context.ts";
import { Faults } from "../case/faults.ts";
import type { ForwardMemo } from "./forward-memo.ts";
import { placeholderOf } from "./future-ring.ts";
import { RecurrentStates } from "./recurrent-states.ts";
import { KvPool, KvPoolExhaustedError } from "./kv-pool.ts";
import type { IntegrityViolation, PoolCheck } from "../trace/run-result.ts";
import { runSpeculativeRound, runTargetDecode } from "./phases/decode-round.ts";
import { runPrefill } from "./phases/prefill.ts";
import { PrefixCache } from "./prefix-cache.ts";
import { Request, type RequestInit } from "./request.ts";
import { lookaheadRoom } from "./context-limit.ts";
import { draftFails } from "./draft-failure.ts";
import { SlotDrafter } from "./slot-drafter.ts";
import { TraceRecorder } from "./trace-recorder.ts";

export interface EngineOptions {
  trace: boolean;
  /** Run the per-step KV conservation checks (checkIntegrity on every pool); they cost O(pool slots) per step. */
  checkPools?: boolean;
  /** Called before every forward (step, index of the forward within the step), and at the step's end (endOfStep). */
  betweenForwards?: (engine: Engine, step: number, forwardInStep: number, endOfStep?: boolean) => void;
  /** Where drafts come from (default: the draft model; "ngram": prompt lookup, no draft pool). */
  drafter?: Drafter;
  /** Exact repeats of forwards of earlier runs (of the same case) are not run again (forward-memo.ts). */
  forwardMemo?: ForwardMemo;
}

export class Engine {
  readonly context: EngineContext;
  readonly requests = new Map<number, Request>();
  /** Integrity and accounting violations found after each step (KV conservation). */
  readonly poolChecks: PoolCheck[] = [];
  private readonly waiting: Request[] = [];
  /** Each request slot's drafter state, by slot (reused by the requests that take the slot). */
  private readonly slotDrafters: SlotDrafter[] = [];
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
    const drafter = options.drafter ?? "model";
    const pools = {
      target: poolOf("target", spec.layers),
      draft: speculative && !multiLayer && drafter === "model" ? poolOf("draft", sessions.draftLayers ?? 1) : undefined,
      draftModules: multiLayer
        ? Array.from({ length: config.numSteps }, (_, k) => poolOf(`draft-${k}`, sessions.draftLayers ?? 1))
        : undefined,
    };
    this.checkPoolsEachStep = options.checkPools ?? true;
    const recorder = new TraceRecorder(options.trace);
    const allPools = [pools.target, ...(pools.draft ? [pools.draft] : []), ...(pools.draftModules ?? [])];
    // Hybrid models: each pool's model keeps its own per-request recurrent state (recurrent-states.ts).
    for (const [pool, session] of [
      [pools.target, sessions.target],
      [pools.draft, sessions.draft],
    ] as const)
      if (pool && session?.recurrent)
        pool.recurrent = new RecurrentStates(
          session.recurrent.width,
          session.recurrent.initial,
          spec.dtype,
          config.prefixCache ? config.pageSize : undefined,
        );
    for (const pool of allPools) pool.onRelease = (slots) => recorder.release(pool.name, slots);
    this.context = new EngineContext(
      config,
      spec,
      sessions,
      pools,
      new Faults(config.faults),
      recorder,
      (step, forwardInStep, endOfStep) => options.betweenForwards?.(this, step, forwardInStep, endOfStep),
      drafter,
      options.forwardMemo,
    );
    if (config.prefixCache) {
      // The KV of position i depends on x_{i+w}: the draft row at anchor i reads x_{i+1} (module k: x_{i+k+1}).
      const lookahead = !speculative || drafter === "ngram" ? 0 : multiLayer ? config.numSteps : 1;
      const latestStateFault = this.context.faults.has("prefix-cache-latest-recurrent-state");
      const cache = new PrefixCache(allPools, config.pageSize, lookahead, latestStateFault);
      this.context.prefixCache = cache;
      for (const pool of allPools) {
        pool.onReference = (change) => recorder.reference({ pool: pool.name, ...change, slots: [...change.slots] });
        pool.onPressure = (pages) => cache.evictUntil(() => pool.numFreeSlots() / pool.pageSize >= pages, pool);
      }
    }
  }

  get step(): number {
    return this.context.step;
  }

  /** Mutates: queues a request; it is admitted before the step numbered arrivalStep. */
  addRequest(init: RequestInit): Request {
    if (this.requests.has(init.id)) throw new Error(`duplicate request id ${init.id}`);
    const limits = this.context.contextLimits;
    const request = new Request(
      init,
      (bonusPosition) =>
        draftFails(this.context.config, this.context.ngram, this.context.faults, bonusPosition)
          ? 0
          : lookaheadRoom(limits, bonusPosition, this.context.faults),
      () => vocabularyOf(this.context.spec),
      this.context.faults,
    );
    this.requests.set(init.id, request);
    this.waiting.push(request);
    return request;
  }

  /** Mutates: aborts a waiting or active request, freeing every slot it holds in every pool. */
  abort(id: number): void {
    const request = this.requests.get(id);
    if (!request || request.status === "finished") return;
    if (request.status === "decoding" && this.context.faults.has("abort-dropped-while-decoding")) return;
    const waitingIndex = this.waiting.indexOf(request);
    if (waitingIndex >= 0) this.waiting.splice(waitingIndex, 1);
    // Queued requests (not admitted yet) are noted too: they must never run after this point.
    this.context.recorder.note({ kind: "abort", request: id, step: this.context.step });
    if (request.active) this.discardInFlight(request);
    request.finish("abort");
    this.context.releaseRequest(request);
  }

  /**
   * Overlap: the request's results not processed yet are discarded (vLLM's late async output after
   * preemption is dropped, SGLang skips a retracted request's in-flight results), its work since then is
   * marked discarded in the trace, and its ring entries are let go.
   */
  private discardInFlight(request: Request, keepPlaceholder?: number): void {
    const context = this.context;
    if (!context.overlap) return;
    context.pending = context.pending.filter((item) => item.request !== request);
    context.recorder.discardFrom(request.id, request.inFlightSince, false);
    request.discardInFlight(keepPlaceholder);
    // The discarded work's draws never happened for the host: a resumed request draws them again, the same.
    request.stream?.rewind(request.processedDraws);
    context.ring?.release(request.plannedFrom);
    request.plannedFrom = undefined;
    request.futureEntry = undefined;
  }

  /**
   * Mutates: retracts an active request (as on memory pressure): frees its slots in every pool; it
   * resumes by re-prefilling every verified token, keeping the pending bonus.
   */
  retract(id: number): void {
    const request = this.requests.get(id);
    if (!request?.active) return;
    if (request.status === "decoding" && this.context.faults.has("retract-dropped-while-decoding")) return;
    this.context.recorder.note({ kind: "retract", request: id, step: this.context.step });
    // The stale-placeholder fault: the placeholder of the discarded in-flight token stays in the token list.
    // (Only past the first token: a request without output re-samples it, there is no pending token to keep.)
    const inFlight =
      this.context.faults.has("stale-placeholder-after-gap") &&
      request.futureEntry !== undefined &&
      request.output.length > 0 &&
      request.tokens.length > request.prompt.length + request.output.length
        ? placeholderOf(request.futureEntry)
        : undefined;
    this.discardInFlight(request, inFlight);
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
    return (
      this.waiting.length > 0 ||
      this.context.pending.length > 0 ||
      [...this.requests.values()].some((request) => request.running)
    );
  }

  /**
   * Admission: arrived requests enter prefill in order while every pool can reserve their worst case next
   * to the admitted ones; the first that cannot waits, and so do the ones behind it. Pages only the prefix
   * cache holds count as free (SGLang's PrefillAdder counts the evictable size as available): they are
   * evicted when an allocation needs them, after the new request has had its chance to hit them. A request
   * no pool could ever hold is a configuration error.
   */
  private admit(): void {
    const context = this.context;
    // Every pool has the same pages and the same demand per request: the target pool stands for all.
    const capacity = context.pools.target.pages;
    let reserved = 0;
    for (const request of this.requests.values()) if (request.running) reserved += pagesNeeded(request, context.config);
    for (const request of [...this.waiting]) {
      if (request.arrivalStep > context.step) continue;
      const need = pagesNeeded(request, context.config);
      if (need > capacity)
        throw new KvPoolExhaustedError(
          context.pools.target.name,
          need * context.config.pageSize,
          capacity * context.config.pageSize,
        );
      if (reserved + need > capacity) break;
      const slot = this.freeSlot();
      if (slot === undefined) break;
      reserved += need;
      this.waiting.splice(this.waiting.indexOf(request), 1);
      request.status = "prefilling";
      this.takeSlot(request, slot);
    }
  }

  /**
   * The lowest request slot no running request holds (engine.requestSlots); without slots, a fresh one per
   * request. Undefined when every slot is held.
   */
  private freeSlot(): number | undefined {
    const slots = this.context.config.requestSlots;
    if (slots === undefined) return this.slotDrafters.length;
    const held = new Set([...this.requests.values()].filter((request) => request.running).map((r) => r.slot));
    for (let slot = 0; slot < slots; slot++) if (!held.has(slot)) return slot;
    return undefined;
  }

  /** Mutates: the request takes the slot and begins its drafter state (slot-drafter.ts). */
  private takeSlot(request: Request, slot: number): void {
    this.slotDrafters[slot] ??= new SlotDrafter();
    request.slot = slot;
    request.slotDrafter = this.slotDrafters[slot];
    request.slotDrafter.begin(this.context.faults);
  }

  /**
   * Overlap: the previous step's results, processed now that this step's batch is planned: emitted (cut at
   * EOS and max new tokens) and finish checked. A request that finished stays in this step's batch as a
   * zombie. Mutates.
   */
  private processPending(): void {
    const context = this.context;
    for (const item of context.pending) {
      const request = item.request;
      if (!request.active || request.retracts !== item.epoch) continue;
      // Finishing clears the request's draft state; the zombie round still runs on it.
      const device = {
        draftRoot: request.draftRoot,
        draftHidden: request.draftHidden,
        hidden: [...request.targetHidden],
      };
      const grammarStart = request.grammar?.state;
      const { emitted, finished } = request.emit(
        item.candidates,
        context.spec.eosId,
        context.faults,
        item.logprobs,
        true,
      );
      if (grammarStart !== undefined && item.result && item.draftChain)
        request.grammar!.afterRound(grammarStart, item.draftChain, item.result.acceptLen - 1, emitted, context.faults);
      if (item.drawsAfter !== undefined) request.processedDraws = item.drawsAfter;
      if (item.result) {
        item.result.emitted = emitted;
        item.result.finished = finished;
        request.acceptLens.push(item.result.acceptLen);
        if (finished) request.cutRounds += 1;
      }
      if (!finished) continue;
      request.zombie = true;
      request.draftRoot = device.draftRoot;
      request.draftHidden = device.draftHidden;
      for (const [position, rows] of device.hidden) request.targetHidden.set(position, rows);
      context.recorder.discardFrom(request.id, item.event + 1, true);
    }
    context.pending = [];
    const since = context.recorder.nextEventIndex;
    for (const request of this.requests.values()) request.inFlightSince = since;
  }

  /** Overlap: zombies ran their last planned step; now they let go of everything. Mutates. */
  private releaseZombies(): void {
    for (const request of this.requests.values()) {
      if (!request.zombie) continue;
      request.zombie = false;
      this.context.releaseRequest(request);
      this.context.ring?.release(request.plannedFrom);
      this.context.ring?.release(request.futureEntry);
      request.plannedFrom = undefined;
      request.futureEntry = undefined;
      request.draftRoot = undefined;
      request.draftHidden = undefined;
      request.targetHidden.clear();
      this.context.recorder.endDiscard(request.id);
    }
  }

  async runStep(): Promise<void> {
    const context = this.context;
    context.forwardInStep = 0;
    this.admit();
    // The decode batch is planned from what the device runs; under overlap the previous step's results are
    // processed only after that (its finished requests stay in the batch as zombies).
    const decoding = [...this.requests.values()].filter((request) => request.status === "decoding");
    if (context.overlap) this.processPending();
    if (decoding.length > 0) {
      if (context.config.mode === "target-only") await runTargetDecode(context, decoding);
      else await runSpeculativeRound(context, decoding);
    }
    // Arrival order (ids break ties), including requests a retract just sent back to prefill.
    const prefilling = [...this.requests.values()].filter((request) => request.status === "prefilling");
    if (prefilling.length > 0) await runPrefill(context, prefilling);
    // Aborts and retracts scheduled after the step's last forward (or past it).
    context.endOfStep();
    this.releaseZombies();
    if (this.checkPoolsEachStep) this.checkPools();
    context.step += 1;
  }

  /** The end of the run: the prefix cache lets go of everything it holds. Mutates. */
  finish(): void {
    this.context.prefixCache?.flush();
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
