#!/usr/bin/env python3
"""A toy speculative engine on python/specconf_adapter: greedy target-only decoding, and chains drafted by a
standalone draft model (the case's "mirror": the target with its LM head times 2^16, the same argmax), with a
trace; the engine computes its own acceptance and bonus and records them. The model is a pure
Python Llama (toy_llama.py); replace it with calls into your engine.

    npx specconf check --engine "python3 examples/toy_engine.py" --runs 2
"""
import functools
import math
import os
import sys

try:  # the installed package: pip install ./python (or pip install -e ./python in a checkout)
    import specconf_adapter  # noqa: F401
except ImportError:  # a checkout without it: the package's source beside the examples
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from specconf_adapter import Capabilities, Engine, Output, Result, TraceBuilder, emit_cut, serve  # noqa: E402
from toy_llama import Llama, argmax, truncate  # noqa: E402


load = functools.cache(Llama)  # a model directory is loaded once (specconf's model cache is content-addressed)


def top1(logits, parent_score):
    """The argmax, its cumulative score (parent_score + its log-softmax) and the top-1 minus top-2 logit."""
    best = argmax(logits)
    second = max(value for i, value in enumerate(logits) if i != best)
    log_sum = math.log(sum(math.exp(value - logits[best]) for value in logits))
    return best, parent_score - log_sum, logits[best] - second


class ToyEngine(Engine):
    name, version = "toy", "0.1.0"
    capabilities = Capabilities(drafts=("mirror",), model_formats=("hf",), max_num_steps=4, max_batch=2, arrivals=True,
                                observes=("acceptLens", "firstRoundDrafts", "trace", "verify", "predict"))

    def run(self, request):
        files, case, trace = request.model_files("hf"), request.case, TraceBuilder(request, self.name, self.version)
        target = load(files.target)
        draft = load(files.draft) if case.engine.speculative else None
        outputs = [self.generate(case, r, target, draft, trace) for r in case.requests]  # one request at a time
        return Result(outputs, trace.build(outputs))

    def generate(self, case, req, target, draft, trace):
        prompt, eos, S = list(req.prompt), case.model.eos_id, case.engine.num_steps
        cache = target.new_cache()
        predicts = [argmax(target.forward(cache, token, p)) for p, token in enumerate(prompt)]
        trace.event("prefill").target_rows(req.id, prompt, 0, predicts)
        out, accept_lens, first_drafts = [predicts[-1]], [], None
        done = lambda: out[-1] == eos or len(out) >= req.max_new_tokens  # noqa: E731
        if draft:  # the draft consumes x_1..x_L (BOS's row is a constant): its last row yields d_1
            draft_cache = draft.new_cache()
            d = self.draft_extend(trace, req.id, draft, draft_cache, prompt + out, 0)
        while not done():
            L = len(prompt) + len(out) - 1  # the bonus x_L has no KV yet
            if not draft:
                predict = argmax(target.forward(cache, out[-1], L))
                trace.event("decode").target_rows(req.id, [out[-1]], L, [predict])
                out.append(predict)
                continue
            drafts, score = [d[0]], d[1]
            for j in range(1, S):  # draft decode: d_j (candidate j), temporary; its row continues the previous one
                position = self.draft_decode_position(L, j)
                token, score, child_margin = top1(draft.forward(draft_cache, drafts[-1], position), score)
                drafts.append(token)
                trace.event("draft-decode", draft_step=j).draft_rows(
                    req.id, [drafts[-2]], position, [token], "draft", candidates=[j],
                    children=[[(j + 1, token, score)]], child_margins=[child_margin])
            first_drafts = first_drafts or drafts
            rows = [out[-1], *drafts]
            predicts = [argmax(target.forward(cache, token, L + i)) for i, token in enumerate(rows)]
            accept_len = 1  # greedy acceptance: the root, then each draft its parent predicted
            while accept_len < len(rows) and rows[accept_len] == predicts[accept_len - 1]:
                accept_len += 1
            bonus = predicts[self.bonus_row(accept_len)]
            emitted, finished = emit_cut(predicts[: accept_len - 1] + [bonus], req.max_new_tokens - len(out), [eos])
            trace.event("verify").verify(  # what this engine did, recorded as is: the trace laws judge it
                req.id, rows, L, predicts, accept_len=accept_len, bonus=bonus, emitted=emitted, finished=finished,
                accept_index=list(range(accept_len)) + [-1] * (S + 1 - accept_len))
            out += emitted
            accept_lens.append(accept_len)
            truncate(cache, L + accept_len)
            truncate(draft_cache, L + 1)
            if not done():  # draft extend over the new tokens: x_{L+1}.. at input positions L + 1..
                d = self.draft_extend(trace, req.id, draft, draft_cache, emitted, L + 1)
        reason = "eos" if out[-1] == eos else "length"
        return Output(req.id, out, reason, accept_lens=accept_lens if draft else None, first_round_drafts=first_drafts)

    def draft_extend(self, trace, request, draft, draft_cache, tokens, start):
        """Draft rows over tokens at input positions start..; the last yields d_1, the round's first candidate
        (a chain is a tree of width 1: its children are the argmax, scored by log-softmax). Returns d_1, score."""
        logits = [draft.forward(draft_cache, token, start + i) for i, token in enumerate(tokens)]
        token, score, child_margin = top1(logits[-1], 0.0)
        last = [None] * (len(tokens) - 1)
        trace.event("draft-extend").draft_rows(request, tokens, start, [argmax(row) for row in logits],
                                               children=last + [[(1, token, score)]], child_margins=last + [child_margin])
        return token, score

    def bonus_row(self, accept_len):
        """The verify row whose predict is the bonus: the last accepted node (a wrong row: bonus stride fails)."""
        return accept_len - 1

    def draft_decode_position(self, L, j):
        """d_j runs at input position L + j, right after the draft KV it extends (SGLang PR 25015's bug: + 1)."""
        return L + j


if __name__ == "__main__":
    serve(ToyEngine())
