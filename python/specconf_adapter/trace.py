"""A trace builder that applies specconf's trace conventions (docs/tracing.md), so an engine records what
it ran and gets the conventions right by construction:

- one event per forward, numbered in order; rows in the order the forward packed them;
- target rows (prefill, decode, verify) sit at the position of the token they feed;
- a draft row sits at its anchor: the draft forward fed token x_p (input position p) is recorded at p - 1,
  and BOS (input position 0) has no draft row, since no token precedes it;
- draft-decode rows are temporary and name, as `hidden`, the draft row whose output they continue;
- trees (any topk): draft rows carry the engine's `candidate` numbers, scored `children` and `childMargin`;
- verify rows: the root (the pending bonus token) at L, each node at L + depth, `parent` the node's parent
  row within the request's verify rows (-1 for the root).

The builder records, it does not decide: a verify result holds the engine's own accept_len, accept_index (or
its accepted path, which the builder flattens as r * N + node), bonus, emitted tokens and finished flag,
exactly as given, so the trace laws judge what the engine did (a bonus read from the wrong row shows in bonus
stride). `greedy_accept` and `emit_cut` compute what a correct greedy engine would do: conveniences for
writing or testing an engine. Recorded in place of the engine's own values they would hide its bugs.

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
    """Greedy acceptance over one request's verify rows, as greedy_accept computes it (a convenience: what a
    correct greedy engine would accept, not a record of what an engine did)."""

    path: tuple
    """Verify-row indices of the accepted path, root first."""
    accept_len: int
    accept_tokens: tuple
    """predict at each accepted node: the tokens the round produces (the last is the bonus)."""
    bonus: int


def emit_cut(accept_tokens, max_emit=None, stop_ids=()):
    """Convenience (it computes, it records nothing): the emitted prefix of a round's tokens, up to and
    including the first stop id (EOS among them), at most max_emit tokens; and whether that ends the request."""
    emitted = list(accept_tokens if max_emit is None else accept_tokens[:max_emit])
    stop = next((i for i, token in enumerate(emitted) if token in stop_ids), None)
    if stop is not None:
        emitted = emitted[: stop + 1]
    finished = stop is not None or (max_emit is not None and len(emitted) >= max_emit)
    return tuple(emitted), finished


def greedy_accept(tokens, predicts, parents=None):
    """Convenience (it computes, it records nothing): what a correct greedy engine accepts over these verify
    rows, walking from the root while a child carries its parent's predict (children tried in row order).
    Pass your engine's own acceptance to Event.verify, or a bug in it cannot show in the trace."""
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

    def draft_rows(self, request, tokens, start, predicts=None, hidden=None, temporary=None, candidates=None,
                   children=None, child_margins=None):
        """Draft rows for tokens fed to the draft at input positions start, start + 1, ...: each is recorded at
        its anchor (input position - 1) and BOS (input position 0) gets no row. hidden: "target" (EAGLE: the
        target row at the anchor), "draft" (the draft row this one continues: draft decode), a list of
        RowRefs, or None (a standalone draft model takes no hidden state).

        Trees (any topk; a chain is a tree of width 1), per row, as the engine numbered and scored them:
        candidates (the candidate a draft-decode row expands; 0 the root), children (the row's topk best tokens
        as (number, token, score) tuples or {"number", "token", "score"} dicts: number the 1-based creation
        order in the request's round, parents first; score the cumulative log-softmax along the path in the
        draft's logit units) and child_margins (the topk-th minus the (topk+1)-th logit). A None entry (or
        list) leaves the field out. Returns the rows' RowRefs (none for BOS)."""
        if self.phase not in ("draft-extend", "draft-decode"):
            raise ValueError(f"draft_rows: a {self.phase} event")
        predicts = _per_row(predicts, len(tokens), "predicts")
        candidates = _per_row(candidates, len(tokens), "candidates")
        children = _per_row(children, len(tokens), "children")
        child_margins = _per_row(child_margins, len(tokens), "child_margins")
        temporary = self.phase == "draft-decode" if temporary is None else temporary
        refs = []
        for i, token in enumerate(tokens):
            position = start + i
            if position == 0:
                continue  # BOS: no token precedes it, so no draft row (the draft's BOS K/V is a constant)
            anchor = position - 1
            source = hidden[i] if isinstance(hidden, (list, tuple)) else self._builder._provenance(hidden, request, anchor)
            ref = self.row(
                request,
                token,
                anchor,
                temporary=temporary,
                hidden=source,
                predict=predicts[i],
                candidate=_integer(candidates[i], f"candidates[{i}]", 0),
                children=_children(children[i], f"children[{i}]"),
                childMargin=_number(child_margins[i], f"child_margins[{i}]"),
            )
            self._builder._last_draft[request] = ref
            refs.append(ref)
        return refs

    def verify(self, request, tokens, root_position, predicts, *, accept_len, bonus, emitted, accept_index=None,
               path=None, accept_tokens=None, finished=None, parents=None, candidates=None):
        """A request's verify rows (root first, then the drafted nodes in row order) and its verify result as
        the engine computed it. parents: each row's parent row (-1 for the root; default a chain); candidates:
        each row's draft candidate number (default: the row index, as in a chain).

        The result records, exactly as given: accept_len (the root counted), bonus, emitted (what the round
        emitted after the engine's EOS / stop id / max-new-tokens cuts) and either accept_index (the engine's
        flattened r * N + node indices, -1 padded to S + 1 entries) or path (the accepted rows within this
        request's verify rows, root first, which the builder flattens with the request's block r in this event
        and pads). accept_tokens (the predicts along the path, -1 padded to S + 1) and finished (the round ended
        the request; mirror acceptance reads it to leave cut rounds out) are left out when not given. Returns
        the verify result as it appears in the trace."""
        if self.phase != "verify":
            raise ValueError(f"verify: a {self.phase} event")
        if (accept_index is None) == (path is None):
            raise ValueError("verify: give exactly one of accept_index (flattened, as the engine has it) or path")
        predicts = _per_row(predicts, len(tokens), "predicts")
        parents = list(range(-1, len(tokens) - 1)) if parents is None else _per_row(parents, len(tokens), "parents")
        if not tokens or parents[0] != -1:
            raise ValueError("verify: parents must give one parent per row, -1 for the root (row 0)")
        candidates = list(range(len(tokens))) if candidates is None else _per_row(candidates, len(tokens), "candidates")
        depths = _depths(parents)
        for node, token in enumerate(tokens):
            self.row(request, token, root_position + depths[node], temporary=True, parent=parents[node],
                     candidate=candidates[node], predict=predicts[node])
        if path is not None:
            engine = self._builder.config
            block = len(self.verify_results)
            accept_index = [block * engine["numDraftTokens"] + _integer(node, "path", 0) for node in path]
            accept_index += [-1] * (engine["numSteps"] + 1 - len(accept_index))
        result = {
            "request": request,
            "acceptIndex": _integers(accept_index, "accept_index", -1),
            "acceptLen": _integer(accept_len, "accept_len", 1),
        }
        if accept_tokens is not None:
            result["acceptTokens"] = _integers(accept_tokens, "accept_tokens", None)
        result["bonus"] = _integer(bonus, "bonus", 0)
        result["emitted"] = _integers(emitted, "emitted", 0)
        if finished is not None:
            if not isinstance(finished, bool):
                raise ValueError(f"finished: {finished!r} is not a bool")
            result["finished"] = finished
        self.verify_results.append(result)
        return result

    def to_json(self):
        event = {"index": self.index, "phase": self.phase, **{k: v for k, v in self.fields.items() if v is not None}}
        event["rows"] = self.rows
        if self.verify_results:
            event["verify"] = self.verify_results
        return event


def _per_row(values, count, name):
    if values is None:
        return [None] * count
    values = list(values)
    if len(values) != count:
        raise ValueError(f"{name}: {len(values)} values for {count} rows")
    return values


def _integer(value, name, minimum):
    """An int (not a bool) >= minimum (None: unbounded), None passed through; else a ValueError naming it."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or (minimum is not None and value < minimum):
        bound = "" if minimum is None else f" >= {minimum}"
        raise ValueError(f"{name}: {value!r} is not an integer{bound}")
    return value


def _integers(values, name, minimum):
    if values is None or isinstance(values, (str, bytes, dict)):
        raise ValueError(f"{name}: {values!r} is not a list of integers")
    return [_integer(value, f"{name}[{i}]", minimum) for i, value in enumerate(values)]


def _number(value, name):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name}: {value!r} is not a number")
    return value


def _children(children, name):
    """A row's children as the schema's {"number", "token", "score"} objects (from dicts or 3-tuples)."""
    if children is None:
        return None
    out = []
    for i, child in enumerate(children):
        where = f"{name}[{i}]"
        if isinstance(child, dict):
            unknown = sorted(set(child) - {"number", "token", "score"})
            if unknown:
                raise ValueError(f"{where}: unknown fields {unknown}")
            number, token, score = child.get("number"), child.get("token"), child.get("score")
        elif isinstance(child, (list, tuple)) and len(child) == 3:
            number, token, score = child
        else:
            raise ValueError(f"{where}: {child!r} is not (number, token, score)")
        if number is None or token is None or score is None:
            raise ValueError(f"{where}: number, token and score are all required")
        out.append({
            "number": _integer(number, f"{where}.number", 1),
            "token": _integer(token, f"{where}.token", 0),
            "score": _number(score, f"{where}.score"),
        })
    return out


# What an Output carries that a trace request holds too (schemas/trace.schema.json TraceRequest), copied as is.
_REQUEST_FIELDS = ("stopTokenId", "finishedLength", "logprobs", "text", "stopString", "deltas", "usage")


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
        """The trace: requests from the case's prompts and the outputs (tokens, finish reason, and what else an
        Output carries that a trace request holds: stop id, finished length, logprobs, text, stop string,
        deltas, usage), and every event. `slots`: request id -> the request slot it ran on, for engines
        declaring request_slots (the law slot history)."""
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
            if output:
                reported = output.to_json()
                entry.update({key: reported[key] for key in _REQUEST_FIELDS if key in reported})
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
