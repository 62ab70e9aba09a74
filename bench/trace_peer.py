#!/usr/bin/env python3
"""Peer computations for bench/trace_characterize.sh: the same core figures storbench
characterize reports (counts, bytes, sequential per device and direction, busy time),
over the same Parquet.
usage: trace_peer.py duckdb|pandas TRACE.parquet
Prints one JSON line, then `peer-seconds S` (query time, excluding interpreter start)."""
import json, sys, time

engine, path = sys.argv[1], sys.argv[2]
t0 = time.time()
if engine == "duckdb":
    import duckdb
    con = duckdb.connect()
    con.execute("set threads=1")
    con.execute("set memory_limit='2GB'")
    con.execute("set preserve_insertion_order=false")
    q = f"""
    with t as (
      select op, device, issue_ns, complete_ns, offset_bytes, len_bytes,
             lag(offset_bytes + len_bytes) over (partition by device, op order by file_row_number) as prev_end,
             max(complete_ns) over (order by file_row_number rows between unbounded preceding and 1 preceding) as run_end,
             file_row_number
      from read_parquet('{path}', file_row_number=true)
    ),
    starts as (
      select file_row_number, issue_ns, complete_ns,
             case when run_end is null or issue_ns > run_end then 1 else 0 end as new_run
      from t
    ),
    runs as (
      select sum(new_run) over (order by file_row_number rows between unbounded preceding and current row) as run_id, issue_ns, complete_ns from starts
    )
    select
      (select count(*) filter (where op='read') from t),
      (select count(*) filter (where op='write') from t),
      (select coalesce(sum(len_bytes) filter (where op='read'),0) from t),
      (select coalesce(sum(len_bytes) filter (where op='write'),0) from t),
      (select count(*) filter (where op in ('read','write') and offset_bytes = prev_end) from t),
      (select sum(e - s) from (select min(issue_ns) s, max(complete_ns) e from runs group by run_id))
    """
    r = con.execute(q).fetchone()
    out = dict(reads=r[0], writes=r[1], bytes_read=int(r[2]), bytes_written=int(r[3]),
               sequential_ios=r[4], busy_ns=int(r[5]))
elif engine == "pandas":
    import numpy as np
    import pandas as pd
    df = pd.read_parquet(path, columns=["issue_ns", "complete_ns", "offset_bytes", "len_bytes", "op", "device"])
    op = df["op"].astype(str)
    dev = df["device"].astype(str)  # null devices group together, as in storbench
    end = df["offset_bytes"] + df["len_bytes"]
    prev_end = end.groupby([dev, op]).shift(1)
    seq = int(((df["offset_bytes"] == prev_end) & op.isin(["read", "write"])).sum())
    c = df["complete_ns"].to_numpy()
    i = df["issue_ns"].to_numpy()
    run_end = np.maximum.accumulate(c)
    new = np.ones(len(i), dtype=bool)
    new[1:] = i[1:] > run_end[:-1]
    rid = np.cumsum(new)
    g = pd.DataFrame({"r": rid, "i": i, "c": c}).groupby("r").agg(s=("i", "min"), e=("c", "max"))
    out = dict(reads=int((op == "read").sum()), writes=int((op == "write").sum()),
               bytes_read=int(df["len_bytes"][op == "read"].sum()),
               bytes_written=int(df["len_bytes"][op == "write"].sum()),
               sequential_ios=seq, busy_ns=int((g["e"] - g["s"]).sum()))
else:
    sys.exit(f"unknown engine {engine}")
print(json.dumps(out))
print(f"peer-seconds {time.time() - t0:.3f}")
