#!/usr/bin/env python3
"""Peer for bench/synth_full.sh: DuckDB (one thread) writes N rows shaped like a
storbench trace (issue_ns, complete_ns, offset_bytes, len_bytes, op, stream) with
pseudo-random values to zstd Parquet. Prints `peer-seconds S`.
usage: synth_peer.py N OUT.parquet"""
import sys, time
import duckdb

n, out = int(sys.argv[1]), sys.argv[2]
con = duckdb.connect()
con.execute("set threads=1")
t0 = time.time()
con.execute(f"""
copy (
  select i * 2000 + hash(i) % 1000 * 2 as issue_ns,
         i * 2000 + hash(i) % 1000 * 2 + 1 + hash(i + 1) % 500000 as complete_ns,
         (hash(i + 2) % 33554432) * 4096 as offset_bytes,
         [4096, 8192, 16384, 32768, 65536, 131072, 12288][(hash(i + 3) % 7)::int + 1] as len_bytes,
         case when hash(i + 4) % 10 < 7 then 'read' else 'write' end as op,
         'stream' || (hash(i + 5) % 12)::varchar as stream
  from range({n}) t(i)
) to '{out}' (format parquet, compression zstd)
""")
print(f"peer-seconds {time.time() - t0:.3f}")
