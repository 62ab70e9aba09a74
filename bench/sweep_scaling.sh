#!/usr/bin/env bash
# Sweep scaling on this machine: the same points run one after another as separate
# `storbench consistency` commands (the peer), then as one `storbench sweep -j 2`.
# Prints both wall times and their ratio (target: at most 0.6 on 2 cores), and checks
# that `-j 1` and `-j 2` write the same dataset.
# usage: bench/sweep_scaling.sh [POINTS_PER_AXIS] [DURATION]
#   BIN=path/to/storbench to time another build (default: a release build).
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-4}"
dur="${2:-30s}"
if [ -z "${BIN:-}" ]; then
  cargo build --release -q -p storbench
  BIN="target/release/storbench"
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
ops=$(python3 -c "n=$n; print(', '.join(str(round(0.07 + i * 0.43 / max(n - 1, 1), 4)) for i in range(n)))")
cat >"$work/plan.toml" <<PLAN
name = "scaling"
[[target]]
preset = "client-7op"
capacity = "1g"
op = [$ops]
victim = ["greedy", "fifo"]
[[procedure]]
name = "consistency"
quick = true
duration = "$dur"
PLAN
points=$("$BIN" sweep "$work/plan.toml" --dry-run | awk '$3 == "consistency" {print $5}')
count=$(echo "$points" | wc -l)
now() { date +%s.%N; }

t0=$(now)
i=0
for spec in $points; do
  "$BIN" consistency -t "$spec" --quick --duration "$dur" -q -o "$work/seq-$i" >/dev/null
  i=$((i + 1))
done
t_seq=$(echo "$(now) - $t0" | bc)

t0=$(now)
"$BIN" sweep "$work/plan.toml" -o "$work/j2" -j 2 -q >/dev/null
t_j2=$(echo "$(now) - $t0" | bc)

t0=$(now)
"$BIN" sweep "$work/plan.toml" -o "$work/j1" -j 1 -q >/dev/null
t_j1=$(echo "$(now) - $t0" | bc)

cmp -s "$work/j1/sweep.parquet" "$work/j2/sweep.parquet" || { echo "DATASETS DIFFER"; exit 1; }
printf 'points: %d (consistency --quick --duration %s, 1 GiB client drive)\n' "$count" "$dur"
printf 'one after another (storbench consistency x %d): %6.1f s\n' "$count" "$t_seq"
printf 'storbench sweep -j 1:                          %6.1f s\n' "$t_j1"
printf 'storbench sweep -j 2:                          %6.1f s\n' "$t_j2"
printf 'ratio sweep -j 2 / one after another: %.2f (target <= 0.60); -j 1 / one after another: %.2f\n' \
  "$(echo "$t_j2 / $t_seq" | bc -l)" "$(echo "$t_j1 / $t_seq" | bc -l)"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
