"""The package's Python side: thin wrappers over ``storbench._native``."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Mapping, Optional, Union

import pyarrow as pa
import pyarrow.parquet as pq

from . import _native

PathLike = Union[str, "os.PathLike[str]"]


def _frames(table: pa.Table, kind: str):
    if kind == "arrow":
        return table
    if kind == "pandas":
        return table.to_pandas()
    if kind == "polars":
        import polars

        return polars.from_arrow(table)
    raise ValueError(f"unknown frame kind {kind!r}: arrow, pandas or polars")


# ---------------------------------------------------------------- traces


class Trace:
    """A Parquet trace, read by storbench's reader (its checks, its errors)."""

    def __init__(self, path: PathLike):
        self.path = Path(path)
        self._table: Optional[pa.Table] = None

    def to_arrow(self) -> pa.Table:
        """The trace as a ``pyarrow.Table`` (issue_ns, complete_ns, offset_bytes,
        len_bytes, op, stream, device), handed over without a copy."""
        if self._table is None:
            self._table = _native.read_trace(str(self.path))
        return self._table

    def to_pandas(self):
        return self.to_arrow().to_pandas()

    def to_polars(self):
        return _frames(self.to_arrow(), "polars")

    def characterize(self) -> dict:
        """The figures published benchmarks print (as ``storbench characterize``)."""
        return characterize(self.path)

    def __len__(self) -> int:
        return self.to_arrow().num_rows

    def __repr__(self) -> str:
        return f"Trace({str(self.path)!r})"


def load_trace(path: PathLike) -> Trace:
    return Trace(path)


def characterize(path: PathLike) -> dict:
    return json.loads(_native.characterize(str(path)))


def presets() -> list:
    """The simulator's presets as (name, description)."""
    return list(_native.presets())


# ---------------------------------------------------------------- one run


def _toml(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml(x) for x in v) + "]"
    raise TypeError(f"{v!r}: plan values are strings, numbers, booleans or lists of them")


def _table(header: str, values: Mapping[str, Any]) -> str:
    return header + "\n" + "".join(f"{k} = {_toml(v)}\n" for k, v in values.items())


def _target_entry(target: str) -> dict:
    if not target.startswith("sim:"):
        raise ValueError(f"target {target!r}: the Python API runs the simulated drive, sim:PRESET[,key=value...]")
    preset, *pairs = target[4:].split(",")
    entry: dict = {"preset": preset}
    for p in pairs:
        if not p.strip():
            continue
        if "=" not in p:
            raise ValueError(f"target {target!r}: {p!r} is not key=value")
        k, v = p.split("=", 1)
        entry[k.strip()] = v.strip()
    return entry


def _workload_entry(workload: Any) -> dict:
    if isinstance(workload, Mapping):
        return dict(workload)
    w = str(workload)
    if w.endswith(".parquet") or os.path.sep in w:
        return {"trace": str(Path(w).resolve())}
    return {"profile": w}


class Result:
    """A finished procedure on the simulated drive: its headline row, its
    result.json, and its per-second series."""

    def __init__(self, dir: PathLike, point: dict, row: dict):
        self.dir = Path(dir)
        self.point = point
        self.row = row

    @property
    def result(self) -> dict:
        return json.loads((self.dir / "result.json").read_text())

    @property
    def summary(self) -> dict:
        return self.result["summary"]

    def series(self, phase: Optional[str] = None) -> pa.Table:
        """Per-second series (series.parquet) as Arrow; one phase or all."""
        t = pq.read_table(self.dir / "series.parquet")
        if phase is not None:
            import pyarrow.compute as pc

            t = t.filter(pc.equal(t["phase"], phase))
        return t

    def to_pandas(self, phase: Optional[str] = None):
        return self.series(phase).to_pandas()

    def to_polars(self, phase: Optional[str] = None):
        return _frames(self.series(phase), "polars")

    def __repr__(self) -> str:
        return f"Result({self.point['run']['procedure']} on {self.point['run']['target']}, dir={str(self.dir)!r})"


def run(
    procedure: str,
    target: str,
    *,
    workload: Any = None,
    seed: int = 1,
    dir: Optional[PathLike] = None,
    checkpoint_every: Optional[str] = None,
    **options: Any,
) -> Result:
    """Run one procedure on the simulated drive, as the CLI would; ``options`` are the
    command's options (``duration="300s"``, ``precondition_passes=2``, ``quick=True``).

    ``workload`` (bench): a profile name, a trace path, or a dict such as
    ``{"generator": "randwrite", "bs": "4k", "qd": 32, "ios": 100000}``.
    """
    text = f"seeds = [{int(seed)}]\n"
    if checkpoint_every is not None:
        text += f"checkpoint_every = {_toml(checkpoint_every)}\n"
    text += _table("[[target]]", _target_entry(target))
    if workload is not None:
        text += _table("[[workload]]", _workload_entry(workload))
    text += _table("[[procedure]]", {"name": procedure, **options})
    d = Path(dir) if dir is not None else Path(tempfile.mkdtemp(prefix="storbench-run-"))
    point, row = _native.run_single(text, str(d), base=os.getcwd())
    return Result(d, json.loads(point), dict(json.loads(row)))


# ---------------------------------------------------------------- sweeps


class SweepResult:
    """A sweep's directory and its dataset (one row per finished point)."""

    def __init__(self, dir: PathLike, counts: Optional[dict] = None):
        self.dir = Path(dir)
        self.counts = counts or {}

    @property
    def dataset(self) -> Path:
        return self.dir / "sweep.parquet"

    @property
    def failed(self) -> list:
        return list(self.counts.get("failed", []))

    def to_arrow(self) -> pa.Table:
        return pq.read_table(self.dataset)

    def to_pandas(self):
        return self.to_arrow().to_pandas()

    def to_polars(self):
        return _frames(self.to_arrow(), "polars")

    def __repr__(self) -> str:
        return f"SweepResult({str(self.dir)!r}, {self.counts.get('rows', '?')} of {self.counts.get('planned', '?')} points)"


def read_sweep(dir: PathLike) -> SweepResult:
    return SweepResult(dir)


def _plan_source(plan: Any) -> dict:
    if isinstance(plan, os.PathLike) or (isinstance(plan, str) and "\n" not in plan and "=" not in plan):
        return {"path": str(plan)}
    if isinstance(plan, str):
        return {"text": plan, "base": os.getcwd()}
    raise TypeError("plan: a path to a TOML plan, or its text")


def describe(plan: Any) -> str:
    """The plan's dry run (``storbench sweep PLAN --dry-run``)."""
    return _native.describe(**_plan_source(plan))


def sweep(
    plan: Any,
    out: PathLike,
    *,
    address: Optional[str] = None,
    jobs: Optional[int] = None,
    shared_fs: bool = False,
    progress: Optional[bool] = None,
) -> SweepResult:
    """Run a sweep plan into ``out`` and write its dataset (``out/sweep.parquet``).

    ``address=None``: on this machine's cores (``jobs`` at a time; the CLI's
    ``storbench sweep``). Otherwise the address of a Ray cluster (``"auto"``,
    ``"127.0.0.1:6379"``): one Ray task per unfinished point, each running the point
    in a temporary directory on its worker and shipping the files back, or, with
    ``shared_fs=True``, writing straight into ``out`` (every node sees it). Either way
    a finished point is not run again, and a point's row is the same.
    """
    src = _plan_source(plan)
    if progress is None:
        progress = sys.stderr.isatty()
    if address is None:
        counts = _native.run_local(str(out), jobs=jobs, progress=progress, **src)
        return SweepResult(out, counts)
    from ._ray import ray_sweep

    return ray_sweep(src, Path(out), address, shared_fs=shared_fs, progress=progress)
