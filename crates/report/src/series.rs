//! Parquet outputs: `DIR/series.parquet` (per-second series of every phase) and
//! `DIR/ios.parquet` (every completed I/O, as a trace).
//!
//! series.parquet is ONE file for the whole run, one row per (phase, second), with a
//! `phase` column first: `SELECT * FROM 'series.parquet' WHERE phase = 'x'` in DuckDB,
//! `pd.read_parquet(...).query("phase == 'x'")` in pandas. Writing a phase's series
//! rewrites the file (atomically, tmp + rename) with that phase's rows replaced; series
//! are small (one row per second) so this stays cheap even for day-long runs.

use crate::result::ReportError;
use arrow_array::{
    Array, ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray, UInt64Array,
};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use storbench_metrics::SecondSample;
use storbench_trace::atomic::OutputDir;
use storbench_trace::{IoRecord, TraceMeta, TraceWriter};

pub const SERIES_FILE: &str = "series.parquet";
pub const IOS_FILE: &str = "ios.parquet";

type U64Col = (
    &'static str,
    fn(&SecondSample) -> u64,
    fn(&mut SecondSample, u64),
);
type F64Col = (
    &'static str,
    fn(&SecondSample) -> f64,
    fn(&mut SecondSample, f64),
);

/// Integer columns, in file order after `phase`.
const U64_COLS: [U64Col; 11] = [
    ("t_s", |s| s.t_s, |s, v| s.t_s = v),
    ("window_ns", |s| s.window_ns, |s, v| s.window_ns = v),
    ("read_ios", |s| s.read_ios, |s, v| s.read_ios = v),
    ("write_ios", |s| s.write_ios, |s, v| s.write_ios = v),
    ("trim_ios", |s| s.trim_ios, |s, v| s.trim_ios = v),
    ("flush_ios", |s| s.flush_ios, |s, v| s.flush_ios = v),
    ("read_bytes", |s| s.read_bytes, |s, v| s.read_bytes = v),
    ("write_bytes", |s| s.write_bytes, |s, v| s.write_bytes = v),
    ("trim_bytes", |s| s.trim_bytes, |s, v| s.trim_bytes = v),
    ("errors", |s| s.errors, |s, v| s.errors = v),
    ("busy_ns", |s| s.busy_ns, |s, v| s.busy_ns = v),
];

/// Float columns, after the integer ones. `iops`, `*_iops`, `*mb_per_s` are derived
/// (written for convenience, recomputed on read).
const F64_COLS: [F64Col; 11] = [
    (
        "latency_mean_us",
        |s| s.latency_us_mean,
        |s, v| s.latency_us_mean = v,
    ),
    (
        "latency_max_us",
        |s| s.latency_us_max,
        |s, v| s.latency_us_max = v,
    ),
    (
        "read_latency_mean_us",
        |s| s.read_latency_us_mean,
        |s, v| s.read_latency_us_mean = v,
    ),
    (
        "write_latency_mean_us",
        |s| s.write_latency_us_mean,
        |s, v| s.write_latency_us_mean = v,
    ),
    ("qd_mean", |s| s.qd_mean, |s, v| s.qd_mean = v),
    ("iops", SecondSample::iops, |_, _| {}),
    ("read_iops", SecondSample::read_iops, |_, _| {}),
    ("write_iops", SecondSample::write_iops, |_, _| {}),
    ("mb_per_s", SecondSample::mb_per_s, |_, _| {}),
    ("read_mb_per_s", SecondSample::read_mb_per_s, |_, _| {}),
    ("write_mb_per_s", SecondSample::write_mb_per_s, |_, _| {}),
];

/// The names series files written before result schema 3 gave the columns renamed
/// to put the unit last: read under either.
const OLD_NAMES: [(&str, &str); 4] = [
    ("latency_mean_us", "latency_us_mean"),
    ("latency_max_us", "latency_us_max"),
    ("read_latency_mean_us", "read_latency_us_mean"),
    ("write_latency_mean_us", "write_latency_us_mean"),
];

/// The columns of a series file: `phase` (series.parquet) or `t_ms` (a per-phase file)
/// first, then the sample's columns. Integers are Int64, as in traces (one rule for
/// every Parquet file storbench writes: Spark and others have no unsigned type).
fn schema(first: (&str, DataType)) -> Arc<Schema> {
    let mut fields = vec![Field::new(first.0, first.1, false)];
    fields.extend(
        U64_COLS
            .iter()
            .map(|c| Field::new(c.0, DataType::Int64, false)),
    );
    fields.extend(
        F64_COLS
            .iter()
            .map(|c| Field::new(c.0, DataType::Float64, false)),
    );
    Arc::new(Schema::new(fields))
}

/// The first column of one batch: the phase name, or each window's start in ms.
enum First<'a> {
    Phase(&'a str),
    StartMs(&'a [u64]),
}

fn pq_err(path: &Path, e: impl std::error::Error + 'static) -> ReportError {
    ReportError::parquet(path, e)
}

/// A count, byte total or time of one window: far below 2^63.
fn as_i64(v: u64) -> i64 {
    i64::try_from(v).expect("a series value below 2^63")
}

/// Write `name` in `dir` with these batches of rows, atomically.
fn write_file(
    dir: &OutputDir,
    name: &str,
    schema: Arc<Schema>,
    batches: &[(First<'_>, &[SecondSample])],
) -> Result<(), ReportError> {
    let path = &dir.join(name);
    let mut out = dir
        .replace(name)
        .map_err(|e| ReportError::io(path, "create", e))?;
    let tmp = out.temp();
    let file = out
        .file()
        .try_clone()
        .map_err(|e| ReportError::io(&tmp, "create", e))?;
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(
            ZstdLevel::try_new(1).expect("zstd level 1"),
        ))
        .set_created_by(format!("storbench {}", env!("CARGO_PKG_VERSION")))
        .build();
    let mut w =
        ArrowWriter::try_new(file, schema.clone(), Some(props)).map_err(|e| pq_err(&tmp, e))?;
    for (first, rows) in batches {
        if rows.is_empty() {
            continue;
        }
        let first: ArrayRef = match first {
            First::Phase(phase) => Arc::new(StringArray::from_iter_values(std::iter::repeat_n(
                *phase,
                rows.len(),
            ))),
            First::StartMs(t) => {
                assert_eq!(t.len(), rows.len(), "one start time per window");
                Arc::new(Int64Array::from_iter_values(t.iter().map(|&v| as_i64(v))))
            }
        };
        let mut cols = vec![first];
        for c in &U64_COLS {
            cols.push(Arc::new(Int64Array::from_iter_values(
                rows.iter().map(|r| as_i64((c.1)(r))),
            )));
        }
        for c in &F64_COLS {
            cols.push(Arc::new(Float64Array::from_iter_values(
                rows.iter().map(c.1),
            )));
        }
        let batch = RecordBatch::try_new(schema.clone(), cols).map_err(|e| pq_err(&tmp, e))?;
        w.write(&batch).map_err(|e| pq_err(&tmp, e))?;
    }
    w.close().map_err(|e| pq_err(&tmp, e))?;
    out.commit()
        .map_err(|e| ReportError::io(path, "write (atomically)", e))
}

/// Read `DIR/series.parquet`: each phase's series, phases in file order.
pub fn read_series(dir: &Path) -> Result<Vec<(String, Vec<SecondSample>)>, ReportError> {
    let path = dir.join(SERIES_FILE);
    let file = std::fs::File::open(&path).map_err(|e| ReportError::io(&path, "open", e))?;
    read_series_file(file, &path)
}

/// [`read_series`] of the open file `path`.
fn read_series_file(
    file: std::fs::File,
    path: &Path,
) -> Result<Vec<(String, Vec<SecondSample>)>, ReportError> {
    let path = path.to_path_buf();
    let reader = ParquetRecordBatchReaderBuilder::try_new(file)
        .and_then(|b| b.build())
        .map_err(|e| pq_err(&path, e))?;
    let mut out: Vec<(String, Vec<SecondSample>)> = Vec::new();
    for batch in reader {
        let batch = batch.map_err(|e| pq_err(&path, e))?;
        let col = |name: &str| {
            batch
                .column_by_name(name)
                .ok_or_else(|| ReportError::Invalid {
                    path: path.clone(),
                    message: format!("column {name:?} is missing"),
                    hint: "series.parquet files are written by storbench; was this one edited?",
                })
        };
        let typed = |name: &str, what: &str| ReportError::Invalid {
            path: path.clone(),
            message: format!("column {name:?} is not {what}"),
            hint: "series.parquet files are written by storbench; was this one edited?",
        };
        let phase = col("phase")?;
        let phase = phase
            .as_any()
            .downcast_ref::<StringArray>()
            .ok_or_else(|| typed("phase", "a string"))?;
        let mut rows = vec![SecondSample::default(); batch.num_rows()];
        for c in &U64_COLS {
            let a = col(c.0)?;
            // Int64 since issue 34; files written before hold UInt64.
            if let Some(a) = a.as_any().downcast_ref::<Int64Array>() {
                for (row, &v) in rows.iter_mut().zip(a.values().iter()) {
                    let v = u64::try_from(v).map_err(|_| typed(c.0, "non-negative"))?;
                    (c.2)(row, v);
                }
            } else if let Some(a) = a.as_any().downcast_ref::<UInt64Array>() {
                for (row, &v) in rows.iter_mut().zip(a.values().iter()) {
                    (c.2)(row, v);
                }
            } else {
                return Err(typed(c.0, "int64"));
            }
        }
        for c in &F64_COLS {
            let old = OLD_NAMES.iter().find(|(n, _)| *n == c.0).map(|(_, o)| *o);
            let a = match (col(c.0), old) {
                (Ok(a), _) => a,
                (Err(_), Some(o)) if batch.column_by_name(o).is_some() => col(o)?,
                (Err(e), _) => return Err(e),
            };
            let a = a
                .as_any()
                .downcast_ref::<Float64Array>()
                .ok_or_else(|| typed(c.0, "float64"))?;
            for (row, v) in rows.iter_mut().zip(a.values().iter()) {
                (c.2)(row, *v);
            }
        }
        if phase.null_count() > 0 {
            return Err(typed("phase", "non-null"));
        }
        for (i, row) in rows.into_iter().enumerate() {
            let name = phase.value(i);
            match out.last_mut() {
                Some((n, v)) if n == name => v.push(row),
                _ => match out.iter_mut().find(|(n, _)| n == name) {
                    Some((_, v)) => v.push(row),
                    None => out.push((name.to_owned(), vec![row])),
                },
            }
        }
    }
    Ok(out)
}

/// Replace (or add) the series of each named phase in `DIR/series.parquet`, keeping the
/// other phases' rows; atomic.
pub fn write_series_all(
    dir: &OutputDir,
    updates: &[(&str, &[SecondSample])],
) -> Result<(), ReportError> {
    let path = dir.join(SERIES_FILE);
    let mut phases = match dir
        .read(SERIES_FILE)
        .map_err(|e| ReportError::io(&path, "open", e))?
    {
        Some(file) => read_series_file(file, &path)?,
        None => Vec::new(),
    };
    for &(name, rows) in updates {
        for (i, r) in rows.iter().enumerate() {
            assert_eq!(
                r.t_s, i as u64,
                "phase {name}: series must start at 0 s with no gap"
            );
        }
        match phases.iter_mut().find(|(n, _)| n == name) {
            Some((_, v)) => *v = rows.to_vec(),
            None => phases.push((name.to_owned(), rows.to_vec())),
        }
    }
    let batches: Vec<(First<'_>, &[SecondSample])> = phases
        .iter()
        .map(|(n, rows)| (First::Phase(n), rows.as_slice()))
        .collect();
    write_file(
        dir,
        SERIES_FILE,
        schema(("phase", DataType::Utf8)),
        &batches,
    )
}

/// Write one phase's series to its own file `name` in `dir` (atomic), with a `t_ms`
/// column first: each window's start in ms since the phase began. Procedures
/// checkpointed in chunks have a short window at each chunk end, so their windows are
/// not back to back whole seconds; `t_ms` keeps the exact times (series.parquet numbers
/// windows 0, 1, 2).
pub fn write_phase_series(
    dir: &OutputDir,
    name: &str,
    series: &[SecondSample],
    start_ms: &[u64],
) -> Result<(), ReportError> {
    assert_eq!(series.len(), start_ms.len(), "one start time per window");
    assert!(
        start_ms.windows(2).all(|w| w[0] <= w[1]),
        "window starts ascend"
    );
    write_file(
        dir,
        name,
        schema(("t_ms", DataType::Int64)),
        &[(First::StartMs(start_ms), series)],
    )
}

/// Replace (or add) one phase's series in `DIR/series.parquet` (checkpoints).
pub fn write_series(
    dir: &OutputDir,
    phase: &str,
    series: &[SecondSample],
) -> Result<(), ReportError> {
    write_series_all(dir, &[(phase, series)])
}

/// Completed I/Os held to restore issue order before writing `ios.parquet`
/// (completions arrive out of issue order; an I/O overtaken by more than this many
/// later-issued ones is written late and counted in `extra.ios_out_of_issue_order`).
pub const IOLOG_REORDER_WINDOW: usize = 1 << 16;

/// Heap entry: ordered by (issue_ns, arrival sequence) only.
struct Held(u64, u64, IoRecord);
impl PartialEq for Held {
    fn eq(&self, o: &Self) -> bool {
        (self.0, self.1) == (o.0, o.1)
    }
}
impl Eq for Held {}
impl PartialOrd for Held {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Held {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.0, self.1).cmp(&(o.0, o.1))
    }
}

/// Streams every completed I/O of a run to `DIR/ios.parquet` (`--log-ios`), in the trace
/// format: `issue_ns` = submission, `complete_ns` = completion (null for a failed I/O),
/// times on the target's clock, rows in issue order (restored within
/// [`IOLOG_REORDER_WINDOW`] records). The file is itself a trace storbench can replay.
/// Memory is bounded by the reorder window (about 4 MB).
pub struct IoLogWriter {
    path: PathBuf,
    writer: TraceWriter,
    heap: std::collections::BinaryHeap<std::cmp::Reverse<Held>>,
    seq: u64,
    last_issue_ns: u64,
    failed_ios: u64,
    out_of_order: u64,
}

impl IoLogWriter {
    /// Create `DIR/ios.parquet`. `meta` describes the run (source_format is set to
    /// `storbench-replay-log` when empty).
    pub fn create(dir: &OutputDir, meta: &TraceMeta) -> Result<IoLogWriter, ReportError> {
        let path = dir.join(IOS_FILE);
        let mut meta = meta.clone();
        meta.source_format
            .get_or_insert_with(|| "storbench-replay-log".to_owned());
        meta.tool_version
            .get_or_insert_with(|| env!("CARGO_PKG_VERSION").to_owned());
        Ok(IoLogWriter {
            writer: TraceWriter::create_in(dir, IOS_FILE, &meta)?,
            path,
            heap: std::collections::BinaryHeap::with_capacity(IOLOG_REORDER_WINDOW + 1),
            seq: 0,
            last_issue_ns: 0,
            failed_ios: 0,
            out_of_order: 0,
        })
    }

    /// Log one completed I/O (`io.complete_ns` set); a failed one is logged with no
    /// completion time and counted in the file's metadata (`extra.failed_ios`).
    pub fn write(&mut self, io: &IoRecord, ok: bool) -> Result<(), ReportError> {
        assert!(io.complete_ns.is_some(), "only completed I/Os are logged");
        let mut rec = *io;
        if !ok {
            self.failed_ios += 1;
            rec.complete_ns = None;
        }
        self.heap
            .push(std::cmp::Reverse(Held(rec.issue_ns, self.seq, rec)));
        self.seq += 1;
        if self.heap.len() > IOLOG_REORDER_WINDOW {
            self.pop_one()?;
        }
        Ok(())
    }

    fn pop_one(&mut self) -> Result<(), ReportError> {
        let Some(std::cmp::Reverse(Held(issue_ns, _, rec))) = self.heap.pop() else {
            return Ok(());
        };
        if issue_ns < self.last_issue_ns {
            // Logs are truthful: written with its real times, counted.
            self.out_of_order += 1;
        }
        self.last_issue_ns = self.last_issue_ns.max(issue_ns);
        self.writer.write(&rec)?;
        Ok(())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Write what is held, close the file; returns the number of I/Os logged.
    pub fn finish(mut self) -> Result<u64, ReportError> {
        while !self.heap.is_empty() {
            self.pop_one()?;
        }
        let mut meta = self.writer.meta().clone();
        if self.failed_ios > 0 {
            meta.extra
                .insert("failed_ios".to_owned(), self.failed_ios.to_string());
        }
        if self.out_of_order > 0 {
            meta.extra.insert(
                "ios_out_of_issue_order".to_owned(),
                self.out_of_order.to_string(),
            );
        }
        self.writer.set_meta(meta);
        Ok(self.writer.finish()?)
    }
}

#[cfg(test)]
mod tests {
    /// The columns follow result.json's naming rule (units last, `_pct`).
    #[test]
    fn every_column_puts_its_unit_last() {
        let names = super::U64_COLS
            .iter()
            .map(|c| c.0)
            .chain(super::F64_COLS.iter().map(|c| c.0));
        let bad: Vec<String> = names.filter_map(storbench_results::naming::check).collect();
        assert!(bad.is_empty(), "{bad:?}");
    }
}
