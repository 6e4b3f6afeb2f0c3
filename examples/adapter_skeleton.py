#!/usr/bin/env python3
"""The smallest specconf engine adapter, on python/specconf_adapter (docs/adapter.md, docs/tracing.md).

specconf starts this command, sends a hello (answered with the capabilities below), then one request per
case: the case (model spec, draft, engine config, workload) and the files of the models exported for it.
specconf generates only cases inside the capabilities. Replace generate() with a call into your engine
(SGLang, vLLM, ...), loaded from request.model_files("hf"). examples/toy_engine.py is a complete one.

    npx specconf check --engine "python3 examples/adapter_skeleton.py"
"""
import os
import sys

try:  # the installed package: pip install ./python (or pip install -e ./python in a checkout)
    import specconf_adapter  # noqa: F401
except ImportError:  # a checkout without it: the package's source beside the examples
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from specconf_adapter import Capabilities, Engine, Output, Result, TraceBuilder, Unsupported, serve  # noqa: E402


class MyEngine(Engine):
    name, version = "my-engine", "0.0.1"
    capabilities = Capabilities(
        modes=("target-only", "speculative"),  # target-only runs are the lossless baseline
        drafts=("mirror",),  # mirror: a standalone draft model (the target, LM head x 2^16); "eagle": an EAGLE head
        model_formats=("hf",),  # Hugging Face checkpoints: a directory per model
        max_num_steps=8,
        max_topk=1,  # chains only
        max_batch=1,  # one request per case
        observes=("acceptLens",),  # what your outputs report; add "trace", "verify", "predict" with a trace
        sampling=(),  # request sampling options you honor: "stopTokenIds", "minNewTokens", "logprobs", ...
    )

    def run(self, request):
        files = request.model_files("hf")  # files.target, files.draft: checkpoint directories
        trace = TraceBuilder(request, self.name, self.version)  # optional: record each forward (docs/tracing.md)
        outputs = [self.generate(request.case, r, files, trace) for r in request.case.requests]
        return Result(outputs, trace.build(outputs) if request.want_trace else None)

    def generate(self, case, workload_request, files, trace):
        """Greedy tokens for one workload request, and what your engine can report about its rounds."""
        raise Unsupported("wire your engine in here")  # Unsupported skips a case; any other exception fails it
        # per verify round, if you trace: what your engine did, recorded as is (docs/tracing.md)
        # trace.event("verify").verify(workload_request.id, rows, L, predicts, accept_len=..., bonus=...,
        #                              emitted=..., finished=..., accept_index=...)
        # return Output(workload_request.id, tokens, "length" | "eos" | "stop",
        #               accept_lens=[...],            # per verify round, root included (SGLang v2 accept_lens)
        #               first_round_drafts=[...])     # d_1..d_S of the first round


if __name__ == "__main__":
    serve(MyEngine())
