#!/usr/bin/env python3
"""The smallest specconf engine adapter: your engine behind the JSON Lines protocol (docs/adapter.md).

specconf starts this command and writes one line per message on stdin; the adapter answers each with one
line on stdout. stdout carries nothing else: print logs to stderr. Exit when stdin closes.

The first message is the handshake: answer with what your engine supports. specconf then generates only
cases inside those capabilities, exports each case's models in the formats you ask for, and names the
files in every request (request["models"]["files"]["hf"]["target"], ...).

    specconf check --engine "python3 examples/adapter_skeleton.py"

Replace generate() with a call into your engine (SGLang, vLLM, ...), loaded from those files.
"""
import json
import sys

CAPABILITIES = {
    "modes": ["target-only", "speculative"],  # target-only runs are the lossless baseline
    "drafts": ["mirror"],  # mirror: a standalone draft model (an exact copy of the target); "eagle": an EAGLE head
    "modelFormats": ["hf"],  # Hugging Face checkpoints: a directory per model
    "maxNumSteps": 8,
    "maxTopk": 1,  # chains only
    "maxBatch": 1,  # one request per case
    "observes": ["acceptLens"],  # what your outputs report (and "trace" if you return traces)
    # Request sampling options you honor (workload_request["sampling"]): "stopTokenIds", "minNewTokens",
    # "repetitionPenalty", "presencePenalty", "frequencyPenalty", "logitBias", "logprobs". Absent: none.
    "sampling": [],
}


def generate(case, request, files):
    """Greedy tokens for one workload request, plus what your engine can report about its rounds."""
    raise NotImplementedError("wire your engine in here")
    # return {"tokens": [...], "finishReason": "length" | "eos" | "stop",
    #         "stopTokenId": 7,             # with "stop": the stop id that ended it
    #         "logprobs": [...],            # when asked: {"token", "logprob", "top": [{"token", "logprob"}]} per token
    #         "acceptLens": [...],          # per verify round, root included (SGLang v2 accept_lens)
    #         "firstRoundDrafts": [...]}    # d_1..d_S of the first round


def run(message):
    case = message["case"]  # formatVersion, model {spec}, draft, engine config, workload
    files = message["models"].get("files", {}).get("hf", {})  # {"target": dir, "draft": dir}
    outputs = []
    for workload_request in case["workload"]["requests"]:
        result = generate(case, workload_request, files)
        outputs.append({"id": workload_request["id"], **result})
    return {"requestId": message["requestId"], "outputs": outputs}  # add "trace": {...} if you record one


for line in sys.stdin:
    if not line.strip():
        continue
    message = json.loads(line)
    if "hello" in message:
        response = {"hello": {"name": "my-engine", "version": "0.0.1", "capabilities": CAPABILITIES}}
    else:
        try:
            response = run(message)
        except NotImplementedError as error:  # a configuration your engine cannot run: the case is skipped
            response = {"requestId": message["requestId"], "error": str(error), "unsupported": True}
        except Exception as error:  # anything else fails this case (specconf shrinks it like any failure)
            response = {"requestId": message["requestId"], "error": repr(error)}
    sys.stdout.write(json.dumps(response) + "\n")
    sys.stdout.flush()
