#!/usr/bin/env bash
# Simulated-SSD preconditioning: CPU time of the direct way (fast_state) against the
# per-write way (replay_state) for a sequential fill and a random-write steady state of
# a 64 GiB drive, and the WA / IOPS of the same measured phase after each (they agree).
# usage: bench/sim_precondition.sh [SPEC] [WRITES_MULTIPLE] [PHASE_IOS]
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/work/tgt/release}"
cargo build --release -q -p storbench-sim --example sim_precondition
BIN="$CARGO_TARGET_DIR/release/examples/sim_precondition"
if command -v taskset >/dev/null; then PIN="taskset -c 0"; else PIN=""; fi
$PIN "$BIN" "${1:-sim:client-7op,capacity=64g}" "${2:-2}" "${3:-2000000}"
