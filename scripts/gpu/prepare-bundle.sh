#!/usr/bin/env bash
# Prepares an offline bundle for a Linux x86-64 GPU box without Node.js or network (docs/gpu.md):
#   node.xz           this machine's node binary
#   node_modules.txz  production dependencies, onnxruntime-node trimmed to linux/x64
#   cuda-provider.txz.part-*  the CUDA 13 EP built for ONNX Runtime 1.29.0 (npm package
#                     com.github.asus4.onnxruntime.linux-x64-gpu@0.4.9), split to fit transfer limits
#   *.deb             the Vulkan loader and glvnd for the WebGPU EP
# Usage: scripts/gpu/prepare-bundle.sh [OUT_DIR]   (default .gpu, git-ignored)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/.gpu}
part_size=${PART_SIZE:-55M}
provider_package=com.github.asus4.onnxruntime.linux-x64-gpu@0.4.9
ort_version=$(node -p "require('$root/node_modules/onnxruntime-node/package.json').version")
if [ "$ort_version" != "1.29.0" ]; then
  echo "prepare-bundle: onnxruntime-node is $ort_version; the CUDA 13 provider in $provider_package matches 1.29.0 only" >&2
  exit 2
fi
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "node binary -> $out/node.xz"
xz -T0 -6 -c "$(command -v node)" > "$out/node.xz"

echo "production node_modules (linux/x64 only) -> $out/node_modules.txz"
cp "$root/package.json" "$root/package-lock.json" "$work/"
(cd "$work" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error)
# A checkout runs its TypeScript sources through tsx (bin/specconf.js), a devDependency since the package builds to
# dist/: carry it and its esbuild (linux/x64) from this checkout.
mkdir -p "$work/node_modules/@esbuild"
cp -r "$root/node_modules/tsx" "$root/node_modules/esbuild" "$work/node_modules/"
cp -r "$root/node_modules/@esbuild/linux-x64" "$work/node_modules/@esbuild/"
ort_bin="$work/node_modules/onnxruntime-node/bin/napi-v6"
rm -rf "$ort_bin/darwin" "$ort_bin/win32" "$ort_bin/linux/arm64"
# The GPU runs never load llama.cpp (only `specconf engine llama-cpp` does): its 90 MB stay home, so the bundle
# (node, node_modules, a provider part) fits a 64 MiB transfer.
rm -rf "$work/node_modules/node-llama-cpp" "$work/node_modules/@node-llama-cpp" "$work/node_modules/typescript"
tar -C "$work" -cf - node_modules | xz -T0 -6 > "$out/node_modules.txz"

echo "CUDA 13 execution provider ($provider_package) -> $out/cuda-provider.txz.part-*"
(cd "$work" && npm pack --silent "$provider_package" > /dev/null && tar xzf ./*.tgz package/Plugins/Linux/x64/libonnxruntime_providers_cuda.so package/Plugins/Linux/x64/libonnxruntime_providers_shared.so)
rm -f "$out"/cuda-provider.txz.part-*
tar -C "$work/package/Plugins/Linux/x64" -cf - . | xz -T0 -6 | split -b "$part_size" - "$out/cuda-provider.txz.part-"

echo "Vulkan loader and glvnd (the NVIDIA Vulkan ICD loads through libGLX) -> $out/*.deb"
for package in libvulkan1 libglvnd0 libglx0 libegl1 libopengl0 libgl1; do
  if (cd "$work" && apt-get download "$package" > /dev/null 2>&1); then
    mv "$work"/"$package"_*.deb "$out/$package.deb"
  else
    echo "prepare-bundle: could not download $package (run 'apt-get update' first); WebGPU may not find the GPU" >&2
  fi
done
ls -la "$out"
