//! `DIR/result.json`: the result of one run (schema in docs/results.md).

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

impl ReportError {
    pub(crate) fn io(path: &Path, op: &'static str, source: std::io::Error) -> Self {
        ReportError::Io {
            path: path.to_path_buf(),
            op,
            source,
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

/// The result of one run: one file per result directory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    pub schema_version: u32,
    pub tool_version: String,
    pub command_line: Vec<String>,
    /// `replay`, `run`, `consistency`, `season`, `trim-check`, `bench`, ...
    pub procedure: String,
    pub target: TargetInfo,
    /// Characterize summary of the trace used, if any.
    #[serde(default)]
    pub trace: Option<serde_json::Value>,
    /// Options in effect (after defaults), as the user would type them.
    #[serde(default)]
    pub options: BTreeMap<String, String>,
    /// Phases in the order they ran.
    pub phases: Vec<PhaseResult>,
    /// Drive health before/after (smartctl), or why it could not be read.
    #[serde(default)]
    pub health: Option<serde_json::Value>,
    /// false when the run was interrupted (Ctrl-C, SIGTERM, kill, error).
    pub complete: bool,
    #[serde(default)]
    pub notes: Vec<String>,
}

/// One phase of a run (e.g. `precondition`, `random-write`, `replay`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhaseResult {
    pub name: String,
    pub metrics: PhaseMetrics,
    /// Named scores (e.g. `iops_avg_last_400s`), NaN and infinities not allowed.
    #[serde(default)]
    pub scores: BTreeMap<String, f64>,
    /// Anything else about the phase (steady state, replay fidelity, folding counts, ...).
    #[serde(default)]
    pub info: BTreeMap<String, serde_json::Value>,
}

impl RunResult {
    /// A result with the current schema and tool version and no phases yet.
    pub fn new(procedure: &str, target: TargetInfo, command_line: Vec<String>) -> RunResult {
        RunResult {
            schema_version: SCHEMA_VERSION,
            tool_version: env!("CARGO_PKG_VERSION").to_owned(),
            command_line,
            procedure: procedure.to_owned(),
            target,
            trace: None,
            options: BTreeMap::new(),
            phases: Vec::new(),
            health: None,
            complete: false,
            notes: Vec::new(),
        }
    }

    pub fn phase(&self, name: &str) -> Option<&PhaseResult> {
        self.phases.iter().find(|p| p.name == name)
    }
}

/// Write `bytes` to `path` atomically (`storbench_trace::atomic`, the one helper every
/// output goes through). A reader sees the old file or the new one, never a torn one.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ReportError> {
    storbench_trace::atomic::write_atomic(path, bytes)
        .map_err(|e| ReportError::io(path, "write (atomically)", e))
}

fn check(dir: &Path, r: &RunResult) -> Result<(), ReportError> {
    let path = dir.join(RESULT_FILE);
    let invalid = |message: String, hint| {
        Err(ReportError::Invalid {
            path: path.clone(),
            message,
            hint,
        })
    };
    let mut names = std::collections::BTreeSet::new();
    for p in &r.phases {
        if !names.insert(p.name.as_str()) {
            return invalid(
                format!("two phases are named {:?}", p.name),
                "phase names key the per-second series; give each phase its own name",
            );
        }
        if let Some((k, v)) = p.scores.iter().find(|(_, v)| !v.is_finite()) {
            return invalid(
                format!("phase {:?}: score {k} = {v} is not finite", p.name),
                "leave a score out (or put a note in `info`) when it is undefined",
            );
        }
    }
    Ok(())
}

/// Write `DIR/result.json` atomically (creating DIR), and the per-second series of
/// every phase that has one into `DIR/series.parquet` (phases absent or with an empty
/// series keep the rows already in the file, so checkpointed series are not lost).
pub fn write_result(dir: &Path, r: &RunResult) -> Result<(), ReportError> {
    check(dir, r)?;
    std::fs::create_dir_all(dir).map_err(|e| ReportError::io(dir, "create directory", e))?;
    let updates: Vec<(&str, &[storbench_metrics::SecondSample])> = r
        .phases
        .iter()
        .filter(|p| !p.metrics.series.is_empty())
        .map(|p| (p.name.as_str(), p.metrics.series.as_slice()))
        .collect();
    if !updates.is_empty() {
        crate::series::write_series_all(dir, &updates)?;
    }
    // Compact: the per-second series live in series.parquet; `jq .` shows it indented.
    let mut json =
        serde_json::to_vec(r).map_err(|e| ReportError::json(&dir.join(RESULT_FILE), &e))?;
    json.push(b'\n');
    write_atomic(&dir.join(RESULT_FILE), &json)
}

/// Read `DIR/result.json`, and reattach each phase's per-second series from
/// `DIR/series.parquet` when that file exists.
pub fn read_result(dir: &Path) -> Result<RunResult, ReportError> {
    let path = dir.join(RESULT_FILE);
    let text = std::fs::read_to_string(&path).map_err(|e| ReportError::io(&path, "read", e))?;
    let mut r: RunResult = serde_json::from_str(&text).map_err(|e| ReportError::json(&path, &e))?;
    if r.schema_version > SCHEMA_VERSION {
        return Err(ReportError::Invalid {
            path,
            message: format!(
                "schema_version {} is newer than this storbench understands ({SCHEMA_VERSION})",
                r.schema_version
            ),
            hint: "read it with the storbench version that wrote it (tool_version) or newer",
        });
    }
    if dir.join(crate::series::SERIES_FILE).exists() {
        let mut all = crate::series::read_series(dir)?;
        for p in &mut r.phases {
            if let Some(i) = all.iter().position(|(name, _)| *name == p.name) {
                p.metrics.series = all.swap_remove(i).1;
            }
        }
    }
    Ok(r)
}
