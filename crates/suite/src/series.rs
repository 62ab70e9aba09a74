//! The per-second series of a phase as Parquet (`series/<phase>.parquet`), one row per
//! window: `t_ms` (window start since the phase began), the window length, counts and
//! bytes per op, IOPS, MB/s, service times, busy time and mean QD.

use crate::phase::{SeriesRow, SuiteError};
use arrow_array::{ArrayRef, Float64Array, RecordBatch, UInt64Array};
use arrow_schema::{DataType, Field, Schema};
use std::path::Path;
use std::sync::Arc;

fn u64col(rows: &[SeriesRow], f: fn(&SeriesRow) -> u64) -> ArrayRef {
    Arc::new(UInt64Array::from(rows.iter().map(f).collect::<Vec<_>>()))
}
fn f64col(rows: &[SeriesRow], f: fn(&SeriesRow) -> f64) -> ArrayRef {
    Arc::new(Float64Array::from(rows.iter().map(f).collect::<Vec<_>>()))
}

/// Write `rows` to `dir/<phase>.parquet` (creating `dir`).
pub fn write_parquet(dir: &Path, phase: &str, rows: &[SeriesRow]) -> Result<(), SuiteError> {
    let path = dir.join(format!("{phase}.parquet"));
    let io = |what: &str, e: std::io::Error| SuiteError::Io {
        context: format!("{what} {}", path.display()),
        source: e,
    };
    std::fs::create_dir_all(dir).map_err(|e| io("creating the directory of", e))?;
    type U = fn(&SeriesRow) -> u64;
    type F = fn(&SeriesRow) -> f64;
    let ucols: [(&str, U); 11] = [
        ("t_ms", |r| r.t_ms),
        ("window_ns", |r| r.s.window_ns),
        ("read_ios", |r| r.s.read_ios),
        ("write_ios", |r| r.s.write_ios),
        ("trim_ios", |r| r.s.trim_ios),
        ("flush_ios", |r| r.s.flush_ios),
        ("read_bytes", |r| r.s.read_bytes),
        ("write_bytes", |r| r.s.write_bytes),
        ("trim_bytes", |r| r.s.trim_bytes),
        ("errors", |r| r.s.errors),
        ("busy_ns", |r| r.s.busy_ns),
    ];
    let fcols: [(&str, F); 8] = [
        ("iops", |r| r.s.iops()),
        ("mb_per_s", |r| r.s.mb_per_s()),
        ("read_mb_per_s", |r| r.s.read_mb_per_s()),
        ("write_mb_per_s", |r| r.s.write_mb_per_s()),
        ("latency_us_mean", |r| r.s.latency_us_mean),
        ("latency_us_max", |r| r.s.latency_us_max),
        ("read_latency_us_mean", |r| r.s.read_latency_us_mean),
        ("write_latency_us_mean", |r| r.s.write_latency_us_mean),
    ];
    let mut fields = Vec::new();
    let mut cols = Vec::new();
    for (n, f) in ucols {
        fields.push(Field::new(n, DataType::UInt64, false));
        cols.push(u64col(rows, f));
    }
    for (n, f) in fcols {
        fields.push(Field::new(n, DataType::Float64, false));
        cols.push(f64col(rows, f));
    }
    fields.push(Field::new("qd_mean", DataType::Float64, false));
    cols.push(f64col(rows, |r| r.s.qd_mean));
    let schema = Arc::new(Schema::new(fields));
    let batch = RecordBatch::try_new(schema.clone(), cols).map_err(|e| {
        SuiteError::Invalid(format!("{}: building the series: {e}", path.display()))
    })?;
    let tmp = path.with_extension("parquet.tmp");
    let file = std::fs::File::create(&tmp).map_err(|e| io("creating", e))?;
    let mut w = parquet::arrow::ArrowWriter::try_new(file, schema, None)
        .map_err(|e| SuiteError::Invalid(format!("{}: {e}", path.display())))?;
    w.write(&batch)
        .map_err(|e| SuiteError::Invalid(format!("{}: {e}", path.display())))?;
    w.close()
        .map_err(|e| SuiteError::Invalid(format!("{}: {e}", path.display())))?;
    std::fs::rename(&tmp, &path).map_err(|e| io("renaming into place", e))?;
    Ok(())
}

/// Read the IOPS column back (tests, reports without the report crate).
pub fn read_iops(path: &Path) -> Result<Vec<f64>, SuiteError> {
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let bad = |m: String| SuiteError::Invalid(format!("{}: {m}", path.display()));
    let f = std::fs::File::open(path).map_err(|e| SuiteError::Io {
        context: format!("opening {}", path.display()),
        source: e,
    })?;
    let reader = ParquetRecordBatchReaderBuilder::try_new(f)
        .map_err(|e| bad(e.to_string()))?
        .build()
        .map_err(|e| bad(e.to_string()))?;
    let mut out = Vec::new();
    for b in reader {
        let b = b.map_err(|e| bad(e.to_string()))?;
        let col = b
            .column_by_name("iops")
            .ok_or_else(|| bad("no iops column".into()))?;
        let a = col
            .as_any()
            .downcast_ref::<Float64Array>()
            .ok_or_else(|| bad("iops is not a float column".into()))?;
        out.extend(a.values().iter().copied());
    }
    Ok(out)
}
