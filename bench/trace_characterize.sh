#!/usr/bin/env bash
# characterize speed and memory: storbench-trace vs DuckDB and pandas over the same Parquet.
# usage: bench/trace_characterize.sh [N1 N2 ...]   (default: 1000000 50000000)
# Target: >= 20 M I/Os/s on one core, max RSS flat in trace length.
# REPS=n (default 3): storbench runs n times and the least CPU time counts (on a shared
# machine one run's CPU time varies by up to 2x with the load); peers run once.
# Also characterizes a trace of the same size whose completions come about in issue
# order (trace_bench gen ... fifo), storbench only.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=("${@:-1000000 50000000}")
[ $# -eq 0 ] && SIZES=(1000000 50000000)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-/work/tgt/release}
[ -n "${SKIP_BUILD:-}" ] || cargo build -q --release -p storbench-trace --example trace_bench
BIN=$CARGO_TARGET_DIR/release/examples/trace_bench
WORK=$(mktemp -d /tmp/trace_char.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

rss_kb() { grep 'Maximum resident' "$1" | awk '{print $NF}'; }
secs() { grep 'Elapsed (wall' "$1" | awk '{print $NF}' | awk -F: '{ if (NF==3) print $1*3600+$2*60+$3; else print $1*60+$2 }'; }
# CPU seconds (user + system): the fair figure on a shared, busy machine. storbench's
# runs are timed by cputime.py (microseconds; GNU time's two decimals are a 20% step at
# 1 M I/Os); the peers' runs of seconds by GNU time.
cpu() { awk '/User time/ {u=$NF} /System time/ {s=$NF} END {print u+s}' "$1"; }

for N in "${SIZES[@]}"; do
  T=$WORK/t$N.parquet
  $BIN gen "$T" "$N" 2>/dev/null
  SZ=$(du -m "$T" | cut -f1)
  # One core: taskset pins storbench; DuckDB gets threads=1 for the same footing.
  # The run with the least CPU time counts (its wall time with it); RSS is the largest.
  OURS_CPU=; OURS_RSS=0
  for _ in $(seq "${REPS:-3}"); do
    read -r C W R < <(python3 bench/cputime.py "$WORK/ours.json" taskset -c 0 "$BIN" characterize "$T")
    [ "$R" -gt "$OURS_RSS" ] && OURS_RSS=$R
    if [ -z "$OURS_CPU" ] || awk -v a="$C" -v b="$OURS_CPU" 'BEGIN {exit !(a < b)}'; then
      OURS_CPU=$C; OURS_S=$W
    fi
  done
  # FIFO-like completions: the QD sweep's insertion-sort path.
  $BIN gen "$WORK/fifo.parquet" "$N" fifo 2>/dev/null
  FIFO_CPU=
  for _ in $(seq "${REPS:-3}"); do
    read -r C _ _ < <(python3 bench/cputime.py "$WORK/fifo.json" taskset -c 0 "$BIN" characterize "$WORK/fifo.parquet")
    if [ -z "$FIFO_CPU" ] || awk -v a="$C" -v b="$FIFO_CPU" 'BEGIN {exit !(a < b)}'; then FIFO_CPU=$C; fi
  done
  rm -f "$WORK/fifo.parquet"
  DUCK_S=NA; DUCK_RSS=NA; PD_S=NA; PD_RSS=NA; DUCK_CPU=NA; PD_CPU=NA
  if python3 -c 'import duckdb' 2>/dev/null; then
    # DuckDB's window functions hold the whole column set: cap its memory (it spills).
    if timeout 900 /usr/bin/time -v python3 bench/trace_peer.py duckdb "$T" >"$WORK/duck.json" 2>"$WORK/duck.time"; then
      DUCK_S=$(grep '^peer-seconds' "$WORK/duck.json" | awk '{print $2}'); DUCK_RSS=$(rss_kb "$WORK/duck.time"); DUCK_CPU=$(cpu "$WORK/duck.time")
    fi
  fi
  if [ "$N" -le 20000000 ] && python3 -c 'import pandas' 2>/dev/null; then
    if /usr/bin/time -v python3 bench/trace_peer.py pandas "$T" >"$WORK/pd.json" 2>"$WORK/pd.time"; then
      PD_S=$(grep '^peer-seconds' "$WORK/pd.json" | awk '{print $2}'); PD_RSS=$(rss_kb "$WORK/pd.time"); PD_CPU=$(cpu "$WORK/pd.time")
    fi
  fi
  python3 - "$N" "$SZ" "$OURS_S" "$OURS_RSS" "$DUCK_S" "$DUCK_RSS" "$PD_S" "$PD_RSS" "$WORK" "$OURS_CPU" "$DUCK_CPU" "$PD_CPU" "$(cut -d' ' -f1-3 /proc/loadavg)" "$FIFO_CPU" "${REPS:-3}" <<'PY'
import json, sys
n, sz, os_, orss, ds, drss, ps, prss, work, ocpu, dcpu, pcpu, load, fcpu, reps = sys.argv[1:]
n = int(n); os_ = float(os_); ocpu = float(ocpu)
ours = json.loads(open(f"{work}/ours.json").read().splitlines()[0])
print(f"N={n:,} parquet={sz} MB  (load average {load} on {__import__('os').cpu_count()} CPUs)")
print(f"  storbench characterize (1 core, best of {reps}): {os_:.2f} s wall = {n/os_/1e6:.1f} M I/Os/s; {ocpu:.3f} s CPU = {n/ocpu/1e6:.1f} M I/Os per CPU-second "
      f"({ocpu*1e9/n:.0f} ns per I/O); max RSS {int(orss)/1024:.0f} MB  (target >= 20 M I/Os/s)")
print(f"  same size, FIFO-like completions: {float(fcpu):.3f} s CPU = {n/float(fcpu)/1e6:.1f} M I/Os per CPU-second")
for name, s, rss, f, pc in [("duckdb", ds, drss, "duck.json", dcpu), ("pandas", ps, prss, "pd.json", pcpu)]:
    if s in ("NA", ""):
        print(f"  {name}: skipped (not installed, too large, or over its time/memory cap)"); continue
    s = float(s)
    peer = json.loads(open(f"{work}/{f}").read().splitlines()[0])
    agree = all(peer[k] == ours[k] for k in ("reads", "writes", "bytes_read", "bytes_written", "sequential_ios", "busy_ns"))
    # Peer CPU includes the interpreter start (~0.1-0.3 s); its wall time does not.
    print(f"  {name} same stats: {s:.2f} s = {n/s/1e6:.1f} M I/Os/s, {float(pc):.2f} s CPU, max RSS {int(rss)/1024:.0f} MB; "
          f"storbench is {s/os_:.1f}x faster (wall), {float(pc)/ocpu:.1f}x (CPU); figures agree: {agree}")
PY
done
