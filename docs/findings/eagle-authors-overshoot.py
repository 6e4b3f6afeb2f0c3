# Reproducer for docs/findings/eagle-authors-overshoot-cap-and-eos.md, in the EAGLE code's own terms: EaModel.eagenerate
# and EaModel.naivegenerate on specconf's exported tiny-eagle checkpoints, greedy, with several max_new_tokens.
# From a specconf checkout, with a SafeAILab/EAGLE checkout in EAGLE_REPO and torch + transformers 5 installed:
#   npx specconf export --format hf --golden golden/tiny-eagle.json --out /tmp/exported
#   EAGLE_REPO=/path/to/EAGLE python3 docs/findings/eagle-authors-overshoot.py /tmp/exported/tiny-eagle
# The transformers-5 shims and the two checkpoint conversions are the adapter's (examples/eagle_authors_engine.py's
# header states each); nothing of the EAGLE code is changed.
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples"))
import eagle_authors_engine as adapter  # noqa: E402

sys.path.insert(0, os.environ["EAGLE_REPO"])
adapter.install_shims()
import eagle.model.ea_model as ea_model  # noqa: E402

ea_model.EConfig = adapter.econfig_view(ea_model.EConfig)
export, cache, device = sys.argv[1], "/tmp/eagle-authors-repro", "cuda" if torch.cuda.is_available() else "cpu"
target = adapter.convert_target(os.path.join(export, "target"), cache)
head = adapter.convert_head(os.path.join(export, "eagle"), "eagle", cache)
model = ea_model.EaModel.from_pretrained(
    use_eagle3=False, base_model_path=target, ea_model_path=head, total_token=6, depth=2, top_k=2, dtype=torch.float32, device_map=device
)
adapter.recompute_inv_freq(model.base_model, model.base_model.device)
model.eval()
eos = model.tokenizer.eos_token_id
for prompt in ([1, 5, 9, 13, 17, 40], [1, 7, 30]):
    ids = torch.tensor([prompt], device=device)
    for cap in (4, 8, 12):
        ea = model.eagenerate(ids, temperature=0.0, max_new_tokens=cap)[0, len(prompt) :].tolist()
        naive = model.naivegenerate(ids, temperature=0.0, max_new_tokens=cap)[0, len(prompt) :].tolist()
        after_eos = lambda out: len(out) - 1 - out.index(eos) if eos in out else 0  # noqa: E731
        print(f"prompt {prompt} max_new_tokens {cap}: eagenerate {len(ea)} tokens ({after_eos(ea)} after EOS) {ea}; naivegenerate {len(naive)} tokens ({after_eos(naive)} after EOS) {naive}")
