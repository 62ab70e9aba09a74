#!/usr/bin/env python3
"""Check that pandas, pyarrow, DuckDB and Polars open a storbench trace as it is.

usage: trace_compat.py TRACE.parquet EXPECTED_JSON
EXPECTED_JSON: {"rows": N, "ops": {"read": n, ...}, "bytes": {"read": b, ...},
                "complete_nulls": n, "source_format": "..."}
Exit 0: all present readers agree with EXPECTED. Exit 3: no reader module installed
(the caller skips). Any mismatch: exit 1 with a message.
"""
import json
import sys

path, expected = sys.argv[1], json.loads(sys.argv[2])
checked = []


def check(name, rows, ops, byts, nulls):
    ok = (rows == expected["rows"] and ops == expected["ops"]
          and byts == expected["bytes"] and nulls == expected["complete_nulls"])
    if not ok:
        print(f"{name}: rows={rows} ops={ops} bytes={byts} complete_nulls={nulls}; "
              f"expected {expected}", file=sys.stderr)
        sys.exit(1)
    checked.append(name)


try:
    import pyarrow.parquet as pq
    t = pq.read_table(path)
    md = pq.read_metadata(path).metadata or {}
    sf = md.get(b"storbench.source_format", b"").decode()
    if sf != expected["source_format"]:
        print(f"pyarrow: source_format {sf!r}", file=sys.stderr)
        sys.exit(1)
    for col, typ in [("issue_ns", "int64"), ("complete_ns", "int64"),
                     ("offset_bytes", "int64"), ("len_bytes", "int64")]:
        assert str(t.schema.field(col).type) == typ, (col, t.schema.field(col).type)
    checked.append("pyarrow")
except ImportError:
    pass

try:
    import pandas as pd
    df = pd.read_parquet(path)
    ops = {str(k): int(v) for k, v in df["op"].astype(str).value_counts().items()}
    byts = {str(k): int(v) for k, v in df.groupby(df["op"].astype(str))["len_bytes"].sum().items()}
    check("pandas", len(df), ops, byts, int(df["complete_ns"].isna().sum()))
except ImportError:
    pass

try:
    import duckdb
    con = duckdb.connect()
    rows = con.execute(f"select count(*) from read_parquet('{path}')").fetchone()[0]
    res = con.execute(f"select op, count(*), sum(len_bytes) from read_parquet('{path}') group by op").fetchall()
    nulls = con.execute(f"select count(*) from read_parquet('{path}') where complete_ns is null").fetchone()[0]
    check("duckdb", rows, {str(o): int(c) for o, c, _ in res}, {str(o): int(b) for o, _, b in res}, nulls)
except ImportError:
    pass

try:
    import polars as pl
    df = pl.read_parquet(path)
    g = df.group_by(pl.col("op").cast(pl.Utf8)).agg(pl.len().alias("n"), pl.col("len_bytes").sum().alias("b"))
    ops = {r["op"]: int(r["n"]) for r in g.iter_rows(named=True)}
    byts = {r["op"]: int(r["b"]) for r in g.iter_rows(named=True)}
    check("polars", df.height, ops, byts, int(df["complete_ns"].null_count()))
except ImportError:
    pass

if not checked:
    print("no python parquet reader installed", file=sys.stderr)
    sys.exit(3)
print("ok: " + " ".join(checked))
