#!/usr/bin/env python3
"""Issue 29's families in Hugging Face transformers: each golden suite's exported checkpoints (`specconf export
--format hf`) loaded with AutoModelForCausalLM, every golden request decoded by greedy generate() and by assisted
generation with the standalone draft (num_assistant_tokens = the case's S, constant schedule), written as outputs
files that `specconf validate` checks against the golden file (tie-aware). What transformers refuses is recorded
in the outputs' place (errors.jsonl), not hidden.

    python3 scripts/gpu/verify_families.py --export DIR --out DIR golden/swa-mirror.json golden/hybrid-mirror.json
"""
import argparse
import json
import os
import sys
import traceback

import torch
import transformers
from transformers import AutoModelForCausalLM


def load(path, dtype, device):
    model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype, attn_implementation="eager")
    return model.to(device).eval()


def describe(model):
    """What transformers built: the class, the layer kinds, the rotary frequencies it computed."""
    config = model.config
    rotary = getattr(model.model, "rotary_emb", None)
    return {
        "class": type(model).__name__,
        "layer_types": getattr(config, "layer_types", None),
        "sliding_window": getattr(config, "sliding_window", None),
        "rope_parameters": getattr(config, "rope_parameters", None),
        "inv_freq": rotary.inv_freq.tolist() if rotary is not None else None,
        "attention_scaling": getattr(rotary, "attention_scaling", None),
    }


def finish(case, request, new_tokens, eos):
    tokens = []
    for token in new_tokens[: request["maxNewTokens"]]:
        tokens.append(int(token))
        if token == eos:
            break
    reason = "eos" if tokens and tokens[-1] == eos else "length"
    return {"formatVersion": 1, "case": case, "id": request["id"], "tokens": tokens, "finishReason": reason}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--export", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("goldens", nargs="+")
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    device = torch.device(args.device)
    print(f"transformers {transformers.__version__}, torch {torch.__version__}, {device}", flush=True)
    for mode in ("greedy", "assisted"):
        os.makedirs(os.path.join(args.out, mode), exist_ok=True)
    errors = open(os.path.join(args.out, "errors.jsonl"), "a")
    for golden_path in args.goldens:
        with open(golden_path) as f:
            golden = json.load(f)
        suite = golden["suite"]
        spec = golden["cases"][0]["case"]["model"]["spec"]
        dtype = torch.float64 if spec["dtype"] == "float64" else torch.float32
        try:
            target = load(os.path.join(args.export, suite, "target"), dtype, device)
            draft = load(os.path.join(args.export, suite, "draft"), dtype, device)
        except Exception as error:  # noqa: BLE001 - the loader's refusal is the result
            errors.write(json.dumps({"suite": suite, "stage": "load", "error": repr(error)}) + "\n")
            traceback.print_exc()
            continue
        print(suite, json.dumps(describe(target)), flush=True)
        outputs = {"greedy": [], "assisted": []}
        for case in golden["cases"]:
            steps = case["case"]["engine"]["numSteps"]
            for request in case["case"]["workload"]["requests"]:
                ids = torch.tensor([request["prompt"]], device=device)
                options = dict(
                    input_ids=ids,
                    attention_mask=torch.ones_like(ids),
                    max_new_tokens=request["maxNewTokens"],
                    do_sample=False,
                    eos_token_id=spec["eosId"],
                    pad_token_id=0,
                )
                expected = next(r for r in case["expected"]["requests"] if r["id"] == request["id"])["tokens"]
                for mode in ("greedy", "assisted"):
                    try:
                        with torch.no_grad():
                            if mode == "assisted":
                                config = draft.generation_config
                                config.num_assistant_tokens = steps
                                config.num_assistant_tokens_schedule = "constant"
                                if hasattr(config, "assistant_confidence_threshold"):
                                    config.assistant_confidence_threshold = 0.0
                                out = target.generate(assistant_model=draft, **options)
                            else:
                                out = target.generate(**options)
                    except Exception as error:  # noqa: BLE001 - recorded: transformers refusing is a result
                        record = {"suite": suite, "case": case["name"], "id": request["id"], "mode": mode}
                        errors.write(json.dumps({**record, "error": repr(error)[:600]}) + "\n")
                        print(suite, mode, "error:", repr(error)[:300], flush=True)
                        continue
                    line = finish(case["name"], request, out[0, ids.shape[1] :].tolist(), spec["eosId"])
                    outputs[mode].append(line)
                    same = line["tokens"] == expected
                    print(suite, case["name"], request["id"], mode, "same" if same else f"differs {line['tokens']} vs {expected}", flush=True)
        for mode, lines in outputs.items():
            if lines:
                with open(os.path.join(args.out, mode, f"{suite}.jsonl"), "w") as f:
                    f.writelines(json.dumps(line) + "\n" for line in lines)
    errors.close()


if __name__ == "__main__":
    sys.exit(main())
