#!/usr/bin/env bash
# Whole commands a user runs, old build against new, measured in the same run:
# usage: bench/before_after.sh OLD_STORBENCH NEW_STORBENCH [PAIRS]
#
# Each command runs PAIRS times (default 5) with each binary, old and new alternating,
# pinned to one CPU (taskset -c 0; the simulator and the parsers are single-threaded
# except where noted), and the table gives each binary's median user+system CPU seconds
# and the median of the per-pair ratios new/old (above 1: the new build is slower).
# Inputs are made once by the new binary (synth, export) and by awk, so both builds do
# the same work; flags are spelled the way both builds take them.
# The simulator's figures are exact, so the commands on `sim:` targets do identical
# simulated work in both builds unless the simulator itself changed.
set -euo pipefail
OLD=${1:?usage: bench/before_after.sh OLD_STORBENCH NEW_STORBENCH [PAIRS]}
NEW=${2:?usage: bench/before_after.sh OLD_STORBENCH NEW_STORBENCH [PAIRS]}
PAIRS=${3:-5}
WORK=$(mktemp -d /tmp/before_after.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
SIM=sim:client-7op,capacity=4g

echo "old: $OLD ($("$OLD" --version))"
echo "new: $NEW ($("$NEW" --version))"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs; $PAIRS pairs"

# Inputs: a 2 M-I/O Parquet trace (heavy-2011 at scale 0.5), the same as an fio iolog
# v3 and as CSV, and an MSR-format CSV of 2 M lines written by awk.
"$NEW" synth heavy-2011 --scale 0.5 --capacity 64g -o "$WORK/t.parquet" >/dev/null
"$NEW" export "$WORK/t.parquet" --format fio-iolog-v3 -o "$WORK/t.iolog" >/dev/null
"$NEW" export "$WORK/t.parquet" --format csv -o "$WORK/t.csv" >/dev/null
awk 'BEGIN { srand(7); for (i = 0; i < 2000000; i++) {
  printf "%d,hm,0,%s,%d,%d,%d\n", 128166372000000000 + i * 1000, (rand() < 0.3 ? "Read" : "Write"),
    int(rand() * 16777216) * 4096, 4096 * (1 + int(rand() * 16)), 100 + int(rand() * 900) } }' >"$WORK/t.msr"
cat "$WORK"/t.* >/dev/null

# name | command with BIN and OUT placeholders
CMDS=(
  "synth heavy-2011 x0.5|BIN synth heavy-2011 --scale 0.5 --capacity 64g -o OUT.parquet"
  "characterize 2 M I/Os|BIN characterize $WORK/t.parquet"
  "import MSR 2 M lines|BIN import $WORK/t.msr --format msr -o OUT.parquet"
  "import fio iolog v3|BIN import $WORK/t.iolog --format fio-iolog-v3 -o OUT.parquet"
  "import csv|BIN import $WORK/t.csv --format csv -o OUT.parquet"
  "replay 2 M I/Os on sim|BIN replay $WORK/t.parquet --target sim:client-7op,capacity=64g -o OUT"
  "run randwrite 20 s on sim|BIN run --target $SIM --rw randwrite --bs 4k --qd 32 --time 20s -o OUT"
  "consistency --quick on sim|BIN consistency --quick --target $SIM -o OUT -q"
  "bench light-2011 (832 K I/Os) on sim|BIN bench light-2011 --target sim:client-7op,capacity=16g -o OUT -q"
)

printf '\n%-36s %10s %10s %9s\n' command old_cpu_s new_cpu_s new/old
for entry in "${CMDS[@]}"; do
  name=${entry%%|*}
  cmd=${entry#*|}
  : >"$WORK/pairs"
  for i in $(seq 1 "$PAIRS"); do
    line=""
    for which in old new; do
      bin=$OLD
      [ "$which" = new ] && bin=$NEW
      out=$WORK/out-$which
      rm -rf "$out" "$out.parquet"
      c=${cmd//BIN/$bin}
      c=${c//OUT/$out}
      # shellcheck disable=SC2086 # the command is split on spaces on purpose
      /usr/bin/time -f "%U %S" -o "$WORK/t" taskset -c 0 $c >/dev/null 2>"$WORK/err" \
        || { echo "$name ($which) failed:"; cat "$WORK/err"; exit 1; }
      line="$line $(awk '{print $1 + $2}' "$WORK/t")"
    done
    echo "$line" >>"$WORK/pairs"
  done
  python3 - "$name" "$WORK/pairs" <<'PY'
import statistics, sys
name, path = sys.argv[1:]
pairs = [tuple(map(float, l.split())) for l in open(path) if l.strip()]
old = statistics.median(p[0] for p in pairs)
new = statistics.median(p[1] for p in pairs)
ratio = statistics.median(p[1] / max(p[0], 1e-3) for p in pairs)
print(f"{name:36s} {old:10.3f} {new:10.3f} {ratio:9.3f}")
PY
done
