#!/usr/bin/env python3
"""Finding helper: batched greedy generate() with left padding on an exported specconf checkpoint.

Runs the same two prompts alone and as one left-padded batch, in the checkpoint's dtype and in float32,
with eager and sdpa attention, and prints each request's first tokens, whether any logit is NaN, and the
first layer's attention weights of the padded row. Usage:
    python3 scripts/gpu/diagnose_left_padding.py CHECKPOINT_DIR "1 5 9 13 17 3" "1 5 9 13 17 3 3"
"""
import sys

import torch
from transformers import AutoModelForCausalLM

path, prompts = sys.argv[1], [[int(t) for t in text.split()] for text in sys.argv[2:]]
device = "cuda" if torch.cuda.is_available() else "cpu"


def batch(prompts):
    longest = max(map(len, prompts))
    ids = torch.zeros((len(prompts), longest), dtype=torch.long)
    mask = torch.zeros_like(ids)
    for row, prompt in enumerate(prompts):
        ids[row, longest - len(prompt) :] = torch.tensor(prompt)
        mask[row, longest - len(prompt) :] = 1
    return ids.to(device), mask.to(device), longest


for dtype in (torch.float64, torch.float32):
    for attention in ("eager", "sdpa"):
        model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype, attn_implementation=attention).to(device).eval()
        ids, mask, longest = batch(prompts)
        with torch.no_grad():
            out = model.generate(input_ids=ids, attention_mask=mask, do_sample=False, num_beams=1, max_new_tokens=3, pad_token_id=0, eos_token_id=2)
            logits = model(input_ids=ids, attention_mask=mask, output_attentions=attention == "eager").logits
        alone = []
        for prompt in prompts:
            single = torch.tensor([prompt], device=device)
            with torch.no_grad():
                alone.append(model.generate(input_ids=single, attention_mask=torch.ones_like(single), do_sample=False, max_new_tokens=3, pad_token_id=0, eos_token_id=2)[0, len(prompt) :].tolist())
        print(f"{str(dtype):14} {attention:5} batched {out[:, longest:].tolist()} alone {alone} nan logits per row {torch.isnan(logits).any(-1).any(-1).tolist()}")
