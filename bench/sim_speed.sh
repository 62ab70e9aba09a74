#!/usr/bin/env bash
# Simulated-SSD speed: steady-state 4 KiB random writes at QD32 (WA 3-8), simulated
# host I/Os per second of wall time on one core (target >= 1M), and memory per simulated GB.
# usage: bench/sim_speed.sh [SPEC] [IOS]
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/work/tgt/release}"
cargo build --release -q -p storbench-sim --example sim_speed
BIN="$CARGO_TARGET_DIR/release/examples/sim_speed"
SPEC="${1:-sim:client-7op,capacity=4g,victim=greedy}"
IOS="${2:-5000000}"
if command -v taskset >/dev/null; then PIN="taskset -c 0"; else PIN=""; fi
$PIN "$BIN" "$SPEC" "$IOS"
