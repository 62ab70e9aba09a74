//! storbench-report: result files (JSON, Parquet and CSV series) and the HTML report.
//!
//! Only this crate knows the on-disk formats of results:
//! - [`result`]: `DIR/result.json`: [`RunResult`], the one result type, which the suite
//!   fills in, and the [`Exporter`]s that turn it into bytes ([`JsonExporter`]);
//! - [`series`]: `DIR/series.parquet` (per-second series of every phase, one file with a
//!   `phase` column) and `DIR/ios.parquet` ([`IoLogWriter`], every completed I/O, in
//!   the trace format so a replay log is itself a trace);
//! - [`csvlog`]: fio-style logs (`time_ms, value, ddir, bs, offset`) for fio's plotting tools;
//! - `html`: the self-contained HTML report;
//! - [`sweep`]: a sweep's dataset (`DIR/sweep.parquet`) and the report's sweep section.

pub mod compare;
pub mod csvlog;
pub mod db;
pub mod html;
pub mod images;
pub mod read;
pub mod result;
pub mod series;
pub mod sweep;

pub use csvlog::{fio_log_names, write_fio_csv_logs, write_fio_csv_logs_timed};
pub use result::{
    io_cause, read_result, Exporter, JsonExporter, ReportError, RunResult, RESULT_FILE,
    RESULT_FORMAT, SCHEMA_VERSION,
};
pub use series::{
    read_series, write_phase_series, write_series, write_series_all, IoLogWriter, IOS_FILE,
    SERIES_FILE,
};
