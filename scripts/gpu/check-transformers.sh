#!/usr/bin/env bash
# Runs on the GPU box (docs/gpu.md): Hugging Face transformers behind the protocol
# (examples/transformers_engine.py) under `specconf check --engine` on generated cases, then on the golden
# suites' cases, whose outputs `specconf validate` checks. Needs the bundle's node.xz and node_modules.txz
# (scripts/gpu/prepare-bundle.sh); the engine needs python3 with torch and transformers.
# Usage: scripts/gpu/check-transformers.sh [BUNDLE_DIR] [RUNS_PER_LAW] [OUT_DIR]
set -uo pipefail
bundle=${1:-.gpu}
runs=${2:-40}
out=${3:-/tmp/specconf-transformers}
work=${SPECCONF_GPU_WORK:-/tmp/specconf-gpu}
mkdir -p "$work" "$out"
[ -x "$work/node" ] || { xz -dc "$bundle/node.xz" > "$work/node"; chmod +x "$work/node"; }
[ -d node_modules/tsx ] || tar -xJf "$bundle/node_modules.txz"
export PATH="$work:$PATH" PYTHONUNBUFFERED=1
engine="python3 examples/transformers_engine.py --device ${DEVICE:-cuda} ${ENGINE_FLAGS:-}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
python3 - <<'PY'
import inspect, torch, transformers
from transformers.generation import candidate_generator as c
print("transformers", transformers.__version__, "torch", torch.__version__, "cuda", torch.cuda.is_available())
for name in ("AssistedCandidateGenerator", "PromptLookupCandidateGenerator"):
    print(name, inspect.signature(getattr(c, name).update_candidate_strategy))
PY
start=$(date +%s)
node bin/specconf.js check --engine "$engine" --runs "$runs" --seed "${SEED:-1}" --shrink-seconds 20 \
  --failures "$out/failures" --junit "$out/transformers.junit.xml" 2>&1 | tee "$out/check.txt"
echo "check: exit ${PIPESTATUS[0]}, $(( $(date +%s) - start )) s"
node bin/specconf.js check --engine "$engine" --golden --outputs "$out/golden" 2>&1 | tee "$out/golden.txt"
for lines in "$out"/golden/*.jsonl; do
  suite=$(basename "$lines" .jsonl)
  cases=$(node -e 'const s=new Set(require("fs").readFileSync(process.argv[1],"utf8").trim().split("\n").map(l=>JSON.parse(l).case));console.log([...s].map(c=>"--case "+c).join(" "))' "$lines")
  node bin/specconf.js validate --golden "golden/$suite.json" --outputs "$lines" $cases > "$out/validate-$suite.txt" 2>&1
  echo "validate $suite ($cases): exit $?"
done
# Everything in one archive (a transfer may take few files), the check's table beside it.
if [ -n "${OUT:-}" ]; then
  tar -czf "$OUT/transformers-results.tgz" -C "$out" .
  cp "$out/check.txt" "$OUT/check.txt"
fi
