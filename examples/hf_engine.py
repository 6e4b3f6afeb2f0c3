#!/usr/bin/env python3
"""A specconf engine on Hugging Face transformers, for the checkpoints `specconf export --format hf` writes.

It runs greedy decoding cache-free (tiny models), target-only or speculative: chain drafts from the
standalone draft (draft-model mode) or from the EAGLE head (loaded the way SGLang's and vLLM's
LlamaForCausalLMEagle read it: fc over concat(embedding, target hidden), one decoder layer without
input_layernorm, no final norm, the target's LM head). It shows the checkpoints load in transformers and
reproduce the golden files; it is not fast.

    # protocol mode (docs/adapter.md): specconf check --engine "python3 examples/hf_engine.py --export DIR"
    python3 examples/hf_engine.py --export DIR
    # dump mode: outputs of a golden file's cases, for specconf validate
    python3 examples/hf_engine.py --export DIR --golden golden/tiny-eagle.json --outputs out.jsonl
"""
import argparse
import glob
import json
import os
import sys

import torch
from safetensors.torch import load_file
from transformers import LlamaConfig, LlamaForCausalLM
from transformers.models.llama.modeling_llama import LlamaDecoderLayer, LlamaRotaryEmbedding

try:  # the installed package: pip install ./python (or pip install -e ./python in a checkout)
    import specconf_adapter  # noqa: F401
except ImportError:  # a checkout without it: the package's source beside the examples
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from specconf_adapter import Capabilities, Engine, Result, Unsupported, serve  # noqa: E402


def find_suite(export_dir, target_digest):
    for path in sorted(glob.glob(os.path.join(export_dir, "*", "manifest.json"))):
        with open(path) as f:
            manifest = json.load(f)
        if manifest["models"]["target"]["onnxDigest"] == target_digest:
            return os.path.dirname(path), manifest
    raise Unsupported(f"no exported checkpoint for target digest {target_digest[:12]}")


def causal_mask(rows, dtype):
    mask = torch.full((rows, rows), torch.finfo(dtype).min, dtype=dtype).triu(1)
    return mask[None, None]


class Target:
    def __init__(self, path, dtype):
        self.model = LlamaForCausalLM.from_pretrained(path, dtype=dtype, attn_implementation="eager").eval()

    @torch.no_grad()
    def run(self, tokens):
        """Logits [T, V] and the LM-head input (after the final norm) [T, H] at every position."""
        hidden = self.model.model(torch.tensor([tokens])).last_hidden_state
        return self.model.lm_head(hidden)[0], hidden[0]


class Eagle:
    def __init__(self, path, target, dtype):
        config = LlamaConfig.from_pretrained(path)
        config._attn_implementation = "eager"
        weights = load_file(os.path.join(path, "model.safetensors"))
        hidden = config.hidden_size
        self.fc = torch.nn.Linear(2 * hidden, hidden, bias=True, dtype=dtype)
        self.fc.load_state_dict({"weight": weights["fc.weight"], "bias": weights["fc.bias"]})
        self.layer = LlamaDecoderLayer(config, layer_idx=0).to(dtype)
        self.layer.input_layernorm = torch.nn.Identity()  # EAGLE's first layer has no input norm
        layer_weights = {k[len("layers.0."):]: v for k, v in weights.items() if k.startswith("layers.0.")}
        missing, unexpected = self.layer.load_state_dict(layer_weights, strict=False)
        assert not unexpected and all(name.startswith("input_layernorm") for name in missing), (missing, unexpected)
        self.rotary = LlamaRotaryEmbedding(config).to(dtype)
        self.embed = target.model.model.embed_tokens
        self.lm_head = target.model.lm_head
        self.dtype = dtype

    @torch.no_grad()
    def run(self, tokens, hidden_in, positions):
        x = self.fc(torch.cat([self.embed(torch.tensor(tokens)), hidden_in], dim=-1))[None]
        position_ids = torch.tensor([positions])
        out = self.layer(x, attention_mask=causal_mask(len(tokens), self.dtype), position_ids=position_ids, position_embeddings=self.rotary(x, position_ids))
        hidden = (out[0] if isinstance(out, tuple) else out)[0]  # hidden + residual, no final norm
        return self.lm_head(hidden), hidden


class HfEngine(Engine):
    name, version = "hf-cache-free", "0.1.0"
    capabilities = Capabilities(
        drafts=("mirror", "eagle"),
        model_formats=("hf",),
        max_num_steps=8,
        max_topk=1,
        max_batch=8,
        arrivals=True,  # requests run one by one, cache-free: arrival steps change nothing it computes
        dtypes=("float32", "float64"),
        observes=("acceptLens", "firstRoundDrafts"),
    )

    def __init__(self, export_dir):
        self.export_dir = export_dir
        self.loaded = {}

    def run(self, request):
        case = request.raw["case"]
        return Result([self.request(case, request.raw["models"], r) for r in case["workload"]["requests"]])

    def models(self, case, digests):
        files = digests.get("files", {}).get("hf")
        key = (digests["target"], digests.get("draft"))
        if key not in self.loaded:
            if files:  # specconf's model cache named the checkpoints (protocol version 2)
                dtype = torch.float64 if case["model"]["spec"]["dtype"] == "float64" else torch.float32
                target = Target(files["target"], dtype)
                kind = (case.get("draft") or {}).get("kind")
                draft = Target(files["draft"], dtype) if kind == "mirror" and "draft" in files else None
                eagle = Eagle(files["draft"], target, dtype) if kind == "eagle" and "draft" in files else None
            else:  # a `specconf export --format hf` directory (dump mode)
                suite_dir, manifest = find_suite(self.export_dir, digests["target"])
                dtype = torch.float64 if manifest["dtype"] == "float64" else torch.float32
                target = Target(os.path.join(suite_dir, "target"), dtype)
                draft = Target(os.path.join(suite_dir, "draft"), dtype)
                eagle = Eagle(os.path.join(suite_dir, "eagle"), target, dtype) if "eagle" in manifest["models"] else None
            self.loaded[key] = (target, draft, eagle)
        return self.loaded[key]

    def drafts(self, kind, target, draft, eagle, sequence, steps):
        """Chain drafts d_1..d_S for the verified sequence x_0..x_L (x_L the bonus), recomputed cache-free."""
        out = []
        if kind == "eagle":
            _, target_hidden = target.run(sequence)
            L = len(sequence) - 1
            tokens, hidden_rows = list(sequence[1:]), [target_hidden[:L]]
            last_hidden = None
            for j in range(steps):
                if j > 0:
                    tokens.append(out[-1])
                    hidden_rows.append(last_hidden[None])
                logits, hidden = eagle.run(tokens, torch.cat(hidden_rows), list(range(len(tokens))))
                out.append(int(logits[-1].argmax()))
                last_hidden = hidden[-1]
        else:  # mirror family: the standalone draft (the target, LM head x 2^16) in draft-model mode
            for _ in range(steps):
                logits, _ = draft.run(list(sequence) + out)
                out.append(int(logits[-1].argmax()))
        return out

    def request(self, case, digests, request):
        target, draft, eagle = self.models(case, digests)
        engine = case["engine"]
        spec = case["model"]["spec"]
        prompt, budget = list(request["prompt"]), request["maxNewTokens"]
        logits, _ = target.run(prompt)
        tokens = [int(logits[-1].argmax())]
        accept_lens, first_drafts = [], None
        done = lambda: tokens[-1] == spec["eosId"] or len(tokens) >= budget
        kind = (case.get("draft") or {}).get("kind")
        speculative = engine["mode"] == "speculative"
        if speculative and (engine["topk"] != 1 or kind not in ("mirror", "eagle")):
            raise Unsupported(f"this example drafts chains (topk 1) with the mirror or EAGLE head, not topk {engine['topk']} / {kind}")
        while not done():
            sequence = prompt + tokens
            if not speculative:
                logits, _ = target.run(sequence)
                tokens.append(int(logits[-1].argmax()))
                continue
            drafts = self.drafts(kind, target, draft, eagle, sequence, engine["numSteps"])
            first_drafts = first_drafts or drafts
            logits, _ = target.run(sequence + drafts)
            predict = [int(t) for t in logits[len(sequence) - 1:].argmax(-1)]
            accept = 1
            while accept <= len(drafts) and drafts[accept - 1] == predict[accept - 1]:
                accept += 1
            accept_lens.append(accept)
            for token in predict[:accept]:
                if done():
                    break
                tokens.append(token)
        output = {"id": request["id"], "tokens": tokens, "finishReason": "eos" if tokens[-1] == spec["eosId"] else "length"}
        if speculative:
            output["acceptLens"] = accept_lens
            if first_drafts is not None:
                output["firstRoundDrafts"] = first_drafts
        return output


def dump(engine, golden_path, outputs_path):
    with open(golden_path) as f:
        golden = json.load(f)
    digests = {"target": golden["models"]["target"]["digest"]}
    with open(outputs_path, "w") as out:
        for golden_case in golden["cases"]:
            for request in golden_case["case"]["workload"]["requests"]:
                try:
                    result = engine.request(golden_case["case"], digests, request)
                except Unsupported as error:
                    print(f"skipping case {golden_case['name']}: {error}", file=sys.stderr)
                    break
                out.write(json.dumps({"formatVersion": 1, "case": golden_case["name"], **result}) + "\n")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--export", help="directory written by specconf export --format hf (dump mode, and requests naming no files)")
    parser.add_argument("--golden", help="dump mode: run this golden file's cases")
    parser.add_argument("--outputs", help="dump mode: write the outputs (JSON Lines) here")
    args = parser.parse_args()
    torch.set_num_threads(1)
    engine = HfEngine(args.export)
    if args.golden:
        dump(engine, args.golden, args.outputs)
    else:
        serve(engine)
