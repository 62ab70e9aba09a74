//! The native trace file: Parquet, one row per I/O, written and read as a stream of
//! bounded row groups so memory stays flat for any trace length.
//!
//! Schema (documented for users in `docs/trace-format.md`):
//!
//! | column | Arrow type | Parquet | meaning |
//! |---|---|---|---|
//! | `issue_ns` | Int64, not null | INT64 | submission, ns since trace start |
//! | `complete_ns` | Int64, nullable | INT64 | completion, ns since trace start (null: unknown) |
//! | `offset_bytes` | Int64, not null | INT64 | byte offset on the device |
//! | `len_bytes` | Int64, not null | INT64 | length in bytes (0 for most flushes) |
//! | `op` | Dictionary(Int32, Utf8), not null | BYTE_ARRAY dict | `read`, `write`, `trim`, `flush` |
//! | `stream` | Dictionary(Int32, Utf8), nullable | BYTE_ARRAY dict | process or scenario name |
//! | `device` | Dictionary(Int32, Utf8), nullable | BYTE_ARRAY dict | device name, e.g. `8,16` |
//!
//! Signed 64-bit integers are used (not unsigned) because every consumer (pandas,
//! DuckDB, Polars, Spark) reads them natively; the writer refuses values above
//! `i64::MAX` and the reader refuses negative values.
//!
//! Metadata lives in the Parquet key/value metadata, one flat key per field:
//! `storbench.trace_format_version` (= [`FORMAT_VERSION`]), `storbench.source_format`,
//! `storbench.source_file`, `storbench.capacity_bytes`, `storbench.logical_block_bytes`,
//! `storbench.tool_version`, and `storbench.extra.<key>` for each free key/value.
//!
//! Three parts, one file each: `schema.rs` (the Arrow schema, the metadata keys and
//! their CRC), `writer.rs` ([`TraceWriter`]) and `reader.rs` ([`TraceReader`], its
//! checks of every value and of row order). The imports below are theirs (each takes
//! `use super::*`).

use crate::error::TraceError;
use crate::model::{DeviceId, IoRecord, Names, Op, StreamId, TraceMeta};
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float32Type, Float64Type, Int16Type, Int32Type, Int8Type, UInt16Type, UInt32Type, UInt64Type,
    UInt8Type,
};
use arrow_array::{
    Array, ArrayRef, DictionaryArray, Int32Array, Int64Array, LargeStringArray, PrimitiveArray,
    RecordBatch, StringArray, StringViewArray,
};
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use parquet::arrow::{ArrowWriter, ProjectionMask};
use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::column::page::{Page, PageReader};
use parquet::file::metadata::{FileMetaData, KeyValue, ParquetMetaData};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::serialized_reader::SerializedPageReader;
use parquet::schema::types::ColumnPath;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Version of the column layout and metadata keys; bumped on incompatible change.
pub const FORMAT_VERSION: u32 = 1;
/// Rows per Parquet row group (the writer's in-memory bound: one encoded row group).
pub const ROW_GROUP_ROWS: usize = 1 << 20;
/// Rows per `next_batch` of the reader.
pub const BATCH_ROWS: usize = 1 << 16;
/// Rows per batch the writer gathers and hands to its encoder thread (44 bytes a row).
/// It divides [`ROW_GROUP_ROWS`], so row groups are whole batches. The nullable columns'
/// pages split where batches do: a different size writes the same values in other
/// bytes (1 << 14 measured no faster), so it stays what earlier files were written with.
pub const WRITE_BATCH_ROWS: usize = 1 << 16;
const _: () = assert!(ROW_GROUP_ROWS.is_multiple_of(WRITE_BATCH_ROWS));

pub const COL_ISSUE: &str = "issue_ns";
pub const COL_COMPLETE: &str = "complete_ns";
pub const COL_OFFSET: &str = "offset_bytes";
pub const COL_LEN: &str = "len_bytes";
pub const COL_OP: &str = "op";
pub const COL_STREAM: &str = "stream";
pub const COL_DEVICE: &str = "device";

mod reader;
mod schema;
mod writer;

pub use reader::{read_all, ColumnBatch, Columns, TraceReader};
use schema::*;
pub use schema::{arrow_schema, meta_from_kv, meta_to_kv};
pub use writer::{TraceWriter, ENCODE_QUEUE_BATCHES, SPARE_BATCHES};

#[cfg(test)]
mod reader_tests;

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(op: Op, off: u64, len: u64, t: u64, c: Option<u64>) -> IoRecord {
        IoRecord {
            complete_ns: c,
            ..IoRecord::new(op, off, len, t)
        }
    }

    #[test]
    fn round_trip_records_names_and_meta() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        let mut meta = TraceMeta {
            source_format: Some("fio-iolog-v3".into()),
            capacity_bytes: Some(1 << 30),
            ..Default::default()
        };
        let mut w = TraceWriter::create(&path, &meta).unwrap();
        let a = w.intern_stream("fio");
        let b = w.intern_stream("kworker/0:1");
        let d = w.intern_device("8,16");
        let mut want = Vec::new();
        for i in 0..(BATCH_ROWS as u64 * 2 + 17) {
            let mut r = rec(Op::ALL[(i % 4) as usize], i * 4096, 4096, i * 100, None);
            if i % 3 == 0 {
                r.complete_ns = Some(i * 100 + 50);
            }
            r.stream = match i % 5 {
                0 => None,
                1 | 2 => Some(a),
                _ => Some(b),
            };
            r.device = (i % 2 == 0).then_some(d);
            w.write(&r).unwrap();
            want.push(r);
        }
        meta.extra.insert("import.dropped".into(), "3".into());
        w.set_meta(meta.clone());
        assert_eq!(w.finish().unwrap(), want.len() as u64);
        let (got_meta, got, streams, devices) = read_all(&path).unwrap();
        assert_eq!(got_meta, meta);
        assert_eq!(got.len(), want.len());
        // Ids may be renumbered by the reader: compare through names.
        for (g, w_) in got.iter().zip(&want) {
            assert_eq!(g.issue_ns, w_.issue_ns);
            assert_eq!(g.complete_ns, w_.complete_ns);
            assert_eq!(
                (g.offset_bytes, g.len_bytes, g.op),
                (w_.offset_bytes, w_.len_bytes, w_.op)
            );
            let sname = |s: Option<StreamId>, n: &Names| s.map(|s| n.get(s.0).unwrap().to_owned());
            let wn: Vec<String> = ["fio", "kworker/0:1"]
                .iter()
                .map(|s| s.to_string())
                .collect();
            assert_eq!(
                sname(g.stream, &streams),
                w_.stream.map(|s| wn[s.0 as usize].clone())
            );
            assert_eq!(
                g.device.map(|d| devices.get(d.0).unwrap()),
                w_.device.map(|_| "8,16")
            );
        }
    }

    #[test]
    fn batches_with_no_some_and_all_nulls_round_trip() {
        // Batch by batch a column has no nulls, only nulls, or some: the writer keeps
        // nulls as counted -1s and reuses emptied batches, so each case must reset.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        let mut w = TraceWriter::create(&path, &TraceMeta::default()).unwrap();
        let s = w.intern_stream("app");
        let d = w.intern_device("259,0");
        let mut want = Vec::new();
        let n = WRITE_BATCH_ROWS as u64;
        for i in 0..(n * 6 + 5) {
            let batch = i / n;
            let mut r = rec(Op::Write, i * 512, 512, i * 10, None);
            let some = |k: u64| match batch % 3 {
                0 => true,
                1 => false,
                _ => (i + k) % 7 < 3,
            };
            r.complete_ns = some(0).then_some(i * 10 + 3);
            r.stream = some(1).then_some(s);
            r.device = (!some(2)).then_some(d);
            w.write(&r).unwrap();
            want.push(r);
        }
        assert_eq!(w.finish().unwrap(), want.len() as u64);
        let (_, got, streams, devices) = read_all(&path).unwrap();
        assert_eq!(got.len(), want.len());
        for (i, (g, w_)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g.complete_ns, w_.complete_ns, "row {i}");
            assert_eq!(
                g.stream.map(|x| streams.get(x.0).unwrap()),
                w_.stream.map(|_| "app"),
                "row {i}"
            );
            assert_eq!(
                g.device.map(|x| devices.get(x.0).unwrap()),
                w_.device.map(|_| "259,0"),
                "row {i}"
            );
            assert_eq!((g.issue_ns, g.offset_bytes), (w_.issue_ns, w_.offset_bytes));
        }
    }

    #[test]
    fn reader_batches_are_bounded_and_projection_drops_names() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        let mut w = TraceWriter::create(&path, &TraceMeta::default()).unwrap();
        let s = w.intern_stream("x");
        for i in 0..(BATCH_ROWS as u64 + 5) {
            let mut r = rec(Op::Read, i, 1, i, Some(i + 1));
            r.stream = Some(s);
            w.write(&r).unwrap();
        }
        w.finish().unwrap();
        let mut r = TraceReader::open_columns(&path, Columns::NoNames).unwrap();
        assert_eq!(r.num_rows(), BATCH_ROWS as u64 + 5);
        let mut out = Vec::new();
        let mut total = 0;
        while r.next_batch(&mut out).unwrap() {
            assert!(out.len() <= BATCH_ROWS);
            assert!(out.iter().all(|r| r.stream.is_none()));
            total += out.len();
        }
        assert!(out.is_empty());
        assert_eq!(total, BATCH_ROWS + 5);
    }

    #[test]
    fn writer_rejects_values_beyond_i64_and_completion_before_issue() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        let mut w = TraceWriter::create(&path, &TraceMeta::default()).unwrap();
        let e = w.write(&rec(Op::Read, u64::MAX, 1, 0, None)).unwrap_err();
        assert!(e.to_string().contains("offset_bytes"), "{e}");
        assert!(e.to_string().contains("t.parquet"), "{e}");
        let e = w.write(&rec(Op::Read, 0, 1, 10, Some(5))).unwrap_err();
        assert!(e.to_string().contains("before issue_ns"), "{e}");
        assert_eq!(w.finish().unwrap(), 0);
    }

    #[test]
    fn open_names_the_file_when_not_parquet() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bogus.parquet");
        std::fs::write(&path, b"fio version 3 iolog\n").unwrap();
        let e = TraceReader::open(&path).err().unwrap();
        assert!(e.to_string().contains("bogus.parquet"), "{e}");
    }

    /// Writes `rows` rows of the native schema in row groups of `rg_rows` with a plain
    /// `ArrowWriter` (dictionary encoding on, no check of ours on the way in): issue
    /// `i * 10`, completion `complete(i)`, stream all null, device `device(i)`.
    fn write_raw_with(
        path: &Path,
        rows: u64,
        rg_rows: usize,
        device: impl Fn(u64) -> Option<&'static str>,
        complete: &dyn Fn(u64) -> i64,
    ) {
        let schema = arrow_schema();
        let props = WriterProperties::builder()
            .set_max_row_group_row_count(Some(rg_rows))
            .build();
        let file = File::create(path).unwrap();
        let mut w = ArrowWriter::try_new(file, schema.clone(), Some(props)).unwrap();
        let i64s = |f: &dyn Fn(u64) -> i64| -> ArrayRef {
            Arc::new(Int64Array::from_iter_values((0..rows).map(f)))
        };
        let names = |f: &dyn Fn(u64) -> Option<&'static str>| -> ArrayRef {
            Arc::new((0..rows).map(f).collect::<DictionaryArray<Int32Type>>())
        };
        let batch = RecordBatch::try_new(
            schema,
            vec![
                i64s(&|i| i as i64 * 10),
                i64s(complete),
                // Runs of 3 sequential I/Os, then a jump.
                i64s(&|i| (i % 3 + (i / 3) * 97) as i64 * 4096),
                i64s(&|_| 4096),
                names(&|i| Some(if i % 4 == 0 { "write" } else { "read" })),
                names(&|_| None),
                names(&device),
            ],
        )
        .unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
    }

    /// As [`write_raw_with`], each completion 25 ns after its issue.
    fn write_raw(
        path: &Path,
        rows: u64,
        rg_rows: usize,
        device: impl Fn(u64) -> Option<&'static str>,
    ) {
        write_raw_with(path, rows, rg_rows, device, &|i| i as i64 * 10 + 25);
    }

    /// Rows whose completion is `complete(i)` for issue `i * 10` ([`write_raw_with`]),
    /// read back: the number of rows, or the reader's error.
    fn read_completions(rows: u64, complete: &dyn Fn(u64) -> i64) -> Result<u64, TraceError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("raw.parquet");
        write_raw_with(&path, rows, rows as usize, |_| None, complete);
        let mut r = TraceReader::open(&path)?;
        let mut n = 0;
        while let Some(b) = r.next_columns()? {
            n += b.len() as u64;
        }
        Ok(n)
    }

    #[test]
    fn reader_refuses_a_completion_before_its_issue_in_any_row() {
        let rows = 3 * BATCH_ROWS as u64 + 7;
        // At its issue is fine (zero service time), in every row.
        assert_eq!(read_completions(rows, &|i| i as i64 * 10).unwrap(), rows);
        // One row 1 ns early, in the first, a middle and the last batch (row 0 would
        // be negative, another error).
        for bad in [1, BATCH_ROWS as u64 + 3, rows - 1] {
            let e = read_completions(rows, &|i| i as i64 * 10 + 5 - 6 * i64::from(i == bad))
                .unwrap_err()
                .to_string();
            let want = format!("complete_ns {} before issue_ns {}", bad * 10 - 1, bad * 10);
            assert!(
                e.contains(&want) && e.contains("raw.parquet"),
                "row {bad}: {e}"
            );
        }
    }

    /// Records and characterization read back, and whether `device` was projected.
    fn read_back(path: &Path) -> (Vec<IoRecord>, Names, bool) {
        let mut r = TraceReader::open(path).unwrap();
        let projected = r.idx.device.is_some();
        assert!(
            r.idx.stream.is_none(),
            "the all-null stream column is not read"
        );
        let mut out = Vec::new();
        let mut all = Vec::new();
        while r.next_batch(&mut out).unwrap() {
            all.append(&mut out);
        }
        (all, r.devices().clone(), projected)
    }

    #[test]
    fn all_null_name_columns_are_not_decoded_and_read_as_null() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nulls.parquet");
        write_raw(&path, 10_000, 3000, |_| None);
        let (recs, _, projected) = read_back(&path);
        assert!(!projected);
        assert_eq!(recs.len(), 10_000);
        assert!(recs
            .iter()
            .all(|r| r.device.is_none() && r.stream.is_none()));
        // The op dictionary is in order of appearance ("write" is key 0), not Op's.
        for (i, r) in recs.iter().enumerate() {
            let want = if i % 4 == 0 { Op::Write } else { Op::Read };
            assert_eq!(r.op, want, "row {i}");
        }
        // characterize through the file equals the per-record path.
        let mut c = crate::Characterizer::new();
        for r in &recs {
            c.push(r);
        }
        let want = c.finish();
        assert!(want.sequential_ios > 0);
        assert_eq!(crate::characterize_file(&path).unwrap(), want);
    }

    #[test]
    fn a_name_column_with_values_in_a_later_row_group_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("late.parquet");
        // Row group 0 (rows 0..3000) has no device; the later ones some.
        write_raw(&path, 10_000, 3000, |i| {
            (i >= 3000 && i % 2 == 0).then_some("8,16")
        });
        let (recs, devices, projected) = read_back(&path);
        assert!(projected);
        for (i, r) in recs.iter().enumerate() {
            let want = (i >= 3000 && i % 2 == 0).then_some("8,16");
            assert_eq!(r.device.map(|d| devices.get(d.0).unwrap()), want, "row {i}");
        }
    }

    #[test]
    fn a_corrupt_name_column_chunk_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("corrupt.parquet");
        write_raw(&path, 10_000, 3000, |_| None);
        let md = ParquetRecordBatchReaderBuilder::try_new(File::open(&path).unwrap())
            .unwrap()
            .metadata()
            .clone();
        let leaf = md
            .file_metadata()
            .schema_descr()
            .columns()
            .iter()
            .position(|c| c.name() == COL_DEVICE)
            .unwrap();
        // Garbage over the device chunk's first page header, in the last row group.
        let (start, _) = md.row_groups().last().unwrap().column(leaf).byte_range();
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[start as usize..start as usize + 6].fill(0xFF);
        std::fs::write(&path, &bytes).unwrap();
        let e = TraceReader::open(&path)
            .err()
            .expect("corrupt chunk refused");
        assert!(e.to_string().contains("corrupt.parquet"), "{e}");
    }

    #[test]
    fn newer_format_version_is_refused() {
        let e = meta_from_kv(
            Path::new("x.parquet"),
            [("storbench.trace_format_version", "99")],
        )
        .unwrap_err();
        assert!(e.to_string().contains("newer"), "{e}");
    }
}
