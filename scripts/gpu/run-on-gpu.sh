#!/usr/bin/env bash
# Runs on an offline Linux x86-64 GPU box, in the repository root, with the bundle from
# scripts/gpu/prepare-bundle.sh (docs/gpu.md): unpacks node and node_modules, installs the CUDA 13
# provider next to libonnxruntime.so.1, finds the CUDA 13 / cuDNN 9 libraries (PyTorch cu130 wheels),
# unpacks the Vulkan loader for WebGPU, then:
#   bench (default)  the law runs and the EP benchmark (scripts/bench-gpu.ts) on cpu, cuda, webgpu;
#   check            `specconf check` (every law) on each GPU EP this box can open a session on, with fresh
#                    seeds (SEEDS="5 6 7" pins them), RUNS (20) runs per law, one process per EP and seed
#                    (LAW_GROUPS=N: N processes per seed, each running some property suites, every law checking
#                    every run; a group's own coverage line may fall short, the summary judges the seed's);
#                    prints the per-law table per EP and seed (scripts/gpu/check-summary.ts) and leaves logs,
#                    JUnit files and failure records under CHECK_OUT (/tmp/specconf-check).
#   numerics         scripts/gpu/ep-numerics.ts: the normalizer on every EP, float64 node by node on CUDA.
# Usage: scripts/gpu/run-on-gpu.sh [BUNDLE_DIR] [bench|check|numerics] [-- extra bench-gpu.ts or check flags]
set -euo pipefail
bundle=${1:-.gpu}
shift || true
action=bench
case "${1:-}" in bench | check | numerics) action=$1; shift ;; esac
[ "${1:-}" = "--" ] && shift
work=${SPECCONF_GPU_WORK:-/tmp/specconf-gpu}
mkdir -p "$work"

[ -x "$work/node" ] || { xz -dc "$bundle/node.xz" > "$work/node"; chmod +x "$work/node"; }
[ -d node_modules/onnxruntime-node ] || tar -xJf "$bundle/node_modules.txz"
ort_dir=node_modules/onnxruntime-node/bin/napi-v6/linux/x64
if [ ! -f "$ort_dir/libonnxruntime_providers_cuda.so" ]; then
  if ls "$bundle"/cuda-provider.txz.part-* > /dev/null 2>&1; then
    cat "$bundle"/cuda-provider.txz.part-* | xz -dc | tar -x -C "$ort_dir"
  else
    echo "run-on-gpu: no CUDA provider parts found; the cuda EP will report itself missing" >&2
  fi
fi

site=$(python3 -c 'import site; print(site.getsitepackages()[0])' 2>/dev/null || true)
for lib in "$site/nvidia/cu13/lib" "$site/nvidia/cudnn/lib" "$site/nvidia/cublas/lib" "$site/nvidia/cuda_runtime/lib"; do
  [ -d "$lib" ] && export LD_LIBRARY_PATH="$lib:${LD_LIBRARY_PATH:-}"
done
# WebGPU (Dawn on Vulkan): the Vulkan loader, and glvnd, which the NVIDIA ICD (libGLX_nvidia) needs.
[ -f "$bundle/debs.tar" ] && tar -xf "$bundle/debs.tar" -C "$bundle"
for deb in "$bundle"/*.deb; do
  [ -f "$deb" ] && dpkg -x "$deb" "$work/vulkan"
done
[ -d "$work/vulkan" ] && export LD_LIBRARY_PATH="$work/vulkan/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
export NVIDIA_TF32_OVERRIDE=${NVIDIA_TF32_OVERRIDE:-0}
for icd in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json; do
  [ -f "$icd" ] && { export VK_DRIVER_FILES="$icd"; break; }
done
export PATH="$work:$PATH"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
if [ "$action" = numerics ]; then
  # The EP numerics probes (scripts/gpu/ep-numerics.ts): normalizers on every EP, float64 per node on CUDA.
  out=${CHECK_OUT:-/tmp/specconf-check}
  mkdir -p "$out"
  gpu_eps=$(node node_modules/tsx/dist/cli.mjs scripts/gpu/ep-numerics.ts eps 2> /dev/null)
  node node_modules/tsx/dist/cli.mjs scripts/gpu/ep-numerics.ts normalizer --ep cpu $(printf -- '--ep %s ' $gpu_eps) \
    --out "$out/reduce-log-sum-exp.onnx"
  if grep -q cuda <<< "$gpu_eps"; then
    for rows in 16 64; do
      node node_modules/tsx/dist/cli.mjs scripts/gpu/ep-numerics.ts ops --ep cuda --preset "${PRESET:-tiny-f64}" \
        --rows "$rows" --json "$out/ops-cuda-rows$rows.json" "$@"
    done
  fi
  exit
fi
if [ "$action" = bench ]; then
  # EPS overrides the execution providers compared (default: all three).
  node node_modules/tsx/dist/cli.mjs scripts/bench-gpu.ts ${EPS:---ep cpu --ep cuda --ep webgpu} "$@"
  exit
fi

# check: the GPU EPs that open a session here (or EPS="cuda webgpu"), fresh seeds unless SEEDS pins them.
out=${CHECK_OUT:-/tmp/specconf-check}
mkdir -p "$out"
eps=${EPS:-$(node node_modules/tsx/dist/cli.mjs scripts/gpu/ep-numerics.ts eps 2> /dev/null)}
[ -n "$eps" ] || { echo "run-on-gpu: no GPU EP opens a session here" >&2; exit 2; }
seeds=${SEEDS:-$(node -e 'const c=require("crypto");console.log([0,1,2].map(()=>c.randomInt(1,2**31-1)).join(" "))')}
echo "check: EPs $eps, seeds $seeds, ${RUNS:-20} runs per law"
# LAW_GROUPS > 1 splits each check's property suites over that many processes (every law still checks every run).
extra=("$@")
groups=""
[ "${LAW_GROUPS:-1}" -gt 1 ] && groups=$(node node_modules/tsx/dist/cli.mjs scripts/gpu/law-groups.ts "$LAW_GROUPS")
pids=()
for ep in $eps; do
  for seed in $seeds; do
    group=0
    while :; do
      group_flags=()
      [ -n "$groups" ] && eval "group_flags=($(sed -n "$((group + 1))p" <<< "$groups"))"
      name="check-$ep-seed$seed${groups:+-group$group}"
      timeout "${CHECK_TIMEOUT:-3600}" node bin/specconf.js check --ep "$ep" --runs "${RUNS:-20}" --seed "$seed" \
        --failures "$out/failures-$name" --junit "$out/$name.junit.xml" "${group_flags[@]}" "${extra[@]}" \
        > "$out/$name.txt" 2>&1 &
      pids+=("$!:$name")
      group=$((group + 1))
      [ -n "$groups" ] && [ "$group" -lt "$(wc -l <<< "$groups")" ] || break
    done
  done
done
status=0
for entry in "${pids[@]}"; do
  pid=${entry%%:*}
  name=${entry#*:}
  if wait "$pid"; then code=0; else code=$?; status=1; fi
  echo
  echo "== $name: exit $code"
  # The per-law table (laws with runs), the coverage verdict and each failure's replay line.
  sed -n '/^law  *runs/,/^(time:/p; /^coverage below/p; /FAILED/p; /npx specconf replay/p; /^seed /p' "$out/$name.txt"
done
# One table per EP and seed: the groups of a seed added up, coverage judged over all of its runs.
node node_modules/tsx/dist/cli.mjs scripts/gpu/check-summary.ts "$out" | tee "$out/summary.md"
exit $status
