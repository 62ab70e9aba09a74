#!/usr/bin/env bash
# Overhead of `storbench record` on a RAM-backed device: fio 4 KiB random-read IOPS
# with and without recording, the I/Os recorded against fio's count, and the events
# lost at that rate.
#
# The device is a loop device over a file in /dev/shm (zram is bio-based: it issues no
# block requests, so block_rq_* events never fire on it). Rounds alternate without/with
# to spread the noise of a shared machine.
#
# usage: sudo [STORBENCH=path] bench/record_overhead.sh [SECONDS_PER_RUN=5] [ROUNDS=2]
# needs: root, fio, losetup, jq; builds storbench in release mode.
set -euo pipefail

secs=${1:-5}
rounds=${2:-2}
here=$(cd "$(dirname "$0")/.." && pwd)

skip() { echo "skipped: $*"; exit 0; }
[ "$(id -u)" = 0 ] || skip "not root"
for t in fio losetup jq; do command -v "$t" >/dev/null || skip "$t not installed"; done
[ -d /dev/shm ] || skip "no /dev/shm"

# STORBENCH=/path/to/storbench skips the build.
if [ -n "${STORBENCH:-}" ]; then
    sb=$STORBENCH
else
    export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-/work/tgt/release}
    (cd "$here" && cargo build --release -q -p storbench)
    sb="$CARGO_TARGET_DIR/release/storbench"
fi

work=$(mktemp -d /tmp/storbench-record-bench.XXXXXX)
img=/dev/shm/storbench-record-bench-$$.img
lo=""
rec_pid=""
cleanup() {
    if [ -n "$rec_pid" ] && kill -0 "$rec_pid" 2>/dev/null; then
        kill -TERM "$rec_pid" 2>/dev/null || true
        wait "$rec_pid" 2>/dev/null || true
    fi
    [ -n "$lo" ] && losetup -d "$lo" 2>/dev/null || true
    rm -f "$img"
    rm -rf "$work"
}
trap cleanup EXIT INT TERM

truncate -s 1G "$img"
# Fill it so reads hit allocated tmpfs pages, not holes.
dd if=/dev/zero of="$img" bs=1M count=1024 conv=notrunc status=none
lo=$(losetup -f --show "$img")

fio_run() { # $1 = json output file
    fio --name=bench --filename="$lo" --direct=1 --ioengine=io_uring --iodepth=32 \
        --rw=randread --bs=4k --time_based --runtime="$secs" --ramp_time=0 \
        --randrepeat=1 --output-format=json --output="$1" >/dev/null
}
iops_of() { jq '.jobs[0].read.iops' "$1"; }
ios_of() { jq '.jobs[0].read.total_ios' "$1"; }

tck=$(getconf CLK_TCK)
declare -a base=() rec=() recorded=() issued=() lost=() cpu=()
for r in $(seq 1 "$rounds"); do
    fio_run "$work/base$r.json"
    base+=("$(iops_of "$work/base$r.json")")

    "$sb" record --device "$lo" -o "$work/trace$r.parquet" 2>"$work/rec$r.log" &
    rec_pid=$!
    # Wait until the instance is tracing (the recorder prints its first line then).
    for _ in $(seq 1 100); do grep -q '^recording' "$work/rec$r.log" && break; sleep 0.05; done
    fio_run "$work/rec$r.json"
    # The recorder's own CPU time (user + system) while fio ran: fields 14 and 15.
    cpu+=("$(awk -v t="$tck" '{print ($14 + $15) / t}' "/proc/$rec_pid/stat")")
    kill -INT "$rec_pid"
    wait "$rec_pid" || { cat "$work/rec$r.log"; exit 1; }
    rec_pid=""
    rec+=("$(iops_of "$work/rec$r.json")")
    issued+=("$(ios_of "$work/rec$r.json")")
    recorded+=("$(sed -n 's/^  read *\([0-9]*\) I\/Os.*/\1/p' "$work/rec$r.log")")
    l=$(sed -n 's/^warning: the kernel lost \([0-9]*\) events.*/\1/p' "$work/rec$r.log")
    lost+=("${l:-0}")
done

echo "record overhead: fio randread 4k qd32 io_uring on loop over /dev/shm, ${secs}s runs, $(nproc) CPUs"
ratios=()
for i in $(seq 0 $((rounds - 1))); do
    ratio=$(echo "${rec[$i]} / ${base[$i]}" | bc -l)
    ratios+=("$ratio")
    us_per_io=$(echo "${cpu[$i]} * 1000000 / (${recorded[$i]:-0} + 0.000001)" | bc -l)
    printf 'round %d: without %.0f IOPS, with %.0f IOPS (ratio %.3f); fio issued %s reads, recorded %s, lost events %s; recorder CPU %.2f s = %.2f us per I/O\n' \
        $((i + 1)) "${base[$i]}" "${rec[$i]}" "$ratio" "${issued[$i]}" "${recorded[$i]:-0}" "${lost[$i]}" "${cpu[$i]}" "$us_per_io"
done
b=$(printf '%s\n' "${base[@]}" | awk '{s+=$1} END {print s/NR}')
w=$(printf '%s\n' "${rec[@]}" | awk '{s+=$1} END {print s/NR}')
med=$(printf '%s\n' "${ratios[@]}" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}')
printf 'mean: without %.0f IOPS, with %.0f IOPS; median with/without ratio %.3f\n' "$b" "$w" "$med"
