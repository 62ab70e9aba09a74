#!/usr/bin/env bash
# import speed: storbench-trace import vs awk counting the same text (ops and bytes).
# usage: bench/trace_import.sh [N]   (default 2000000 I/Os per format)
# FORMATS="msr spc" picks formats (default: every text format; trace-cmd report output goes
# through the ftrace parser).
# GZ=1 also imports each input gzip-compressed (gzip -6), through the storbench binary:
# decompressed in process (`storbench import IN.gz`) beside `zcat IN.gz | storbench
# import -`, both pinned to one core; CPU-seconds count both processes of the pipe.
# Target: >= 2 M lines/s per core.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-2000000}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-/work/tgt/release}
[ -n "${SKIP_BUILD:-}" ] || cargo build -q --release -p storbench-trace --example trace_bench
[ -n "${SKIP_BUILD:-}" ] || [ -z "${GZ:-}" ] || cargo build -q --release -p storbench
BIN=$CARGO_TARGET_DIR/release/examples/trace_bench
CLI=$CARGO_TARGET_DIR/release/storbench
WORK=$(mktemp -d /tmp/trace_imp.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
AWK=$(command -v mawk || command -v awk)

for F in ${FORMATS:-msr fio-iolog-v2 fio-iolog-v3 blkparse ftrace alibaba tencent spc}; do
  IN=$WORK/in.$F
  $BIN gen-text "$F" "$IN" "$N"
  LINES=$(wc -l <"$IN")
  cat "$IN" >/dev/null   # warm the page cache for both
  # CPU seconds (user + system) beside wall: the machine is shared.
  /usr/bin/time -f "%e %U %S" -o "$WORK/ours.t" taskset -c 0 "$BIN" import "$IN" "$WORK/out.parquet" "$F" 2>"$WORK/imp.err"
  case $F in
    msr) PROG='BEGIN{FS=","} {n[$4]++; b[$4]+=$6} END{for(k in n) print k, n[k], b[k]}';;
    fio-iolog-v2) PROG='NF==4 && ($2=="read" || $2=="write") {n[$2]++; b[$2]+=$4} END{for(k in n) print k, n[k], b[k]}';;
    fio-iolog-v3) PROG='NF==5 {n[$3]++; b[$3]+=$5} END{for(k in n) print k, n[k], b[k]}';;
    blkparse) PROG='$6=="D" {n[$7]++; b[$7]+=$10*512} END{for(k in n) print k, n[k], b[k]}';;
    alibaba) PROG='BEGIN{FS=","} {n[$2]++; b[$2]+=$4} END{for(k in n) print k, n[k], b[k]}';;
    tencent) PROG='BEGIN{FS=","} {n[$4]++; b[$4]+=$3*512} END{for(k in n) print k, n[k], b[k]}';;
    spc) PROG='BEGIN{FS=","} {n[$4]++; b[$4]+=$3} END{for(k in n) print k, n[k], b[k]}';;
    ftrace) PROG='/block_rq_issue:/ {n[$7]++; b[$7]+=$8} END{for(k in n) print k, n[k], b[k]}';;
  esac
  /usr/bin/time -f "%e %U %S" -o "$WORK/awk.t" taskset -c 0 "$AWK" "$PROG" "$IN" >"$WORK/awk.out"
  python3 - "$F" "$LINES" "$(cat "$WORK/ours.t")" "$(cat "$WORK/awk.t")" "$AWK" <<'PY'
import sys
f, lines, ours, peer, awk = sys.argv[1:]
lines = int(lines)
ow, ou, os_ = map(float, ours.split()); pw, pu, ps = map(float, peer.split())
oc, pc = max(ou + os_, 1e-3), max(pu + ps, 1e-3)
print(f"{f:13s} {lines:>10,} lines: storbench import {lines/ow/1e6:5.2f} M lines/s wall, {lines/oc/1e6:5.2f} M lines per CPU-s "
      f"(incl. Parquet write); {awk.split('/')[-1]} count {lines/pw/1e6:5.2f} M lines/s wall, {lines/pc/1e6:5.2f} M per CPU-s; "
      f"CPU ratio storbench/awk {pc/oc:.2f}  (target >= 2 M lines/s per core)")
PY
  cat "$WORK/awk.out" | sed 's/^/    awk: /'
  grep -E 'import:' "$WORK/imp.err" | sed 's/^/    /'
  if [ -n "${GZ:-}" ]; then
    gzip -6 -c "$IN" >"$IN.gz"
    cat "$IN.gz" >/dev/null
    /usr/bin/time -f "%e %U %S" -o "$WORK/gz.t" taskset -c 0 "$CLI" import "$IN.gz" -o "$WORK/gz.parquet" --format "$F" >/dev/null
    /usr/bin/time -f "%e %U %S" -o "$WORK/zcat.t" taskset -c 0 sh -c "zcat '$IN.gz' | '$CLI' import - -o '$WORK/zcat.parquet' --format $F >/dev/null"
    python3 - "$F" "$LINES" "$(cat "$WORK/gz.t")" "$(cat "$WORK/zcat.t")" "$(stat -c %s "$IN.gz")" <<'PY'
import sys
f, lines, ours, pipe, gz_bytes = sys.argv[1:]
lines = int(lines)
ow, ou, os_ = map(float, ours.split()); pw, pu, ps = map(float, pipe.split())
oc, pc = max(ou + os_, 1e-3), max(pu + ps, 1e-3)
print(f"  gzip ({int(gz_bytes)/1e6:.1f} MB): storbench import IN.gz {lines/ow/1e6:5.2f} M lines/s wall, {lines/oc/1e6:5.2f} M lines per CPU-s; "
      f"zcat | storbench import - {lines/pw/1e6:5.2f} M lines/s wall, {lines/pc/1e6:5.2f} M lines per CPU-s (both processes); CPU ratio in-process/pipe {pc/oc:.2f}")
PY
  fi
done
