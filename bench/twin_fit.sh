#!/usr/bin/env bash
# The twin's fit (issue 33): CPU and wall time of `storbench twin fit` beside its peer,
# one `storbench twin measure --quick` of the same simulated drive (what one evaluation
# of the fit does, through the CLI, result files included). The ratio is the fit's cost
# in measurements; the fit's own count of evaluations is printed beside it.
# usage: bench/twin_fit.sh [HIDDEN_SPEC] [JOBS] [PRESETS]
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${BIN:-target/release/storbench}"
[ -x "$BIN" ] || cargo build --release -q -p storbench
SPEC="${1:-sim:sata-mlc-2013,capacity=256m,program_us=1400,read_us=60,op=0.15,write_cmd_us=50}"
JOBS="${2:-2}"
PRESETS="${3:-}"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
read -r mcpu mwall _ < <(bench/cputime.py "$TMP/measure.out" "$BIN" twin measure -t "$SPEC" -o "$TMP/m" --quick -q)
args=(twin fit "$TMP/m" -j "$JOBS")
[ -n "$PRESETS" ] && args+=(--presets "$PRESETS")
read -r fcpu fwall frss < <(bench/cputime.py "$TMP/fit.out" "$BIN" "${args[@]}")
evals=$(python3 -c 'import json,sys; t=json.load(open(sys.argv[1])); print(t["evaluations"], t["iterations"], "%.2f" % t["cost"])' "$TMP/m/twin.json")
echo "hidden drive: $SPEC"
echo "twin measure --quick: cpu ${mcpu} s, wall ${mwall} s"
echo "twin fit -j $JOBS: cpu ${fcpu} s, wall ${fwall} s, max RSS ${frss} KiB"
echo "evaluations, iterations, cost: $evals"
python3 -c "import sys; print('fit cpu / measure cpu: %.1f' % (float(sys.argv[1]) / float(sys.argv[2])))" "$fcpu" "$mcpu"
grep '^twin:' "$TMP/fit.out"
