#!/usr/bin/env bash
# Procedure overhead against fio, measured in the same run (issue 6):
#  1. The random-write phase of `storbench consistency` (4 KB random writes, QD32,
#     checkpoints every second, per-second journal) on a RAM-backed block device (a
#     loop device over a file in /dev/shm), against fio's 4 KB randwrite at QD32 on the
#     same device for the same time: IOPS ratio storbench/fio (target >= 0.9: the
#     procedure's chunking, journaling and checkpoints cost little).
#  2. `storbench demo` wall and CPU seconds (target: about a minute on 2 cores).
#
# Needs root (loop devices) and fio; prints what it skips. Cleans up the loop device
# and the /dev/shm file it made. BENCH_SECONDS (default 5) per measured phase.
set -euo pipefail
cd "$(dirname "$0")/.."

SECS=${BENCH_SECONDS:-5}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-/work/tgt/release}
cargo build --release -q -p storbench
BIN=$CARGO_TARGET_DIR/release/storbench
WORK=$(mktemp -d)
IMG=/dev/shm/storbench-suite-bench-$$.img
DEV=""
cleanup() {
  if [ -n "$DEV" ]; then losetup -d "$DEV" || true; fi
  rm -f "$IMG"
  rm -rf "$WORK"
}
trap cleanup EXIT

if [ "$(id -u)" != 0 ]; then echo "skipped: not root (loop devices need root)"; exit 0; fi
if ! command -v fio >/dev/null; then echo "skipped: fio not installed"; exit 0; fi

truncate -s 512M "$IMG"
DEV=$(losetup -f --show "$IMG")
losetup --direct-io=on "$DEV" 2>/dev/null || true
echo "device: $DEV over $IMG; fio: $(fio --version); ${SECS} s per run"

/usr/bin/time -f "%e %U %S" -o "$WORK/t_sb" "$BIN" consistency --target "$DEV" --destroy-data "$DEV" \
  --duration "${SECS}s" --checkpoint-every 1s -q -o "$WORK/sb" >/dev/null
SB=$(python3 -c "
import json; r = json.load(open('$WORK/sb/result.json'))
m = [p for p in r['phases'] if p['name'] == 'random-write'][0]['metrics']
print(m['write_ios'] / (m['elapsed_ns'] / 1e9))")
fio --name=w --filename="$DEV" --ioengine=io_uring --direct=1 --rw=randwrite --bs=4k \
  --iodepth=32 --runtime="$SECS" --time_based --output-format=json --output="$WORK/fio.json" >/dev/null
FIO=$(python3 -c "
import json; j = json.load(open('$WORK/fio.json'))['jobs'][0]['write']
print(j['total_ios'] / (j['runtime'] / 1e3))")
python3 -c "print(f'random-write phase: storbench {$SB:.0f} IOPS, fio {$FIO:.0f} IOPS, ratio {$SB/$FIO:.3f}')"

/usr/bin/time -f "%e %U %S" -o "$WORK/t_demo" "$BIN" demo -o "$WORK/demo" >/dev/null 2>&1
read -r WALL USR SYS < "$WORK/t_demo"
python3 -c "print(f'storbench demo: {$WALL:.1f} s wall, {$USR + $SYS:.1f} s CPU (2 simulated drives, 6 runs, report.html)')"
