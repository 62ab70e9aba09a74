#!/usr/bin/env bash
# Engine speed against fio, measured in the same run (issue 3):
#  1. 4 KB random read at QD32 and QD128 on a RAM-backed block device (a loop device
#     over a file in /dev/shm, direct I/O): IOPS ratio storbench/fio (target >= 1.0) and
#     CPU time per I/O ratio (target <= 0.8). fio uses io_uring with fixedbufs,
#     registerfiles and direct=1. The machine is shared, so each depth runs
#     BENCH_REPEAT (default 3) storbench/fio pairs back to back, alternating, and the
#     ratios printed are the medians of the per-pair ratios. Each depth runs with
#     every count of jobs in BENCH_JOBS (default "1 2"; issue 35): storbench
#     `--jobs N` against fio `numjobs=N` with group_reporting, the depth per job in
#     both (fio's iodepth), the CPU time of all the jobs.
#  2. `timed` replay of a 50,000 IOPS Poisson trace with bursts: issue-time error p50
#     (target <= 5 us) and p99 (<= 20 us), total drift (<= 0.1%). fio replays the same
#     I/Os with read_iolog (the iolog v3 comes from `storbench export`, microsecond
#     times; fio refuses registerfiles with read_iolog, so its replay runs without it).
#     Both tools' issue times are also taken from the block layer (block_bio_queue in a
#     private tracefs instance, 1 us resolution) against the same schedule, anchored at
#     the I/O issued earliest relative to it: the like-for-like figures, printed beside
#     storbench's own.
#  3. Memory flat in trace length: peak RSS of a replay of a long trace on a virtual
#     target (`test:` spec, no device), BENCH_RSS_IOS I/Os (default 50,000,000).
#
# Needs root (loop devices) and fio; prints what it skips. Cleans up the loop device
# and the /dev/shm file it made. Short runs by default (the machine is shared):
# BENCH_SECONDS (default 5), BENCH_QDS (default "32 128"), BENCH_PARTS (default "1 2 3").
# BENCH_RT_PRIO=N runs both timed replays under `chrt -f N` (SCHED_FIFO): on a host
# busy with other work, the scheduler, not the pacing, makes the tail of the issue error.
# BENCH_DEVICE=zram uses a zram device of its own (hot_add, 1 GiB of random data, reset
# and hot_remove at the end; BENCH_ZRAM=N uses /dev/zramN instead, reset before and
# after) instead of the loop device. zram does the copy in the
# submitting context and does not take non-blocking I/O, so io_uring hands every read
# to its io-wq worker threads (both tools alike; the workers' CPU time counts as the
# tool's): a test of the submission path more than of the device. A zram read never
# blocks, so io-wq ran them all on one worker (iou-wrk-PID in `perf sched timehist`)
# in the runs looked at: the punt, not the copy, is most of the CPU per I/O (about
# 4 us for both tools). `--backend io_uring-async` marks storbench's reads
# IOSQE_ASYNC, which lets io-wq start more workers (8 at QD32 on 2 CPUs); it is not
# `auto`'s choice: on a quiet machine it was no faster (QD32 0.81-0.85x fio), and under
# load its extra workers only take a larger share of the contended CPUs.
# BENCH_SB_EXTRA adds options to storbench's part-1 runs (e.g. "--backend
# io_uring-async"), BENCH_FIO_EXTRA to fio's (fio's own IOSQE_ASYNC is
# --force_async=1). The loop device's worker is a kernel thread outside both tools (a kworker running
# loop_rootcg_workfn, its completions in ksoftirqd); it bounds the IOPS on 2 CPUs.
set -euo pipefail
cd "$(dirname "$0")/.."

SECS=${BENCH_SECONDS:-5}
RSS_IOS=${BENCH_RSS_IOS:-50000000}
QDS=${BENCH_QDS:-32 128}
JOBS=${BENCH_JOBS:-1 2}
REPEAT=${BENCH_REPEAT:-3}
PARTS=${BENCH_PARTS:-1 2 3}
RT=()
if [ -n "${BENCH_RT_PRIO:-}" ]; then RT=(chrt -f "$BENCH_RT_PRIO"); fi
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-/work/tgt/release}
# SB_BIN_DIR: a directory holding an already built `storbench` and
# `examples/bench_trace` (skips the release build).
if [ -n "${SB_BIN_DIR:-}" ]; then
  BIN=$SB_BIN_DIR/storbench
  MKTRACE=$SB_BIN_DIR/examples/bench_trace
else
  # --bin as well: with only --example, cargo builds just the example and the
  # storbench binary would be whatever was built last.
  cargo build --release -q -p storbench -p storbench-engine --bin storbench --example bench_trace
  BIN=$CARGO_TARGET_DIR/release/storbench
  MKTRACE=$CARGO_TARGET_DIR/release/examples/bench_trace
fi
WORK=$(mktemp -d)
IMG=/dev/shm/storbench-bench-$$.img
DEV=""
ZRAM=""
ZRAM_KEEP=""
cleanup() {
  if [ -n "$ZRAM" ]; then
    echo 1 >"/sys/block/zram$ZRAM/reset" || true
    if [ -z "$ZRAM_KEEP" ]; then echo "$ZRAM" >/sys/class/zram-control/hot_remove || true; fi
  elif [ -n "$DEV" ]; then losetup -d "$DEV" || true; fi
  rm -f "$IMG"
  rm -rf "$WORK"
}
trap cleanup EXIT
has_part() { case " $PARTS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

need_dev() {
  if [ "$(id -u)" != 0 ]; then echo "skipped parts 1-2: not root (loop devices need root)"; return 1; fi
  if ! command -v fio >/dev/null; then echo "skipped parts 1-2: fio not installed"; return 1; fi
  if [ -z "$DEV" ] && [ "${BENCH_DEVICE:-loop}" = zram ]; then
    if [ -n "${BENCH_ZRAM:-}" ]; then
      # An existing zram device of ours (BENCH_ZRAM=0: /dev/zram0), reset at the end.
      ZRAM=$BENCH_ZRAM
      ZRAM_KEEP=1
      echo 1 >"/sys/block/zram$ZRAM/reset"
    else
      if [ ! -w /sys/class/zram-control/hot_add ]; then echo "skipped parts 1-2: no zram-control"; return 1; fi
      ZRAM=$(cat /sys/class/zram-control/hot_add)
    fi
    DEV=/dev/zram$ZRAM
    echo 1G >"/sys/block/zram$ZRAM/disksize"
    # Random data: stored uncompressed, so a read is a 4 KB copy.
    dd if=/dev/urandom of="$DEV" bs=1M count=1024 oflag=direct status=none
    echo "device: $DEV (zram, 1 GiB of random data)"
    echo "fio: $(fio --version); load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs"
  elif [ -z "$DEV" ]; then
    truncate -s 1G "$IMG"
    # Fill with data so reads are not of holes.
    dd if=/dev/urandom of="$IMG" bs=1M count=1024 status=none conv=notrunc
    DEV=$(losetup -f --show "$IMG")
    losetup --direct-io=on "$DEV" 2>/dev/null || true
    echo "device: $DEV over $IMG ($(sed 's/1/direct-io/;s/0/buffered/' "/sys/block/$(basename "$DEV")/loop/dio" 2>/dev/null))"
    echo "fio: $(fio --version); load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs"
  fi
}

# With perf, each run also counts its io_uring_enter calls and context switches
# (robust to the machine's load, unlike IOPS): printed per I/O beside the ratios.
PERF=()
if command -v perf >/dev/null && perf stat -e syscalls:sys_enter_io_uring_enter,context-switches -x, -o /dev/null true 2>/dev/null; then
  PERF=(perf stat -e syscalls:sys_enter_io_uring_enter,context-switches -x, -o "$WORK/perf")
fi
# cpu_of CMD... : runs CMD, prints its user+sys CPU seconds, then its io_uring_enter
# calls and context switches ("- -" without perf).
cpu_of() {
  rm -f "$WORK/perf"
  ${PERF[@]+"${PERF[@]}"} /usr/bin/time -f "%U %S" -o "$WORK/time" "$@" >"$WORK/out" 2>"$WORK/err" || { cat "$WORK/err" >&2; return 1; }
  local enters=- cs=-
  if [ -s "$WORK/perf" ]; then
    enters=$(awk -F, '/sys_enter_io_uring_enter/ {print $1}' "$WORK/perf")
    cs=$(awk -F, '/context-switches/ {print $1}' "$WORK/perf")
  fi
  awk -v e="$enters" -v c="$cs" '{print $1+$2, e, c}' "$WORK/time"
}

if has_part 1 && need_dev; then
  printf '\n%-5s %-4s %-4s %10s %10s %7s %12s %12s %7s %9s %9s %9s %9s %5s\n' QD jobs pair sb_IOPS fio_IOPS ratio sb_cpu_ns/IO fio_cpu_ns/IO ratio \
    sb_ent/IO fio_ent/IO sb_cs/IO fio_cs/IO load
  for QD in $QDS; do
    for J in $JOBS; do
      P="$WORK/pairs$QD-$J"
      : >"$P"
      for i in $(seq 1 "$REPEAT"); do
        # shellcheck disable=SC2086 # BENCH_SB_EXTRA / BENCH_FIO_EXTRA: options split on spaces
        SB_CPU=$(cpu_of "$BIN" run --target "$DEV" ${BENCH_SB_EXTRA:-} --rw randread --bs 4k --qd "$QD" --jobs "$J" --time "${SECS}s" -o "$WORK/sb$QD-$J-$i")
        # shellcheck disable=SC2086
        FIO_CPU=$(cpu_of fio --name=r --filename="$DEV" --ioengine=io_uring --fixedbufs --registerfiles ${BENCH_FIO_EXTRA:-} \
          --direct=1 --rw=randread --bs=4k --iodepth="$QD" --numjobs="$J" --group_reporting --runtime="$SECS" --time_based \
          --output-format=json --output="$WORK/fio$QD.json")
        python3 - "$QD" "$J" "$i" "$WORK/sb$QD-$J-$i/result.json" "$SB_CPU" "$WORK/fio$QD.json" "$FIO_CPU" >>"$P" <<'EOF'
import json, sys
qd, jobs, i, sbf, sb_run, fiof, fio_run = sys.argv[1:]
sb_cpu, sb_ent, sb_cs = sb_run.split()
fio_cpu, fio_ent, fio_cs = fio_run.split()
per = lambda x, n: "-" if x == "-" else f"{float(x) / n:.3f}"
r = json.load(open(sbf)); m = r["phases"][0]["metrics"]
sb_ios, sb_s = m["read_ios"], m["elapsed_ns"] / 1e9
# group_reporting: one entry for all the jobs, its runtime the longest job's.
j = json.load(open(fiof))["jobs"][0]["read"]
fio_ios, fio_s = j["total_ios"], j["runtime"] / 1e3
sb_iops, fio_iops = sb_ios / sb_s, fio_ios / fio_s
sb_c, fio_c = float(sb_cpu) / sb_ios * 1e9, float(fio_cpu) / fio_ios * 1e9
load = open("/proc/loadavg").read().split()[0]
print(f"{qd} {jobs} {i} {sb_iops:.0f} {fio_iops:.0f} {sb_iops/fio_iops:.3f} {sb_c:.0f} {fio_c:.0f} {sb_c/fio_c:.3f} "
      f"{per(sb_ent, sb_ios)} {per(fio_ent, fio_ios)} {per(sb_cs, sb_ios)} {per(fio_cs, fio_ios)} {load}")
EOF
        awk '{printf "%-5s %-4s %-4s %10s %10s %7s %12s %12s %7s %9s %9s %9s %9s %5s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14}' <(tail -1 "$P")
      done
      python3 - "$P" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
med = lambda k: statistics.median(float(r[k]) for r in rows)
opt = lambda k: "-" if rows[0][k] == "-" else f"{med(k):.3f}"
print(f"{rows[0][0]:<5} {rows[0][1]:<4} {'med':<4} {med(3):10.0f} {med(4):10.0f} {med(5):7.3f} {med(6):12.0f} {med(7):12.0f} {med(8):7.3f}"
      f" {opt(9):>9} {opt(10):>9} {opt(11):>9} {opt(12):>9}"
      "   <- medians (ratios: median of per-pair ratios; targets IOPS >= 1.0, CPU <= 0.8)")
EOF
    done
  done
  python3 - "$WORK/sb${QDS##* }-${JOBS##* }-$REPEAT/result.json" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))["target"]
d = t["details"]
print(f"storbench backend: {t['backend']} ({d.get('backend_reason', 'no reason given')})")
print("storbench io_uring setup:", {k: v for k, v in d.items() if k.startswith("io_uring")})
EOF
fi

# with_bio_trace OUT CMD...: runs CMD while a private tracefs instance records the
# block layer's block_bio_queue events of $DEV (monotonic clock, 1 us resolution) to OUT.
with_bio_trace() {
  local out=$1; shift
  local T=/sys/kernel/tracing inst mm
  if [ ! -d $T/instances ]; then T=/sys/kernel/debug/tracing; fi
  if [ ! -d $T/instances ]; then "$@" || true; : >"$out"; return; fi
  inst=$T/instances/storbench-bench-$$
  mkdir "$inst"
  mm=$(cat "/sys/block/$(basename "$DEV")/dev")
  echo mono >"$inst/trace_clock"
  echo 65536 >"$inst/buffer_size_kb"
  echo "dev == $(( (${mm%%:*} << 20) | ${mm##*:} ))" >"$inst/events/block/block_bio_queue/filter"
  echo 1 >"$inst/events/block/block_bio_queue/enable"
  echo 1 >"$inst/tracing_on"
  "$@" || true
  echo 0 >"$inst/tracing_on"
  grep block_bio_queue "$inst/trace" >"$out" || true
  if grep overrun "$inst"/per_cpu/cpu*/stats | awk '{s += $NF} END {exit !(s > 0)}'; then
    echo "warning: the block trace overran; block-layer figures are incomplete"
  fi
  echo 0 >"$inst/events/block/block_bio_queue/enable"
  rmdir "$inst"
}

if has_part 2 && need_dev; then
  echo
  echo "timed replay: 50,000 IOPS Poisson with bursts (32 back to back every 1000), ${SECS} s"
  N=$((50000 * SECS))
  "$MKTRACE" "$WORK/poisson.parquet" $N 50000 $((1 << 30))
  "$BIN" export "$WORK/poisson.parquet" --format fio-iolog-v3 --filename "$DEV" -o "$WORK/poisson.iolog" >/dev/null
  if [ ${#RT[@]} -gt 0 ]; then echo "both replays run under: ${RT[*]}"; fi
  with_bio_trace "$WORK/sb_bio.txt" ${RT[@]+"${RT[@]}"} "$BIN" replay "$WORK/poisson.parquet" --target "$DEV" --mode timed -o "$WORK/timed" >/dev/null
  python3 - "$WORK/timed/result.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
p = r["phases"][0]
f = p["fidelity"]
m = p["metrics"]
print(f"storbench timed (own clock):    {m['read_ios']} I/Os, issue error p50 {f['issue_error_p50_ns']/1e3:.2f} us, p99 {f['issue_error_p99_ns']/1e3:.2f} us, "
      f"p99.9 {f['issue_error_p99_9_ns']/1e3:.2f} us, max {f['issue_error_max_ns']/1e3:.1f} us, "
      f"drift {f['drift_ns']/1e3:.1f} us ({f['drift_pct']:.4f}%), slot-starved {f['slot_starved_ios']}, "
      f"service p50 {m['service']['p50_us']:.0f} us p99 {m['service']['p99_us']:.0f} us")
EOF
  # fio refuses registerfiles with read_iolog ("registered files require nr_files to be
  # identical to open_files") and write_iolog beside read_iolog ("read iolog overrides
  # write_iolog"), so its issue times come from the block trace.
  with_bio_trace "$WORK/fio_bio.txt" ${RT[@]+"${RT[@]}"} fio --name=replay --read_iolog="$WORK/poisson.iolog" \
    --ioengine=io_uring --fixedbufs --direct=1 --iodepth=256 \
    --output-format=json --output="$WORK/fio_replay.json"
  python3 - "$WORK/poisson.iolog" "$WORK/sb_bio.txt" "$WORK/fio_bio.txt" "$WORK/fio_replay.json" <<'EOF'
import json, sys
# Schedule: (trace time us, sector) of each I/O, from the iolog both tools replay.
sched = []
with open(sys.argv[1]) as f:
    f.readline()
    for line in f:
        p = line.split()
        if len(p) == 5 and p[2] == "read":
            sched.append((int(p[0]), int(p[3]) // 512))
def issue_times(path, comm):
    # First submission of each I/O by the tool's own thread (io_uring's io-wq workers,
    # iou-wrk-*, resubmit I/Os that met a full queue: those are not issue times).
    ev = []
    for line in open(path):
        p = line.split()
        if p[-1] != f"[{comm}]":
            continue
        i = p.index("block_bio_queue:")
        ev.append((round(float(p[i - 1].rstrip(":")) * 1e6), int(p[i + 3])))
    return ev
def report(name, ev, total):
    act, j = [], 0
    for t, sec in sched:
        while j < len(ev) and ev[j][1] != sec:
            j += 1
        if j == len(ev):
            break
        act.append(ev[j][0]); j += 1
    n = len(act)
    if n < 2:
        print(f"{name}{total} I/Os; no block trace to measure issue times"); return
    # Each tool anchors the schedule at its own start: take as zero the I/O issued
    # earliest relative to the schedule (a tool is never early on purpose).
    off = [act[i] - sched[i][0] for i in range(n)]
    zero = min(off)
    err = sorted(o - zero for o in off)
    q = lambda x: err[min(n - 1, int(x * n))]
    drift = off[-1] - zero
    dur = sched[n - 1][0] - sched[0][0]
    print(f"{name}{total} I/Os, issue error p50 {q(0.5):.0f} us, p99 {q(0.99):.0f} us, p99.9 {q(0.999):.0f} us, "
          f"max {err[-1]:.0f} us, drift {drift:.0f} us ({drift / dur * 100:.4f}%)  [{n} matched in the block trace]")
try:
    fio_total = json.load(open(sys.argv[4]))["jobs"][0]["read"]["total_ios"]
except Exception as e:
    fio_total = f"(no fio result: {e})"
report("storbench timed (block trace):  ", issue_times(sys.argv[2], "storbench"), len(sched))
report("fio read_iolog  (block trace):  ", issue_times(sys.argv[3], "fio"), fio_total)
EOF
  echo "load average after the replays: $(cut -d' ' -f1-3 /proc/loadavg)"
fi

if has_part 3; then
  echo
  echo "memory flat in trace length: replay of $RSS_IOS I/Os on a virtual target"
  "$MKTRACE" "$WORK/long.parquet" "$RSS_IOS" 1000000 $((1 << 30))
  ls -l "$WORK/long.parquet" | awk '{printf "trace file: %.1f MB\n", $5/1e6}'
  /usr/bin/time -f "%M %e" -o "$WORK/rss" "$BIN" replay "$WORK/long.parquet" \
    --target "test:delay=20us,capacity=1g" --mode queue-depth --qd 32 -o "$WORK/long" >/dev/null
  python3 -c "import json;m=json.load(open('$WORK/long/result.json'))['phases'][0]['metrics'];print(f\"replayed {m['read_ios']} I/Os\")"
  awk '{printf "max RSS %.1f MB (target < 300 MB), %.1f s wall\n", $1/1024, $2}' "$WORK/rss"
fi
