"""The package's Python side: thin wrappers over ``storbench._native``."""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import threading
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
    """A Parquet trace, read by storbench's reader (its checks, its errors).

    Made by :func:`load_trace`, which has already checked that the file is a trace; the
    rows are decoded on first use. Tables use the trace format's own types (Int64
    columns, ``op``/``stream``/``device`` as Dictionary(Int32, Utf8)), so a frame written
    back with ``to_parquet`` / ``write_parquet`` is a trace storbench reads.
    """

    def __init__(self, path: PathLike, rows: Optional[int] = None):
        self.path = Path(path)
        self.rows = rows
        self._table: Optional[pa.Table] = None

    def to_arrow(self) -> pa.Table:
        """The trace as a ``pyarrow.Table`` (issue_ns, complete_ns, offset_bytes,
        len_bytes, op, stream, device), handed over without a copy."""
        if self._table is None:
            self._table = _native.read_trace(str(self.path))
        return self._table

    def to_pandas(self):
        """The trace as a pandas DataFrame (``op``, ``stream``, ``device`` categorical)."""
        return self.to_arrow().to_pandas()

    def to_polars(self):
        """The trace as a Polars DataFrame."""
        return _frames(self.to_arrow(), "polars")

    def characterize(self) -> dict:
        """The figures published benchmarks print (as ``storbench characterize``)."""
        return characterize(self.path)

    def __len__(self) -> int:
        return self.to_arrow().num_rows

    def __repr__(self) -> str:
        return f"Trace({str(self.path)!r})"


def load_trace(path: PathLike) -> Trace:
    """Open a Parquet trace (from ``storbench import``, ``record`` or ``synth``, or one
    written back from pandas, Polars or pyarrow).

    The file is checked at once: a missing file raises ``FileNotFoundError``, a file that
    is no trace ``ValueError`` naming what is wrong. Its rows are read on first use
    (``to_arrow``, ``to_pandas``, ``to_polars``, ``len``), through storbench's reader.

    >>> t = storbench.load_trace("heavy.parquet")
    >>> df = t.to_pandas(); c = t.characterize()
    """
    rows = _native.open_trace(str(path))
    return Trace(path, rows)


def characterize(path: PathLike) -> dict:
    """The figures published trace-based benchmarks print, as ``storbench characterize
    --json`` gives them (docs/trace-format.md, "characterize: definitions"): counts and
    bytes per op, the size mix, sequential %, busy and idle time, queue depth, service
    times, footprint, inter-arrival times, and each device's own figures
    (``per_device``).

    ``path`` is a Parquet trace; one whose rows are out of issue order is sorted first
    (``issue_order_violations`` says how many were). Raises ``FileNotFoundError`` for a
    missing file and ``ValueError`` for one that is no trace.
    """
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
    result.json, and its per-second series.

    Its files are in ``dir``: the one given to :func:`run`, or a temporary directory
    removed when this object is garbage collected (or at exit).
    """

    def __init__(self, dir: PathLike, point: dict, row: dict, _tmp=None):
        self.dir = Path(dir)
        self.point = point
        self.row = row
        # Holds the temporary directory of a run without ``dir=``: removed with us.
        self._tmp = _tmp

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
    command's options (``time="300s"``, ``precondition_passes=2``, ``quick=True``).

    ``workload`` (bench): a profile name, a trace path, or a dict such as
    ``{"generator": "randwrite", "bs": "4k", "qd": 32, "ios": 100000}``.

    ``dir``: where the run's files go (result.json, series.parquet, ...) and stay;
    without it they go to a temporary directory removed when the returned
    :class:`Result` is garbage collected. A bad argument raises ``ValueError`` naming
    the argument.
    """
    text = f"seeds = [{int(seed)}]\n"
    if checkpoint_every is not None:
        text += f"checkpoint_every = {_toml(checkpoint_every)}\n"
    text += _table("[[target]]", _target_entry(target))
    if workload is not None:
        text += _table("[[workload]]", _workload_entry(workload))
    text += _table("[[procedure]]", {"name": procedure, **options})
    tmp = None
    if dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="storbench-run-")
        d = Path(tmp.name)
    else:
        d = Path(dir)
    try:
        point, row = _native.run_single(text, str(d), base=os.getcwd())
    except ValueError as e:
        if tmp is not None:
            tmp.cleanup()
        raise ValueError(_run_error(text, str(e))) from None
    except BaseException:
        if tmp is not None:
            tmp.cleanup()
        raise
    return Result(d, json.loads(point), dict(json.loads(row)), _tmp=tmp)


def _run_error(text: str, message: str) -> str:
    """A plan error of the plan :func:`run` wrote from its arguments, said in terms of
    those arguments (the user wrote no plan file)."""
    m = re.match(r"<plan>(?::(\d+))?: ", message)
    if not m:
        return message
    rest = message[m.end():]
    # A point's own check names the option already: the point is this run.
    point = re.match(r"point \d+ \([^)]*\): ", rest)
    if point:
        return f"run(): {rest[point.end():]}"
    if m.group(1) is None:
        return f"run(): {rest}"
    lines = text.splitlines()
    n = int(m.group(1))
    line = lines[n - 1].strip() if 0 < n <= len(lines) else ""
    table = next(
        (l.strip("[] ") for l in reversed(lines[: n - 1]) if l.startswith("[[")),
        None,
    )
    arg = {"target": "target", "workload": "workload", "procedure": "option"}.get(table, "argument")
    what = line.replace(" = ", "=") if line else ""
    if table == "procedure" and what.startswith("name="):
        return f"run(): procedure {what[5:]}: {rest}"
    return f"run(): {arg} {what}: {rest}" if what else f"run(): {rest}"


# ---------------------------------------------------------------- sweeps


class SweepResult:
    """A sweep's directory and its dataset (one row per finished point): what
    :func:`sweep` returns and :func:`read_sweep` opens."""

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
    """Open the directory of a finished (or interrupted) sweep: ``to_pandas()``,
    ``to_polars()`` and ``to_arrow()`` read its dataset, ``sweep.parquet`` (one row per
    finished point, the headline figures of docs/sweeps.md).

    Raises ``FileNotFoundError`` when ``dir`` holds no dataset.
    """
    d = Path(dir)
    if not (d / "sweep.parquet").is_file():
        raise FileNotFoundError(f"{d}: no sweep.parquet here (storbench sweep or storbench.sweep writes it)")
    return SweepResult(d)


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
        # On a terminal, or in a notebook (which is no terminal) a bar of its own.
        progress = sys.stderr.isatty() or _in_notebook()
    bar = None
    if progress and not sys.stderr.isatty() and _in_notebook():
        bar = _NotebookBar(_planned(src), "points")
    if address is None:
        if bar is None:
            counts = _native.run_local(str(out), jobs=jobs, progress=progress, **src)
            return SweepResult(out, counts)
        stop = threading.Event()
        watcher = threading.Thread(target=_watch_points, args=(Path(out), bar, stop), daemon=True)
        watcher.start()
        try:
            counts = _native.run_local(str(out), jobs=jobs, progress=False, **src)
        finally:
            stop.set()
            watcher.join()
            bar.close()
        return SweepResult(out, counts)
    from ._ray import ray_sweep

    try:
        return ray_sweep(src, Path(out), address, shared_fs=shared_fs, progress=bar or progress)
    finally:
        if bar is not None:
            bar.close()


# ---------------------------------------------------------------- progress in notebooks


def _in_notebook() -> bool:
    """Whether this runs in a Jupyter kernel (where stderr is no terminal)."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    try:
        shell = ipython.get_ipython()
    except Exception:
        return False
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


class _NotebookBar:
    """A progress bar in a notebook: tqdm's notebook bar when tqdm is installed, else a
    line of text updated in place."""

    def __init__(self, total: int, unit: str):
        self.total = total
        self.unit = unit
        self.done = 0
        self._tqdm = None
        self._handle = None
        try:
            from tqdm.auto import tqdm

            self._tqdm = tqdm(total=total, unit=unit)
        except ImportError:
            from IPython.display import display

            self._handle = display(self._text(), display_id=True)

    def _text(self) -> str:
        return f"storbench: {self.done}/{self.total} {self.unit}"

    def update_to(self, done: int) -> None:
        done = min(done, self.total)
        if done == self.done:
            return
        if self._tqdm is not None:
            self._tqdm.update(done - self.done)
        self.done = done
        if self._handle is not None:
            self._handle.update(self._text())

    def close(self) -> None:
        if self._tqdm is not None:
            self._tqdm.close()


def _planned(src: dict) -> int:
    """The number of points of a plan (from its dry run's first line)."""
    m = re.search(r": (\d+) points?", _native.describe(**src))
    return int(m.group(1)) if m else 0


def _finished_points(out: Path) -> int:
    """Points recorded in a sweep directory (each writes points/ID/point.json last)."""
    return sum(1 for _ in (out / "points").glob("*/point.json")) if (out / "points").is_dir() else 0


def _watch_points(out: Path, bar: "_NotebookBar", stop: threading.Event) -> None:
    while not stop.wait(0.5):
        bar.update_to(_finished_points(out))
    bar.update_to(_finished_points(out))


class Twin:
    """A drive's digital twin (``twin.json``, docs/twin.md): ``target``, the fitted
    simulated drive as a ``sim:`` spec usable with :func:`run` and in sweep plans;
    ``unidentified``, the parameters no measured figure moved with (the preset's
    guesses); and each figure measured beside the twin's (:meth:`figures`)."""

    def __init__(self, data: dict):
        self.json = data

    @property
    def target(self) -> str:
        return self.json["target"]

    @property
    def unidentified(self) -> list:
        return list(self.json["unidentified"])

    @property
    def parameters(self) -> list:
        return list(self.json["parameters"])

    def figures(self) -> pa.Table:
        """Every figure: ``name``, ``unit``, ``measured``, ``twin``, ``error_pct``, ``residual``."""
        return pa.Table.from_pylist(self.json["figures"])

    def to_pandas(self):
        return self.figures().to_pandas()

    def to_polars(self):
        return _frames(self.figures(), "polars")

    def save(self, path: PathLike) -> Path:
        """Write it as ``twin.json`` (what ``storbench twin fit`` writes), e.g. for a
        sweep plan's ``twin = "..."`` target."""
        p = Path(path)
        p.write_text(json.dumps(self.json, indent=2))
        return p

    def __repr__(self) -> str:
        return f"Twin({self.target!r}, unidentified={self.unidentified})"


def twin(
    source: PathLike,
    *,
    quick: bool = True,
    presets: Optional[list] = None,
    eval_capacity: Optional[str] = None,
    max_iterations: Optional[int] = None,
    starts: Optional[int] = None,
    jobs: Optional[int] = None,
) -> Twin:
    """Fit a simulated twin to a drive's measurement, as ``storbench twin fit`` does.

    ``source``: the result directory of ``storbench twin measure`` (a real drive's
    measurement), or a ``sim:`` spec, measured here in process first (``quick``: the
    short plan; otherwise the full one) -- a simulated drive standing in for a real one.
    ``presets``: where the fit may start (the nearest is chosen); ``eval_capacity``:
    the size of the drives it simulates (``"256m"``); ``starts``: starting points
    besides the preset (8; each costs about one descent). Nothing is written; see
    :meth:`Twin.save`. A bad argument raises ``ValueError``.
    """
    s = str(source)
    if not s.startswith("sim:"):
        s = str(Path(s).resolve())
    text = _native.twin(
        s,
        quick=quick,
        presets=list(presets) if presets is not None else None,
        eval_capacity=eval_capacity,
        max_iterations=max_iterations,
        starts=starts,
        jobs=jobs,
    )
    return Twin(json.loads(text))
