"""The protocol loop: specconf writes one JSON line per message on the engine's stdin and reads one line per
answer from its stdout (docs/adapter.md). stdout carries nothing else, so `serve` points sys.stdout at stderr
while the engine runs: a stray print() in engine code becomes a log line instead of a protocol error.

The first message is the hello; the answer is the engine's name, version and capabilities. Every later
message is a request; `Engine.run` answers it. Raising `Unsupported` skips the case (it was outside what the
engine can do after all); any other exception fails the case, which specconf shrinks like any failure, and
the loop keeps serving. The loop ends when stdin closes.
"""
import json
import sys
import traceback

from .capabilities import Capabilities
from .records import Output, Request, Result

PROTOCOL = "specconf-engine"
PROTOCOL_VERSION = 2


class Unsupported(Exception):
    """The engine cannot run this case: specconf skips it (the law reads "not checkable", never a pass)."""


class ProtocolError(Exception):
    """A message that is not the protocol's: the engine answers with an error line naming it."""


class Engine:
    """Subclass it: set name, version and capabilities, and implement run(request) -> Result."""

    name = "my-engine"
    version = "0.0.0"
    capabilities = Capabilities()

    def run(self, request):
        raise NotImplementedError("Engine.run(request) -> Result")


def _hello(engine, message):
    if message.get("protocol") != PROTOCOL or message.get("version") != PROTOCOL_VERSION:
        raise ProtocolError(
            f"/protocol, /version: expected {PROTOCOL!r} version {PROTOCOL_VERSION}, "
            f"got {message.get('protocol')!r} version {message.get('version')!r}"
        )
    return {"hello": {"name": engine.name, "version": engine.version, "capabilities": engine.capabilities.to_json()}}


def _answer(request_id, result):
    if isinstance(result, list):
        result = Result(outputs=result)
    if not isinstance(result, Result):
        raise TypeError(f"Engine.run returned {type(result).__name__}; expected Result or a list of Output")
    outputs = [output.to_json() if isinstance(output, Output) else output for output in result.outputs]
    response = {"requestId": request_id, "outputs": outputs}
    if result.trace is not None:
        response["trace"] = result.trace
    return response


def handle(engine, message):
    """The answer to one message (a dict): the hello's, a request's outputs, or an error object."""
    if "hello" in message:
        return _hello(engine, message)
    request_id = message.get("requestId")
    try:
        request = Request.from_json(message)
        return _answer(request.request_id, engine.run(request))
    except Unsupported as error:
        return {"requestId": request_id, "error": str(error) or "unsupported", "unsupported": True}
    except Exception as error:  # noqa: BLE001 - one failing case, reported to specconf, which shrinks it
        traceback.print_exc(file=sys.stderr)
        return {"requestId": request_id, "error": f"{type(error).__name__}: {error}"}


def serve(engine, stdin=None, stdout=None):
    """Answers every line of stdin on stdout until stdin closes. print() inside the engine goes to stderr."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    protocol_out, sys.stdout = stdout, sys.stderr
    try:
        for line in stdin:
            if not line.strip():
                continue
            try:
                message = json.loads(line)
                response = handle(engine, message)
            except (json.JSONDecodeError, ProtocolError) as error:
                response = {"requestId": None, "error": f"protocol: {error}"}
            protocol_out.write(json.dumps(response, allow_nan=False) + "\n")
            protocol_out.flush()
    finally:
        sys.stdout = protocol_out
