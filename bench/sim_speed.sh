#!/usr/bin/env bash
# Simulated-SSD speed: steady-state 4 KiB random writes at QD32 (WA 3-8), simulated host
# I/Os per CPU-second on one core (target >= 1M), and memory per simulated GB.
#
# Figures are per CPU-second of the benchmark thread (from /proc/thread-self/schedstat),
# pinned to one CPU: the machine may be shared, so wall-clock rates understate the
# simulator; the load average is printed beside the figures because a busy sibling
# hyperthread and a shared L3 still slow it down (the simulator is memory-bound). Each
# measurement runs REPS times; best and median are reported.
#
# 1. direct: a minimal driver on the Target trait (the simulator alone), steady state;
# 2. engine: the CLI's random-write generator through the engine loop (run_phase with
#    its metrics), on the same drive right after, so the ratio is the engine's cost;
# 3. cli: `storbench run --rw randwrite --bs 4k --qd 32` end to end (user+sys CPU of the
#    process, result files included) if the release storbench binary is built. It starts
#    from a fresh drive (run has no preconditioning), so its peer is the direct and
#    engine driver from a fresh drive with the same number of writes;
# 4. memory per simulated GB at two capacities (resident set growth from opening the
#    drive to its steady state).
#
# 5. with BASELINE_BIN (a sim_speed example built from another commit, e.g. the one
#    before a change), the same steady-state runs of it interleaved with this build's,
#    and the ratio of the medians: a change's cost measured in the same run.
#
# usage: bench/sim_speed.sh [SPEC] [IOS] [REPS]
#   env: BENCH_CPU (CPU to pin to, default 0), MEM_CAPS (default "4g 16g"),
#        BASELINE_BIN (optional peer binary)
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/work/tgt/release}"
cargo build --release -q -p storbench-sim --example sim_speed
BIN="$CARGO_TARGET_DIR/release/examples/sim_speed"
CLI="$CARGO_TARGET_DIR/release/storbench"
SPEC="${1:-sim:client-7op,capacity=4g,victim=greedy}"
IOS="${2:-5000000}"
REPS="${3:-3}"
CPU="${BENCH_CPU:-0}"
MEM_CAPS="${MEM_CAPS:-4g 16g}"
if command -v taskset >/dev/null; then PIN=(taskset -c "$CPU"); else
    PIN=()
    echo "note: taskset not found, running unpinned"
fi
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

load() { cut -d' ' -f1-3 /proc/loadavg; }
# best and median of the numbers on stdin
stats() { sort -n | awk '{r[NR]=$1} END{printf "best %.3f M  median %.3f M  (n=%d)", r[NR]/1e6, r[int((NR+1)/2)]/1e6, NR}'; }
median() { sort -n | awk '{r[NR]=$1} END{print r[int((NR+1)/2)]}'; }
# the Nth "simulated IOPS / cpu s" figure of a sim_speed output
rate() { awk -v n="$2" '/IOPS \/ cpu s/{k++; if(k==n) print $NF}' "$1"; }

echo "== steady state: $SPEC, $IOS I/Os per phase, $REPS runs pinned to CPU $CPU"
echo "load average before: $(load)"
for r in $(seq "$REPS"); do
    "${PIN[@]}" "$BIN" "$SPEC" "$IOS" "$IOS" steady >"$TMP/steady.$r"
    rate "$TMP/steady.$r" 1 >>"$TMP/direct"
    rate "$TMP/steady.$r" 2 >>"$TMP/engine"
done
cat "$TMP/steady.1"
# The simulator is deterministic: every run must give the same result.
fp=$(grep -h fingerprint "$TMP"/steady.* | sort -u | wc -l)
[ "$fp" -eq 1 ] || { echo "FAIL: runs of the same spec gave different results"; exit 1; }
echo "load average after: $(load)"
echo "direct (Target trait)  simulated I/O per cpu s: $(stats <"$TMP/direct")"
echo "engine (run_phase)     simulated I/O per cpu s: $(stats <"$TMP/engine")"
# engine cost per I/O from the medians
awk -v d="$(median <"$TMP/direct")" -v e="$(median <"$TMP/engine")" \
    'BEGIN{printf "engine / direct        %.2f (%.0f ns per I/O in the engine loop and metrics, medians)\n", e/d, 1e9/e - 1e9/d}'
wa=$(awk '/^WA/{print $2; exit}' "$TMP/steady.1")
awk -v wa="$wa" 'BEGIN{ if (wa < 3 || wa > 8) { print "note: WA " wa " is outside 3-8" } }'

if [ -x "$CLI" ]; then
    echo
    echo "== end to end: storbench run from a fresh drive, $IOS 4 KiB random writes at QD32"
    for r in $(seq "$REPS"); do
        "${PIN[@]}" "$BIN" "$SPEC" "$IOS" "$IOS" fresh >"$TMP/fresh.$r"
        rate "$TMP/fresh.$r" 1 >>"$TMP/fdirect"
        rate "$TMP/fresh.$r" 2 >>"$TMP/fengine"
        rm -rf "$TMP/out"
        /usr/bin/time -f "%U %S" -o "$TMP/time" "${PIN[@]}" "$CLI" run --target "$SPEC" \
            --rw randwrite --bs 4k --qd 32 --bytes $((IOS * 4096)) -o "$TMP/out" >"$TMP/cli.out"
        awk -v n="$IOS" '{print n / ($1 + $2)}' "$TMP/time" >>"$TMP/cli"
    done
    grep -E "I/Os:|IOPS" "$TMP/cli.out" | sed 's/^/  /'
    echo "load average after: $(load)"
    echo "direct, fresh drive    simulated I/O per cpu s: $(stats <"$TMP/fdirect")  (WA $(awk '/^WA/{print $2; exit}' "$TMP/fresh.1"))"
    echo "engine, fresh drive    simulated I/O per cpu s: $(stats <"$TMP/fengine")"
    echo "storbench run (CLI)    simulated I/O per cpu s: $(stats <"$TMP/cli")  (user+sys of the process)"
    awk -v e="$(median <"$TMP/fengine")" -v c="$(median <"$TMP/cli")" \
        'BEGIN{printf "cli / engine           %.2f (%.0f ns per I/O in the rest of storbench run, medians)\n", c/e, 1e9/c - 1e9/e}'
else
    echo
    echo "(skipped the end-to-end run: build it with cargo build --release -p storbench)"
fi

if [ -n "${BASELINE_BIN:-}" ]; then
    echo
    echo "== this build against $BASELINE_BIN, $REPS interleaved runs each (direct, steady state)"
    for r in $(seq "$REPS"); do
        "${PIN[@]}" "$BASELINE_BIN" "$SPEC" "$IOS" 0 steady >"$TMP/base.$r"
        rate "$TMP/base.$r" 1 >>"$TMP/base"
        "${PIN[@]}" "$BIN" "$SPEC" "$IOS" 0 steady >"$TMP/new.$r"
        rate "$TMP/new.$r" 1 >>"$TMP/new"
    done
    echo "baseline  simulated I/O per cpu s: $(stats <"$TMP/base")  (WA $(awk '/^WA/{print $2; exit}' "$TMP/base.1"))"
    echo "this      simulated I/O per cpu s: $(stats <"$TMP/new")  (WA $(awk '/^WA/{print $2; exit}' "$TMP/new.1"))"
    awk -v b="$(median <"$TMP/base")" -v n="$(median <"$TMP/new")" \
        'BEGIN{printf "this / baseline        %.2f (medians)\n", n/b}'
    echo "load average after: $(load)"
fi

echo
echo "== memory per simulated GB"
for cap in $MEM_CAPS; do
    "${PIN[@]}" "$BIN" "$SPEC,capacity=$cap" 100000 0 steady | grep -E "^memory" | sed "s/^/  $cap: /"
done
