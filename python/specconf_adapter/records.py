"""Typed records of the protocol: the request specconf sends (its case, model digests and files) and the
outputs an engine returns (schemas/adapter-request.schema.json, schemas/adapter-response.schema.json).

The views are read-only dataclasses over the JSON; `raw` keeps each JSON object whole, so a field this
module does not name (a newer case field, a sampling option) is still there. Wire names are camelCase.
"""
from dataclasses import dataclass, field


def _need(obj, key, where):
    if not isinstance(obj, dict) or key not in obj:
        raise KeyError(f"{where}/{key}: missing")
    return obj[key]


@dataclass(frozen=True)
class ModelSpec:
    """The generated model (schemas/case.schema.json /model/spec): sizes, dtype, special tokens."""

    name: str
    vocab: int
    hidden: int
    layers: int
    dtype: str
    bos_id: int
    eos_id: int
    preamble: tuple
    raw: dict = field(repr=False)

    @staticmethod
    def from_json(spec, where="/case/model/spec"):
        return ModelSpec(
            name=_need(spec, "name", where),
            vocab=_need(spec, "vocab", where),
            hidden=_need(spec, "hidden", where),
            layers=_need(spec, "layers", where),
            dtype=_need(spec, "dtype", where),
            bos_id=_need(spec, "bosId", where),
            eos_id=_need(spec, "eosId", where),
            preamble=tuple(spec.get("preamble", ())),
            raw=spec,
        )


@dataclass(frozen=True)
class DraftConfig:
    """The case's draft (/draft): its kind decides which model file is the draft (docs/adapter.md)."""

    kind: str
    raw: dict = field(repr=False)


@dataclass(frozen=True)
class EngineConfig:
    """The engine config (/engine): mode, S (num_steps), K (topk), N (num_draft_tokens), chunking, pages."""

    mode: str
    num_steps: int
    topk: int
    num_draft_tokens: int
    chunk_size: int | None
    page_size: int
    token_budget: int
    raw: dict = field(repr=False)

    @property
    def speculative(self):
        return self.mode == "speculative"

    @property
    def context_length(self):
        """The engine's context per request (prompt + output at most this), or None: the model's maxPositions."""
        return self.raw.get("contextLength")

    @property
    def draft_context_length(self):
        """The draft's own context (no draft row feeds a position at or past it), or None: the target's."""
        return self.raw.get("draftContextLength")

    @property
    def request_slots(self):
        """Request slots later requests reuse (a slot's drafter state must start fresh), or None: a slot each."""
        return self.raw.get("requestSlots")

    @staticmethod
    def from_json(engine, where="/case/engine"):
        return EngineConfig(
            mode=_need(engine, "mode", where),
            num_steps=_need(engine, "numSteps", where),
            topk=_need(engine, "topk", where),
            num_draft_tokens=_need(engine, "numDraftTokens", where),
            chunk_size=engine.get("chunkSize"),
            page_size=engine.get("pageSize", 1),
            token_budget=engine.get("tokenBudget", 256),
            raw=engine,
        )


@dataclass(frozen=True)
class WorkloadRequest:
    """One request of the workload: prompt (BOS first), the cap on new tokens, arrival step, sampling."""

    id: int
    prompt: tuple
    max_new_tokens: int
    arrival_step: int
    sampling: dict | None
    raw: dict = field(repr=False)


@dataclass(frozen=True)
class Case:
    """The case to run (schemas/case.schema.json); the model is always given as its full spec."""

    model: ModelSpec
    draft: DraftConfig | None
    engine: EngineConfig
    requests: tuple
    raw: dict = field(repr=False)

    @staticmethod
    def from_json(case):
        model = _need(case, "model", "/case")
        draft = case.get("draft")
        workload = _need(case, "workload", "/case")
        requests = tuple(
            WorkloadRequest(
                id=_need(r, "id", f"/case/workload/requests/{i}"),
                prompt=tuple(_need(r, "prompt", f"/case/workload/requests/{i}")),
                max_new_tokens=_need(r, "maxNewTokens", f"/case/workload/requests/{i}"),
                arrival_step=r.get("arrivalStep", 0),
                sampling=r.get("sampling"),
                raw=r,
            )
            for i, r in enumerate(_need(workload, "requests", "/case/workload"))
        )
        return Case(
            model=ModelSpec.from_json(_need(model, "spec", "/case/model")),
            draft=DraftConfig(kind=_need(draft, "kind", "/case/draft"), raw=draft) if draft else None,
            engine=EngineConfig.from_json(_need(case, "engine", "/case")),
            requests=requests,
            raw=case,
        )


@dataclass(frozen=True)
class ModelFiles:
    """The exported files of one format: the target's file or directory, the draft's (None: no draft model)."""

    target: str
    draft: str | None


@dataclass(frozen=True)
class Request:
    """One protocol request: the case, the models' digests and exported files, whether a trace is wanted."""

    request_id: int
    case: Case
    target_digest: str
    draft_digest: str | None
    files: dict
    want_trace: bool
    raw: dict = field(repr=False)
    vocabulary: tuple | None = None
    """Each token id's text ("" for BOS and EOS), sent when a request is detokenized (sampling "stop")."""

    @staticmethod
    def from_json(message):
        models = _need(message, "models", "")
        files = {
            fmt: ModelFiles(target=_need(entry, "target", f"/models/files/{fmt}"), draft=entry.get("draft"))
            for fmt, entry in models.get("files", {}).items()
        }
        return Request(
            request_id=_need(message, "requestId", ""),
            case=Case.from_json(_need(message, "case", "")),
            target_digest=_need(models, "target", "/models"),
            draft_digest=models.get("draft"),
            files=files,
            want_trace=bool(message.get("wantTrace", False)),
            raw=message,
            vocabulary=tuple(message["vocabulary"]) if "vocabulary" in message else None,
        )

    def model_files(self, fmt):
        """The files specconf exported in `fmt` for this case (it exports the formats the engine declared)."""
        if fmt not in self.files:
            raise KeyError(f"/models/files/{fmt}: specconf sent no {fmt} files (declare {fmt!r} in model_formats)")
        return self.files[fmt]


@dataclass
class Output:
    """One workload request's result (an outputs line of docs/validate.md). Fields left None are omitted."""

    id: int
    tokens: list
    finish_reason: str | None = None
    """"length", "eos", "stop", "abort" or "unfinished"."""
    stop_token_id: int | None = None
    finished_length: int | None = None
    logprobs: list | None = None
    accept_lens: list | None = None
    """Per verify round, the root included (SGLang v2's accept_lens)."""
    first_round_drafts: list | None = None
    """d_1..d_S of the first round."""
    rounds_include_first_token: bool | None = None
    text: str | None = None
    """Detokenized requests (sampling "stop"): the output text, cut at the first stop string (text.py)."""
    stop_string: str | None = None
    """The stop string that ended the request (finish reason "stop")."""
    deltas: list | None = None
    """Streamed chunks, one per engine step that emitted tokens: {"text": ..., "tokens": [...]}."""
    usage: dict | None = None
    """{"promptTokens": ..., "completionTokens": ...}."""

    def to_json(self):
        out = {"id": self.id, "tokens": list(self.tokens)}
        for name, key in (
            ("finish_reason", "finishReason"),
            ("stop_token_id", "stopTokenId"),
            ("finished_length", "finishedLength"),
            ("logprobs", "logprobs"),
            ("accept_lens", "acceptLens"),
            ("first_round_drafts", "firstRoundDrafts"),
            ("rounds_include_first_token", "roundsIncludeFirstToken"),
            ("text", "text"),
            ("stop_string", "stopString"),
            ("deltas", "deltas"),
            ("usage", "usage"),
        ):
            value = getattr(self, name)
            if value is not None:
                out[key] = list(value) if isinstance(value, tuple) else value
        return out


@dataclass
class Result:
    """What `Engine.run` returns: one Output per workload request, and a trace (a dict, TraceBuilder.build())."""

    outputs: list
    trace: dict | None = None
