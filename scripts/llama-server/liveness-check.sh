#!/usr/bin/env bash
# Proof that law "speculation engaged" (issue 34, liveness) sees a llama-server that silently stops speculating,
# and holds on the server as shipped. Builds llama.cpp twice through build.sh (the clean build, and one with
# test/fixtures/llama-server/silent-draft-failure.patch: draft-simple's draft() in common/speculative.cpp skips
# a sequence whose root sits at an even position, as its own failure path leaves one after a failed
# llama_decode: no draft, the server decodes the sampled token alone, outputs exact, timings.draft_n short),
# apart from CI's build, then checks the law through the adapter on both with the same seed and runs (generated
# cases), and on both the hand-made boundary cases of liveness-boundary.ts (a request filling its slot's context,
# one stopping at its cap: where llama.cpp's get_n_draft_max stops drafting). Exit 0 when the law fails on the
# patched build (both ways) and holds on the clean one (held on at least one generated case, failed on none, and
# every boundary case); 1 otherwise; 2 when a build fails. Failure files go to .specconf/failures.
#   bash scripts/llama-server/liveness-check.sh [SEED] [RUNS]      (WORKERS=N: check workers, default 1)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
seed="${1:-1}"
runs="${2:-20}"
workers="${WORKERS:-1}"
patch=test/fixtures/llama-server/silent-draft-failure.patch
law="speculation engaged"
clean="$(bash scripts/llama-server/build.sh | tail -1)" || exit 2
patched="$(bash scripts/llama-server/build.sh --patch "$patch" | tail -1)" || exit 2

# Runs the law on one binary; prints the check's output and leaves its exit status and table line in globals.
check_on() {
  local binary="$1" log
  log="$(mktemp)"
  node bin/specconf.js check --engine "node bin/specconf.js engine llama-server --binary $binary" \
    --law "$law" --runs "$runs" --seed "$seed" --workers "$workers" 2>&1 | tee "$log"
  status=${PIPESTATUS[0]}
  # The verdict table's row: law, runs, passed, failed, ties, not checkable.
  row="$(grep -E "^$law +[0-9]+ " "$log" | tail -1)"
  rm -f "$log"
}

echo "== patched build (silently stops speculating at even root positions): $patched"
check_on "$patched"
patched_status=$status patched_row=$row
echo "== clean build: $clean"
check_on "$clean"
clean_status=$status clean_row=$row

# Runs the hand-made boundary cases on one binary; prints them and leaves the exit status and totals in globals.
boundary_on() {
  local log
  log="$(mktemp)"
  npx tsx scripts/llama-server/liveness-boundary.ts "$1" 2>&1 | tee "$log"
  status=${PIPESTATUS[0]}
  row="$(tail -1 "$log")"
  rm -f "$log"
}

echo "== boundary cases, patched build"
boundary_on "$patched"
patched_boundary=$status patched_totals=$row
echo "== boundary cases, clean build"
boundary_on "$clean"
clean_boundary=$status clean_totals=$row

echo
echo "seed $seed, $runs runs (law, runs, passed, failed, ties, not checkable):"
echo "  patched: exit $patched_status | $patched_row"
echo "  clean:   exit $clean_status | $clean_row"
echo "  patched boundary: exit $patched_boundary | $patched_totals"
echo "  clean boundary:   exit $clean_boundary | $clean_totals"
passed="$(awk '{print $4}' <<<"$clean_row")"
if [ "$patched_status" = 1 ] && [ "$clean_status" = 0 ] && [ "${passed:-0}" -gt 0 ] &&
  [ "$patched_boundary" = 1 ] && [ "$clean_boundary" = 0 ]; then
  echo "caught: '$law' fails on the patched llama-server and holds on the clean one"
  exit 0
fi
echo "not shown: the patched build must fail the law (exit 1), the clean one hold it on at least one case (exit 0)"
exit 1
