#!/usr/bin/env python3
"""A specconf engine over the EAGLE authors' own code (SafeAILab/EAGLE: EaModel.eagenerate, EAGLE-2's dynamic tree),
pointed at a checkout of it (--eagle-repo or EAGLE_REPO; nothing of that code is in this repository).

What runs is theirs: the KV Llama (eagle/model/modeling_llama_kv.py) with its own KV cache
(eagle/model/kv_cache.py, sized on an EaModel's first call and reused by later requests), the EAGLE-1/2 head
(eagle/model/cnets1.py) or the EAGLE-3 head (eagle/model/cnets.py) with topK_genrate's dynamic tree, and
EaModel.eagenerate's loop over initialize_tree, tree_decoding, evaluate_posterior and update_inference_inputs
(eagle/model/utils.py). Target-only cases run EaModel.naivegenerate, the authors' own KV-cached greedy baseline.
Greedy only (temperature 0: logits_processor None). Batch size 1: the requests of a case run one after another on
one EaModel (eagenerate zeroes current_length_data and resets the draft KV per call, as the authors' evaluation does),
so arrival steps change nothing it computes (declared, like maxBatch 4, for that reason). float64 is declared only
with --dtypes: the code computes parts of a float64 model in float32 (RMSNorm's variance, the attention masks, the
heads' softmax), below the float64 epsilon the laws would judge it by.

specconf's case -> the code's parameters: S = numSteps drafted levels is depth = S - 1 (topK_genrate expands the
root's top_k children, then runs `depth` draft forwards, each adding one level: S levels in all, the S + 1 entries
of acceptIndex), top_k = K, total_token = N (the code keeps total_token - 1 = N - 1 candidates besides the root).

Checkpoints (specconf's HF exports, converted into a cache folder of links; each conversion stated):
  target   LlamaForCausalLM as exported, plus model.safetensors.index.json (every tensor -> model.safetensors),
           which cnets1.Model(load_emb=True) reads to find the embedding; the exported word-level tokenizer is what
           EaModel's AutoTokenizer loads (its eos_token_id must be the spec's EOS: eagenerate stops on it).
  eagle    (EAGLE-1/2) config.json plus "bias": true (fc.bias is stored; EaModel reads con["bias"]), model.safetensors
           as exported: fc.*, layers.0.* (no input_layernorm: cnets1's layer 0 has none), embed_tokens.weight.
  eagle3   config.json as exported (draft_vocab_size, target_hidden_size), model.safetensors as exported: fc.weight,
           midlayer.*, norm.weight, lm_head.weight, d2t, t2d, embed_tokens.weight. The code hard-codes the auxiliary
           states as the inputs of target layers {2, L//2, L-3} (modeling_llama_kv.py LlamaModel.forward), which are
           checkpoint ids {2, L//2, L-3} in the engines' convention (docs/design.md): cases whose checkpoint names other layers, has fewer than 7
           layers (the three collide), or norm_before_fc (cnets.py has no input norm) are answered unsupported.
  Both     heads need head_dim = hidden / heads (cnets*.py derive it so); other specs are unsupported.

Compatibility shims for transformers 5 (installed before the code is imported; no file of it is edited):
  1. transformers.utils.LossKwargs was removed in v5; modeling_qwen3_kv.py imports it (ea_model imports that
     file): a TypedDict stub.
  2. ROPE_INIT_FUNCTIONS["default"] is gone in v5; the KV Llama's LlamaRotaryEmbedding_L31 looks it up: mapped to
     Llama's default inverse frequencies theta^(-2i/d) (theta and d from the config).
  3. v5's rope_scaling is always a dict, while cnets*.py read rope_scaling["type"] and rope_theta: EaModel's
     EConfig is seen through a view whose rope_scaling and rope_theta are the exported config.json's (null, theta).
  4. v5 builds models on the meta device, so the KV Llama's non-persistent inv_freq buffers hold uninitialised
     memory after from_pretrained (no error, wrong logits): recomputed after loading. The EaModel is put in eval()
     (training mode drops the draft KV).

Tracing (docs/tracing.md), read from the code's own tensors by wrapping the four module globals of
eagle.model.ea_model, EaModel.forward (the target logits), the head's forward (tokens, positions, past length and
tree mask of each draft forward), its logsoftmax (raw logits and log-probabilities) and torch.topk as cnets*.py see
it (each round's children, their cumulative scores, the frontier choices and the N - 1 cut): each round's draft
extend, draft decode steps (candidate numbers are the code's own flat indices into scores_list plus one), the
verify rows (draft_tokens at L + tree_position_ids, parents from its tree_mask, attended sets from its masks),
the accepted path (retrieve_indices[best_candidate, :accept_length + 1]) and the bonus (update_inference_inputs'
token). EAGLE-3 rows carry draftPredict (the draft-vocabulary argmax) and d2t-mapped tokens.

Outputs are reported as the code produced them: eagenerate stops once new_token > max_new_tokens and checks EOS
only after a round, naivegenerate once new_token > max_new_tokens, so an output can run past the cap and past EOS;
that is termination equivalence's to judge (docs/findings/eagle-authors-overshoot-cap-and-eos.md). The trace's
requests and rounds stop where the request ends by the protocol (the cap, or the first EOS): its output is the
code's output cut there (a prefix of it, asserted), its last round's `emitted` is cut there and marked finished,
and the forwards the code ran after that (the next round's drafting, further rounds) are left out, so the other
laws read the rounds up to the cap. acceptLens count the traced rounds.

    EAGLE_REPO=/path/to/EAGLE specconf check --engine "python3 examples/eagle_authors_engine.py"
"""
import argparse
import hashlib
import json
import os
import struct
import sys
import types
from typing import Optional, TypedDict

import torch

try:  # the installed package: pip install ./python (or pip install -e ./python in a checkout)
    import specconf_adapter  # noqa: F401
except ImportError:  # a checkout without it: the package's source beside the examples
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from specconf_adapter import Capabilities, Engine, Result, Unsupported, serve  # noqa: E402

NAME = "eagle-authors"


# ---- shims (each stated in the header) -------------------------------------------------------------------------
def rope_theta_of(config):
    params = getattr(config, "rope_parameters", None)
    if isinstance(params, dict) and "rope_theta" in params:
        return float(params["rope_theta"])
    return float(getattr(config, "rope_theta", 10000.0))


def default_rope(config, device=None, **_):
    """Shim 2: Llama's default RoPE (theta^(-2i/d), attention scaling 1), what v4's ROPE_INIT_FUNCTIONS["default"] did."""
    dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    inv_freq = 1.0 / (rope_theta_of(config) ** (torch.arange(0, dim, 2, dtype=torch.int64).to(device=device, dtype=torch.float) / dim))
    return inv_freq, 1.0


def install_shims():
    import transformers.utils
    from transformers import modeling_rope_utils

    if not hasattr(transformers.utils, "LossKwargs"):  # shim 1

        class LossKwargs(TypedDict, total=False):
            num_items_in_batch: Optional[int]

        transformers.utils.LossKwargs = LossKwargs
    if "default" not in modeling_rope_utils.ROPE_INIT_FUNCTIONS:  # shim 2
        modeling_rope_utils.ROPE_INIT_FUNCTIONS["default"] = default_rope


def econfig_view(econfig_class):
    """Shim 3: EConfig.from_pretrained whose config reads rope_scaling / rope_theta as the exported config.json says."""

    class EConfigView:
        @staticmethod
        def from_pretrained(path, **kwargs):
            config = econfig_class.from_pretrained(path, **kwargs)
            with open(path if os.path.isfile(path) else os.path.join(path, "config.json")) as f:
                raw = json.load(f)
            scaling, theta = raw.get("rope_scaling"), float(raw.get("rope_theta", 10000.0))
            view = type("EConfigRopeView", (config.__class__,), {"rope_scaling": property(lambda self: scaling), "rope_theta": property(lambda self: theta)})
            config.__class__ = view
            return config

    return EConfigView


def recompute_inv_freq(model, device):
    """Shim 4: every rotary embedding's inv_freq (and cos/sin cache) computed again on the model's device."""
    for module in model.modules():
        if hasattr(module, "rope_init_fn") and hasattr(module, "inv_freq"):
            inv_freq, module.attention_scaling = module.rope_init_fn(module.config, device, **getattr(module, "rope_kwargs", {}))
            module.register_buffer("inv_freq", inv_freq, persistent=False)
            module.original_inv_freq = module.inv_freq
        elif hasattr(module, "_set_cos_sin_cache") and hasattr(module, "inv_freq"):
            inv_freq = 1.0 / (module.base ** (torch.arange(0, module.dim, 2, device=device).float() / module.dim))
            module.register_buffer("inv_freq", inv_freq, persistent=False)
            module._set_cos_sin_cache(module.max_seq_len_cached, device, torch.get_default_dtype())


# ---- checkpoint conversion --------------------------------------------------------------------------------------
def safetensors_names(path):
    with open(path, "rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(length))
    return [name for name in header if name != "__metadata__"]


def linked_copy(source, folder, config_patch=None):
    """A folder of links to an exported checkpoint; config.json rewritten when patched. Returns the folder."""
    os.makedirs(folder, exist_ok=True)
    for name in os.listdir(source):
        if name == "config.json" and config_patch is not None:
            continue
        target = os.path.join(folder, name)
        if not os.path.lexists(target):
            os.symlink(os.path.join(source, name), target)
    if config_patch is not None:
        with open(os.path.join(source, "config.json")) as f:
            config = json.load(f)
        config.update(config_patch)
        with open(os.path.join(folder, "config.json.tmp"), "w") as f:
            json.dump(config, f)
        os.replace(os.path.join(folder, "config.json.tmp"), os.path.join(folder, "config.json"))
    return folder


def convert_target(path, cache):
    folder = linked_copy(path, os.path.join(cache, "target-" + os.path.basename(path.rstrip("/"))))
    index = os.path.join(folder, "model.safetensors.index.json")
    if not os.path.exists(index):
        names = safetensors_names(os.path.join(path, "model.safetensors"))
        with open(index + ".tmp", "w") as f:
            json.dump({"metadata": {}, "weight_map": {name: "model.safetensors" for name in names}}, f)
        os.replace(index + ".tmp", index)
    return folder


def convert_head(path, kind, cache):
    patch = {"bias": True} if kind == "eagle" else None
    return linked_copy(path, os.path.join(cache, f"{kind}-" + os.path.basename(path.rstrip("/"))), patch)


def eagle3_refusal(spec, head_path):
    """Why the code cannot run this EAGLE-3 checkpoint as exported, or None."""
    with open(os.path.join(head_path, "config.json")) as f:
        config = json.load(f)
    layers = spec["layers"]
    if layers < 7:
        return f"EAGLE-3 on {layers} target layers: the code's auxiliary layers {{2, L//2, L-3}} need >= 7 distinct"
    wanted = sorted({2, layers // 2, layers - 3})
    ids = config.get("eagle_aux_hidden_state_layer_ids") or config.get("eagle_config", {}).get("eagle_aux_hidden_state_layer_ids")
    if ids is not None and list(ids) != wanted:
        return f"EAGLE-3 auxiliary layers {list(ids)}: the code hard-codes the inputs of layers {wanted}"
    if config.get("norm_before_fc"):
        return "EAGLE-3 with norm_before_fc: cnets.py has no input norm before fc"
    return None


# ---- what the code did, recorded from its tensors ---------------------------------------------------------------
class Recorder:
    def __init__(self):
        self.on = False
        self.target_calls = []  # EaModel.forward: (input ids, past length, logits)
        self.drafts = []  # one per topK_genrate call
        self.rounds = []  # one per verify: tree_decoding, evaluate_posterior, update_inference_inputs

    def reset(self):
        self.target_calls, self.drafts, self.rounds = [], [], []

    @property
    def draft(self):
        return self.drafts[-1]


RECORDER = Recorder()


class TopkProxy(types.ModuleType):
    """torch as cnets*.py see it: topk recorded into the current topK_genrate record, everything else torch's."""

    def __init__(self):
        super().__init__("torch")

    def __getattr__(self, name):
        return getattr(torch, name)

    @staticmethod
    def topk(input, k, *args, **kwargs):
        result = torch.topk(input, k, *args, **kwargs)
        if RECORDER.on and RECORDER.drafts and RECORDER.draft.get("open"):
            RECORDER.draft["topk"].append((input.detach().float().cpu(), result.values.detach().float().cpu(), result.indices.detach().cpu()))
        return result


def install_recording(ea_model_module, head_modules):
    proxy = TopkProxy()
    for module in head_modules:
        module.torch = proxy
    originals = {name: getattr(ea_model_module, name) for name in ("initialize_tree", "tree_decoding", "evaluate_posterior", "update_inference_inputs")}

    def tree_decoding(model, tree_candidates, past_key_values, tree_position_ids, input_ids, retrieve_indices):
        out = originals["tree_decoding"](model, tree_candidates, past_key_values, tree_position_ids, input_ids, retrieve_indices)
        if RECORDER.on:
            RECORDER.rounds.append({"L": input_ids.shape[1], "tokens": tree_candidates[0].tolist(), "logits": RECORDER.target_calls[-1]["logits"], "tree_mask": model.base_model.model.tree_mask[0, 0].cpu(), "positions": tree_position_ids.tolist()})
        return out

    def evaluate_posterior(logits, candidates, logits_processor):
        best, accept_length, sample_p = originals["evaluate_posterior"](logits, candidates, logits_processor)
        if RECORDER.on:
            RECORDER.rounds[-1].update(best=int(best), accept_length=int(accept_length))
        return best, accept_length, sample_p

    def update_inference_inputs(*args):
        out = originals["update_inference_inputs"](*args)
        if RECORDER.on:
            RECORDER.rounds[-1].update(retrieve=args[4].tolist(), bonus=int(out[-1].reshape(-1)[0]), ids_after=out[0][0].tolist())
        return out

    for name, wrapper in (("tree_decoding", tree_decoding), ("evaluate_posterior", evaluate_posterior), ("update_inference_inputs", update_inference_inputs)):
        setattr(ea_model_module, name, wrapper)
    # initialize_tree needs no wrapper of its own: its target forward and topK_genrate call are recorded below.


def record_model(ea):
    """Instance-level wrappers: EaModel.forward (target logits), the head's forward, logsoftmax and topK_genrate."""
    forward = ea.forward

    def ea_forward(input_ids=None, attention_mask=None, past_key_values=None, output_orig=False, position_ids=None):
        past = int(past_key_values[0][0].current_length.item()) if past_key_values is not None else 0
        out = forward(input_ids=input_ids, attention_mask=attention_mask, past_key_values=past_key_values, output_orig=output_orig, position_ids=position_ids)
        if RECORDER.on and output_orig:
            RECORDER.target_calls.append({"ids": input_ids[0].tolist(), "past": past, "logits": out[1][0].detach().double().cpu()})
        return out

    ea.forward = ea_forward
    head = ea.ea_layer
    head_forward = head.forward

    def draft_forward(hidden_states, input_ids, attention_mask=None, position_ids=None, past_key_values=None, **kwargs):
        if RECORDER.on:
            past = past_key_values[0][0].shape[2] if past_key_values is not None else 0
            mask = head.tree_mask[0, 0].cpu() if getattr(head, "tree_mask", None) is not None else None
            positions = position_ids.reshape(-1).tolist() if position_ids is not None else list(range(past, past + input_ids.shape[1]))
            RECORDER.draft["calls"].append({"ids": input_ids[0].tolist(), "past": past, "positions": positions, "tree_mask": mask})
        return head_forward(hidden_states, input_ids, attention_mask=attention_mask, position_ids=position_ids, past_key_values=past_key_values, **kwargs)

    head.forward = draft_forward

    def logsoftmax_hook(module, inputs, output):
        if RECORDER.on and RECORDER.drafts and RECORDER.draft.get("open"):
            RECORDER.draft["logsoftmax"].append((inputs[0].detach().double().cpu().reshape(-1, inputs[0].shape[-1]), output.detach().double().cpu().reshape(-1, output.shape[-1])))

    head.logsoftmax.register_forward_hook(logsoftmax_hook)
    generate = head.topK_genrate

    def topk_genrate(*args, **kwargs):  # initialize_tree passes head positionally, update_inference_inputs by name
        if RECORDER.on:
            RECORDER.drafts.append({"open": True, "calls": [], "logsoftmax": [], "topk": []})
        result = generate(*args, **kwargs)
        if RECORDER.on:
            RECORDER.draft["open"] = False
        return result

    head.topK_genrate = topk_genrate


# ---- the trace ------------------------------------------------------------------------------------------------
def ranges(length):
    return [[0, length - 1]] if length > 0 else []


def top_fields(logits_row, logprobs_row, k):
    """topLogit of the raw logits; childMargin: the k-th minus the (k+1)-th log-probability (= logit) gap."""
    fields = {"topLogit": float(logits_row.max())}
    if logprobs_row.shape[0] > k:
        values = torch.topk(logprobs_row, k + 1).values
        fields["childMargin"] = float(values[k - 1] - values[k])
    return fields


class RequestTrace:
    """Events of one request, appended to the case's trace."""

    def __init__(self, events, request_id, config, d2t, aux_layers=None):
        self.events, self.id, self.d2t, self.aux_layers = events, request_id, d2t, aux_layers
        self.S, self.K, self.N = config["numSteps"], config["topk"], config["numDraftTokens"]

    def event(self, phase, rows, **fields):
        event = {"index": len(self.events), "phase": phase, "model": "target" if phase in ("prefill", "verify") else "draft", **fields, "rows": rows}
        self.events.append(event)
        return event

    def token(self, draft_id):
        return int(draft_id) + int(self.d2t[int(draft_id)]) if self.d2t is not None else int(draft_id)

    def prefill(self, call):
        rows = []
        for i, token in enumerate(call["ids"]):
            row = {"request": self.id, "token": token, "position": call["past"] + i, "temporary": False, "attended": {"positions": ranges(call["past"]), "batchRows": list(range(i + 1))}}
            rows.append(row | target_fields(call["logits"][i]))
        return self.event("prefill", rows)

    def draft(self, record, hidden_refs):
        """The draft extend and decode events of one topK_genrate call. hidden_refs: target rows per extend row."""
        K, calls, topks, soft = self.K, record["calls"], record["topk"], record["logsoftmax"]
        extend = calls[0]
        L = extend["past"] + len(extend["ids"])
        rows = []
        for i, token in enumerate(extend["ids"]):
            rows.append({"request": self.id, "token": token, "position": extend["past"] + i, "temporary": False, "hidden": hidden_refs[i], "attended": {"positions": ranges(extend["past"]), "batchRows": list(range(i + 1))}})
            if self.aux_layers is not None:  # EAGLE-3: fc reads the target row's auxiliary states, not its final hidden
                rows[-1]["aux"] = [{**hidden_refs[i], "layer": layer, "normed": False} for layer in self.aux_layers]
        _, values, indices = topks[0]
        rows[-1].update(self.expansion(indices[0], values[0], 1, soft[0][0][0], soft[0][1][0]))
        extend_event = self.event("draft-extend", rows)
        previous = [(extend_event["index"], len(rows) - 1)] * K
        for step in range(1, len(calls)):
            call, (_, child_values, child_indices), (cu_scores, _, frontier) = calls[step], topks[2 * step - 1], topks[2 * step]
            before = topks[2 * step - 2][2] if step > 1 else None
            mask = call["tree_mask"]
            rows = []
            for r, token in enumerate(call["ids"]):
                candidate = r + 1 if step == 1 else int(before[r]) + 1 + K + (step - 2) * K * K
                temporary = [L + b for b in range(step - 1) if bool(mask[r, b * K : (b + 1) * K].any())]
                batch = [c for c in range(K) if bool(mask[r, (step - 1) * K + c])]
                row = {"request": self.id, "token": token, "position": call["positions"][r], "temporary": True, "candidate": candidate, "hidden": {"event": previous[r][0], "row": previous[r][1]}, "attended": {"positions": ranges(L), "temporary": temporary, "batchRows": batch}}
                start = 1 + K + (step - 1) * K * K + r * K
                row.update(self.expansion(child_indices[r], cu_scores[r * K : (r + 1) * K], start, soft[step][0][r], soft[step][1][r]))
                rows.append(row)
            event = self.event("draft-decode", rows, draftStep=step)
            previous = [(event["index"], int(index) // K) for index in frontier]
        return L

    def expansion(self, draft_ids, scores, first_number, logits_row, logprobs_row):
        children = [{"number": first_number + c, "token": self.token(draft_ids[c]), "score": float(scores[c])} for c in range(len(draft_ids))]
        fields = {"predict": children[0]["token"], "children": children, **top_fields(logits_row, logprobs_row, len(draft_ids))}
        if self.d2t is not None:
            fields["draftPredict"] = int(draft_ids[0])
        return fields

    def verify(self, round_, selection):
        L, tokens, mask, depth = round_["L"], round_["tokens"], round_["tree_mask"], round_["positions"]
        chosen = sorted(int(index) + 1 for index in selection)
        candidates = [0] + chosen
        rows = []
        for k, token in enumerate(tokens):
            ancestors = [j for j in range(len(tokens)) if j != k and bool(mask[k, j])]
            parent = next((j for j in ancestors if depth[j] == depth[k] - 1), -1) if k > 0 else -1
            row = {"request": self.id, "token": token, "position": L + depth[k], "temporary": True, "parent": parent, "candidate": candidates[k], "attended": {"positions": ranges(L), "batchRows": [j for j in range(len(tokens)) if bool(mask[k, j])]}}
            rows.append(row | target_fields(round_["logits"][k]))
        event = self.event("verify", rows)
        path = [p for p in round_["retrieve"][round_["best"]][: round_["accept_length"] + 1]]
        accept_tokens = [rows[p]["predict"] for p in path]
        return event, path, accept_tokens


def target_fields(logits_row):
    top = torch.topk(logits_row, min(2, logits_row.shape[0]))
    fields = {"predict": int(top.indices[0]), "topLogit": float(top.values[0])}
    if top.values.shape[0] > 1:
        fields["margin"] = float(top.values[0] - top.values[1])
    return fields


def cut(tokens, left, eos):
    """What a round may emit: up to and including the first EOS, at most `left` tokens; and whether that ends it."""
    emitted = list(tokens[:left])
    if eos in emitted:
        emitted = emitted[: emitted.index(eos) + 1]
    return emitted, eos in emitted or len(emitted) >= left


def log_case(case, events):
    """With SPECCONF_EAGLE_CASE_LOG set: one JSON line per request line answered (mode, S, K, N, a key that is the same
    for a case and its reordered twin, the verify rounds traced), to count the tree cases a check judged."""
    path = os.environ.get("SPECCONF_EAGLE_CASE_LOG")
    if not path:
        return
    engine = case["engine"]
    requests = sorted((r["id"], tuple(r["prompt"]), r["maxNewTokens"]) for r in case["workload"]["requests"])
    key = json.dumps([case["model"], case.get("draft"), {k: v for k, v in engine.items() if k != "mode"}, requests], sort_keys=True)
    line = {"mode": engine["mode"], "S": engine["numSteps"], "K": engine["topk"], "N": engine["numDraftTokens"], "key": hashlib.sha1(key.encode()).hexdigest()[:16], "requests": len(requests), "rounds": sum(e["phase"] == "verify" for e in events)}
    with open(path, "a") as f:
        f.write(json.dumps(line) + "\n")


# ---- the engine -----------------------------------------------------------------------------------------------
class EagleAuthorsEngine(Engine):
    name = NAME

    def __init__(self, repo, device, dtypes, drafts):
        sys.path.insert(0, repo)
        install_shims()
        import eagle.model.cnets as cnets
        import eagle.model.cnets1 as cnets1
        import eagle.model.ea_model as ea_model_module
        from eagle.model.modeling_llama_kv import LlamaForCausalLM as KVLlamaForCausalLM

        ea_model_module.EConfig = econfig_view(ea_model_module.EConfig)
        install_recording(ea_model_module, (cnets, cnets1))
        self.ea_model_module, self.kv_llama = ea_model_module, KVLlamaForCausalLM
        self.device = torch.device(device)
        self.cache = os.environ.get("SPECCONF_EAGLE_CACHE", os.path.join(os.path.expanduser("~"), ".cache", "specconf", "eagle-authors"))
        self.bases, self.models = {}, {}
        head = os.popen(f"git -C {repo} rev-parse --short HEAD 2>/dev/null").read().strip() or os.environ.get("EAGLE_COMMIT", "unknown")
        import transformers

        self.version = f"SafeAILab/EAGLE {head}, transformers {transformers.__version__}, torch {torch.__version__}, {self.device}"
        self.capabilities = Capabilities(
            modes=("target-only", "speculative"),
            drafts=tuple(drafts),
            model_formats=("hf",),
            max_num_steps=6,
            max_topk=4,
            max_batch=4,  # requests run one after another (eagenerate is batch size 1)
            arrivals=True,  # so arrival steps change nothing it computes
            dtypes=tuple(dtypes),
            observes=("acceptLens", "trace", "verify", "predict"),
        )

    def base(self, path, dtype):
        key = (path, dtype)
        if key not in self.bases:
            folder = convert_target(path, self.cache)
            model = self.kv_llama.from_pretrained(folder, dtype=dtype).to(self.device).eval()
            recompute_inv_freq(model, self.device)
            self.bases[key] = (folder, model)
        return self.bases[key]

    def ea(self, case, files, dtype):
        engine, kind = case["engine"], case["draft"]["kind"]
        key = (files["target"], files["draft"], dtype, engine["numSteps"], engine["topk"], engine["numDraftTokens"])
        if key not in self.models:
            from safetensors.torch import load_file

            folder, base = self.base(files["target"], dtype)
            head = convert_head(files["draft"], kind, self.cache)
            state = load_file(os.path.join(head, "model.safetensors"))
            # EaModel.from_pretrained's own steps, on an already loaded base (shim 4 applied to it).
            ea = self.ea_model_module.EaModel(kind == "eagle3", base, folder, os.path.join(head, "config.json"), engine["numDraftTokens"], engine["numSteps"] - 1, engine["topk"], 1.0, state).eval()
            record_model(ea)
            self.models[key] = ea
        return self.models[key]

    def run(self, request):
        case = request.raw["case"]
        spec, engine = case["model"]["spec"], case["engine"]
        files = request.model_files("hf")
        if files is None or files.target is None:
            raise Unsupported("no Hugging Face checkpoint in the request")
        files = {"target": files.target, "draft": files.draft}
        if spec["headDim"] * spec["heads"] != spec["hidden"]:
            raise Unsupported(f"headDim {spec['headDim']} x heads {spec['heads']} != hidden {spec['hidden']}: the code derives head_dim = hidden / heads")
        dtype = torch.float64 if spec["dtype"] == "float64" else torch.float32
        folder, base = self.base(files["target"], dtype)
        eos = spec["eosId"]
        events, outputs, traced = [], [], []
        if engine["mode"] == "target-only":
            stub = types.SimpleNamespace(base_model=base, tokenizer=types.SimpleNamespace(eos_token_id=eos), ea_layer=types.SimpleNamespace(reset_kv=lambda: None, total_tokens=0))
            for r in case["workload"]["requests"]:
                ids = torch.tensor([r["prompt"]], device=self.device)
                raw = self.ea_model_module.EaModel.naivegenerate(stub, ids, max_new_tokens=r["maxNewTokens"])[0, len(r["prompt"]) :].tolist()
                outputs.append(self.output(r, raw, eos))
                traced.append(self.traced(r, cut(raw, r["maxNewTokens"], eos)[0], eos))
        else:
            kind = case["draft"]["kind"]
            if kind == "eagle3":
                refusal = eagle3_refusal(spec, files["draft"])
                if refusal:
                    raise Unsupported(refusal)
            ea = self.ea(case, files, dtype)
            if ea.tokenizer.eos_token_id != eos:
                raise RuntimeError(f"the exported tokenizer's eos_token_id is {ea.tokenizer.eos_token_id}, the spec's EOS {eos}")
            d2t = ea.ea_layer.d2t.tolist() if kind == "eagle3" and hasattr(ea.ea_layer, "d2t") else None
            # The auxiliary states modeling_llama_kv.py's LlamaModel.forward collects: the inputs of layers 2, L//2 and
            # L-3 (in layer order): checkpoint ids 2, L//2, L-3 (id k names the input of layer k, docs/design.md).
            layers = spec["layers"]
            aux = [index for index in range(layers) if index in (2, layers // 2, layers - 3)] if kind == "eagle3" else None
            for r in case["workload"]["requests"]:
                output, tokens = self.speculative(ea, r, engine, eos, events, d2t, aux)
                outputs.append(output)
                traced.append(self.traced(r, tokens, eos))
        trace = {
            "formatVersion": 1,
            "engine": {"name": NAME, "version": self.version, "ep": "cuda" if self.device.type == "cuda" else "cpu", "dtype": spec["dtype"]},
            "models": {"target": request.target_digest, **({"draft": [request.draft_digest]} if request.draft_digest and engine["mode"] == "speculative" else {})},
            "config": {**engine, **({"draft": case["draft"]} if case.get("draft") else {})},
            "requests": traced,
            "events": events,
        }
        log_case(case, events)
        return Result(outputs, trace)

    @staticmethod
    def output(r, raw, eos, accept_lens=None):
        out = {"id": r["id"], "tokens": raw, "finishReason": "eos" if eos in raw else "length"}
        if accept_lens is not None:
            out["acceptLens"] = accept_lens
        return out

    @staticmethod
    def traced(r, tokens, eos):
        return {"id": r["id"], "prompt": list(r["prompt"]), "output": tokens, "finishReason": "eos" if tokens and tokens[-1] == eos else "length"}

    def speculative(self, ea, r, engine, eos, events, d2t, aux):
        """One request through eagenerate; its events appended. Returns (the output as produced, the traced output)."""
        prompt, cap = list(r["prompt"]), r["maxNewTokens"]
        RECORDER.reset()
        RECORDER.on = True
        try:
            ids = torch.tensor([prompt], device=self.device)
            raw = ea.eagenerate(ids, temperature=0.0, max_new_tokens=cap)[0, len(prompt) :].tolist()
        finally:
            RECORDER.on = False
        trace = RequestTrace(events, r["id"], engine, d2t, aux)
        prefill = trace.prefill(RECORDER.target_calls[0])
        first = raw[0]  # initialize_tree's token: argmax of the prefill's last logits
        tokens, accept_lens = [first], []
        if first == eos or cap <= 1:
            return self.output(r, raw, eos, accept_lens), self.check_prefix(tokens, raw)
        hidden = [{"event": prefill["index"], "row": i} for i in range(len(prompt))]
        for index, round_ in enumerate(RECORDER.rounds):
            trace.draft(RECORDER.drafts[index], hidden)
            event, path, accept_tokens = trace.verify(round_, RECORDER.drafts[index]["topk"][-1][2])
            # What the code emits: the accepted drafts, then its own bonus token (bonus stride compares it with predict).
            produced = [round_["tokens"][p] for p in path[1:]] + [round_["bonus"]]
            emitted, finished = cut(produced, cap - len(tokens), eos)
            pad = [-1] * (engine["numSteps"] + 1 - len(path))
            event["verify"] = [{"request": r["id"], "acceptIndex": path + pad, "acceptLen": len(path), "acceptTokens": accept_tokens + pad, "bonus": round_["bonus"], "emitted": emitted, "finished": finished}]
            tokens += emitted
            accept_lens.append(len(path))
            if finished:
                break
            hidden = [{"event": event["index"], "row": p} for p in path]
        return self.output(r, raw, eos, accept_lens), self.check_prefix(tokens, raw)

    @staticmethod
    def check_prefix(tokens, raw):
        if raw[: len(tokens)] != tokens:
            raise RuntimeError(f"traced output {tokens} is not a prefix of the code's output {raw}")
        return tokens


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eagle-repo", default=os.environ.get("EAGLE_REPO"), help="a checkout of SafeAILab/EAGLE (default $EAGLE_REPO)")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--dtypes", default="float32", help="model dtypes to declare (float64: see the header)")
    parser.add_argument("--drafts", default="eagle,eagle3", help="draft kinds to declare")
    args = parser.parse_args()
    if not args.eagle_repo or not os.path.isdir(os.path.join(args.eagle_repo, "eagle", "model")):
        parser.error(f"--eagle-repo / EAGLE_REPO: {args.eagle_repo!r} is not a checkout of SafeAILab/EAGLE (no eagle/model)")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    # transformers prints docstring checks of the code's Qwen3 file to stdout on import: the protocol keeps the
    # original stdout, and everything else written to file descriptor 1 goes to stderr.
    protocol_out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    torch.set_num_threads(1)
    torch.backends.cuda.matmul.allow_tf32 = False  # specconf's epsilon assumes full float32 matmuls
    torch.backends.cudnn.allow_tf32 = False
    serve(EagleAuthorsEngine(args.eagle_repo, args.device, args.dtypes.split(","), args.drafts.split(",")), stdout=protocol_out)
