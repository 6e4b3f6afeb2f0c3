"""What an engine declares in the handshake (schemas/adapter-hello-response.schema.json, docs/adapter.md).

Every field narrows the cases specconf generates; a field left at None is omitted, which means the narrowest
choice (chains only, one request, no chunking, page 1, float32). Python names are snake_case; the wire names
are the schema's camelCase.
"""
from dataclasses import dataclass, fields

MODES = ("target-only", "speculative")
MODEL_FORMATS = ("onnx", "hf", "gguf")
DTYPES = ("float32", "float64")
MODEL_FAMILIES = ("sliding-window", "rope-scaling", "hybrid")


def _camel(name):
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


@dataclass(frozen=True)
class Capabilities:
    modes: tuple = MODES
    """Engine modes: "target-only" (greedy, the lossless baseline) and/or "speculative"."""
    drafts: tuple = ("mirror",)
    """Draft kinds (case /draft/kind): mirror, truncated-mirror, noisy-mirror, eagle, eagle3, ngram, ..."""
    model_formats: tuple = ("hf",)
    """Model files the engine loads: "onnx", "hf", "gguf"; () if it builds models from the case's spec."""
    max_num_steps: int | None = None
    max_topk: int | None = None
    multi_layer: bool | None = None
    chunked_prefill: bool | None = None
    page_sizes: tuple | None = None
    max_batch: int | None = None
    arrivals: bool | None = None
    aborts: bool | None = None
    retracts: bool | None = None
    graph_replay: bool | None = None
    padded_replay: bool | None = None
    overlap: bool | None = None
    prefix_cache: bool | None = None
    dtypes: tuple | None = None
    draft_schedule: bool | None = None
    """Per-request speculation schedules (/workload/requests/i/draftSchedule): draft steps per round, 0 for off."""
    context_limits: bool | None = None
    """The engine's context (/engine/contextLength) and a shorter draft context (/engine/draftContextLength):
    requests reach the context; speculation drafts only what fits; past the draft's context, no speculation."""
    request_slots: bool | None = None
    """Request slots (/engine/requestSlots) reused in sequence by later requests; trace requests carry `slot`."""
    text: bool | None = None
    """The text layer: detokenized requests (sampling "stop") report text, stopString, deltas, usage (text.py)."""
    model_families: tuple | None = None
    """Model families run beside plain Llama: "sliding-window", "rope-scaling", "hybrid" (docs/export.md)."""
    sampling: tuple | None = None
    """Request sampling options honored: stopTokenIds, minNewTokens, ..., temperature, seed (docs/adapter.md)."""
    observes: tuple = ()
    """What outputs and traces carry: "acceptLens", "firstRoundDrafts", "trace", "verify", "predict", ..."""

    def __post_init__(self):
        if not self.modes or any(mode not in MODES for mode in self.modes):
            raise ValueError(f"capabilities.modes: {list(self.modes)} must be a non-empty subset of {list(MODES)}")
        for name in ("model_formats", "dtypes", "model_families"):
            allowed = {"model_formats": MODEL_FORMATS, "dtypes": DTYPES, "model_families": MODEL_FAMILIES}[name]
            values = getattr(self, name)
            if values is not None and any(value not in allowed for value in values):
                raise ValueError(f"capabilities.{name}: {list(values)} must be a subset of {list(allowed)}")
        for name in ("max_num_steps", "max_topk", "max_batch"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value < 1):
                raise ValueError(f"capabilities.{name}: {value!r} must be an integer >= 1")

    def to_json(self):
        """The handshake's capabilities object: camelCase names, None fields left out, tuples as lists."""
        out = {}
        for field in fields(self):
            value = getattr(self, field.name)
            if value is None:
                continue
            out[_camel(field.name)] = list(value) if isinstance(value, tuple) else value
        return out
