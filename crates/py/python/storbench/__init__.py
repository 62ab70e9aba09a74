"""storbench from Python: the simulated SSD, its procedures and design sweeps.

The notebook API::

    import storbench
    t = storbench.load_trace("heavy.parquet")        # storbench's own reader
    t.to_polars(); t.characterize()                  # Arrow-backed frames, published figures
    r = storbench.run("consistency", "sim:client-7op,capacity=1g", quick=True)
    r.row["steady_iops"]; r.series().to_pandas()

and sweeps, on this machine or on a Ray cluster (same dataset, row for row)::

    s = storbench.sweep("plan.toml", "out/")                     # every local core
    s = storbench.sweep("plan.toml", "out/", address="auto")     # one Ray task per point
    s.to_pandas()

and a drive's digital twin (docs/twin.md), here of a simulated drive standing in for one::

    t = storbench.twin("sim:sata-mlc-2013,capacity=256m,program_us=1400")  # or a `twin measure` DIR
    t.target; t.unidentified; t.to_pandas()          # measured beside fitted
    storbench.run("bench", t.target, workload="heavy-2011", span="75%")

Everything runs in Rust through PyO3 (``storbench._native``); nothing shells out.
"""

from ._native import __version__
from ._api import (
    Result,
    SweepResult,
    Trace,
    Twin,
    characterize,
    describe,
    load_trace,
    presets,
    read_sweep,
    run,
    sweep,
    twin,
)

__all__ = [
    "__version__",
    "Result",
    "SweepResult",
    "Trace",
    "characterize",
    "describe",
    "load_trace",
    "presets",
    "read_sweep",
    "run",
    "sweep",
    "twin",
    "Twin",
]
