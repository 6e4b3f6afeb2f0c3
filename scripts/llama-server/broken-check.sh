#!/usr/bin/env bash
# Proof that the llama-server adapter sees real C++ bugs: builds llama.cpp with one small source patch
# (test/fixtures/llama-server/verify-loop-off-by-one.patch: the draft verification loop stops one draft short,
# common/sampling.cpp common_sampler_sample_and_accept_n), apart from CI's build (its own cache entry, keyed by
# the patch's hash; ccache makes it a one-file rebuild once the clean build is cached), then runs the laws on it
# through the adapter. Exit 0 when the check fails on the broken build and shrinks it (the bug is caught), 1 when
# every law holds (the adapter missed it). Failure files go to .specconf/failures (LAW...llama-server.seedS).
#   bash scripts/llama-server/broken-check.sh [SEED] [RUNS]
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
seed="${1:-1}"
runs="${2:-10}"
patch=test/fixtures/llama-server/verify-loop-off-by-one.patch
binary="$(bash scripts/llama-server/build.sh --patch "$patch" | tail -1)" || exit 2
echo "broken build: $binary"
node bin/specconf.js check --engine "node bin/specconf.js engine llama-server --binary $binary" \
  --law "mirror acceptance" --law "acceptance correctness" --law lossless --runs "$runs" --seed "$seed"
status=$?
if [ "$status" = 1 ]; then
  echo "caught: the laws fail on the broken llama.cpp (shrunk cases above)"
  exit 0
fi
echo "missed: the check exited $status on the broken llama.cpp"
exit 1
