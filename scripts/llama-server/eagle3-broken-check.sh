#!/usr/bin/env bash
# Proof that the EAGLE-3 oracle sees llama.cpp's EAGLE-3 path (issue 34): builds llama.cpp with one small patch
# (test/fixtures/llama-server/eagle3-aux-layers-reversed.patch: common/speculative.cpp's
# common_speculative_impl_draft_eagle3::process concatenates the auxiliary states in reverse order before the
# head's fc), apart from CI (its own cache entry; ccache makes it a one-file rebuild), and checks it with every
# EAGLE-3 head drawn as the oracle (check --eagle3-oracle): law "mirror acceptance" must fail on the broken build
# and hold on the clean one, on the same generated cases (its property: the mirror and the oracle). Outputs stay
# exact on the broken build (the target verifies whatever is drafted), so no law that reads outputs sees it, and a
# random head's drafts are compared with nothing. Both servers run with --no-spec-draft-backend-sampling, which removes the one known
# defect that costs the oracle acceptance on the clean build (docs/findings/llama-server-eagle3-drafts-depend-on-batch.md).
# Exit 0 when the broken build fails and the clean one holds, 1 otherwise, 2 when a build fails.
#   bash scripts/llama-server/eagle3-broken-check.sh [SEED] [RUNS]
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
seed="${1:-1}"
runs="${2:-10}"
patch=test/fixtures/llama-server/eagle3-aux-layers-reversed.patch
broken="$(bash scripts/llama-server/build.sh --patch "$patch" | tail -1)" || exit 2
clean="$(bash scripts/llama-server/build.sh --print-path | tail -1)" || exit 2
check() {
  node bin/specconf.js check --eagle3-oracle --law "mirror acceptance" --runs "$runs" --seed "$seed" --failures "$2" \
    --engine "node bin/specconf.js engine llama-server --binary $1 --server-flag=--no-spec-draft-backend-sampling"
}
echo "broken build: $broken"
check "$broken" .specconf/failures/eagle3-broken
broken_status=$?
echo "clean build: $clean"
check "$clean" .specconf/failures/eagle3-clean
clean_status=$?
if [ "$broken_status" = 1 ] && [ "$clean_status" = 0 ]; then
  echo "caught: mirror acceptance fails on the broken llama.cpp (shrunk case above) and holds on the clean one"
  exit 0
fi
echo "missed: the check exited $broken_status on the broken llama.cpp and $clean_status on the clean one"
exit 1
