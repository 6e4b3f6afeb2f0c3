#!/usr/bin/env bash
# Runs on the GPU box (docs/gpu.md): issue 29's families in Hugging Face transformers. Exports the family
# golden suites as HF checkpoints, decodes every golden request with greedy generate() and assisted generation
# (scripts/gpu/verify_families.py), validates both against the golden files, then runs the golden cases
# through examples/transformers_engine.py under `specconf check --engine --golden`.
# Usage: scripts/gpu/check-families.sh OUT_DIR   (node on PATH, node_modules unpacked: .device/setup.sh)
set -uo pipefail
out=${1:-/tmp/specconf-families}
mkdir -p "$out"
suites="swa-mirror swa-f64-mirror hybrid-mirror"
files=$(for s in $suites; do echo "golden/$s.json"; done)
for s in $suites; do node bin/specconf.js export --format hf --golden "golden/$s.json" --out "$out/export" > /dev/null || echo "export $s: exit $?"; done
python3 scripts/gpu/verify_families.py --export "$out/export" --out "$out" $files 2>&1 | tee "$out/verify.txt"
for mode in greedy assisted; do
  for s in $suites; do
    [ -f "$out/$mode/$s.jsonl" ] || { echo "validate $mode $s: no outputs"; continue; }
    node bin/specconf.js validate --golden "golden/$s.json" --outputs "$out/$mode/$s.jsonl" > "$out/validate-$mode-$s.txt" 2>&1
    echo "validate $mode $s: exit $?"; tail -4 "$out/validate-$mode-$s.txt"
  done
done
golden=$(for s in $suites; do echo "--golden-file golden/$s.json"; done)
timeout 150 node bin/specconf.js check --engine "python3 examples/transformers_engine.py --device ${DEVICE:-cuda}" --golden $golden \
  --outputs "$out/engine" > "$out/engine-check.txt" 2>&1
echo "check --engine --golden: exit $?"; tail -30 "$out/engine-check.txt"
rm -rf "$out/export"
