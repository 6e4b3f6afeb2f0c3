#!/usr/bin/env python3
"""The smallest specconf engine adapter: your engine behind the JSON Lines protocol (docs/adapter.md).

specconf starts this command, writes one request per line on stdin and reads one response line per
request on stdout. stdout carries nothing else: print logs to stderr. Exit when stdin closes.

    specconf check --engine "python3 examples/adapter_skeleton.py" ...

Replace generate() with a call into your engine (SGLang, vLLM, ...), loaded from the checkpoints that
`specconf export --format hf` wrote for the digests in request["models"].
"""
import json
import sys


def generate(case, request):
    """Greedy tokens for one workload request, plus what your engine can report about its rounds."""
    raise NotImplementedError("wire your engine in here")
    # return {"tokens": [...], "finishReason": "length" | "eos",
    #         "acceptLens": [...],          # per verify round, root included (SGLang v2 accept_lens)
    #         "firstRoundDrafts": [...]}    # d_1..d_S of the first round


def run(request):
    case = request["case"]  # formatVersion, model {spec}, draft, engine config, workload
    outputs = []
    for workload_request in case["workload"]["requests"]:
        result = generate(case, workload_request)
        outputs.append({"id": workload_request["id"], **result})
    return {"requestId": request["requestId"], "outputs": outputs}  # add "trace": {...} if you record one


for line in sys.stdin:
    if not line.strip():
        continue
    request = json.loads(line)
    try:
        response = run(request)
    except NotImplementedError as error:  # a configuration your engine cannot run: the case is skipped
        response = {"requestId": request["requestId"], "error": str(error), "unsupported": True}
    except Exception as error:  # anything else is reported, and specconf exits 2
        response = {"requestId": request["requestId"], "error": repr(error)}
    sys.stdout.write(json.dumps(response) + "\n")
    sys.stdout.flush()
