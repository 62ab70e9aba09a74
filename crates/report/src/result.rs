//! `DIR/result.json`: the exporters that turn the one result type
//! ([`storbench_results::RunResult`], schema in docs/results.md) into bytes, and its
//! typed reading.
//!
//! The suite fills a [`RunResult`] in with its procedure's own configuration and
//! summary types, defined with every other result type in `storbench-results`, so the
//! report reads the writer's own types. An [`Exporter`] turns the result into the
//! bytes of one file ([`JsonExporter`]: result.json); the writer stores them with
//! `storbench_trace::atomic`.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
pub use storbench_results::{RunResult, RESULT_FILE, RESULT_FORMAT, SCHEMA_VERSION};

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

/// An output format: turns a result into the bytes of one file (hyperfine's pattern;
/// `&dyn Exporter<X>` holds any of them). The caller writes the bytes where it wants,
/// atomically.
pub trait Exporter<C, S> {
    /// The file's name inside a result directory.
    fn file_name(&self) -> &'static str;
    fn serialize(&self, result: &RunResult<C, S>) -> Result<Vec<u8>, ReportError>;
}

/// result.json: compact JSON and a newline (`jq .` indents it; histograms one number a
/// line made a 2 s run's file 180 KB).
pub struct JsonExporter;

impl<C: Serialize, S: Serialize> Exporter<C, S> for JsonExporter {
    fn file_name(&self) -> &'static str {
        RESULT_FILE
    }

    fn serialize(&self, result: &RunResult<C, S>) -> Result<Vec<u8>, ReportError> {
        let mut json = serde_json::to_vec(result)
            .map_err(|e| ReportError::json(Path::new(RESULT_FILE), &e))?;
        json.push(b'\n');
        Ok(json)
    }
}

/// Read `DIR/result.json` as the writer's types, a procedure's configuration `C` and
/// summary `S`. A newer schema is refused with a hint; a field of the wrong type names
/// the line and column.
pub fn read_result<C: DeserializeOwned, S: DeserializeOwned>(
    dir: &Path,
) -> Result<RunResult<C, S>, ReportError> {
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
