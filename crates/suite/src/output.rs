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
use crate::procedure::{Procedure, SuiteResult};
use storbench_metrics::SecondSample;
use storbench_report::Exporter;
use storbench_trace::atomic::OutputDir;

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

/// What a run of these phases writes in its directory: its files, and the files of
/// each of its subdirectories.
pub struct RunNames {
    pub files: Vec<String>,
    pub dirs: Vec<(&'static str, Vec<String>)>,
}

/// The names a run of `phases` writes (checked for links before it writes any).
pub fn run_names(phases: &[&str]) -> RunNames {
    let mut files: Vec<String> = RUN_FILES.iter().map(|f| f.to_string()).collect();
    for p in phases {
        files.extend(storbench_report::fio_log_names(p));
    }
    RunNames {
        files,
        dirs: vec![
            (
                SERIES_DIR,
                phases.iter().map(|p| format!("{p}.parquet")).collect(),
            ),
            (
                crate::state::JOURNAL_DIR,
                phases
                    .iter()
                    .map(|p| crate::state::RunDir::journal_name(p))
                    .collect(),
            ),
        ],
    }
}

/// The procedure whose results `dir` holds without a run state (results of an older
/// `run` or `replay`), if any.
pub fn results_in(dir: &OutputDir) -> Option<String> {
    use std::io::Read;
    let mut text = String::new();
    dir.read(RESULT_FILE)
        .ok()??
        .read_to_string(&mut text)
        .ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    Some(
        v.get("procedure")
            .and_then(|p| p.as_str())
            .unwrap_or("results of another run")
            .to_owned(),
    )
}

/// Remove an earlier run's state and result files from `dir` (`--replace`): the
/// files a run writes, by name, and nothing else the directory holds. A link there is
/// removed, never followed.
pub fn remove_run(dir: &OutputDir) -> std::io::Result<()> {
    for f in RUN_FILES {
        dir.remove_file(f)?;
    }
    for d in RUN_DIRS {
        dir.remove_dir_all(d)?;
    }
    // fio-style logs: PHASE_{iops,bw,lat}.1.log
    for name in dir.names()? {
        if ["_iops.1.log", "_bw.1.log", "_lat.1.log"]
            .iter()
            .any(|s| name.ends_with(s))
        {
            dir.remove_file(&name)?;
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
pub fn write_all<P: Procedure>(
    dir: &OutputDir,
    result: &SuiteResult<P>,
    runner: &Runner<'_>,
) -> Result<(), SuiteError> {
    let mut all: Vec<(String, Vec<SecondSample>)> = Vec::new();
    for rec in &result.phases {
        if !rec.work.has_io() {
            continue;
        }
        let rows = runner.series(&rec.name)?;
        let (series, start_ms) = split(&rows);
        storbench_report::write_fio_csv_logs_timed(dir, &rec.name, &series, &start_ms)
            .map_err(report_err)?;
        let series_dir = dir.subdir(SERIES_DIR).map_err(|e| SuiteError::Io {
            context: format!("creating {}", dir.join(SERIES_DIR).display()),
            source: e,
        })?;
        storbench_report::write_phase_series(
            &series_dir,
            &format!("{}.parquet", rec.name),
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
    // The formats a result is exported in, one file each.
    let exporters: [&dyn Exporter<P, P::Summary>; 1] = [&storbench_report::JsonExporter];
    for exporter in exporters {
        write_export(dir, exporter, result)?;
    }
    Ok(())
}

/// Write the bytes of one exporter into its file in `dir`, atomically.
fn write_export<C, S>(
    dir: &OutputDir,
    exporter: &dyn Exporter<C, S>,
    result: &storbench_results::RunResult<C, S>,
) -> Result<(), SuiteError> {
    let bytes = exporter.serialize(result).map_err(report_err)?;
    let path = dir.join(exporter.file_name());
    dir.write(exporter.file_name(), &bytes)
        .map_err(|e| SuiteError::Io {
            context: format!("writing {} (atomically)", path.display()),
            source: e,
        })
}
