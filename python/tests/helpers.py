"""A protocol request as specconf sends one (schemas/adapter-request.schema.json), built for the tests."""


def request_message(num_steps=3, mode="speculative", requests=None, files=None, request_id=7):
    return {
        "protocol": "specconf-engine",
        "version": 2,
        "requestId": request_id,
        "case": {
            "formatVersion": 1,
            "model": {"spec": {"name": "tiny", "vocab": 64, "hidden": 32, "layers": 2, "dtype": "float32",
                               "bosId": 1, "eosId": 2, "preamble": [1, 5, 9]}},
            "draft": {"kind": "mirror", "noiseAlpha": 0.2, "tapDelta": 0.1, "truncatedLayers": 1, "seed": 1},
            "engine": {"mode": mode, "numSteps": num_steps, "topk": 1, "numDraftTokens": num_steps + 1,
                       "chunkSize": None, "pageSize": 1, "tokenBudget": 256, "poolSlots": 4096, "faults": []},
            "workload": {"requests": requests or [{"id": 0, "prompt": [1, 5, 9, 40], "maxNewTokens": 6, "arrivalStep": 0}]},
        },
        "models": {"target": "a" * 64, "draft": "b" * 64,
                   "files": files if files is not None else {"hf": {"target": "/m/target", "draft": "/m/draft"}}},
        "wantTrace": True,
    }
