// What one run of a case returns, whichever engine ran it: the outputs per request and the trace, plus what
// only the reference engine knows about its own run (a third-party run has none of it). Engine-neutral, so
// laws, sources, failures and reports read run results without depending on the reference engine
// (issue 24: these types used to live in engine/run-case.ts, which pulled the engine into every law).
import type { FloatArray } from "../runtime/ort.ts";
import type { LogprobEntry } from "../sampling/params.ts";
import type { Trace } from "./schema.ts";

export interface RequestOutput {
  id: number;
  tokens: number[];
  finishReason: "length" | "eos" | "stop" | "abort" | "unfinished";
  /** The stop id that ended the request (finish reason "stop"). */
  stopTokenId?: number;
  /** Output tokens when the request finished (EOS, stop or length; SGLang's finished_len). */
  finishedLength?: number;
  /** One entry per output token, for requests asking for logprobs. */
  logprobs?: LogprobEntry[];
  /** accept_len of each verify round (speculative mode). */
  acceptLens: number[];
  /** Rounds that ended the request (EOS / max new tokens), excluded from full-acceptance rates. */
  cutRounds: number;
  /** The first round emits the first output token (no separate prefill sample); see the outputs schema. */
  roundsIncludeFirstToken?: boolean;
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
}
