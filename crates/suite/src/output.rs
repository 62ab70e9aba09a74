//! Result files of a procedure run, written by storbench-report's writers (one
//! implementation of each format):
//! - `result.json`: the whole result, a section per phase: the bytes of
//!   `storbench_report::JsonExporter`, written atomically;
//! - `<phase>_iops.1.log`, `<phase>_bw.1.log`, `<phase>_lat.1.log`: fio-style CSV logs
//!   (`time_ms,value,ddir,bs,offset`; see `storbench_report::csvlog`), so fio's
//!   plotting tools read them; `time_ms` is the end of each window;
//! - `series.parquet`: every phase's per-second series in one file (a `phase` column);
//! - `series/<phase>.parquet`: the same per phase with each window's start (`t_ms`)
//!   first. Windows are whole seconds of the phase (`t_s` is `t_ms / 1000`); only a
//!   phase's last window may be shorter.

use crate::phase::{Runner, SeriesRow, SuiteError};
use crate::procedure::{SuiteParts, SuiteResult};
use std::path::Path;
use storbench_metrics::SecondSample;
use storbench_report::Exporter;

pub use storbench_report::RESULT_FILE;

/// Files and directories a run writes into its directory, besides `state.json` and
/// its lock: what `--replace` removes.
const RUN_FILES: &[&str] = &[
    RESULT_FILE,
    storbench_report::SERIES_FILE,
    storbench_report::IOS_FILE,
    crate::state::STATE_FILE,
];
const RUN_DIRS: &[&str] = &[SERIES_DIR, crate::state::JOURNAL_DIR];

/// The procedure whose results `dir` holds without a run state (results of an older
/// `run` or `replay`), if any.
pub fn results_in(dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join(RESULT_FILE)).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    Some(
        v.get("procedure")
            .and_then(|p| p.as_str())
            .unwrap_or("results of another run")
            .to_owned(),
    )
}

/// Remove an earlier run's state and result files from `dir` (`--replace`): the
/// files a run writes, by name, and nothing else the directory holds.
pub fn remove_run(dir: &Path) -> std::io::Result<()> {
    let gone = |r: std::io::Result<()>| match r {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    };
    for f in RUN_FILES {
        gone(std::fs::remove_file(dir.join(f)))?;
    }
    for d in RUN_DIRS {
        gone(std::fs::remove_dir_all(dir.join(d)))?;
    }
    // fio-style logs: PHASE_{iops,bw,lat}.1.log
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let name = e.file_name();
        let name = name.to_string_lossy();
        if ["_iops.1.log", "_bw.1.log", "_lat.1.log"]
            .iter()
            .any(|s| name.ends_with(s))
        {
            gone(std::fs::remove_file(e.path()))?;
        }
    }
    Ok(())
}

/// Directory of the per-phase series files.
pub const SERIES_DIR: &str = "series";

/// A report error as the suite's: I/O failures keep their source (a full disk under
/// series.parquet or ios.parquet is a failure, exit 1, not bad input: issue 30), the
/// rest are invalid input or output.
pub(crate) fn report_err(e: storbench_report::ReportError) -> SuiteError {
    use storbench_report::ReportError;
    match e {
        ReportError::Io { path, op, source } => SuiteError::Io {
            context: format!("{op} {}", path.display()),
            source,
        },
        ReportError::Trace(t) => match storbench_report::io_cause(&t) {
            Some(source) => SuiteError::Io {
                context: format!("writing {}", t.path().display()),
                source,
            },
            None => SuiteError::Invalid(t.to_string()),
        },
        e => SuiteError::Invalid(e.to_string()),
    }
}

/// The samples (`t_s` the whole seconds of the window's start) and each window's
/// start in ms.
fn split(rows: &[SeriesRow]) -> (Vec<SecondSample>, Vec<u64>) {
    rows.iter()
        .map(|r| {
            (
                SecondSample {
                    t_s: r.t_ms / 1000,
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
        if !rec.work.has_io() {
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
    for exporter in EXPORTERS {
        write_export(dir, *exporter, result)?;
    }
    Ok(())
}

/// The formats a result is exported in, one file each.
const EXPORTERS: &[&dyn Exporter<SuiteParts>] = &[&storbench_report::JsonExporter];

/// Write the bytes of one exporter into its file in `dir`, atomically.
fn write_export(
    dir: &Path,
    exporter: &dyn Exporter<SuiteParts>,
    result: &SuiteResult,
) -> Result<(), SuiteError> {
    let bytes = exporter.serialize(result).map_err(report_err)?;
    let path = dir.join(exporter.file_name());
    storbench_trace::atomic::write_atomic(&path, &bytes).map_err(|e| SuiteError::Io {
        context: format!("writing {} (atomically)", path.display()),
        source: e,
    })
}
