"""Sweeps on a Ray cluster: one task per point, recorded by the driver.

The driver holds the sweep directory (its lock); workers run points through the
same Rust code as the local runner (``storbench._native``) and return each point's
row and files. Results are recorded as they arrive, so an interrupted driver keeps
every point already returned, and running it again skips them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

from . import _native

# Tasks in flight per cluster CPU: enough to keep every worker busy while the driver
# records returned points, bounded so results wait in the object store briefly.
IN_FLIGHT_PER_CPU = 2


def _run_point_task(point_json: str, shared_dir: Optional[str]):
    """Runs on a Ray worker: one point, in ``shared_dir`` or a private temporary one."""
    from storbench import _native as native

    if shared_dir is not None:
        row, wall_ms = native.run_point_in(point_json, shared_dir)
        return row, [], wall_ms
    return native.run_point_detached(point_json)


def ray_sweep(src: dict, out: Path, address: str, *, shared_fs: bool, progress):
    """``progress``: True (a count on stderr), False, or a notebook bar (``update_to``)."""
    import ray

    from ._api import SweepResult

    s = _native.Sweep(str(out), **src)
    pending = s.pending()
    started = False
    if not ray.is_initialized():
        ray.init(address=address, log_to_driver=False, configure_logging=False)
        started = True
    try:
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        task = ray.remote(num_cpus=1, max_retries=0)(_run_point_task)
        window = cpus * IN_FLIGHT_PER_CPU
        queue = list(reversed(pending))
        refs: dict = {}
        failed = []
        done = 0
        while queue or refs:
            while queue and len(refs) < window:
                p = queue.pop()
                refs[task.remote(p, s.point_dir(p) if shared_fs else None)] = p
            ready, _ = ray.wait(list(refs), num_returns=1)
            for ref in ready:
                p = refs.pop(ref)
                try:
                    row, files, wall_ms = ray.get(ref)
                except Exception as e:  # a point's own failure: the others go on
                    pt = json.loads(p)
                    failed.append((pt["index"], pt["id"], str(e)))
                    print(f"point {pt['index']} ({pt['id']}): {e}", file=sys.stderr)
                    continue
                s.record(p, row, files, wall_ms, "ray")
                done += 1
                if hasattr(progress, "update_to"):
                    progress.update_to(s.planned - len(pending) + done)
                elif progress:
                    print(f"\r{done}/{len(pending)} points", end="", file=sys.stderr, flush=True)
        if progress is True and pending:
            print(file=sys.stderr)
    finally:
        path, rows = s.write_dataset()
        if started:
            ray.shutdown()
    counts = {
        "planned": s.planned,
        "rows": rows,
        "ran": done,
        "already_done": s.planned - len(pending),
        "interrupted": False,
        "dataset": path,
        "failed": failed,
    }
    return SweepResult(out, counts)
