#!/usr/bin/env python3
"""A specconf engine over Hugging Face transformers' own generate() (docs/adapter.md, docs/gpu.md).

Four generation modes, chosen per case the way a transformers user calls them:
  target-only cases  -> greedy generate() with its KV cache, the requests arriving at one step as one
                        batch, left-padded
  draft "mirror" / "truncated-mirror" -> assisted generation with the standalone draft model
                        (generate(assistant_model=...)), num_assistant_tokens = S, constant schedule
  draft "ngram"      -> prompt lookup decoding (generate(prompt_lookup_num_tokens=S))
Assisted and prompt-lookup generation take one sequence at a time in transformers, so speculative cases run
their requests one after another. Accept lengths are read where transformers decides them: each round's
update_candidate_strategy(num_matches) call (num_matches accepted drafts + the target's own token), and
reported with roundsIncludeFirstToken (transformers' first round emits the first output token).

    specconf check --engine "python3 examples/transformers_engine.py --device cuda"
"""
import argparse
import json
import sys

import torch
import transformers
from transformers import AutoModelForCausalLM
from transformers.generation import candidate_generator

CAPABILITIES = {
    "modes": ["target-only", "speculative"],
    "drafts": ["mirror", "truncated-mirror", "ngram"],
    "modelFormats": ["hf"],
    "maxNumSteps": 8,
    "maxTopk": 1,
    "maxBatch": 4,
    "arrivals": True,  # requests arriving at the same step are batched together
    "dtypes": ["float32", "float64"],
    "observes": ["acceptLens"],
}

# Every round's accepted-draft count, as transformers' candidate generators are told it.
ROUNDS = []


def record_rounds(cls):
    original = getattr(cls, "update_candidate_strategy", None)
    if original is None:
        return False

    def update_candidate_strategy(self, input_ids, scores, num_matches, *args, **kwargs):
        ROUNDS.append(int(num_matches))
        return original(self, input_ids, scores, num_matches, *args, **kwargs)

    cls.update_candidate_strategy = update_candidate_strategy
    return True


OBSERVED = all(
    [
        record_rounds(candidate_generator.AssistedCandidateGenerator),
        record_rounds(candidate_generator.PromptLookupCandidateGenerator),
    ]
)
if not OBSERVED:
    CAPABILITIES["observes"] = []


def log(message):
    print(message, file=sys.stderr, flush=True)


class Engine:
    def __init__(self, device):
        self.device = torch.device(device)
        self.models = {}

    def model(self, path, dtype):
        key = (path, dtype)
        if key not in self.models:
            model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype, attn_implementation="eager")
            self.models[key] = model.to(self.device).eval()
        return self.models[key]

    def finish(self, request, new_tokens, eos):
        """Cut at EOS (kept) or the request's own max new tokens."""
        tokens = []
        for token in new_tokens[: request["maxNewTokens"]]:
            tokens.append(int(token))
            if token == eos:
                break
        reason = "eos" if tokens and tokens[-1] == eos else "length"
        return {"id": request["id"], "tokens": tokens, "finishReason": reason}

    def greedy_batch(self, target, requests, spec):
        """One batched greedy generate(), prompts left-padded (pad id 0, masked out)."""
        longest = max(len(request["prompt"]) for request in requests)
        ids = torch.zeros((len(requests), longest), dtype=torch.long)
        mask = torch.zeros_like(ids)
        for row, request in enumerate(requests):
            prompt = request["prompt"]
            ids[row, longest - len(prompt) :] = torch.tensor(prompt)
            mask[row, longest - len(prompt) :] = 1
        with torch.no_grad():
            out = target.generate(
                input_ids=ids.to(self.device),
                attention_mask=mask.to(self.device),
                do_sample=False,
                num_beams=1,
                max_new_tokens=max(request["maxNewTokens"] for request in requests),
                eos_token_id=spec["eosId"],
                pad_token_id=0,
            )
        return [self.finish(request, out[row, longest:].tolist(), spec["eosId"]) for row, request in enumerate(requests)]

    def speculative(self, target, draft, request, spec, steps):
        """One request by assisted generation (a draft model) or prompt lookup (draft None)."""
        ids = torch.tensor([request["prompt"]], device=self.device)
        options = dict(
            do_sample=False,
            num_beams=1,
            max_new_tokens=request["maxNewTokens"],
            eos_token_id=spec["eosId"],
            pad_token_id=0,
        )
        if draft is not None:
            config = draft.generation_config
            config.num_assistant_tokens = steps
            config.num_assistant_tokens_schedule = "constant"
            if hasattr(config, "assistant_confidence_threshold"):
                config.assistant_confidence_threshold = 0.0  # always draft S tokens
            options["assistant_model"] = draft
        else:
            options["prompt_lookup_num_tokens"] = steps
        ROUNDS.clear()
        with torch.no_grad():
            out = target.generate(input_ids=ids, attention_mask=torch.ones_like(ids), **options)
        result = self.finish(request, out[0, ids.shape[1] :].tolist(), spec["eosId"])
        if OBSERVED:
            result["acceptLens"] = [matches + 1 for matches in ROUNDS]
            result["roundsIncludeFirstToken"] = True
        return result

    def run(self, message):
        case = message["case"]
        spec = case["model"]["spec"]
        engine = case["engine"]
        files = message["models"].get("files", {}).get("hf")
        if not files:
            raise NotImplementedError("no Hugging Face checkpoint in the request")
        dtype = torch.float64 if spec["dtype"] == "float64" else torch.float32
        target = self.model(files["target"], dtype)
        requests = case["workload"]["requests"]
        if engine["mode"] == "target-only":
            # Requests arriving at the same step share one batch; later arrivals form batches of their own.
            outputs = []
            for step in sorted({request["arrivalStep"] for request in requests}):
                outputs += self.greedy_batch(target, [r for r in requests if r["arrivalStep"] == step], spec)
            return outputs
        kind = case["draft"]["kind"]
        if engine["topk"] != 1 or kind not in ("mirror", "truncated-mirror", "ngram"):
            raise NotImplementedError(f"draft {kind} with topk {engine['topk']}")
        draft = self.model(files["draft"], dtype) if kind != "ngram" else None
        return [self.speculative(target, draft, request, spec, engine["numSteps"]) for request in requests]


def serve(engine):
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        if "hello" in message:
            version = f"transformers {transformers.__version__}, torch {torch.__version__}, {engine.device}"
            response = {"hello": {"name": "transformers", "version": version, "capabilities": CAPABILITIES}}
        else:
            try:
                response = {"requestId": message["requestId"], "outputs": engine.run(message)}
            except NotImplementedError as error:
                response = {"requestId": message["requestId"], "error": str(error), "unsupported": True}
            except Exception as error:  # noqa: BLE001 - this case fails; specconf shrinks it
                response = {"requestId": message["requestId"], "error": repr(error)}
        sys.stdout.write(json.dumps(response) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument(
        "--dtypes",
        default="float32,float64",
        help="model dtypes to declare (e.g. float32 alone, to explore past a float64 finding)",
    )
    args = parser.parse_args()
    CAPABILITIES["dtypes"] = args.dtypes.split(",")
    torch.set_num_threads(1)
    torch.backends.cuda.matmul.allow_tf32 = False  # specconf's epsilon assumes full float32 matmuls
    torch.backends.cudnn.allow_tf32 = False
    serve(Engine(args.device))
