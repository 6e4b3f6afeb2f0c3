// What one run of a case returns, whichever engine ran it: the outputs per request and the trace, plus what
// only the reference engine knows about its own run (a third-party run has none of it). Engine-neutral, so
// laws, sources, failures and reports read run results without depending on the reference engine
// (issue 24: these types used to live in engine/run-case.ts, which pulled the engine into every law).
import type { FloatArray } from "../runtime/ort.ts";
import { textFieldsOf, type FinishReason, type ReportedOutput } from "./outputs-line.ts";
import type { Trace } from "./schema.ts";

/**
 * One request's results as a run returns them: what an engine reports (trace/outputs-line.ts, every field's
 * meaning there) with the finish reason always known, every verify round's accept_len, and the rounds a
 * finish cut short.
 */
export interface RequestOutput extends Omit<ReportedOutput, "finishReason" | "acceptLens" | "firstRoundDrafts"> {
  finishReason: FinishReason;
  acceptLens: number[];
  /** Rounds that ended the request (EOS / max new tokens), excluded from full-acceptance rates. */
  cutRounds: number;
}

/** One broken invariant of a KV pool (engine/kv-integrity.ts computes them). */
export interface IntegrityViolation {
  pool: string;
  slot?: number;
  request?: number;
  message: string;
}

/** The per-step KV conservation check of one pool after one step. */
export interface PoolCheck {
  step: number;
  pool: string;
  violations: IntegrityViolation[];
}

/** The KV a prefix hit reused, as it was at the hit (for the prefix-cache draft KV law). */
export interface PrefixHitRecord {
  request: number;
  pool: string;
  /** Draft module k's pool (multi-layer), else undefined (the target or the chain/tree draft pool). */
  module?: number;
  /** Positions [0, length) reused. */
  length: number;
  layers: number;
  kvDim: number;
  /** The request's tokens when it hit (the recomputation's input). */
  tokens: number[];
  /** [layers, length, kvDim]. */
  keys: FloatArray;
  values: FloatArray;
}

/**
 * A run that failed part way (the engine threw), with what its own per-step checks had recorded by then: a
 * leak that exhausts the pool is still a leak, and the step it was first seen names it (not only the crash).
 * Its name and message are the cause's, so a report reads as the crash itself.
 */
export class CrashedRun extends Error {
  constructor(
    cause: unknown,
    readonly before: { poolChecks: readonly PoolCheck[]; steps: number },
  ) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.name = cause instanceof Error ? cause.name : "Error";
  }
}

/** What only the reference engine knows about its own run: a third-party run has none of it. */
export interface EngineInternals {
  poolChecks: PoolCheck[];
  /** Slots still held in any pool after the run (KV conservation: must be 0). */
  slotsInUseAtEnd: number;
  steps: number;
  /** The KV every prefix hit reused, as it was at the hit (the prefix-cache draft KV law). */
  prefixHits?: PrefixHitRecord[];
}

export interface RunResult {
  outputs: RequestOutput[];
  trace: Trace;
  internals?: EngineInternals;
  /**
   * Whether the engine shows its speculative rounds at all (outputs' acceptLens or the trace's verify results):
   * an external engine's hello says (observes); undefined where the run itself is the only evidence (the
   * reference engine, recorded traces). False: a request without rounds says nothing about whether it speculated.
   */
  roundsObserved?: boolean;
}

/** A RunResult made of what a trace holds: outputs from its requests and verify events, no engine internals. */
export function runFromTrace(trace: Trace): RunResult {
  const acceptLens = new Map<number, number[]>();
  for (const event of trace.events)
    for (const result of event.verify ?? [])
      acceptLens.set(result.request, [...(acceptLens.get(result.request) ?? []), result.acceptLen]);
  const outputs = (trace.requests ?? []).map((request) => ({
    id: request.id,
    tokens: request.output,
    finishReason: request.finishReason,
    ...(request.stopTokenId !== undefined ? { stopTokenId: request.stopTokenId } : {}),
    ...(request.finishedLength !== undefined ? { finishedLength: request.finishedLength } : {}),
    ...(request.logprobs ? { logprobs: request.logprobs } : {}),
    ...textFieldsOf(request),
    acceptLens: acceptLens.get(request.id) ?? [],
    cutRounds: 0,
  }));
  return { outputs, trace };
}
