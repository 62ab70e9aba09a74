"""A 12-point plan run locally and on a local Ray cluster gives the same dataset.

The cluster runs in a network namespace of the test's own with only loopback up,
and in a PID namespace of its own, so nothing it starts can outlive the test: when
the namespace's first process exits, the kernel ends every other one in it. The
test skips, saying why, where Ray or namespaces are unavailable.
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import storbench

RAY_PORT = 6391


def _skip_reason():
    try:
        import ray  # noqa: F401
    except ImportError as e:
        return f"Ray is not installed ({e}); pip install ray"
    for tool in ("unshare", "ip"):
        if shutil.which(tool) is None:
            return f"`{tool}` is not on PATH (util-linux, iproute2)"
    probe = subprocess.run(
        ["unshare", "--net", "--pid", "--fork", "--mount-proc", "ip", "link", "set", "lo", "up"],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        return f"cannot make network and PID namespaces here: {probe.stderr.strip() or probe.returncode}"
    return None


def _sha(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _procs_mentioning(marker):
    """PIDs of processes on this host whose command line names `marker`."""
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmd:
            out.append(int(pid))
    return out


DRIVER = textwrap.dedent(
    """
    import json, sys
    import storbench
    plan, out, small, small_out, port, report = sys.argv[1:7]
    addr = "127.0.0.1:" + port
    first = storbench.sweep(plan, out, address=addr, progress=False).counts
    again = storbench.sweep(plan, out, address=addr, progress=False).counts
    shared = storbench.sweep(small, small_out, address=addr, shared_fs=True, progress=False).counts
    json.dump({"first": first, "again": again, "shared": shared}, open(report, "w"))
    """
)

CLUSTER = textwrap.dedent(
    """
    set -eu
    ip link set lo up
    # Only loopback exists here: nothing the cluster sends can leave 127.0.0.1.
    test "$(ip -o link show | awk -F': ' '{{print $2}}')" = "lo"
    ray() {{ "{py}" -c 'from ray.scripts.scripts import main; main()' "$@"; }}
    trap 'ray stop --force >/dev/null 2>&1 || true' EXIT
    ray start --head --num-cpus 2 --disable-usage-stats --include-dashboard=false \\
        --node-ip-address 127.0.0.1 --port {port} --temp-dir "{tmp}" >"{log}" 2>&1
    "{py}" "{driver}" "$@"
    """
)


def test_12_point_plan_local_and_on_ray_give_identical_datasets(plan12, tmp_path):
    reason = _skip_reason()
    if reason:
        pytest.skip(reason)
    local = tmp_path / "local"
    r = storbench.sweep(plan12, local, jobs=2, progress=False)
    assert r.counts["rows"] == 12 and r.counts["ran"] == 12 and not r.failed

    small = tmp_path / "small.toml"
    # Two of the twelve points (op 0.28, seed 2), for the shared-filesystem mode.
    text = plan12.read_text().split("[report]")[0]
    small.write_text(text.replace("op = [0.07, 0.28, 0.5]", "op = 0.28").replace("seeds = [1, 2]", "seeds = [2]"))
    # A short --temp-dir: Ray's socket paths must fit in 107 bytes.
    ray_tmp = tempfile.mkdtemp(prefix="sbray", dir="/tmp")
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    script = tmp_path / "cluster.sh"
    log = tmp_path / "ray-start.log"
    script.write_text(CLUSTER.format(py=sys.executable, port=RAY_PORT, tmp=ray_tmp, log=log, driver=driver))
    report = tmp_path / "report.json"
    try:
        proc = subprocess.run(
            ["unshare", "--net", "--pid", "--fork", "--mount-proc", "bash", str(script),
             str(plan12), str(tmp_path / "ray"), str(small), str(tmp_path / "ray-shared"), str(RAY_PORT), str(report)],
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert proc.returncode == 0, f"{proc.stdout}\n{proc.stderr}\n{log.read_text() if log.exists() else ''}"
    finally:
        left = _procs_mentioning(ray_tmp)
        shutil.rmtree(ray_tmp, ignore_errors=True)
    assert left == [], f"Ray processes outlived the test: {left}"

    counts = json.loads(report.read_text())
    assert counts["first"]["rows"] == 12 and counts["first"]["ran"] == 12, counts
    assert not counts["first"]["failed"]
    # Resumable on Ray too: the second run finds every point finished.
    assert counts["again"]["ran"] == 0 and counts["again"]["already_done"] == 12, counts
    assert counts["shared"]["rows"] == 2 and not counts["shared"]["failed"], counts

    # The datasets: the same bytes, and (read back) the same table.
    a, b = local / "sweep.parquet", tmp_path / "ray" / "sweep.parquet"
    assert _sha(a) == _sha(b)
    ta, tb = pq.read_table(a), pq.read_table(b)
    assert ta.equals(tb)
    assert ta.num_rows == 12 and ta.column("steady_iops").null_count == 0
    # Each point's per-second series is the same file, whichever way it ran.
    for pid in ta.column("point").to_pylist():
        pa_, pb_ = local / "points" / pid, tmp_path / "ray" / "points" / pid
        assert _sha(pa_ / "series.parquet") == _sha(pb_ / "series.parquet"), pid
        ra = json.loads((pa_ / "point.json").read_text())
        rb = json.loads((pb_ / "point.json").read_text())
        assert ra["row"] == rb["row"] and ra["run"] == rb["run"]
        assert (ra["ran_by"], rb["ran_by"]) == ("local", "ray")
    # shared_fs: workers wrote into the output directory; rows as the local run's.
    shared = pq.read_table(tmp_path / "ray-shared" / "sweep.parquet").to_pylist()
    local_rows = {r["point"]: r for r in ta.to_pylist()}
    for row in shared:
        want = local_rows[row["point"]]
        # The small plan has no `op` axis and its own indices; every other column agrees.
        assert {k: v for k, v in row.items() if k != "index"} == {k: want[k] for k in row if k != "index"}
