"""A trace builder that applies specconf's trace conventions (docs/tracing.md), so an engine records what
it ran and gets the conventions right by construction:

- one event per forward, numbered in order; rows in the order the forward packed them;
- target rows (prefill, decode, verify) sit at the position of the token they feed;
- a draft row sits at its anchor: the draft forward fed token x_p (input position p) is recorded at p - 1,
  and BOS (input position 0) has no draft row, since no token precedes it;
- draft-decode rows are temporary and name, as `hidden`, the draft row whose output they continue;
- verify rows: the root (the pending bonus token) at L, each node at L + depth, `parent` the node's parent
  row within the request's verify rows (-1 for the root); accept_index holds the flattened indices
  r * N + node of the accepted path (r the request's block within the event), padded with -1 to S + 1;
  accept_len counts the root; the bonus is predict at the last accepted node.

Fields a row does not know are left out: each law says "not checkable" for what a trace lacks.
"""
from dataclasses import dataclass

FORMAT_VERSION = 1
PHASES = ("prefill", "decode", "verify", "draft-extend", "draft-decode")


@dataclass(frozen=True)
class RowRef:
    """An event's row: what `hidden` provenance points at."""

    event: int
    row: int

    def to_json(self):
        return {"event": self.event, "row": self.row}


@dataclass(frozen=True)
class Acceptance:
    """Greedy acceptance over one request's verify rows."""

    path: tuple
    """Verify-row indices of the accepted path, root first."""
    accept_len: int
    accept_tokens: tuple
    """predict at each accepted node: the tokens the round produces (the last is the bonus). The trace's
    acceptTokens pads them with -1 to S + 1 entries, as SGLang's accept_tokens."""
    bonus: int
    emitted: tuple = ()
    """The tokens the round emits: accept_tokens cut after the first stop token and at the cap."""
    finished: bool = False
    """The round ended the request (a stop token, or the cap reached)."""


def emit_cut(accept_tokens, max_emit=None, stop_ids=()):
    """The emitted prefix of a round's tokens: up to and including the first stop id (EOS among them), at
    most max_emit tokens; and whether that ends the request."""
    emitted = list(accept_tokens if max_emit is None else accept_tokens[:max_emit])
    stop = next((i for i, token in enumerate(emitted) if token in stop_ids), None)
    if stop is not None:
        emitted = emitted[: stop + 1]
    finished = stop is not None or (max_emit is not None and len(emitted) >= max_emit)
    return tuple(emitted), finished


def greedy_accept(tokens, predicts, parents=None):
    """Walks from the root while a child carries its parent's predict (children tried in row order)."""
    if len(tokens) != len(predicts):
        raise ValueError(f"verify: {len(tokens)} rows but {len(predicts)} predicts")
    parents = list(range(-1, len(tokens) - 1)) if parents is None else list(parents)
    if len(parents) != len(tokens) or parents[0] != -1:
        raise ValueError("verify: parents must give one parent per row, -1 for the root (row 0)")
    path = [0]
    while True:
        node = path[-1]
        child = next((c for c in range(len(tokens)) if parents[c] == node and tokens[c] == predicts[node]), None)
        if child is None:
            break
        path.append(child)
    accept_tokens = tuple(predicts[node] for node in path)
    return Acceptance(path=tuple(path), accept_len=len(path), accept_tokens=accept_tokens, bonus=accept_tokens[-1])


def _depths(parents):
    depths = []
    for parent in parents:
        depths.append(0 if parent < 0 else depths[parent] + 1)
    return depths


class Event:
    """One forward. Add rows with the phase's helper; each returns the RowRefs of the rows it added."""

    def __init__(self, builder, index, phase, fields):
        self._builder = builder
        self.index = index
        self.phase = phase
        self.rows = []
        self.verify_results = []
        self.fields = fields

    def row(self, request, token, position, **fields):
        """A raw row (schemas/trace.schema.json TraceRow); None-valued fields are left out."""
        row = {"request": request, "token": token, "position": position}
        for key, value in fields.items():
            if value is not None:
                row[key] = value.to_json() if isinstance(value, RowRef) else value
        self.rows.append(row)
        ref = RowRef(self.index, len(self.rows) - 1)
        if self.phase in ("prefill", "decode", "verify"):
            self._builder._target_rows[(request, position)] = ref
        return ref

    def target_rows(self, request, tokens, start, predicts=None, **fields):
        """Target rows feeding tokens at positions start, start + 1, ... (prefill chunks, decode)."""
        if self.phase not in ("prefill", "decode"):
            raise ValueError(f"target_rows: a {self.phase} event; use verify() for verify rows")
        predicts = _per_row(predicts, len(tokens), "predicts")
        return [
            self.row(request, token, start + i, predict=predicts[i], **fields) for i, token in enumerate(tokens)
        ]

    def draft_rows(self, request, tokens, start, predicts=None, hidden=None, temporary=None):
        """Draft rows for tokens fed to the draft at input positions start, start + 1, ...: each is recorded at
        its anchor (input position - 1) and BOS (input position 0) gets no row. hidden: "target" (EAGLE: the
        target row at the anchor), "draft" (the draft row this one continues: draft decode), a list of
        RowRefs, or None (a standalone draft model takes no hidden state). Returns the rows' RowRefs."""
        if self.phase not in ("draft-extend", "draft-decode"):
            raise ValueError(f"draft_rows: a {self.phase} event")
        predicts = _per_row(predicts, len(tokens), "predicts")
        temporary = self.phase == "draft-decode" if temporary is None else temporary
        refs = []
        for i, token in enumerate(tokens):
            position = start + i
            if position == 0:
                continue  # BOS: no token precedes it, so no draft row (the draft's BOS K/V is a constant)
            anchor = position - 1
            source = hidden[i] if isinstance(hidden, (list, tuple)) else self._builder._provenance(hidden, request, anchor)
            ref = self.row(request, token, anchor, temporary=temporary, hidden=source, predict=predicts[i])
            self._builder._last_draft[request] = ref
            refs.append(ref)
        return refs

    def verify(self, request, tokens, root_position, predicts, parents=None, candidates=None, max_emit=None, stop_ids=()):
        """A request's verify rows (root first, then the drafted nodes in row order) and its verify result,
        accepted greedily. parents: each row's parent row (-1 for the root; default a chain); candidates: each
        row's draft candidate number (default: the row index, as in a chain). The round emits the accepted
        tokens cut after the first of stop_ids (pass EOS and the request's stop ids) and at max_emit (the
        tokens the request may still emit). Returns the Acceptance with what it emitted."""
        if self.phase != "verify":
            raise ValueError(f"verify: a {self.phase} event")
        engine = self._builder.config
        acceptance = greedy_accept(tokens, predicts, parents)
        emitted, finished = emit_cut(acceptance.accept_tokens, max_emit, stop_ids)
        acceptance = Acceptance(acceptance.path, acceptance.accept_len, acceptance.accept_tokens, acceptance.bonus, emitted, finished)
        parents = list(range(-1, len(tokens) - 1)) if parents is None else list(parents)
        depths = _depths(parents)
        for node, token in enumerate(tokens):
            self.row(
                request,
                token,
                root_position + depths[node],
                temporary=True,
                parent=parents[node],
                candidate=node if candidates is None else candidates[node],
                predict=predicts[node],
            )
        block = len(self.verify_results)
        width = engine["numDraftTokens"]
        accept_index = [block * width + node for node in acceptance.path]
        accept_index += [-1] * (engine["numSteps"] + 1 - len(accept_index))
        result = {
            "request": request,
            "acceptIndex": accept_index,
            "acceptLen": acceptance.accept_len,
            "acceptTokens": list(acceptance.accept_tokens) + [-1] * (engine["numSteps"] + 1 - acceptance.accept_len),
            "bonus": acceptance.bonus,
            "emitted": list(emitted),
            "finished": finished,
        }
        self.verify_results.append(result)
        return acceptance

    def to_json(self):
        event = {"index": self.index, "phase": self.phase, **{k: v for k, v in self.fields.items() if v is not None}}
        event["rows"] = self.rows
        if self.verify_results:
            event["verify"] = self.verify_results
        return event


def _per_row(values, count, name):
    if values is None:
        return [None] * count
    if len(values) != count:
        raise ValueError(f"{name}: {len(values)} values for {count} rows")
    return list(values)


class TraceBuilder:
    """Builds one run's trace (schemas/trace.schema.json) for a request of the protocol."""

    def __init__(self, request, engine_name, engine_version=None, **engine_fields):
        case = request.case
        self.config = dict(case.engine.raw)
        if case.draft is not None:
            self.config["draft"] = case.draft.raw
        self._request = request
        self._engine = {"name": engine_name, "dtype": case.model.dtype, **engine_fields}
        if engine_version is not None:
            self._engine["version"] = engine_version
        self._events = []
        self._target_rows = {}
        self._last_draft = {}

    def event(self, phase, step=None, model=None, pool=None, draft_step=None):
        """Starts the next forward's event (numbered in order)."""
        if phase not in PHASES:
            raise ValueError(f"event: phase {phase!r} is not one of {PHASES}")
        model = model or ("target" if phase in ("prefill", "decode", "verify") else "draft")
        fields = {"step": step, "model": model, "pool": pool, "draftStep": draft_step}
        event = Event(self, len(self._events), phase, fields)
        self._events.append(event)
        return event

    def target_row(self, request, position):
        """The latest target row of `request` at `position` (EAGLE draft rows take their hidden state from it)."""
        return self._target_rows.get((request, position))

    def _provenance(self, hidden, request, anchor):
        if hidden is None:
            return None
        if hidden == "target":
            ref = self.target_row(request, anchor)
            if ref is None:
                raise ValueError(f"draft row at anchor {anchor} of request {request}: no target row at position {anchor}")
            return ref
        if hidden == "draft":
            ref = self._last_draft.get(request)
            if ref is None:
                raise ValueError(f"draft row of request {request}: no earlier draft row to continue")
            return ref
        if isinstance(hidden, RowRef):
            return hidden
        raise ValueError(f"hidden: {hidden!r} is not 'target', 'draft', a RowRef or None")

    def build(self, outputs, slots=None):
        """The trace: requests from the case's prompts and the outputs, and every event. `slots`: request id ->
        the request slot it ran on, for engines declaring request_slots (the law slot history)."""
        by_id = {output.id: output for output in outputs}
        requests = []
        for workload_request in self._request.case.requests:
            output = by_id.get(workload_request.id)
            entry = {
                "id": workload_request.id,
                "prompt": list(workload_request.prompt),
                "output": list(output.tokens) if output else [],
                "finishReason": (output.finish_reason if output else None) or "unfinished",
            }
            if slots and workload_request.id in slots:
                entry["slot"] = slots[workload_request.id]
            requests.append(entry)
        models = {"target": self._request.target_digest}
        if self._request.draft_digest and self._request.case.engine.speculative:
            models["draft"] = [self._request.draft_digest]
        return {
            "formatVersion": FORMAT_VERSION,
            "engine": self._engine,
            "models": models,
            "config": self.config,
            "requests": requests,
            "events": [event.to_json() for event in self._events],
        }
