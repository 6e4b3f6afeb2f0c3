#!/usr/bin/env bash
# Runs on an offline Linux x86-64 GPU box, in the repository root, with the bundle from
# scripts/gpu/prepare-bundle.sh (docs/gpu.md): unpacks node and node_modules, installs the CUDA 13
# provider next to libonnxruntime.so.1, finds the CUDA 13 / cuDNN 9 libraries (PyTorch cu130 wheels),
# unpacks the Vulkan loader for WebGPU, then runs the law runs and the EP benchmark on cpu, cuda, webgpu.
# Usage: scripts/gpu/run-on-gpu.sh [BUNDLE_DIR] [-- extra bench-gpu.ts flags]
set -euo pipefail
bundle=${1:-.gpu}
shift || true
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
# EPS overrides the execution providers compared (default: all three).
node node_modules/tsx/dist/cli.mjs scripts/bench-gpu.ts ${EPS:---ep cpu --ep cuda --ep webgpu} "$@"
