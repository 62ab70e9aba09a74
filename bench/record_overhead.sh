#!/usr/bin/env bash
# Overhead of `storbench record` on a RAM-backed device: fio 4 KiB random-read IOPS
# with and without recording, the reads recorded against the reads fio completed, the
# events decoded and lost at that rate, and the recorder's CPU time per event.
#
# The device is a loop device over a file in /dev/shm (zram is bio-based: it issues no
# block requests, so block_rq_* events never fire on it; this kernel has no null_blk).
# With KERNEL_ONLY=1 each round also runs fio with the same two events traced into an
# unread instance of this script (overwrite mode, 16 MiB per CPU): the kernel's share
# of the overhead, without storbench reading anything.
# Each round runs one pair, without and with recording, alternating which goes first;
# the summary gives medians over the rounds. The load average is printed with every
# round, since on a shared machine wall-clock IOPS depend on it.
#
# usage: sudo [STORBENCH=path] [DIO=1] [BUFFER_KIB=n] [KERNEL_ONLY=1] bench/record_overhead.sh [SECONDS_PER_RUN=5] [ROUNDS=3] [IODEPTH=32]
# DIO=1: the loop device does direct I/O on its file (slower here: 67K vs 168K IOPS).
# BUFFER_KIB: the recorder's ring buffer per CPU (default: storbench's, 16 MiB).
# needs: root, fio, losetup, jq, bc; builds storbench in release mode.
set -euo pipefail

secs=${1:-5}
rounds=${2:-3}
qd=${3:-32}
dio=${DIO:-0}
buf_args=()
[ -n "${BUFFER_KIB:-}" ] && buf_args=(--buffer-kib "$BUFFER_KIB")
here=$(cd "$(dirname "$0")/.." && pwd)

skip() { echo "skipped: $*"; exit 0; }
[ "$(id -u)" = 0 ] || skip "not root"
for t in fio losetup jq bc; do command -v "$t" >/dev/null || skip "$t not installed"; done
[ -d /dev/shm ] || skip "no /dev/shm"
[ -d /sys/kernel/tracing/instances ] || [ -d /sys/kernel/debug/tracing/instances ] || skip "no tracefs"

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
inst=""
cleanup() {
    if [ -n "$inst" ] && [ -d "$inst" ]; then
        echo 0 >"$inst/tracing_on" 2>/dev/null || true
        rmdir "$inst" 2>/dev/null || true
    fi
    if [ -n "$rec_pid" ] && kill -0 "$rec_pid" 2>/dev/null; then
        kill -TERM "$rec_pid" 2>/dev/null || true
        wait "$rec_pid" 2>/dev/null || true
    fi
    [ -n "$lo" ] && losetup -d "$lo" 2>/dev/null || true
    rm -f "$img"
    rm -rf "$work"
}
trap cleanup EXIT INT TERM

# Filled, so reads hit allocated tmpfs pages, not holes.
dd if=/dev/zero of="$img" bs=1M count=1024 status=none
if [ "$dio" = 1 ]; then
    lo=$(losetup -f --show --direct-io=on "$img")
else
    lo=$(losetup -f --show "$img")
fi

fio_run() { # $1 = json output file
    fio --name=bench --filename="$lo" --direct=1 --ioengine=io_uring --iodepth="$qd" \
        --rw=randread --bs=4k --time_based --runtime="$secs" --ramp_time=0 \
        --randrepeat=1 --output-format=json --output="$1" >/dev/null
}
iops_of() { jq '.jobs[0].read.iops' "$1"; }
ios_of() { jq '.jobs[0].read.total_ios' "$1"; }
load1() { cut -d' ' -f1 /proc/loadavg; }

run_without() { # $1 = round
    fio_run "$work/base$1.json"
    base+=("$(iops_of "$work/base$1.json")")
}

run_with() { # $1 = round
    local r=$1 log="$work/rec$1.log"
    "$sb" record --device "$lo" -o "$work/trace$r.parquet" "${buf_args[@]}" 2>"$log" &
    rec_pid=$!
    # The recorder prints its first line once the instance is tracing.
    for _ in $(seq 1 200); do grep -qs '^recording' "$log" && break; sleep 0.05; done
    grep -q '^recording' "$log" || { cat "$log"; exit 1; }
    fio_run "$work/rec$r.json"
    kill -INT "$rec_pid"
    wait "$rec_pid" || { cat "$log"; exit 1; }
    rec_pid=""
    rec+=("$(iops_of "$work/rec$r.json")")
    issued+=("$(ios_of "$work/rec$r.json")")
    recorded+=("$(sed -n 's/^  read *\([0-9]*\) I\/Os.*/\1/p' "$log")")
    events+=("$(sed -n 's/^recorded [0-9]* I\/Os in .* s (\([0-9]*\) events.*/\1/p' "$log")")
    cpu+=("$(sed -n 's/^  recorder CPU \([0-9.]*\) s.*/\1/p' "$log")")
    local l
    l=$(sed -n 's/^warning: the kernel lost \([0-9]*\) events.*/\1/p' "$log")
    lost+=("${l:-0}")
}

run_kernel_only() { # $1 = round
    local tr=/sys/kernel/tracing dev kdev
    [ -d "$tr/instances" ] || tr=/sys/kernel/debug/tracing
    inst="$tr/instances/storbench-bench-kernel-only-$$"
    mkdir "$inst"
    echo 16384 >"$inst/buffer_size_kb"
    echo 1 >"$inst/options/overwrite"
    dev=$(cat "/sys/block/$(basename "$lo")/dev")
    kdev=$(( (${dev%:*} << 20) | ${dev#*:} ))
    for e in block_rq_issue block_rq_complete; do
        echo "dev == $kdev" >"$inst/events/block/$e/filter"
        echo 1 >"$inst/events/block/$e/enable"
    done
    fio_run "$work/kern$1.json"
    echo 0 >"$inst/tracing_on"
    rmdir "$inst"
    inst=""
    kern+=("$(iops_of "$work/kern$1.json")")
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

echo "record overhead: fio randread 4k qd$qd io_uring on loop (direct-io=$dio) over /dev/shm, ${secs}s runs, $rounds rounds, buffer ${BUFFER_KIB:-16384} KiB/CPU, $(nproc) CPUs, $(uname -r)"
declare -a base=() rec=() kern=() recorded=() issued=() events=() lost=() cpu=() ratios=()
for r in $(seq 1 "$rounds"); do
    l0=$(load1)
    if [ $((r % 2)) = 1 ]; then run_without "$r"; run_with "$r"; else run_with "$r"; run_without "$r"; fi
    i=$((r - 1))
    ratio=$(echo "${rec[$i]} / ${base[$i]}" | bc -l)
    ratios+=("$ratio")
    ns_per_event=$(echo "${cpu[$i]:-0} * 1000000000 / (${events[$i]:-0} + 0.000001)" | bc -l)
    printf 'round %d: without %.0f IOPS, with %.0f IOPS (ratio %.3f); fio read %s, recorded %s reads, %s events, lost %s; recorder CPU %.2f s = %.0f ns per event; load %s -> %s\n' \
        "$r" "${base[$i]}" "${rec[$i]}" "$ratio" "${issued[$i]}" "${recorded[$i]:-0}" "${events[$i]:-0}" "${lost[$i]}" "${cpu[$i]:-0}" "$ns_per_event" "$l0" "$(load1)"
    if [ "${KERNEL_ONLY:-0}" = 1 ]; then
        run_kernel_only "$r"
        printf 'round %d: kernel tracing only (unread instance) %.0f IOPS\n' "$r" "${kern[$i]}"
    fi
done
mb=$(printf '%s\n' "${base[@]}" | median)
mw=$(printf '%s\n' "${rec[@]}" | median)
mr=$(printf '%s\n' "${ratios[@]}" | median)
mc=$(for i in "${!cpu[@]}"; do echo "${cpu[$i]:-0} * 1000000000 / (${events[$i]:-0} + 0.000001)" | bc -l; done | median)
tl=$(printf '%s\n' "${lost[@]}" | awk '{s+=$1} END {print s}')
miss=$(for i in "${!issued[@]}"; do echo $((${issued[$i]} - ${recorded[$i]:-0})); done | awk '{s+=($1>0?$1:0)} END {print s}')
printf 'median: without %.0f IOPS, with %.0f IOPS, ratio %.3f; recorder %.0f ns CPU per event; lost events %s, fio reads not recorded %s (all rounds); load %s\n' \
    "$mb" "$mw" "$mr" "$mc" "$tl" "$miss" "$(cut -d' ' -f1-3 /proc/loadavg)"
if [ "${KERNEL_ONLY:-0}" = 1 ]; then
    printf 'median: kernel tracing only %.0f IOPS\n' "$(printf '%s\n' "${kern[@]}" | median)"
fi
