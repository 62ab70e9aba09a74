//! `DIR/result.json`: the result of one run (schema in docs/results.md), the one
//! result type ([`RunResult`]) and the exporters that turn it into bytes.
//!
//! The suite fills a [`RunResult`] in; its own typed parts (what a phase records, drive
//! health, the replayed trace) are named through [`ResultParts`], and each procedure's
//! summary goes in as its serialized value. An [`Exporter`] turns the result into the
//! bytes of one file ([`JsonExporter`]: result.json); the writer stores them with
//! `storbench_trace::atomic`.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use storbench_core::TargetInfo;
use storbench_metrics::PhaseMetrics;

/// Version of the result.json layout. Bump when a field changes meaning or is removed;
/// adding a field with a default does not need a bump.
pub const SCHEMA_VERSION: u32 = 2;
/// File name of the result inside a result directory.
pub const RESULT_FILE: &str = "result.json";
/// result.json's `format`.
pub const RESULT_FORMAT: &str = "storbench-suite-result/1";

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("{path}: {op}: {source}")]
    Io {
        path: PathBuf,
        op: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: line {line}, column {column}: {message}")]
    Json {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{path}: {message}")]
    Parquet { path: PathBuf, message: String },
    #[error("{path}: field `{field}`: {message}")]
    Field {
        path: PathBuf,
        field: String,
        message: String,
    },
    #[error("{path}: {message}\n  hint: {hint}")]
    Invalid {
        path: PathBuf,
        message: String,
        hint: &'static str,
    },
    #[error(transparent)]
    Trace(#[from] storbench_trace::TraceError),
}

/// The I/O failure at the bottom of an error's chain (a Parquet writer's
/// `External(io::Error)`, an Arrow `IoError`), as an owned error of the same kind.
pub fn io_cause(e: &(dyn std::error::Error + 'static)) -> Option<std::io::Error> {
    let mut cur = Some(e);
    while let Some(c) = cur {
        if let Some(io) = c.downcast_ref::<std::io::Error>() {
            return Some(match io.raw_os_error() {
                Some(code) => std::io::Error::from_raw_os_error(code),
                None => std::io::Error::new(io.kind(), io.to_string()),
            });
        }
        cur = c.source();
    }
    None
}

impl ReportError {
    pub(crate) fn io(path: &Path, op: &'static str, source: std::io::Error) -> Self {
        ReportError::Io {
            path: path.to_path_buf(),
            op,
            source,
        }
    }

    /// A Parquet or Arrow error on `path`: an I/O failure under it (a full disk under
    /// the writer) stays an I/O error, so the command fails as for any I/O (exit 1),
    /// not as for bad input.
    pub(crate) fn parquet(path: &Path, e: impl std::error::Error + 'static) -> Self {
        match io_cause(&e) {
            Some(source) => ReportError::io(path, "parquet", source),
            None => ReportError::Parquet {
                path: path.to_path_buf(),
                message: e.to_string(),
            },
        }
    }

    /// A JSON (de)serialization error, located by line and column where serde knows them.
    pub(crate) fn json(path: &Path, e: &serde_json::Error) -> Self {
        ReportError::Json {
            path: path.to_path_buf(),
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        }
    }
}

/// The writer's own types for the parts of a result this crate does not define: what a
/// phase records, a drive health snapshot and its change over the run, the replayed
/// trace. The suite names its types (`storbench_suite::SuiteParts`), so a field it
/// renames is a compile error in the one place the result is assembled.
pub trait ResultParts {
    type Phase: PhasePart + Serialize + DeserializeOwned;
    type Health: Serialize + DeserializeOwned;
    type HealthDelta: Serialize + DeserializeOwned;
    type Trace: Serialize + DeserializeOwned;
}

/// What every phase record has, whoever wrote it.
pub trait PhasePart {
    fn name(&self) -> &str;
    fn metrics(&self) -> &PhaseMetrics;
    /// The first I/O that failed (`op at offset O length L: error`), if one did.
    fn first_error(&self) -> Option<&str>;
}

/// The result of one run (`DIR/result.json`): one file per result directory. Field by
/// field in docs/results.md; the per-second series are in series.parquet, not here.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunResult<X: ResultParts> {
    /// [`RESULT_FORMAT`].
    pub format: String,
    /// [`SCHEMA_VERSION`] when written; readers refuse a newer one.
    pub schema_version: u32,
    pub command_line: Vec<String>,
    /// The configuration as `name = value` text.
    pub options: BTreeMap<String, String>,
    /// false when the run stopped early (a signal, or a failed I/O in a procedure that
    /// stops on one).
    pub complete: bool,
    pub tool_version: String,
    /// `replay`, `run`, `consistency`, `season`, `trim-check`, `bench`.
    pub procedure: String,
    pub target: TargetInfo,
    /// The configuration the run was started with (a resume uses it).
    pub config: serde_json::Value,
    /// Phases in the order they ran; names are unique.
    pub phases: Vec<X::Phase>,
    /// The procedure's own figures (its typed summary, serialized); null in an
    /// incomplete result.
    pub summary: serde_json::Value,
    /// The replayed trace (`replay`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<X::Trace>,
    pub health_before: X::Health,
    pub health_after: X::Health,
    pub health_delta: X::HealthDelta,
    /// Times the run was interrupted and resumed.
    pub resumes: u32,
    pub notes: Vec<String>,
    pub created_unix_ms: u64,
    pub finished_unix_ms: u64,
}

impl<X: ResultParts> RunResult<X> {
    pub fn phase(&self, name: &str) -> Option<&X::Phase> {
        self.phases.iter().find(|p| p.name() == name)
    }

    /// The first phase with failed I/Os: (phase, failures, the first one).
    pub fn failed_ios(&self) -> Option<(&str, u64, &str)> {
        self.phases
            .iter()
            .find(|p| p.metrics().errors > 0)
            .map(|p| {
                (
                    p.name(),
                    p.metrics().errors,
                    p.first_error().unwrap_or("(no detail)"),
                )
            })
    }
}

/// An output format: turns a result into the bytes of one file (hyperfine's pattern;
/// `&dyn Exporter<X>` holds any of them). The caller writes the bytes where it wants,
/// atomically.
pub trait Exporter<X: ResultParts> {
    /// The file's name inside a result directory.
    fn file_name(&self) -> &'static str;
    fn serialize(&self, result: &RunResult<X>) -> Result<Vec<u8>, ReportError>;
}

/// result.json: compact JSON and a newline (`jq .` indents it; histograms one number a
/// line made a 2 s run's file 180 KB).
pub struct JsonExporter;

impl<X: ResultParts> Exporter<X> for JsonExporter {
    fn file_name(&self) -> &'static str {
        RESULT_FILE
    }

    fn serialize(&self, result: &RunResult<X>) -> Result<Vec<u8>, ReportError> {
        let mut json = serde_json::to_vec(result)
            .map_err(|e| ReportError::json(Path::new(RESULT_FILE), &e))?;
        json.push(b'\n');
        Ok(json)
    }
}

/// Read `DIR/result.json` as the writer's types. A newer schema is refused with a
/// hint; a field of the wrong type names the line and column.
pub fn read_result<X: ResultParts>(dir: &Path) -> Result<RunResult<X>, ReportError> {
    let path = dir.join(RESULT_FILE);
    let text = std::fs::read_to_string(&path).map_err(|e| ReportError::io(&path, "read", e))?;
    #[derive(Deserialize)]
    struct Version {
        schema_version: u32,
    }
    if let Ok(v) = serde_json::from_str::<Version>(&text) {
        if v.schema_version > SCHEMA_VERSION {
            return Err(ReportError::Invalid {
                path,
                message: format!(
                    "schema_version {} is newer than this storbench understands ({SCHEMA_VERSION})",
                    v.schema_version
                ),
                hint: "read it with the storbench version that wrote it (tool_version) or newer",
            });
        }
    }
    serde_json::from_str(&text).map_err(|e| ReportError::json(&path, &e))
}
