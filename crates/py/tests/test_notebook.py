"""The notebook API: traces, one simulated run, frames, and the local sweep."""

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import storbench


def test_run_gives_the_row_a_sweep_point_gives(plan12, tmp_path):
    s = storbench.sweep(plan12, tmp_path / "s", jobs=2, progress=False)
    rows = s.to_arrow().to_pylist()
    first = rows[0]
    r = storbench.run(
        "consistency",
        "sim:client-7op,capacity=1g,op=0.07,victim=greedy",
        quick=True,
        duration="12s",
        seed=1,
        dir=tmp_path / "one",
    )
    assert r.point["id"] == first["point"]
    for k, v in r.row.items():
        assert first[k] == v, k
    # Series as frames, through Arrow.
    rw = r.to_pandas(phase="random-write")
    # 12 whole seconds, then the drain's partial window.
    assert (rw["window_ns"] == 1_000_000_000).sum() == 12 and (rw["write_iops"] > 0).all()
    assert r.to_polars().height == r.series().num_rows
    assert r.summary["scores"]["avg"] == pytest.approx(r.row["steady_iops"])


def test_sweep_skips_finished_points(plan12, tmp_path):
    out = tmp_path / "s"
    storbench.sweep(plan12, out, jobs=2, progress=False)
    before = (out / "sweep.parquet").read_bytes()
    again = storbench.sweep(plan12, out, jobs=2, progress=False)
    assert again.counts["ran"] == 0 and again.counts["already_done"] == 12
    assert (out / "sweep.parquet").read_bytes() == before


def test_trace_reads_through_storbench_and_characterizes(tmp_path):
    r = storbench.run(
        "bench",
        "sim:client-7op,capacity=1g",
        workload={"generator": "randrw", "bs": "8k", "qd": 4, "ios": 5000, "read_pct": 70},
        dir=tmp_path / "b",
    )
    t = storbench.load_trace(r.dir / "generator.parquet")
    table = t.to_arrow()
    assert isinstance(table, pa.Table) and table.num_rows == 5000
    assert set(table.column("op").to_pylist()) == {"read", "write"}
    assert set(table.column("len_bytes").to_pylist()) == {8192}
    c = t.characterize()
    assert c["reads"] + c["writes"] == 5000
    assert c["reads"] == table.column("op").to_pylist().count("read")
    assert r.row["reads"] == c["reads"] and r.row["writes"] == c["writes"]
    # The bench kept the generator's QD in flight.
    assert r.row["replayed_avg_qd"] == pytest.approx(4, abs=0.1)
    assert t.to_polars().height == 5000


def test_bad_plan_names_file_line_and_key(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text('[[target]]\npreset = "client-7op"\n\n[[procedure]]\nname = "consistency"\nspan = ["100%", "250%"]\n')
    with pytest.raises(ValueError) as e:
        storbench.describe(p)
    msg = str(e.value)
    assert "bad.toml:" in msg and "span" in msg and "250%" in msg, msg


def test_describe_counts_points(plan12):
    d = storbench.describe(plan12)
    assert d.startswith("plan 12-point check: 12 points")


def test_twin_of_a_simulated_drive_fits_and_runs(tmp_path):
    # Issue 33 from a notebook: a simulated drive stands in for a real one; its twin is
    # fitted to the quick plan's figures (the fit's accuracy is crates/suite/tests/twin.rs's)
    # and runs as a target.
    hidden = "sim:sata-mlc-2013,capacity=64m,program_us=1300"
    t = storbench.twin(
        hidden,
        presets=["sata-mlc-2013"],
        eval_capacity="64m",
        max_iterations=2,
        starts=1,
        jobs=2,
    )
    assert t.target.startswith("sim:sata-mlc-2013,capacity=67108864")
    # The start is the hidden drive's preset, so the fit can only improve on it.
    assert t.json["cost"] <= t.json["start_cost"]
    f = t.to_pandas()
    assert len(f) == 25 and "steady_half_iops" in set(f["name"])
    assert set(f.columns) >= {"name", "unit", "measured", "twin", "error_pct", "residual"}
    assert all(isinstance(u, str) for u in t.unidentified)
    saved = t.save(tmp_path / "twin.json")
    assert json.loads(saved.read_text())["target"] == t.target
    r = storbench.run("consistency", t.target, quick=True, dir=tmp_path / "c")
    assert r.row["steady_iops"] > 0
    with pytest.raises(ValueError, match="not a twin measurement"):
        storbench.twin(tmp_path / "c")
    with pytest.raises(ValueError, match="eval_capacity"):
        storbench.twin(hidden, eval_capacity="lots")


def test_a_twin_fit_stops_on_ctrl_c():
    # Ctrl-C in a notebook: the fit (tens of seconds here) stops within an evaluation
    # and raises KeyboardInterrupt, as storbench.run's procedures do.
    import _thread
    import threading

    import time

    timer = threading.Timer(1.0, _thread.interrupt_main)
    timer.start()
    t0 = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            storbench.twin(
                "sim:sata-mlc-2013,capacity=256m,program_us=1300",
                presets=["sata-mlc-2013"],
                jobs=2,
            )
    finally:
        timer.cancel()
    # Not a speed check: the whole fit takes about 44 s here; an interrupt that only
    # took effect when the fit ended would be raised after it.
    assert time.monotonic() - t0 < 20
