//! pandas, pyarrow, DuckDB and Polars must open our trace files as they are.
//! Runs bench/trace_compat.py; skips (with a printed reason) when python3 or all of the
//! modules are missing.

use std::path::Path;
use std::process::Command;
use storbench_trace::{IoRecord, Op, TraceMeta, TraceWriter};

#[test]
fn python_readers_open_trace_files() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/trace_compat.py");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("compat.parquet");
    let meta = TraceMeta {
        source_format: Some("test".into()),
        ..Default::default()
    };
    let mut w = TraceWriter::create(&path, &meta).unwrap();
    let s = w.intern_stream("proc");
    let d = w.intern_device("8,0");
    let mut ops = [0u64; 4];
    let mut bytes = [0u64; 4];
    let mut nulls = 0u64;
    // More than one batch so dictionaries span batches.
    for i in 0..70_000u64 {
        let op = Op::ALL[(i * 7 % 4) as usize];
        let len = if op == Op::Flush {
            0
        } else {
            4096 * (1 + i % 3)
        };
        let mut r = IoRecord::new(op, i * 8192, len, i * 1000);
        if i % 10 == 0 {
            nulls += 1;
        } else {
            r.complete_ns = Some(i * 1000 + 333);
        }
        r.stream = (i % 2 == 0).then_some(s);
        r.device = (i % 3 != 0).then_some(d);
        ops[op.index()] += 1;
        bytes[op.index()] += len;
        w.write(&r).unwrap();
    }
    let rows = w.finish().unwrap();
    let mut want_ops = String::new();
    let mut want_bytes = String::new();
    for op in Op::ALL {
        let sep = if want_ops.is_empty() { "" } else { "," };
        want_ops += &format!("{sep}\"{op}\":{}", ops[op.index()]);
        want_bytes += &format!("{sep}\"{op}\":{}", bytes[op.index()]);
    }
    let expected = format!(
        "{{\"rows\":{rows},\"ops\":{{{want_ops}}},\"bytes\":{{{want_bytes}}},\"complete_nulls\":{nulls},\"source_format\":\"test\"}}"
    );
    let out = match Command::new("python3")
        .arg(&script)
        .arg(&path)
        .arg(&expected)
        .output()
    {
        Ok(o) => o,
        Err(e) => {
            eprintln!("skipped: python3 not runnable: {e}");
            return;
        }
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        Some(0) => {
            let stdout = String::from_utf8_lossy(&out.stdout);
            eprintln!("{stdout}");
            assert!(stdout.starts_with("ok:"), "{stdout}");
        }
        Some(3) => eprintln!("skipped: {stderr}"),
        _ => panic!("python readers disagree: {stderr}"),
    }
}
