#!/usr/bin/env bash
# Engine speed against fio, measured in the same run (issue 3):
#  1. 4 KB random read at QD32 and QD128 on a RAM-backed block device (a loop device
#     over a file in /dev/shm): IOPS ratio storbench/fio (target >= 1.0) and CPU time
#     per I/O ratio (target <= 0.8); fio uses io_uring with fixedbufs and registerfiles.
#  2. `timed` replay of a 50,000 IOPS Poisson trace with bursts: issue-time error p50
#     (target <= 5 us) and p99 (<= 20 us), total drift (<= 0.1%); fio's read_iolog on the
#     same I/Os beside it (fio's iolog v3 has millisecond timestamps).
#  3. Memory flat in trace length: RSS of a replay of a long trace on a virtual target
#     (`test:` spec, no device), IOS from $BENCH_RSS_IOS (default 50,000,000).
#
# Needs root (loop devices) and fio; prints what it skips. Cleans up the loop device
# and the /dev/shm file it made. Short runs by default (the machine is shared):
# BENCH_SECONDS (default 5).
set -euo pipefail
cd "$(dirname "$0")/.."

SECS=${BENCH_SECONDS:-5}
RSS_IOS=${BENCH_RSS_IOS:-50000000}
QDS=${BENCH_QDS:-32 128}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-/work/tgt/release}
# SB_BIN_DIR: a directory holding an already built `storbench` and
# `examples/bench_trace` (skips the release build).
if [ -n "${SB_BIN_DIR:-}" ]; then
  BIN=$SB_BIN_DIR/storbench
  MKTRACE=$SB_BIN_DIR/examples/bench_trace
else
  cargo build --release -q -p storbench -p storbench-engine --example bench_trace
  BIN=$CARGO_TARGET_DIR/release/storbench
  MKTRACE=$CARGO_TARGET_DIR/release/examples/bench_trace
fi
WORK=$(mktemp -d)
IMG=/dev/shm/storbench-bench-$$.img
DEV=""
cleanup() {
  if [ -n "$DEV" ]; then losetup -d "$DEV" || true; fi
  rm -f "$IMG"
  rm -rf "$WORK"
}
trap cleanup EXIT

if [ "$(id -u)" != 0 ]; then echo "skipped: not root (loop devices need root)"; exit 0; fi
if ! command -v fio >/dev/null; then echo "skipped: fio not installed"; exit 0; fi

truncate -s 1G "$IMG"
# Fill with data so reads are not of holes.
dd if=/dev/urandom of="$IMG" bs=1M count=1024 status=none conv=notrunc
DEV=$(losetup -f --show "$IMG")
losetup --direct-io=on "$DEV" 2>/dev/null || true
echo "device: $DEV over $IMG ($(cat /sys/block/$(basename "$DEV")/loop/dio 2>/dev/null | sed 's/1/direct-io/;s/0/buffered/'))"
echo "fio: $(fio --version)"

# cpu_seconds CMD... : runs CMD, prints user+sys CPU seconds of it on fd 3.
cpu_of() { /usr/bin/time -f "%U %S" -o "$WORK/time" "$@" >"$WORK/out" 2>"$WORK/err"; awk '{print $1+$2}' "$WORK/time"; }

printf '\n%-6s %12s %12s %8s %14s %14s %8s\n' QD sb_IOPS fio_IOPS ratio sb_cpu_ns/IO fio_cpu_ns/IO ratio
for QD in $QDS; do
  SB_CPU=$(cpu_of "$BIN" run --target "$DEV" --rw randread --bs 4k --qd $QD --time ${SECS}s -o "$WORK/sb$QD")
  SB_IOS=$(python3 -c "import json;r=json.load(open('$WORK/sb$QD/result.json'));print(r['phases'][0]['metrics']['read_ios'])")
  SB_S=$(python3 -c "import json;r=json.load(open('$WORK/sb$QD/result.json'));print(r['phases'][0]['metrics']['elapsed_ns']/1e9)")
  FIO_CPU=$(cpu_of fio --name=r --filename="$DEV" --ioengine=io_uring --fixedbufs --registerfiles \
    --direct=1 --rw=randread --bs=4k --iodepth=$QD --runtime=$SECS --time_based \
    --output-format=json --output="$WORK/fio$QD.json")
  FIO_IOS=$(python3 -c "import json;j=json.load(open('$WORK/fio$QD.json'));print(j['jobs'][0]['read']['total_ios'])")
  FIO_S=$(python3 -c "import json;j=json.load(open('$WORK/fio$QD.json'));print(j['jobs'][0]['read']['runtime']/1e3)")
  python3 - "$QD" "$SB_IOS" "$SB_S" "$SB_CPU" "$FIO_IOS" "$FIO_S" "$FIO_CPU" <<'EOF'
import sys
qd, sb_ios, sb_s, sb_cpu, fio_ios, fio_s, fio_cpu = sys.argv[1], *map(float, sys.argv[2:])
sb_iops, fio_iops = sb_ios / sb_s, fio_ios / fio_s
sb_c, fio_c = sb_cpu / sb_ios * 1e9, fio_cpu / fio_ios * 1e9
print(f"{qd:<6} {sb_iops:12.0f} {fio_iops:12.0f} {sb_iops/fio_iops:8.3f} {sb_c:14.0f} {fio_c:14.0f} {sb_c/fio_c:8.3f}")
EOF
done

echo
echo "timed replay: 50,000 IOPS Poisson with bursts (32 back to back every 1000), ${SECS} s"
N=$((50000 * SECS))
"$MKTRACE" "$WORK/poisson.parquet" $N 50000 $((1 << 30)) "$WORK/poisson.iolog" "$DEV"
"$BIN" replay "$WORK/poisson.parquet" --target "$DEV" --mode timed -o "$WORK/timed" >/dev/null
python3 - "$WORK/timed/result.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
p = r["phases"][0]
f = p["info"]["fidelity"]
m = p["metrics"]
print(f"storbench timed: issue error p50 {f['issue_error_ns_p50']/1e3:.2f} us, p99 {f['issue_error_ns_p99']/1e3:.2f} us, "
      f"p99.9 {f['issue_error_ns_p999']/1e3:.2f} us, max {f['issue_error_ns_max']/1e3:.1f} us, "
      f"drift {f['drift_ns']/1e3:.1f} us ({f['drift_pct']:.4f}%), elapsed {m['elapsed_ns']/1e9:.4f} s, "
      f"slot-starved {f['slot_starved_ios']}")
EOF
TRACE_S=$(python3 -c "
import json;r=json.load(open('$WORK/timed/result.json'));print(r['trace']['duration_ns']/1e9)")
/usr/bin/time -f "%e" -o "$WORK/fio_time" fio --name=replay --read_iolog="$WORK/poisson.iolog" --ioengine=io_uring \
  --fixedbufs --registerfiles --direct=1 --iodepth=128 --output-format=json --output="$WORK/fio_replay.json" >/dev/null 2>&1 || true
python3 - "$WORK/fio_replay.json" "$TRACE_S" <<'EOF'
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"fio read_iolog: no result ({e})"); sys.exit(0)
jb = j["jobs"][0]
rt = jb["read"]["runtime"] / 1e3
trace_s = float(sys.argv[2])
print(f"fio read_iolog:  {jb['read']['total_ios']} I/Os in {rt:.4f} s for a {trace_s:.4f} s trace: "
      f"drift {(rt - trace_s)*1e6:.0f} us ({(rt - trace_s)/trace_s*100:.4f}%); "
      f"fio reports no per-I/O issue error (its iolog v3 times are whole milliseconds)")
EOF

echo
echo "memory flat in trace length: replay of $RSS_IOS I/Os on a virtual target"
"$MKTRACE" "$WORK/long.parquet" "$RSS_IOS" 1000000 $((1 << 30))
ls -l "$WORK/long.parquet" | awk '{printf "trace file: %.1f MB\n", $5/1e6}'
/usr/bin/time -f "%M %e" -o "$WORK/rss" "$BIN" replay "$WORK/long.parquet" \
  --target "test:delay=20us,capacity=1g" --mode queue-depth --qd 32 -o "$WORK/long" >/dev/null
awk '{printf "max RSS %.1f MB (target < 300 MB), %.1f s wall\n", $1/1024, $2}' "$WORK/rss"
