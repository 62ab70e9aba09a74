//! Result files of a procedure run:
//! - `result.json`: the whole result, a section per phase (written atomically);
//! - `<phase>_iops.1.log`, `<phase>_bw.1.log`, `<phase>_lat.1.log`: fio-style CSV logs
//!   (`time_ms,value,ddir,bs,offset`; ddir 0 read, 1 write, 2 trim; bw in KiB/s and
//!   lat in ns as fio writes them; time is the end of each 1-second window), so fio's
//!   plotting tools read them;
//! - `series/<phase>.parquet`: the per-second series (see [`crate::series`]).

use crate::phase::{Runner, SeriesRow, SuiteError};
use crate::procedure::SuiteResult;
use std::io::Write;
use std::path::Path;

pub const RESULT_FILE: &str = "result.json";

fn io_err(path: &Path, what: &str) -> impl FnOnce(std::io::Error) -> SuiteError {
    let context = format!("{what} {}", path.display());
    move |source| SuiteError::Io { context, source }
}

/// Write the fio-style logs of one phase's series into `dir`.
pub fn write_fio_logs(dir: &Path, phase: &str, rows: &[SeriesRow]) -> Result<(), SuiteError> {
    let has = |f: fn(&SeriesRow) -> u64| rows.iter().any(|r| f(r) > 0);
    let dirs: Vec<u8> = [
        (0u8, has(|r| r.s.read_ios)),
        (1, has(|r| r.s.write_ios)),
        (2, has(|r| r.s.trim_ios)),
    ]
    .iter()
    .filter(|x| x.1)
    .map(|x| x.0)
    .collect();
    for (kind, value) in [("iops", 0u8), ("bw", 1), ("lat", 2)] {
        let path = dir.join(format!("{phase}_{kind}.1.log"));
        let f = std::fs::File::create(&path).map_err(io_err(&path, "creating"))?;
        let mut w = std::io::BufWriter::new(f);
        for r in rows {
            let secs = r.s.window_ns as f64 / 1e9;
            if secs <= 0.0 {
                continue;
            }
            let end_ms = r.t_ms + r.s.window_ns / 1_000_000;
            for &d in &dirs {
                let (ios, bytes, lat_us) = match d {
                    0 => (r.s.read_ios, r.s.read_bytes, r.s.read_latency_us_mean),
                    1 => (r.s.write_ios, r.s.write_bytes, r.s.write_latency_us_mean),
                    _ => (r.s.trim_ios, r.s.trim_bytes, 0.0),
                };
                let v = match value {
                    0 => (ios as f64 / secs).round() as u64,
                    1 => (bytes as f64 / 1024.0 / secs).round() as u64,
                    _ => (lat_us * 1000.0).round() as u64,
                };
                writeln!(w, "{end_ms}, {v}, {d}, 0, 0").map_err(io_err(&path, "writing"))?;
            }
        }
        w.flush().map_err(io_err(&path, "writing"))?;
    }
    Ok(())
}

/// Write every result file of a finished run.
pub fn write_all(dir: &Path, result: &SuiteResult, runner: &Runner<'_>) -> Result<(), SuiteError> {
    let mut all: Vec<(String, Vec<storbench_metrics::SecondSample>)> = Vec::new();
    for rec in &result.phases {
        if rec.purge.is_some() || matches!(rec.work, crate::phase::Work::Idle { .. }) {
            continue;
        }
        let rows = runner.series(&rec.name)?;
        write_fio_logs(dir, &rec.name, &rows)?;
        crate::series::write_parquet(&dir.join("series"), &rec.name, &rows)?;
        all.push((
            rec.name.clone(),
            // That format numbers windows 0, 1, 2, ...; a run checkpointed in chunks
            // has a short window at each chunk end, so the exact start of each window
            // is in `series/<phase>.parquet` (`t_ms`).
            rows.iter()
                .enumerate()
                .map(|(i, r)| storbench_metrics::SecondSample {
                    t_s: i as u64,
                    ..r.s
                })
                .collect(),
        ));
    }
    // The report crate's single-file series (`series.parquet`, a `phase` column), so
    // tools reading results as `storbench_report::RunResult` get the series too.
    let updates: Vec<(&str, &[storbench_metrics::SecondSample])> = all
        .iter()
        .map(|(n, s)| (n.as_str(), s.as_slice()))
        .collect();
    if !updates.is_empty() {
        storbench_report::write_series_all(dir, &updates)
            .map_err(|e| SuiteError::Invalid(e.to_string()))?;
    }
    crate::state::write_json_atomic(&dir.join(RESULT_FILE), result)?;
    Ok(())
}
