#!/usr/bin/env bash
# Synthesize every built-in profile (default: full scale), characterize each trace with
# `storbench characterize`, and print the published figures, the profile's targets and
# the measured figures side by side; plus generation speed against a peer that writes a
# Parquet trace of the same shape (DuckDB, one thread).
# usage: bench/synth_full.sh [SCALE] [PROFILE ...]     (default: 1, all four)
# Targets: every figure within 1% at scale 1; generation >= 5 M I/Os per second, flat memory.
# Generation is reported per wall second (the generator and the Parquet encoder run on
# two threads) and per CPU-second (user + sys, robust to a shared machine). The split
# between the generator thread and the encoder thread:
#   cargo run --release -p storbench-workload --example synth_bench -- destroyer-2013 1 /dev/shm/x.parquet
set -euo pipefail
cd "$(dirname "$0")/.."
SCALE=${1:-1}
shift || true
PROFILES=("$@")
[ ${#PROFILES[@]} -eq 0 ] && PROFILES=(heavy-2011 light-2011 destroyer-2013 storage-bench-v1)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-/work/tgt/release}
cargo build -q --release -p storbench
BIN=$CARGO_TARGET_DIR/release/storbench
WORK=$(mktemp -d /tmp/synth_full.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

"$BIN" profiles --json >"$WORK/profiles.json"
for P in "${PROFILES[@]}"; do
  T=$WORK/$P.parquet
  # Not pinned: the Parquet encoder runs on its own thread beside the generator.
  # CPU seconds (user + sys) are reported beside wall time: the machine may be shared.
  /usr/bin/time -v "$BIN" synth "$P" --scale "$SCALE" -o "$T" --json \
    >"$WORK/$P.synth.json" 2>"$WORK/$P.time"
  "$BIN" characterize "$T" --json >"$WORK/$P.char.json"
  N=$(python3 -c "import json,sys; d=json.load(open('$WORK/$P.synth.json')); print(d['reads']+d['writes'])")
  if python3 -c 'import duckdb' 2>/dev/null; then
    python3 bench/synth_peer.py "$N" "$WORK/peer.parquet" >"$WORK/$P.peer" 2>/dev/null || echo "peer-seconds NA" >"$WORK/$P.peer"
  else
    echo "peer-seconds NA" >"$WORK/$P.peer"
  fi
  ls -l "$T" | awk '{print $5}' >"$WORK/$P.size"
  rm -f "$T" "$WORK/peer.parquet"
done

python3 - "$WORK" "$SCALE" "${PROFILES[@]}" <<'PY'
import json, sys, re
work, scale, profiles = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
meta = {p["name"]: p for p in json.load(open(f"{work}/profiles.json"))}
BUCKETS = ["4k", "8k", "16k", "32k", "64k", "128k", "other"]
def measured(c, metric, listed):
    sizes = {b: s["pct"] / 100 for b, s in zip(BUCKETS, c["sizes"])}
    qd = c.get("qd") or {}
    return {
        "reads": c["reads"] / scale, "writes": c["writes"] / scale,
        "total_ios": (c["reads"] + c["writes"]) / scale,
        "gb_read": c["gb_read"] / scale, "gb_written": c["gb_written"] / scale,
        "sequential": c["sequential_pct"] / 100, "avg_qd": qd.get("avg_qd"),
        "qd1": qd.get("qd1_pct", 0) / 100,
        "size_rest": sum(v for b, v in sizes.items() if b not in listed),
        **{f"size_{b}": v for b, v in sizes.items()},
    }[metric]
def target(t, metric, listed):
    sz = t.get("sizes") or {}
    tot = sum(sz.values()) or 1
    if metric == "total_ios":
        return (t["reads"] or 0) + (t["writes"] or 0)
    if metric == "size_rest":
        return sum(v for b, v in sz.items() if b not in listed) / tot
    if metric.startswith("size_"):
        return sz.get(metric[5:], 0) / tot
    return t.get(metric)
def fmt(m, v):
    if v is None: return "-"
    if m in ("reads", "writes", "total_ios"): return f"{v:,.0f}"
    if m.startswith("size_") or m in ("sequential", "qd1"): return f"{100*v:.2f}%"
    if m.startswith("gb_"): return f"{v:.2f}"
    return f"{v:.4f}"
worst = 0.0
for p in profiles:
    m = meta[p]; t = m["targets"]
    c = json.load(open(f"{work}/{p}.char.json"))
    s = json.load(open(f"{work}/{p}.synth.json"))
    peer = open(f"{work}/{p}.peer").read().split()
    size_mb = int(open(f"{work}/{p}.size").read()) / 1e6
    tv = open(f"{work}/{p}.time").read()
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", tv).group(1)) / 1024
    cpu_s = sum(float(re.search(rf"{k} time \(seconds\): ([0-9.]+)", tv).group(1)) for k in ("User", "System"))
    listed = [x["metric"][5:] for x in m["published"] if x["metric"].startswith("size_") and x["metric"] != "size_rest"]
    print(f"\n{p} (scale {scale}): {m['title']}")
    print(f"  {'figure':<12} {'published':<30} {'target':>14} {'measured':>14} {'off':>8}")
    rows = [(x["metric"], x["text"] + ("" if x["relation"] == "eq" else f" [{x['relation']}]")) for x in m["published"]]
    pub = {r[0] for r in rows}
    extra = ["reads", "writes", "gb_read", "gb_written"] + [f"size_{b}" for b in BUCKETS] + ["sequential", "avg_qd", "qd1"]
    rows += [(e, "(assumed)") for e in extra if e not in pub and target(t, e, listed) is not None]
    for metric, text in rows:
        tv, mv = target(t, metric, listed), measured(c, metric, listed)
        off = abs(mv - tv) / abs(tv) * 100 if tv else 0.0
        worst = max(worst, off)
        print(f"  {metric:<12} {text:<30} {fmt(metric, tv):>14} {fmt(metric, mv):>14} {off:>7.3f}%")
    n = s["reads"] + s["writes"]
    gs = s["generate_seconds"]
    line = (f"  generated {n:,} I/Os in {gs:.2f} s = {n/gs/1e6:.2f} M I/Os/s wall (generator + encoder thread, "
            f"incl. Parquet writing), {n/max(cpu_s, 1e-3)/1e6:.2f} M I/Os per CPU-s ({cpu_s:.2f} CPU-s), "
            f"max RSS {rss:.0f} MB, file {size_mb:.0f} MB")
    if peer[-1] != "NA":
        ps = float(peer[-1])
        line += f"; DuckDB writing {n:,} rows of the same shape: {ps:.2f} s = {n/ps/1e6:.2f} M rows/s -> storbench {ps/gs:.2f}x"
    print(line)
    print(f"  trace length {c['duration_ns']/1e9:,.0f} s, busy {c['busy_ns']/1e9:,.0f} s, deepest QD {c['qd']['max_qd']}")
print(f"\nlargest deviation from target: {worst:.3f}% (target: <= 1% at scale 1)")
PY
