"""Issue 34: notebook round trips. A trace read into pandas, Polars or pyarrow and
written back is still a trace with the same figures; tables come in the format's own
types; a frame re-sorted by offset is measured in issue order; and the package's
errors and files behave as a notebook user expects."""

import gc
import os
import random
import tempfile

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import storbench


def _trace(path, n=4000, seed=34):
    """A trace of two devices with completions, written by pyarrow in the format's
    own types (docs/trace-format.md)."""
    r = random.Random(seed)
    t, rows = 0, []
    nxt = {"8,16": 0, "259,0": 0}
    for i in range(n):
        t += r.randrange(1, 20_000)
        dev = "8,16" if r.random() < 0.6 else "259,0"
        off = nxt[dev] if r.random() < 0.4 else r.randrange(1 << 30) // 4096 * 4096
        size = r.choice([4096, 8192, 65536])
        nxt[dev] = off + size
        rows.append(
            dict(
                issue_ns=t,
                complete_ns=t + r.randrange(50_000, 400_000) if i % 50 else None,
                offset_bytes=off,
                len_bytes=size,
                op=r.choice(["read", "read", "write", "flush"]),
                stream=r.choice(["fio", "postgres", None]),
                device=dev,
            )
        )
    d = pa.dictionary(pa.int32(), pa.string())
    schema = pa.schema(
        [
            ("issue_ns", pa.int64()),
            ("complete_ns", pa.int64()),
            ("offset_bytes", pa.int64()),
            ("len_bytes", pa.int64()),
            ("op", d),
            ("stream", d),
            ("device", d),
        ]
    )
    cols = {k: [row[k] for row in rows] for k in schema.names}
    table = pa.table(
        {
            k: (pa.array(v, pa.string()).dictionary_encode() if k in ("op", "stream", "device") else pa.array(v, pa.int64()))
            for k, v in cols.items()
        }
    ).cast(schema)
    pq.write_table(table, path)
    return path


def _figures(c):
    c = dict(c)
    c.pop("issue_order_violations")
    return c


def test_tables_use_the_trace_formats_own_types(tmp_path):
    t = storbench.load_trace(_trace(tmp_path / "t.parquet"))
    schema = t.to_arrow().schema
    for name in ("issue_ns", "complete_ns", "offset_bytes", "len_bytes"):
        assert schema.field(name).type == pa.int64(), name
    for name in ("op", "stream", "device"):
        assert schema.field(name).type == pa.dictionary(pa.int32(), pa.string()), name
    assert t.rows == 4000 and len(t) == 4000


@pytest.mark.parametrize("via", ["pandas read_parquet", "load_trace to_pandas", "polars read_parquet", "load_trace to_polars", "load_trace to_arrow"])
def test_a_trace_written_back_from_a_notebook_is_the_same_trace(tmp_path, via):
    src = _trace(tmp_path / "t.parquet")
    out = tmp_path / "back.parquet"
    t = storbench.load_trace(src)
    if via == "pandas read_parquet":
        pd = pytest.importorskip("pandas")
        pd.read_parquet(src).to_parquet(out)
    elif via == "load_trace to_pandas":
        pytest.importorskip("pandas")
        t.to_pandas().to_parquet(out)
    elif via == "polars read_parquet":
        pl = pytest.importorskip("polars")
        pl.read_parquet(src).write_parquet(out)
    elif via == "load_trace to_polars":
        pytest.importorskip("polars")
        t.to_polars().write_parquet(out)
    else:
        pq.write_table(t.to_arrow(), out)
    back = storbench.load_trace(out)
    assert back.to_arrow().equals(t.to_arrow()), via
    assert storbench.characterize(out) == storbench.characterize(src), via


def test_a_frame_sorted_by_offset_is_measured_in_issue_order(tmp_path):
    pd = pytest.importorskip("pandas")
    src = _trace(tmp_path / "t.parquet")
    by_offset = tmp_path / "by_offset.parquet"
    pd.read_parquet(src).sort_values("offset_bytes").to_parquet(by_offset)
    want = storbench.characterize(src)
    got = storbench.characterize(by_offset)
    assert got["issue_order_violations"] > 1000
    assert _figures(got) == _figures(want)
    assert want["per_device"][0]["device"] == "259,0" and len(want["per_device"]) == 2
    # Read as rows, it is refused naming the row, with what to do.
    with pytest.raises(ValueError, match=r"row \d+: issue_ns .* not in issue order"):
        storbench.load_trace(by_offset).to_arrow()


def test_load_trace_of_a_missing_or_bad_file_fails_at_once(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing.parquet"):
        storbench.load_trace(tmp_path / "missing.parquet")
    text = tmp_path / "t.csv"
    text.write_text("1,2,3\n")
    with pytest.raises(ValueError, match="not a Parquet trace"):
        storbench.load_trace(text)
    with pytest.raises(FileNotFoundError):
        storbench.characterize(tmp_path / "missing.parquet")
    with pytest.raises(FileNotFoundError, match="sweep.parquet"):
        storbench.read_sweep(tmp_path)


def test_functions_of_the_notebook_api_say_what_they_do():
    for f in (storbench.characterize, storbench.load_trace, storbench.read_sweep, storbench.run, storbench.sweep):
        assert f.__doc__ and len(f.__doc__) > 80, f.__name__


def _run_dirs():
    return {n for n in os.listdir(tempfile.gettempdir()) if n.startswith("storbench-run-")}


def test_run_without_dir_leaves_no_temporary_directory():
    before = _run_dirs()
    r = storbench.run("consistency", "sim:client-7op,capacity=1g", quick=True, duration="3s")
    assert r.dir.is_dir() and (r.dir / "result.json").is_file()
    assert r.summary is not None
    d = r.dir
    del r
    gc.collect()
    assert not d.exists()
    assert _run_dirs() == before


def test_run_errors_name_the_argument_not_a_plan_file():
    before = _run_dirs()
    with pytest.raises(ValueError) as e:
        storbench.run("consistency", "sim:client-7op,capacity=1g", quick=True, duration="12x")
    msg = str(e.value)
    # Read by the command's own parser (`duration` is an older name of --time).
    assert msg.startswith("run(): invalid value '12x' for '--time <TIME>'"), msg
    assert "<plan>" not in msg and "plan" not in msg, msg
    # An option no procedure has: named as the argument it was.
    with pytest.raises(ValueError) as e:
        storbench.run("consistency", "sim:client-7op,capacity=1g", quick=True, duratoin="3s")
    msg = str(e.value)
    assert msg.startswith("run(): "), msg
    assert "duratoin" in msg and "<plan>" not in msg, msg
    assert _run_dirs() == before


def test_sweep_shows_a_bar_in_a_notebook(monkeypatch, plan12, tmp_path):
    """In a Jupyter kernel (stderr no terminal) a sweep shows a notebook bar by default."""
    from storbench import _api

    shown = []

    class Bar:
        def __init__(self, total, unit):
            self.total, self.done = total, 0
            shown.append(self)

        def update_to(self, n):
            self.done = n

        def close(self):
            self.closed = True

    monkeypatch.setattr(_api, "_in_notebook", lambda: True)
    monkeypatch.setattr(_api, "_NotebookBar", Bar)
    s = storbench.sweep(plan12, tmp_path / "s", jobs=2)
    assert len(shown) == 1
    bar = shown[0]
    assert bar.total == 12 and bar.done == 12 and bar.closed
    assert s.counts["rows"] == 12
