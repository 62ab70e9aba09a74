#!/usr/bin/env bash
# Whole `characterize` of two builds side by side: CPU seconds (bench/cputime.py), runs
# alternating, pinned to core 0.
# usage: bench/characterize_pair.sh BIN_A BIN_B TRACE... (BIN: a trace_bench binary)
# ROUNDS=n (default 5). Prints one line per run: trace, build, CPU s, max RSS KiB.
set -euo pipefail
A=$1 B=$2; shift 2
W=$(mktemp -d /tmp/characterize_pair.XXXXXX)
trap 'rm -rf "$W"' EXIT
for t in "$@"; do
  for _ in $(seq "${ROUNDS:-5}"); do
    for b in A B; do
      bin=$A; [ $b = B ] && bin=$B
      read -r c _ r < <(python3 "$(dirname "$0")/cputime.py" "$W/out" taskset -c 0 "$bin" characterize "$t")
      echo "$(basename "$t") $b $c $r"
    done
  done
done
