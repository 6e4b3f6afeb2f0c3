"""specconf_adapter: put an engine behind specconf's JSON Lines protocol (docs/adapter.md) in about 50 lines.

Stdlib only, Python >= 3.10. An engine subclasses `Engine` (name, version, capabilities, `run`) and calls
`serve(engine)`; each request arrives as a typed `Request` (the case, the model files specconf exported for it),
and `run` returns the outputs and, optionally, a trace built with `TraceBuilder`, which applies the trace
conventions of docs/tracing.md (draft rows at anchor p - 1, no draft row for BOS, flattened accept_index, ...).
"""
from .capabilities import Capabilities
from .protocol import PROTOCOL, PROTOCOL_VERSION, Engine, ProtocolError, Unsupported, handle, serve
from .records import Case, DraftConfig, EngineConfig, ModelFiles, ModelSpec, Output, Request, Result, WorkloadRequest
from .text import apply_stop_strings, detokenize, first_stop
from .trace import Acceptance, Event, RowRef, TraceBuilder, emit_cut, greedy_accept

__all__ = [
    "Acceptance",
    "Capabilities",
    "Case",
    "DraftConfig",
    "Engine",
    "EngineConfig",
    "Event",
    "ModelFiles",
    "ModelSpec",
    "Output",
    "PROTOCOL",
    "PROTOCOL_VERSION",
    "ProtocolError",
    "RowRef",
    "Request",
    "Result",
    "TraceBuilder",
    "Unsupported",
    "WorkloadRequest",
    "apply_stop_strings",
    "detokenize",
    "emit_cut",
    "first_stop",
    "greedy_accept",
    "handle",
    "serve",
]
