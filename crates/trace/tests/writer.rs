//! The trace writer encodes on its own thread: its failures still reach the caller
//! as errors naming the file, and a writer dropped half way stops its thread.

use std::path::Path;
use storbench_trace::store::ROW_GROUP_ROWS;
use storbench_trace::{IoRecord, Op, TraceMeta, TraceWriter};

/// Record `i`: random offsets (about 5 bytes per row encoded, so row groups are
/// megabytes and reach the file as they close).
fn rec(i: u64) -> IoRecord {
    let h = (i ^ 0x9E37_79B9_7F4A_7C15).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    let offset = (h >> 28) * 4096;
    let mut r = IoRecord::new(Op::Write, offset, 4096, i * 1000);
    r.complete_ns = Some(i * 1000 + 500);
    r
}

#[test]
fn encoder_failure_is_an_error_naming_the_file() {
    // Writes to /dev/full fail with ENOSPC; the first row group reaches the file when
    // it closes, on the encoder thread.
    let path = Path::new("/dev/full");
    let Ok(mut w) = TraceWriter::create(path, &TraceMeta::default()) else {
        eprintln!("skipped: cannot open /dev/full for writing");
        return;
    };
    let mut failed = None;
    for i in 0..(ROW_GROUP_ROWS as u64 * 3) {
        if let Err(e) = w.write(&rec(i)) {
            failed = Some(e);
            break;
        }
    }
    let e = match failed {
        Some(e) => e,
        None => w
            .finish()
            .expect_err("writing 3 row groups to /dev/full fails"),
    };
    assert!(e.to_string().contains("/dev/full"), "{e}");
}

#[test]
fn dropped_writer_stops_and_finished_writer_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let dropped = dir.path().join("dropped.parquet");
    let mut w = TraceWriter::create(&dropped, &TraceMeta::default()).unwrap();
    for i in 0..200_000 {
        w.write(&rec(i)).unwrap();
    }
    drop(w);
    let path = dir.path().join("t.parquet");
    let mut w = TraceWriter::create(&path, &TraceMeta::default()).unwrap();
    let n = ROW_GROUP_ROWS as u64 + 12_345;
    for i in 0..n {
        w.write(&rec(i)).unwrap();
    }
    assert_eq!(w.finish().unwrap(), n);
    let (_, got, _, _) = storbench_trace::read_all(&path).unwrap();
    assert_eq!(got.len() as u64, n);
    assert!(got.iter().enumerate().all(|(i, r)| *r == rec(i as u64)));
}

#[test]
fn writes_after_a_failure_are_errors_too() {
    let path = Path::new("/dev/full");
    let Ok(mut w) = TraceWriter::create(path, &TraceMeta::default()) else {
        eprintln!("skipped: cannot open /dev/full for writing");
        return;
    };
    let mut i = 0;
    while w.write(&rec(i)).is_ok() {
        i += 1;
        assert!(
            i < ROW_GROUP_ROWS as u64 * 4,
            "writes to /dev/full never failed"
        );
    }
    // Rows are buffered: the next failure shows when the next batch is handed over.
    let mut again = 0;
    for j in 1..200_000 {
        if let Err(e) = w.write(&rec(i + j)) {
            assert!(e.to_string().contains("/dev/full"), "{e}");
            again += 1;
        }
    }
    assert!(
        again > 0,
        "later batches were accepted after the encoder failed"
    );
    let e = w.finish().unwrap_err();
    assert!(e.to_string().contains("earlier write"), "{e}");
}

#[test]
fn statistics_on_integer_columns_only() {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.parquet");
    let mut w = TraceWriter::create(&path, &TraceMeta::default()).unwrap();
    let s = w.intern_stream("fio");
    let d = w.intern_device("8,16");
    let n = 100_000u64;
    for i in 0..n {
        let mut r = rec(i);
        r.stream = Some(s);
        r.device = Some(d);
        w.write(&r).unwrap();
    }
    w.finish().unwrap();
    let reader = SerializedFileReader::new(std::fs::File::open(&path).unwrap()).unwrap();
    let rg = reader.metadata().row_group(0);
    for c in rg.columns() {
        let name = c.column_path().string();
        let stats = c.statistics();
        match name.as_str() {
            "op" | "stream" | "device" => assert!(stats.is_none(), "{name} has statistics"),
            _ => assert!(stats.is_some(), "{name} has no statistics"),
        }
        if name == "issue_ns" {
            let Some(parquet::file::statistics::Statistics::Int64(v)) = stats else {
                panic!("issue_ns statistics are not Int64: {stats:?}");
            };
            assert_eq!(
                (v.min_opt(), v.max_opt()),
                (Some(&0), Some(&((n as i64 - 1) * 1000)))
            );
        }
    }
}
