//! Result files of a procedure run, written by storbench-report's writers (one
//! implementation of each format):
//! - `result.json`: the whole result, a section per phase (written atomically);
//! - `<phase>_iops.1.log`, `<phase>_bw.1.log`, `<phase>_lat.1.log`: fio-style CSV logs
//!   (`time_ms,value,ddir,bs,offset`; see `storbench_report::csvlog`), so fio's
//!   plotting tools read them; `time_ms` is the end of each window, exact across chunks;
//! - `series.parquet`: every phase's per-second series in one file (a `phase` column);
//! - `series/<phase>.parquet`: the same per phase with each window's exact start
//!   (`t_ms`) first, as a run checkpointed in chunks has a short window at each chunk end.

use crate::phase::{Runner, SeriesRow, SuiteError};
use crate::procedure::SuiteResult;
use std::path::Path;
use storbench_metrics::SecondSample;

pub const RESULT_FILE: &str = "result.json";

/// Directory of the per-phase series files.
pub const SERIES_DIR: &str = "series";

fn report_err(e: storbench_report::ReportError) -> SuiteError {
    SuiteError::Invalid(e.to_string())
}

/// The samples (numbered 0, 1, 2, ... as series.parquet wants them) and each window's
/// exact start in ms.
fn split(rows: &[SeriesRow]) -> (Vec<SecondSample>, Vec<u64>) {
    rows.iter()
        .enumerate()
        .map(|(i, r)| {
            (
                SecondSample {
                    t_s: i as u64,
                    ..r.s
                },
                r.t_ms,
            )
        })
        .unzip()
}

/// Write every result file of a finished run.
pub fn write_all(dir: &Path, result: &SuiteResult, runner: &Runner<'_>) -> Result<(), SuiteError> {
    let mut all: Vec<(String, Vec<SecondSample>)> = Vec::new();
    for rec in &result.phases {
        if rec.purge.is_some() || matches!(rec.work, crate::phase::Work::Idle { .. }) {
            continue;
        }
        let rows = runner.series(&rec.name)?;
        let (series, start_ms) = split(&rows);
        storbench_report::write_fio_csv_logs_timed(dir, &rec.name, &series, &start_ms)
            .map_err(report_err)?;
        storbench_report::write_phase_series(
            &dir.join(SERIES_DIR).join(format!("{}.parquet", rec.name)),
            &series,
            &start_ms,
        )
        .map_err(report_err)?;
        all.push((rec.name.clone(), series));
    }
    let updates: Vec<(&str, &[SecondSample])> = all
        .iter()
        .map(|(n, s)| (n.as_str(), s.as_slice()))
        .collect();
    if !updates.is_empty() {
        storbench_report::write_series_all(dir, &updates).map_err(report_err)?;
    }
    crate::state::write_json_atomic(&dir.join(RESULT_FILE), result)?;
    Ok(())
}
