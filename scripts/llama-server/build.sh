#!/usr/bin/env bash
# Builds llama.cpp's llama-server from the source node-llama-cpp ships (node_modules/node-llama-cpp/llama/
# gitRelease.bundle, one head), once per llama.cpp commit, into a cache that survives on the machine:
#   ${SPECCONF_CACHE:-${XDG_CACHE_HOME:-~/.cache}/specconf}/llama-server/<commit>[-<patch sha12>]/
#     llama-server and the shared libraries it loads (libllama, libggml*, libmtmd), BUILD.txt (flags, times).
# CPU only, GGML_NATIVE=OFF (no tuning to the build machine, so results repeat across machines), only the
# llama-server target (it also builds libmtmd: the server links it). ccache is used when present, with
# base_dir set to the clone so another clone of the same commit (a patched one included) hits the cache.
# A build goes to build.partial and its outputs are renamed into <commit> when complete: an interrupted build is
# never taken as cached.
# The last line of stdout is the binary's path; progress and logs go to stderr.
#   scripts/llama-server/build.sh [--patch FILE] [--bundle FILE] [--jobs N] [--print-path]
# --patch applies a source patch first (test/fixtures/llama-server/*.patch: deliberately broken builds);
# --print-path prints the cached binary's path if built, else exits 3 (no build).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bundle="$here/node_modules/node-llama-cpp/llama/gitRelease.bundle"
patch=""
jobs="$(nproc 2>/dev/null || echo 2)"
print_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --patch) patch="$(realpath "$2")"; shift 2 ;;
    --bundle) bundle="$(realpath "$2")"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --print-path) print_only=1; shift ;;
    *) echo "build.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done

fail() { echo "llama-server build: $*" >&2; exit 1; }
need() { command -v "$1" >/dev/null 2>&1 || fail "missing tool '$1' ($2)"; }
need git "apt-get install git"
[ -f "$bundle" ] || fail "no llama.cpp source bundle at $bundle (run npm ci first)"
commit="$(git bundle list-heads "$bundle" | awk 'NR==1 {print $1}')"
[ -n "$commit" ] || fail "cannot read the head commit of $bundle"
key="$commit"
if [ -n "$patch" ]; then
  [ -f "$patch" ] || fail "no patch file $patch"
  key="$commit-$(sha256sum "$patch" | cut -c1-12)"
fi
cache_root="${SPECCONF_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/specconf}/llama-server"
out="$cache_root/$key"

if [ -x "$out/llama-server" ]; then
  echo "llama-server: cached build of llama.cpp ${commit:0:10}${patch:+ (patched)} in $out" >&2
  echo "$out/llama-server"
  exit 0
fi
[ "$print_only" = 1 ] && exit 3

need cmake "apt-get install cmake"
need c++ "a C++ compiler: apt-get install g++"
need cc "a C compiler: apt-get install gcc"
need make "apt-get install make"

mkdir -p "$cache_root"
# One build folder for every key (clean or patched): unity-build sources include absolute paths, so only the
# same path lets ccache reuse them; a lock keeps two builds from sharing it.
work="$cache_root/build.partial"
exec 9>"$cache_root/build.lock"
flock 9
if [ -x "$out/llama-server" ]; then echo "$out/llama-server"; exit 0; fi # built while this one waited
rm -rf "$work"
mkdir -p "$work"
start=$(date +%s)
echo "llama-server: building llama.cpp ${commit:0:10}${patch:+ with $(basename "$patch")} ($jobs jobs) into $out" >&2
git clone --quiet "$bundle" "$work/src" 2>&1 | sed 's/^/  git: /' >&2
git -C "$work/src" checkout --quiet "$commit"
if [ -n "$patch" ]; then
  git -C "$work/src" apply "$patch" || fail "patch $patch does not apply to ${commit:0:10}"
fi
launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR="$work/src" CCACHE_NOHASHDIR=1
  echo "llama-server: using ccache ($(ccache --version | head -1))" >&2
else
  echo "llama-server: ccache not found: a full build (apt-get install ccache makes rebuilds cheap)" >&2
fi
flags=(-DGGML_NATIVE=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF
  -DLLAMA_BUILD_EXAMPLES=OFF -DCMAKE_BUILD_TYPE=Release -DCMAKE_BUILD_RPATH_USE_ORIGIN=ON)
cmake -S "$work/src" -B "$work/src/build" "${flags[@]}" "${launcher[@]}" >"$work/configure.log" 2>&1 ||
  { tail -20 "$work/configure.log" >&2; fail "cmake configure failed (log: $work/configure.log)"; }
# Progress: cmake's "[ NN%]" lines, one per compiled file.
cmake --build "$work/src/build" --target llama-server -j "$jobs" 2>&1 | tee "$work/build.log" |
  grep --line-buffered -E '^\[ *[0-9]+%\]' | sed -u 's/^/  /' >&2 || true
[ -x "$work/src/build/bin/llama-server" ] ||
  { tail -30 "$work/build.log" >&2; fail "build failed (log: $work/build.log)"; }
mkdir -p "$work/out"
cp -a "$work/src/build/bin/llama-server" "$work/src/build/bin/"*.so* "$work/out/"
end=$(date +%s)
{
  echo "llama.cpp commit: $commit"
  echo "patch: ${patch:-none}"
  echo "cmake flags: ${flags[*]}"
  echo "ccache: ${launcher[*]:-none}"
  echo "build seconds: $((end - start)) (jobs $jobs, $(nproc) cores)"
} >"$work/out/BUILD.txt"
"$work/out/llama-server" --version >/dev/null 2>&1 || fail "the built llama-server does not run (see $work/build.log)"
rm -rf "$out"
mv "$work/out" "$out"
rm -rf "$work"
echo "llama-server: built in $((end - start)) s: $out/llama-server" >&2
echo "$out/llama-server"
