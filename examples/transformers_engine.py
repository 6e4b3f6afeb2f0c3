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

Request sampling options (greedy either way) go through transformers' own generation options and logits
processors, which assisted generation applies to every verified position: stop ids join eos_token_id (ending
the request, and masked by min_new_tokens as EOS is), minNewTokens is min_new_tokens, repetitionPenalty is
repetition_penalty, logitBias is sequence_bias over one-token sequences, logprobs come from the processed scores
(output_scores). Presence and frequency penalties have no transformers option and are not declared.

    specconf check --engine "python3 examples/transformers_engine.py --device cuda"
"""
import argparse
import json
import os
import sys

import torch
import transformers
from transformers import AutoModelForCausalLM
from transformers.generation import candidate_generator

try:  # the installed package: pip install ./python (or pip install -e ./python in a checkout)
    import specconf_adapter  # noqa: F401
except ImportError:  # a checkout without it: the package's source beside the examples
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from specconf_adapter import Capabilities, Engine, Result, Unsupported, serve  # noqa: E402


def capabilities(dtypes, observed):
    return Capabilities(
        drafts=("mirror", "truncated-mirror", "ngram"),
        model_formats=("hf",),
        max_num_steps=8,
        max_topk=1,
        max_batch=4,
        arrivals=True,  # requests arriving at the same step are batched together
        dtypes=tuple(dtypes),
        # Issue 29's families load as MinistralForCausalLM, rope_parameters and GraniteMoeHybridForCausalLM.
        model_families=("sliding-window", "rope-scaling", "hybrid"),
        observes=("acceptLens",) if observed else (),
        sampling=("stopTokenIds", "minNewTokens", "repetitionPenalty", "logitBias", "logprobs"),
    )

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


def log(message):
    print(message, file=sys.stderr, flush=True)


def generation_options(request, spec):
    """generate() keyword arguments for one request's sampling options (shared by a batch with equal options)."""
    sampling = request.get("sampling") or {}
    options = dict(
        do_sample=False,
        num_beams=1,
        eos_token_id=[spec["eosId"], *sampling.get("stopTokenIds", [])],
        pad_token_id=0,
        return_dict_in_generate=True,
        output_scores="logprobs" in sampling,
    )
    if sampling.get("minNewTokens"):
        options["min_new_tokens"] = sampling["minNewTokens"]
    if sampling.get("repetitionPenalty", 1.0) != 1.0:
        options["repetition_penalty"] = float(sampling["repetitionPenalty"])  # transformers takes floats only
    if sampling.get("logitBias"):
        # transformers' sequence bias with one-token sequences is an additive logit bias; its processor runs
        # before the repetition penalty, as vLLM applies logit_bias before penalties (the contract's order).
        options["sequence_bias"] = [[[int(token)], float(bias)] for token, bias in sampling["logitBias"].items()]
    return options


def logprob_entries(scores, row, tokens, count):
    """Each emitted token's log-softmax of the processed scores, with the `count` best (ties: lower id)."""
    entries = []
    for index, token in enumerate(tokens):
        logprobs = torch.log_softmax(scores[index][row].to(torch.float64), dim=-1)
        values, ids = torch.topk(logprobs, k=min(logprobs.shape[0], count + 8))
        ranked = sorted(zip(values.tolist(), ids.tolist()), key=lambda pair: (-pair[0], pair[1]))[:count]
        top = [{"token": int(best), "logprob": float(value)} for value, best in ranked]
        entries.append({"token": token, "logprob": float(logprobs[token]), "top": top})
    return entries


class TransformersEngine(Engine):
    name = "transformers"

    def __init__(self, device, dtypes=("float32", "float64")):
        self.device = torch.device(device)
        self.models = {}
        self.version = f"transformers {transformers.__version__}, torch {torch.__version__}, {self.device}"
        self.capabilities = capabilities(dtypes, OBSERVED)

    def model(self, path, dtype):
        key = (path, dtype)
        if key not in self.models:
            model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype, attn_implementation="eager")
            self.models[key] = model.to(self.device).eval()
        return self.models[key]

    def finish(self, request, new_tokens, eos, scores=None, row=0):
        """Cut at EOS or a stop id (kept) or the request's own max new tokens; logprobs when asked for."""
        sampling = request.get("sampling") or {}
        stops = set(sampling.get("stopTokenIds", []))
        tokens = []
        for token in new_tokens[: request["maxNewTokens"]]:
            tokens.append(int(token))
            if token == eos or token in stops:
                break
        result = {"id": request["id"], "tokens": tokens, "finishReason": "length"}
        if tokens and tokens[-1] == eos:
            result["finishReason"] = "eos"
        elif tokens and tokens[-1] in stops:
            result.update(finishReason="stop", stopTokenId=tokens[-1])
        if "logprobs" in sampling:
            result["logprobs"] = logprob_entries(scores, row, tokens, sampling["logprobs"])
        return result

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
                max_new_tokens=max(request["maxNewTokens"] for request in requests),
                **generation_options(requests[0], spec),
            )
        return [
            self.finish(request, out.sequences[row, longest:].tolist(), spec["eosId"], out.scores, row)
            for row, request in enumerate(requests)
        ]

    def speculative(self, target, draft, request, spec, steps):
        """One request by assisted generation (a draft model) or prompt lookup (draft None)."""
        ids = torch.tensor([request["prompt"]], device=self.device)
        options = dict(max_new_tokens=request["maxNewTokens"], **generation_options(request, spec))
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
        result = self.finish(request, out.sequences[0, ids.shape[1] :].tolist(), spec["eosId"], out.scores)
        if OBSERVED:
            result["acceptLens"] = [matches + 1 for matches in ROUNDS]
            result["roundsIncludeFirstToken"] = True
        return result

    def run(self, request):
        return Result(self.run_case(request.raw))

    def run_case(self, message):
        case = message["case"]
        spec = case["model"]["spec"]
        engine = case["engine"]
        files = message["models"].get("files", {}).get("hf")
        if not files:
            raise Unsupported("no Hugging Face checkpoint in the request")
        dtype = torch.float64 if spec["dtype"] == "float64" else torch.float32
        target = self.model(files["target"], dtype)
        requests = case["workload"]["requests"]
        if engine["mode"] == "target-only":
            # Requests arriving at the same step with the same sampling options share one batch (generate() takes
            # one set of options); later arrivals form batches of their own.
            batches = {}
            for request in requests:
                options = json.dumps(request.get("sampling") or {}, sort_keys=True)
                batches.setdefault((request["arrivalStep"], options), []).append(request)
            outputs = []
            for key in sorted(batches):
                outputs += self.greedy_batch(target, batches[key], spec)
            return sorted(outputs, key=lambda output: [r["id"] for r in requests].index(output["id"]))
        kind = case["draft"]["kind"]
        if engine["topk"] != 1 or kind not in ("mirror", "truncated-mirror", "ngram"):
            raise Unsupported(f"draft {kind} with topk {engine['topk']}")
        draft = self.model(files["draft"], dtype) if kind != "ngram" else None
        return [self.speculative(target, draft, request, spec, engine["numSteps"]) for request in requests]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument(
        "--dtypes",
        default="float32,float64",
        help="model dtypes to declare (e.g. float32 alone, to explore past a float64 finding)",
    )
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.backends.cuda.matmul.allow_tf32 = False  # specconf's epsilon assumes full float32 matmuls
    torch.backends.cudnn.allow_tf32 = False
    serve(TransformersEngine(args.device, args.dtypes.split(",")))
