// The trace: one event per forward, rows read from the tensors actually passed to the runtime.
// A small core is required (formatVersion, engine, events with phase and rows of request/token/
// position); every other field is optional so a third-party engine emits what it exposes, and each
// law says "not checkable" for what is absent. Changes stay additive within one formatVersion.
import { Type, type Static } from "@sinclair/typebox";
import { LogprobEntrySchema } from "../sampling/params.ts";
import { FinishReasonSchema } from "./outputs-line.ts";

export const TRACE_FORMAT_VERSION = 1;

const HiddenProvenance = Type.Object(
  { event: Type.Integer({ minimum: 0 }), row: Type.Integer({ minimum: 0 }) },
  { additionalProperties: false, description: "the forward event and row whose hidden-state output fed this row" },
);

const AuxSource = Type.Object(
  {
    event: Type.Integer({ minimum: 0 }),
    row: Type.Integer({ minimum: 0 }),
    /** The target layer whose output this state is (-1: the embeddings, the input of layer 0). */
    layer: Type.Integer({ minimum: -1 }),
    /** Read after the final norm (the LM-head input) rather than from the residual stream. */
    normed: Type.Boolean(),
  },
  {
    additionalProperties: false,
    description: "one auxiliary hidden state fed to an EAGLE-3 draft row: the forward event and row it was read from",
  },
);

const Attended = Type.Object(
  {
    /** Own request's persisted positions in this pool, as inclusive [lo, hi] ranges. */
    positions: Type.Array(Type.Tuple([Type.Integer(), Type.Integer()])),
    /** Own request's temporary rows attended (positions), from earlier forwards. */
    temporary: Type.Optional(Type.Array(Type.Integer())),
    /** Rows of this same forward attended, including itself. */
    batchRows: Type.Optional(Type.Array(Type.Integer({ minimum: 0 }))),
    /** Slots attended that belong to another request (a leak): request and position. */
    foreign: Type.Optional(
      Type.Array(Type.Object({ request: Type.Integer(), position: Type.Integer() }, { additionalProperties: false })),
    ),
  },
  { additionalProperties: false },
);

const DraftChild = Type.Object(
  {
    /** Candidate number: 1-based creation order within the request's round (parents are numbered first). */
    number: Type.Integer({ minimum: 1 }),
    token: Type.Integer({ minimum: 0 }),
    /** Cumulative log-softmax along the path from the root, in the draft's logit units (<= 0). */
    score: Type.Number(),
  },
  { additionalProperties: false },
);

/**
 * One random decision of a stochastic request, with the uniform it took from the request's stream. On the
 * target row whose distribution it used: a prefill or decode row draws the next token; a verify row (node n)
 * tests its children in row order (accept when u < min(1, p/q)) and, when none is accepted or it has none,
 * draws the recovered or bonus token from what is left.
 */
export const SamplingDrawSchema = Type.Object(
  {
    uniform: Type.Number({ minimum: 0, exclusiveMaximum: 1 }),
    /** An acceptance test: the child's row index within the request's verify rows, and the outcome. */
    child: Type.Optional(Type.Integer({ minimum: 0 })),
    accepted: Type.Optional(Type.Boolean()),
    /** A token draw (no child): the token drawn. */
    token: Type.Optional(Type.Integer({ minimum: 0 })),
    /** Distance of the uniform to the decision's boundary times the temperature (logit units; 0: a cut near-tie). */
    margin: Type.Optional(Type.Number({ minimum: 0 })),
  },
  { additionalProperties: false },
);

export const TraceRowSchema = Type.Object(
  {
    request: Type.Integer({ minimum: 0 }),
    /** The token fed to the model. Negative: an unresolved placeholder reached the model (a bug the laws flag). */
    token: Type.Integer(),
    /** The position fed to the model (draft rows: the anchor position). */
    position: Type.Integer(),
    slot: Type.Optional(Type.Integer({ minimum: 0 })),
    temporary: Type.Optional(Type.Boolean()),
    /** Verify rows: the tree parent's index within the request's verify rows (-1 for the root). */
    parent: Type.Optional(Type.Integer({ minimum: -1 })),
    /** Overlap scheduling: the plan held this placeholder (-(ring entry + 1)) here; `token` is its launch-time resolution. */
    placeholder: Type.Optional(Type.Integer({ maximum: -1 })),
    /**
     * Discarded work: the row ran, but its request's results from it were never processed (overlap: the extra
     * round of a request that finished while it was planned, or a round in flight when an abort or retract
     * landed). Invariance laws leave such rows out; slot and position laws still follow them.
     */
    discarded: Type.Optional(Type.Boolean()),
    hidden: Type.Optional(HiddenProvenance),
    /**
     * EAGLE-3 draft rows fed the target's auxiliary states (draft extend): the states concatenated into fc's
     * input, in order, each with its provenance, layer and norm side.
     */
    aux: Type.Optional(Type.Array(AuxSource)),
    /**
     * EAGLE-3 draft rows: the argmax over the draft's own vocabulary (a draft id); predict and the children's
     * tokens are target ids (the draft id plus its d2t offset).
     */
    draftPredict: Type.Optional(Type.Integer({ minimum: 0 })),
    /** argmax of this row's logits (ties to the lower id) and its top-1 margin in the model's logit units. */
    predict: Type.Optional(Type.Integer({ minimum: 0 })),
    margin: Type.Optional(Type.Number()),
    /** The logit of predict: compared with tolerance by the draft-reference law (it moves with hidden-state inputs). */
    topLogit: Type.Optional(Type.Number()),
    /**
     * Rows sampling for a request whose options process the logits (penalties, bias, min tokens): predict,
     * margin and topLogit are the processed ones, rawPredict the argmax before processing.
     */
    rawPredict: Type.Optional(Type.Integer({ minimum: 0 })),
    attended: Type.Optional(Attended),
    /**
     * Models with sliding-window attention: what the row's windowed layers attend (`attended` is what its
     * full-attention layers do). Read from the same mask, so window metadata a path lost shows here.
     */
    window: Type.Optional(Attended),
    /**
     * Tree drafting (any topk; a chain is a tree of width 1): the draft candidate this row carries, by
     * number (0 is the root). On draft-decode rows (the frontier node expanded) and verify rows.
     */
    candidate: Type.Optional(Type.Integer({ minimum: 0 })),
    /**
     * Tree drafting: the candidates this row's draft logits expand into, its topk best tokens (ties to the
     * lower id) in creation order, with cumulative scores. On the draft-extend row that yields a round's
     * root and on every draft-decode row: the laws judge frontier and tree selection from these.
     */
    children: Type.Optional(Type.Array(DraftChild)),
    /**
     * The topk-th best minus the (topk+1)-th best logit of this row (draft units): below the draft epsilon,
     * which tokens become children is itself a near-tie.
     */
    childMargin: Type.Optional(Type.Number()),
    /** Stochastic requests: the decisions made with this row's distribution, in the order they were made. */
    draws: Type.Optional(Type.Array(SamplingDrawSchema)),
  },
  { additionalProperties: false },
);

export const VerifyResultSchema = Type.Object(
  {
    request: Type.Integer({ minimum: 0 }),
    /** Flattened row indices r * N + node of the accepted path, padded with -1 to S + 1 entries. */
    acceptIndex: Type.Array(Type.Integer({ minimum: -1 })),
    /** Path length including the root (SGLang v2 accept_lens). */
    acceptLen: Type.Integer({ minimum: 1 }),
    acceptTokens: Type.Optional(Type.Array(Type.Integer())),
    bonus: Type.Integer({ minimum: 0 }),
    /** Tokens emitted this round, after EOS / stop id / max-new-tokens cuts. */
    emitted: Type.Optional(Type.Array(Type.Integer({ minimum: 0 }))),
    /** The round ended the request (EOS, a stop id or max new tokens). */
    finished: Type.Optional(Type.Boolean()),
    /** Discarded work (see TraceRow.discarded): nothing of this round was emitted. */
    discarded: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const PHASES = ["prefill", "decode", "verify", "draft-extend", "draft-decode"] as const;
export type Phase = (typeof PHASES)[number];

/** A future-ring write (overlap): the value a producing forward stored for the next step's placeholder. */
export const FutureWriteSchema = Type.Object(
  {
    placeholder: Type.Integer({ maximum: -1 }),
    /** The request whose output it is. */
    request: Type.Integer({ minimum: 0 }),
    /** The next root token (bonus or sampled token). */
    token: Type.Optional(Type.Integer({ minimum: 0 })),
    /** The next draft root's candidate tokens (draft decode's first rows and verify's depth-1 nodes). */
    draft: Type.Optional(Type.Array(Type.Integer({ minimum: 0 }))),
  },
  { additionalProperties: false },
);

/**
 * A change of who holds slots that may be shared (prefix cache), in the order it happened within an event's
 * list: acquire (a holder takes a reference on written slots: a prefix hit, a cache insertion), drop (a
 * holder lets go), write (a holder wrote slots without a row of its own: verify compaction's copies), free
 * (no holder is left: the slots return to the pool).
 */
export const SlotReferenceSchema = Type.Object(
  {
    pool: Type.String(),
    /** A request id, or -1 for the prefix cache itself. */
    holder: Type.Integer({ minimum: -1 }),
    slots: Type.Array(Type.Integer({ minimum: 0 })),
    change: Type.Union([Type.Literal("acquire"), Type.Literal("drop"), Type.Literal("write"), Type.Literal("free")]),
    /** The prefix cache's drops: eviction under pool pressure, or the flush at the end of the run. */
    reason: Type.Optional(Type.Union([Type.Literal("evict"), Type.Literal("flush")])),
  },
  { additionalProperties: false },
);

export const TraceEventSchema = Type.Object(
  {
    index: Type.Integer({ minimum: 0 }),
    step: Type.Optional(Type.Integer({ minimum: 0 })),
    phase: Type.Union(PHASES.map((p) => Type.Literal(p))),
    model: Type.Optional(Type.String()),
    pool: Type.Optional(Type.String()),
    /** Draft decode: step j (1-based) of the round. */
    draftStep: Type.Optional(Type.Integer({ minimum: 0 })),
    /** Multi-layer drafting: the draft module (its step k) this forward ran. */
    module: Type.Optional(Type.Integer({ minimum: 0 })),
    /** Padded graph replay: padding rows the graph ran beyond `rows` (poison; not recorded as rows). */
    paddedRows: Type.Optional(Type.Integer({ minimum: 1 })),
    rows: Type.Array(TraceRowSchema),
    verify: Type.Optional(Type.Array(VerifyResultSchema)),
    /**
     * Slots each pool released after this forward and before the next one (finished, aborted or retracted
     * requests, rejected verify nodes, temporary draft rows): with the rows' slots it lets KV conservation
     * follow every slot's ownership from the trace alone.
     */
    released: Type.Optional(
      Type.Array(
        Type.Object(
          { pool: Type.String(), slots: Type.Array(Type.Integer({ minimum: 0 })) },
          { additionalProperties: false },
        ),
      ),
    ),
    /** Overlap: future-ring writes this forward made (read by the next step's placeholders). */
    futures: Type.Optional(Type.Array(FutureWriteSchema)),
    /**
     * Slot ownership changes after this forward and before the next one, in order (engines with shared slots);
     * `released` still lists the slots freed.
     */
    references: Type.Optional(Type.Array(SlotReferenceSchema)),
  },
  { additionalProperties: false },
);

export const TraceRequestSchema = Type.Object(
  {
    id: Type.Integer({ minimum: 0 }),
    prompt: Type.Array(Type.Integer({ minimum: 0 })),
    output: Type.Array(Type.Integer({ minimum: 0 })),
    finishReason: FinishReasonSchema,
    /** The stop id that ended the request (finish reason "stop"). */
    stopTokenId: Type.Optional(Type.Integer({ minimum: 0 })),
    /** Output tokens when the request finished (SGLang's finished_len): the output must be exactly this long. */
    finishedLength: Type.Optional(Type.Integer({ minimum: 0 })),
    /** One entry per output token, for requests asking for logprobs. */
    logprobs: Type.Optional(Type.Array(LogprobEntrySchema)),
  },
  { additionalProperties: false },
);

export const LifecycleEventSchema = Type.Object(
  {
    /** prefix-hit: the request starts its prefill with a cached prefix (its KV below `pools[].length` is shared). */
    kind: Type.Union([Type.Literal("abort"), Type.Literal("retract"), Type.Literal("prefix-hit")]),
    request: Type.Integer({ minimum: 0 }),
    step: Type.Optional(Type.Integer({ minimum: 0 })),
    /** Index of the first forward event after it. */
    beforeEvent: Type.Integer({ minimum: 0 }),
    /** prefix-hit: the matched length before page alignment (positions whose KV the cache could give). */
    matched: Type.Optional(Type.Integer({ minimum: 0 })),
    /** prefix-hit: the positions each pool reuses, [0, length). */
    pools: Type.Optional(
      Type.Array(
        Type.Object({ pool: Type.String(), length: Type.Integer({ minimum: 0 }) }, { additionalProperties: false }),
      ),
    ),
  },
  { additionalProperties: false },
);

export const TraceSchema = Type.Object(
  {
    formatVersion: Type.Literal(TRACE_FORMAT_VERSION),
    engine: Type.Object(
      {
        name: Type.String(),
        version: Type.Optional(Type.String()),
        ortVersion: Type.Optional(Type.String()),
        ep: Type.Optional(Type.String()),
        dtype: Type.Optional(Type.String()),
        threads: Type.Optional(Type.Integer()),
        graphOptimizationLevel: Type.Optional(Type.String()),
        /**
         * "unobserved": the events are per request (the engine batches, but which requests shared a forward is
         * not visible to it): laws that read batching from the events compare outputs instead.
         */
        batchGrouping: Type.Optional(Type.Union([Type.Literal("observed"), Type.Literal("unobserved")])),
      },
      { additionalProperties: true },
    ),
    models: Type.Optional(
      Type.Object(
        { target: Type.String(), draft: Type.Optional(Type.Array(Type.String())) },
        { additionalProperties: false },
      ),
    ),
    config: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    requests: Type.Optional(Type.Array(TraceRequestSchema)),
    events: Type.Array(TraceEventSchema),
    /** Aborts and retracts of active requests (retract resets a request's KV in every pool). */
    lifecycle: Type.Optional(Type.Array(LifecycleEventSchema)),
  },
  { additionalProperties: false },
);

export type Trace = Static<typeof TraceSchema>;
export type TraceEvent = Static<typeof TraceEventSchema>;
export type TraceRow = Static<typeof TraceRowSchema>;
export type SamplingDraw = Static<typeof SamplingDrawSchema>;
export type DraftChildEntry = Static<typeof DraftChild>;
export type VerifyResult = Static<typeof VerifyResultSchema>;
export type TraceRequest = Static<typeof TraceRequestSchema>;
export type LifecycleEvent = Static<typeof LifecycleEventSchema>;
export type FutureWrite = Static<typeof FutureWriteSchema>;
export type SlotReference = Static<typeof SlotReferenceSchema>;
