// The trace: one event per forward, rows read from the tensors actually passed to the runtime.
// A small core is required (formatVersion, engine, events with phase and rows of request/token/
// position); every other field is optional so a third-party engine emits what it exposes, and each
// law says "not checkable" for what is absent. Changes stay additive within one formatVersion.
import { CloneType, Type, type Static } from "@sinclair/typebox";
import { LogprobEntrySchema } from "../sampling/params.ts";
import { FinishReasonSchema, TextOutputFields } from "./outputs-line.ts";

export const TRACE_FORMAT_VERSION = 1;

const HiddenProvenance = Type.Object(
  {
    event: Type.Integer({ minimum: 0, description: "Index of the forward event the hidden state came from." }),
    row: Type.Integer({ minimum: 0, description: "Row within that event." }),
  },
  { additionalProperties: false, description: "the forward event and row whose hidden-state output fed this row" },
);

const AuxSource = Type.Object(
  {
    event: Type.Integer({ minimum: 0, description: "Index of the forward event the state was read from." }),
    row: Type.Integer({ minimum: 0, description: "Row within that event." }),
    layer: Type.Integer({
      minimum: 0,
      description:
        "The residual stream this state is, numbered as eagle_aux_hidden_state_layer_ids: k is the input of target layer k (0: the embeddings), the target's layer count the last layer's output (before the final norm).",
    }),
    normed: Type.Boolean({
      description: "Read after the final norm (the LM-head input) rather than from the residual stream.",
    }),
  },
  {
    additionalProperties: false,
    description: "one auxiliary hidden state fed to an EAGLE-3 draft row: the forward event and row it was read from",
  },
);

const Attended = Type.Object(
  {
    positions: Type.Array(Type.Tuple([Type.Integer(), Type.Integer()]), {
      description: "Own request's persisted positions in this pool, as inclusive [lo, hi] ranges.",
    }),
    temporary: Type.Optional(
      Type.Array(Type.Integer(), {
        description: "Own request's temporary rows attended (positions), from earlier forwards.",
      }),
    ),
    batchRows: Type.Optional(
      Type.Array(Type.Integer({ minimum: 0 }), {
        description: "Rows of this same forward attended, including itself.",
      }),
    ),
    foreign: Type.Optional(
      Type.Array(
        Type.Object(
          {
            request: Type.Integer({ description: "The request whose slot was attended." }),
            position: Type.Integer({ description: "The position of that slot." }),
          },
          { additionalProperties: false },
        ),
        { description: "Slots attended that belong to another request (a leak): request and position." },
      ),
    ),
  },
  { additionalProperties: false },
);

const DraftChild = Type.Object(
  {
    number: Type.Integer({
      minimum: 1,
      description: "Candidate number: 1-based creation order within the request's round (parents are numbered first).",
    }),
    token: Type.Integer({ minimum: 0, description: "The candidate's token id (a target id)." }),
    score: Type.Number({
      description: "Cumulative log-softmax along the path from the root, in the draft's logit units (<= 0).",
    }),
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
    uniform: Type.Number({
      minimum: 0,
      exclusiveMaximum: 1,
      description: "The uniform in [0, 1) the decision took from the request's stream.",
    }),
    child: Type.Optional(
      Type.Integer({
        minimum: 0,
        description: "An acceptance test: the child's row index within the request's verify rows, and the outcome.",
      }),
    ),
    accepted: Type.Optional(
      Type.Boolean({ description: "An acceptance test's outcome: whether the child was accepted." }),
    ),
    token: Type.Optional(Type.Integer({ minimum: 0, description: "A token draw (no child): the token drawn." })),
    margin: Type.Optional(
      Type.Number({
        minimum: 0,
        description:
          "Distance of the uniform to the decision's boundary times the temperature (logit units; 0: a cut near-tie).",
      }),
    ),
  },
  { additionalProperties: false },
);

export const TraceRowSchema = Type.Object(
  {
    request: Type.Integer({ minimum: 0, description: "The request (id) this row computes for." }),
    token: Type.Integer({
      description:
        "The token fed to the model. Negative: an unresolved placeholder reached the model (a bug the laws flag).",
    }),
    position: Type.Integer({ description: "The position fed to the model (draft rows: the anchor position)." }),
    slot: Type.Optional(
      Type.Integer({ minimum: 0, description: "The KV slot this row's K/V was written to (in the event's pool)." }),
    ),
    temporary: Type.Optional(
      Type.Boolean({
        description:
          "The row's KV is temporary (draft decode, verify nodes): freed or compacted after the round; its position may repeat.",
      }),
    ),
    parent: Type.Optional(
      Type.Integer({
        minimum: -1,
        description: "Verify rows: the tree parent's index within the request's verify rows (-1 for the root).",
      }),
    ),
    placeholder: Type.Optional(
      Type.Integer({
        maximum: -1,
        description:
          "Overlap scheduling: the plan held this placeholder (-(ring entry + 1)) here; `token` is its launch-time resolution.",
      }),
    ),
    discarded: Type.Optional(
      Type.Boolean({
        description:
          "Discarded work: the row ran, but its request's results from it were never processed (overlap: the extra round of a request that finished while it was planned, or a round in flight when an abort or retract landed). Invariance laws leave such rows out; slot and position laws still follow them.",
      }),
    ),
    hidden: Type.Optional(
      CloneType(HiddenProvenance, {
        description:
          "Where the hidden state fed to this draft row came from: draft extend, the target row at the row's position (its anchor); draft decode, the draft row it continues.",
      }),
    ),
    aux: Type.Optional(
      Type.Array(AuxSource, {
        description:
          "EAGLE-3 draft rows fed the target's auxiliary states (draft extend): the states concatenated into fc's input, in order, each with its provenance, layer and norm side.",
      }),
    ),
    draftPredict: Type.Optional(
      Type.Integer({
        minimum: 0,
        description:
          "EAGLE-3 draft rows: the argmax over the draft's own vocabulary (a draft id); predict and the children's tokens are target ids (the draft id plus its d2t offset).",
      }),
    ),
    predict: Type.Optional(
      Type.Integer({
        minimum: 0,
        description:
          "argmax of this row's logits (ties to the lower id) and its top-1 margin in the model's logit units.",
      }),
    ),
    margin: Type.Optional(
      Type.Number({
        description: "Top-1 margin of this row's logits (best minus second best, the model's logit units).",
      }),
    ),
    topLogit: Type.Optional(
      Type.Number({
        description:
          "The logit of predict: compared with tolerance by the draft-reference law (it moves with hidden-state inputs).",
      }),
    ),
    rawPredict: Type.Optional(
      Type.Integer({
        minimum: 0,
        description:
          "Rows sampling for a request whose options process the logits (penalties, bias, min tokens): predict, margin and topLogit are the processed ones, rawPredict the argmax before processing.",
      }),
    ),
    attended: Type.Optional(
      CloneType(Attended, {
        description:
          "What this row attended: own persisted positions, own temporary rows, rows of this forward, other requests' slots.",
      }),
    ),
    window: Type.Optional(
      CloneType(Attended, {
        description:
          "Models with sliding-window attention: what the row's windowed layers attend (`attended` is what its full-attention layers do). Read from the same mask, so window metadata a path lost shows here.",
      }),
    ),
    recurrent: Type.Optional(
      Type.Object(
        {
          request: Type.Integer({
            description: "The request whose tokens the state this row started from had absorbed.",
          }),
          length: Type.Integer({
            minimum: 0,
            description:
              "How many of its tokens (positions 0 .. length - 1 of this pool; a draft pool's by anchor): a row at position p must start from length p.",
          }),
        },
        {
          description:
            "Hybrid models (recurrent layers): the recurrent state this row's recurrent layers started from, as the engine's state bookkeeping says of the state it fed (the one it carried with the state, not the one it meant): a committed state, a temporary row's, or the previous row of the same forward.",
        },
      ),
    ),
    candidate: Type.Optional(
      Type.Integer({
        minimum: 0,
        description:
          "Tree drafting (any topk; a chain is a tree of width 1): the draft candidate this row carries, by number (0 is the root). On draft-decode rows (the frontier node expanded) and verify rows.",
      }),
    ),
    children: Type.Optional(
      Type.Array(DraftChild, {
        description:
          "Tree drafting: the candidates this row's draft logits expand into, its topk best tokens (ties to the lower id) in creation order, with cumulative scores. On the draft-extend row that yields a round's root and on every draft-decode row: the laws judge frontier and tree selection from these.",
      }),
    ),
    childMargin: Type.Optional(
      Type.Number({
        description:
          "The topk-th best minus the (topk+1)-th best logit of this row (draft units): below the draft epsilon, which tokens become children is itself a near-tie.",
      }),
    ),
    draws: Type.Optional(
      Type.Array(SamplingDrawSchema, {
        description:
          "Stochastic requests: the decisions made with this row's distribution, in the order they were made.",
      }),
    ),
    grammarState: Type.Optional(
      Type.Integer({
        minimum: -1,
        description:
          "Requests with a grammar: the automaton state whose mask this row's choice was made under (target rows: predict is the masked argmax; draft rows: children are the allowed tokens first). -1: a dead state.",
      }),
    ),
  },
  { additionalProperties: false },
);

export const VerifyResultSchema = Type.Object(
  {
    request: Type.Integer({ minimum: 0, description: "The request (id) this verify result is for." }),
    acceptIndex: Type.Array(Type.Integer({ minimum: -1 }), {
      description: "Flattened row indices r * N + node of the accepted path, padded with -1 to S + 1 entries.",
    }),
    acceptLen: Type.Integer({ minimum: 1, description: "Path length including the root (SGLang v2 accept_lens)." }),
    acceptTokens: Type.Optional(
      Type.Array(Type.Integer(), {
        description:
          "predict at each accepted node, padded with -1 to S + 1 entries (SGLang's accept_tokens): the first accept_len are the tokens the round produced, the last of them the bonus.",
      }),
    ),
    bonus: Type.Integer({ minimum: 0, description: "The new bonus token: predict at the last accepted node." }),
    emitted: Type.Optional(
      Type.Array(Type.Integer({ minimum: 0 }), {
        description: "Tokens emitted this round, after EOS / stop id / max-new-tokens cuts.",
      }),
    ),
    finished: Type.Optional(
      Type.Boolean({ description: "The round ended the request (EOS, a stop id or max new tokens)." }),
    ),
    discarded: Type.Optional(
      Type.Boolean({ description: "Discarded work (see TraceRow.discarded): nothing of this round was emitted." }),
    ),
  },
  { additionalProperties: false },
);

export const PHASES = ["prefill", "decode", "verify", "draft-extend", "draft-decode"] as const;
export type Phase = (typeof PHASES)[number];

/** A future-ring write (overlap): the value a producing forward stored for the next step's placeholder. */
export const FutureWriteSchema = Type.Object(
  {
    placeholder: Type.Integer({ maximum: -1, description: "The placeholder (-(ring entry + 1)) this write resolves." }),
    request: Type.Integer({ minimum: 0, description: "The request whose output it is." }),
    token: Type.Optional(Type.Integer({ minimum: 0, description: "The next root token (bonus or sampled token)." })),
    draft: Type.Optional(
      Type.Array(Type.Integer({ minimum: 0 }), {
        description: "The next draft root's candidate tokens (draft decode's first rows and verify's depth-1 nodes).",
      }),
    ),
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
    pool: Type.String({ description: "The pool whose slots changed hands." }),
    holder: Type.Integer({ minimum: -1, description: "A request id, or -1 for the prefix cache itself." }),
    slots: Type.Array(Type.Integer({ minimum: 0 }), { description: "The slots concerned." }),
    change: Type.Union([Type.Literal("acquire"), Type.Literal("drop"), Type.Literal("write"), Type.Literal("free")], {
      description: "acquire, drop, write or free (see the object's description).",
    }),
    reason: Type.Optional(
      Type.Union([Type.Literal("evict"), Type.Literal("flush")], {
        description: "The prefix cache's drops: eviction under pool pressure, or the flush at the end of the run.",
      }),
    ),
  },
  { additionalProperties: false },
);

export const TraceEventSchema = Type.Object(
  {
    index: Type.Integer({
      minimum: 0,
      description: "The event's number: 0, 1, 2, ... in the order the forwards ran (hidden provenance refers to it).",
    }),
    step: Type.Optional(Type.Integer({ minimum: 0, description: "The engine step the forward ran in." })),
    phase: Type.Union(
      PHASES.map((p) => Type.Literal(p)),
      { description: "prefill, decode (target-only), verify, draft-extend or draft-decode." },
    ),
    model: Type.Optional(
      Type.String({ description: "The model that ran: target or draft (multi-layer: the module's name)." }),
    ),
    pool: Type.Optional(Type.String({ description: "The KV pool the forward read and wrote." })),
    draftStep: Type.Optional(Type.Integer({ minimum: 0, description: "Draft decode: step j (1-based) of the round." })),
    module: Type.Optional(
      Type.Integer({
        minimum: 0,
        description: "Multi-layer drafting: the draft module (its step k) this forward ran.",
      }),
    ),
    paddedRows: Type.Optional(
      Type.Integer({
        minimum: 1,
        description: "Padded graph replay: padding rows the graph ran beyond `rows` (poison; not recorded as rows).",
      }),
    ),
    rows: Type.Array(TraceRowSchema, {
      description: "The forward's rows in the order it packed them (rows of one request in ascending order).",
    }),
    verify: Type.Optional(
      Type.Array(VerifyResultSchema, {
        description: "Verify events: one result per request in the forward, in the order of their row blocks.",
      }),
    ),
    released: Type.Optional(
      Type.Array(
        Type.Object(
          {
            pool: Type.String({ description: "The pool the slots return to." }),
            slots: Type.Array(Type.Integer({ minimum: 0 }), { description: "The slots released." }),
          },
          { additionalProperties: false },
        ),
        {
          description:
            "Slots each pool released after this forward and before the next one (finished, aborted or retracted requests, rejected verify nodes, temporary draft rows): with the rows' slots it lets KV conservation follow every slot's ownership from the trace alone.",
        },
      ),
    ),
    futures: Type.Optional(
      Type.Array(FutureWriteSchema, {
        description: "Overlap: future-ring writes this forward made (read by the next step's placeholders).",
      }),
    ),
    references: Type.Optional(
      Type.Array(SlotReferenceSchema, {
        description:
          "Slot ownership changes after this forward and before the next one, in order (engines with shared slots); `released` still lists the slots freed.",
      }),
    ),
  },
  { additionalProperties: false },
);

export const TraceRequestSchema = Type.Object(
  {
    id: Type.Integer({ minimum: 0, description: "The request's id (the case's)." }),
    prompt: Type.Array(Type.Integer({ minimum: 0 }), { description: "The prompt token ids." }),
    output: Type.Array(Type.Integer({ minimum: 0 }), {
      description: "Every output token the engine emitted, in order.",
    }),
    finishReason: CloneType(FinishReasonSchema, { description: "length, eos, stop, abort, or unfinished." }),
    stopTokenId: Type.Optional(
      Type.Integer({ minimum: 0, description: 'The stop id that ended the request (finish reason "stop").' }),
    ),
    finishedLength: Type.Optional(
      Type.Integer({
        minimum: 0,
        description:
          "Output tokens when the request finished (SGLang's finished_len): the output must be exactly this long.",
      }),
    ),
    logprobs: Type.Optional(
      Type.Array(LogprobEntrySchema, { description: "One entry per output token, for requests asking for logprobs." }),
    ),
    slot: Type.Optional(
      Type.Integer({
        minimum: 0,
        description:
          "The request slot it ran on (engine requestSlots: later requests reuse a slot; the law slot history).",
      }),
    ),
    ...TextOutputFields,
  },
  { additionalProperties: false },
);

export const LifecycleEventSchema = Type.Object(
  {
    kind: Type.Union([Type.Literal("abort"), Type.Literal("retract"), Type.Literal("prefix-hit")], {
      description:
        "prefix-hit: the request starts its prefill with a cached prefix (its KV below `pools[].length` is shared).",
    }),
    request: Type.Integer({ minimum: 0, description: "The request it happened to." }),
    step: Type.Optional(Type.Integer({ minimum: 0, description: "The engine step it happened in." })),
    beforeEvent: Type.Integer({ minimum: 0, description: "Index of the first forward event after it." }),
    matched: Type.Optional(
      Type.Integer({
        minimum: 0,
        description: "prefix-hit: the matched length before page alignment (positions whose KV the cache could give).",
      }),
    ),
    pools: Type.Optional(
      Type.Array(
        Type.Object(
          {
            pool: Type.String({ description: "The pool." }),
            length: Type.Integer({
              minimum: 0,
              description: "Positions [0, length) of the request reuse cached KV in that pool.",
            }),
          },
          { additionalProperties: false },
        ),
        { description: "prefix-hit: the positions each pool reuses, [0, length)." },
      ),
    ),
  },
  { additionalProperties: false },
);

export const TraceSchema = Type.Object(
  {
    formatVersion: Type.Literal(TRACE_FORMAT_VERSION, { description: "Trace format version (1)." }),
    engine: Type.Object(
      {
        name: Type.String({ description: "The engine's name." }),
        version: Type.Optional(Type.String({ description: "The engine's version." })),
        ortVersion: Type.Optional(Type.String({ description: "ONNX Runtime version, for engines running on it." })),
        ep: Type.Optional(Type.String({ description: "Execution provider or device (cpu, cuda, webgpu)." })),
        dtype: Type.Optional(Type.String({ description: "The models' arithmetic: float32 or float64." })),
        threads: Type.Optional(Type.Integer({ description: "Intra-op threads." })),
        graphOptimizationLevel: Type.Optional(Type.String({ description: "ONNX Runtime graph optimization level." })),
        batchGrouping: Type.Optional(
          Type.Union([Type.Literal("observed"), Type.Literal("unobserved")], {
            description:
              '"unobserved": the events are per request (the engine batches, but which requests shared a forward is not visible to it): laws that read batching from the events compare outputs instead.',
          }),
        ),
      },
      {
        additionalProperties: true,
        description: "The engine that produced the trace and how it ran (recorded with every trace).",
      },
    ),
    models: Type.Optional(
      Type.Object(
        {
          target: Type.String({ description: "The target's digest." }),
          draft: Type.Optional(
            Type.Array(Type.String(), { description: "The draft models' digests (one per multi-layer module)." }),
          ),
        },
        {
          additionalProperties: false,
          description: "sha256 digests of the ONNX graphs of the models that ran (the target's and each draft's).",
        },
      ),
    ),
    config: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description:
          "The engine config the run used (the case's /engine, with the draft); laws read topk and numSteps from it.",
      }),
    ),
    requests: Type.Optional(
      Type.Array(TraceRequestSchema, {
        description: "Each request with its prompt and output: the laws' view of what was emitted.",
      }),
    ),
    events: Type.Array(TraceEventSchema, { description: "One event per forward, in the order they ran." }),
    lifecycle: Type.Optional(
      Type.Array(LifecycleEventSchema, {
        description: "Aborts and retracts of active requests (retract resets a request's KV in every pool).",
      }),
    ),
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
