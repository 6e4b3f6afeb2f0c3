#!/usr/bin/env bash
# How many times one core's throughput a machine delivers on specconf's work (issue 26): the same one-process
# check (`--workers 1`) run alone, then as COPIES simultaneous copies, each pinned to its own CPU (taskset). If
# N copies each take longer than one alone, no split of the work over N workers can reach N x; the ratio
# bounds what `check --workers N` can gain. Prints the topology and each set's wall seconds.
#   scripts/core-scaling.sh [RUNS (default 20)] [COPIES... (default: 1, half the CPUs, all CPUs)]
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-20}"
shift || true
cpus="$(nproc)"
sets=("$@")
[ ${#sets[@]} -gt 0 ] || sets=(1 $((cpus / 2)) "$cpus")
lscpu | grep -E "^(CPU\(s\)|Thread|Core|Socket|Model name)" | tr -s ' '
out="$(mktemp -d)"
alone=""
for copies in "${sets[@]}"; do
  start=$(date +%s.%N)
  for ((cpu = 0; cpu < copies; cpu++)); do
    taskset -c "$cpu" node bin/specconf.js check --runs "$runs" --workers 1 --seed 7 --no-write --json > "$out/$cpu.json" &
  done
  wait
  seconds=$(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $start}")
  [ -n "$alone" ] || alone="$seconds"
  echo "$copies copies on CPUs 0-$((copies - 1)): $seconds s each; the machine delivers $(awk "BEGIN{printf \"%.1f\", $copies * $alone / $seconds}")x one core"
done
rm -rf "$out"
