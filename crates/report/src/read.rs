//! Reading any result.json for the HTML report and `compare`: the writer's own types
//! (`storbench-results`), chosen by the file's `procedure` ([`AnyResult`]), so a field
//! the writer renames or retypes fails here, naming the file, line and column, instead
//! of turning silently into zero.
//!
//! Every layout storbench has written loads: the current one (schema 3); schema 2, whose
//! renamed fields the types read under their old names (`serde(alias)`, listed in
//! docs/results.md); schema 1, whose fidelity keys put the unit first (the same way);
//! and the layout `run` and `replay` wrote before `RunResult` ([`Legacy`]: `options`
//! only, one nested `health`, `scores` and `info` per phase). A procedure this build
//! does not know (newer, or a test's) is read for what every result has
//! ([`AnyResult::Other`]).

use crate::result::SCHEMA_VERSION;
use crate::ReportError;
use serde::de::IgnoredAny;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;
use storbench_core::TargetInfo;
use storbench_metrics::PhaseMetrics;
use storbench_results::bench::{BenchConfig, BenchSummary};
use storbench_results::consistency::{ConsistencyConfig, ConsistencySummary};
use storbench_results::replay::{ReplayConfig, ReplaySummary};
use storbench_results::run::{RunConfig, RunSummary};
use storbench_results::season::{SeasonConfig, SeasonSummary};
use storbench_results::trimcheck::{TrimCheckConfig, TrimTable};
use storbench_results::twin::{Measurement, TwinMeasureConfig};
use storbench_results::{HealthDelta, HealthSnapshot, RunResult};

/// A result.json as its writer typed it.
#[derive(Debug)]
pub enum AnyResult {
    Run(Box<RunResult<RunConfig, RunSummary>>),
    Replay(Box<RunResult<ReplayConfig, ReplaySummary>>),
    Consistency(Box<RunResult<ConsistencyConfig, ConsistencySummary>>),
    Season(Box<RunResult<SeasonConfig, SeasonSummary>>),
    TrimCheck(Box<RunResult<TrimCheckConfig, TrimTable>>),
    Bench(Box<RunResult<BenchConfig, BenchSummary>>),
    /// `storbench twin measure`: the measurement a twin is fitted to.
    TwinMeasure(Box<RunResult<TwinMeasureConfig, Measurement>>),
    /// A procedure this build does not know: what every result has, and its summary
    /// as JSON (its charts declared as data read numbers from it).
    Other(Box<RunResult<IgnoredAny, serde_json::Value>>),
    /// The layout before `RunResult`.
    Legacy(Box<Legacy>),
}

/// What is read first: the layout's version and kind.
#[derive(Deserialize)]
struct Header {
    #[serde(default)]
    schema_version: Option<u32>,
    procedure: String,
    #[serde(default)]
    health_before: Option<IgnoredAny>,
}

/// The result in `text` (the file `path`) as its writer typed it. A newer schema is
/// refused; a file without `procedure` is probably not a result at all.
pub fn parse(text: &str, path: &Path) -> Result<AnyResult, ReportError> {
    let header: Header = serde_json::from_str(text).map_err(|e| {
        if e.is_data() && e.to_string().starts_with("missing field `procedure`") {
            ReportError::Field {
                path: path.to_path_buf(),
                field: "procedure".into(),
                message: "missing; is this a storbench result.json?".into(),
            }
        } else {
            ReportError::json(path, &e)
        }
    })?;
    if let Some(v) = header.schema_version.filter(|v| *v > SCHEMA_VERSION) {
        return Err(ReportError::Invalid {
            path: path.to_path_buf(),
            message: format!(
                "schema_version {v} is newer than this storbench understands ({SCHEMA_VERSION})"
            ),
            hint: "read it with the storbench version that wrote it (tool_version) or newer",
        });
    }
    fn typed<T: serde::de::DeserializeOwned>(text: &str, path: &Path) -> Result<T, ReportError> {
        serde_json::from_str(text).map_err(|e| ReportError::json(path, &e))
    }
    if header.health_before.is_none() {
        return Ok(AnyResult::Legacy(Box::new(typed(text, path)?)));
    }
    Ok(match header.procedure.as_str() {
        "run" => AnyResult::Run(Box::new(typed(text, path)?)),
        "replay" => AnyResult::Replay(Box::new(typed(text, path)?)),
        "consistency" => AnyResult::Consistency(Box::new(typed(text, path)?)),
        "season" => AnyResult::Season(Box::new(typed(text, path)?)),
        "trim-check" => AnyResult::TrimCheck(Box::new(typed(text, path)?)),
        "bench" => AnyResult::Bench(Box::new(typed(text, path)?)),
        "twin-measure" => AnyResult::TwinMeasure(Box::new(typed(text, path)?)),
        _ => AnyResult::Other(Box::new(typed(text, path)?)),
    })
}

/// The layout `run` and `replay` wrote before `RunResult`: what the report shows of it.
#[derive(Debug, Deserialize)]
pub struct Legacy {
    pub procedure: String,
    pub target: TargetInfo,
    #[serde(default)]
    pub tool_version: Option<String>,
    #[serde(default)]
    pub command_line: Option<CommandLine>,
    /// `name = value` text of the options.
    #[serde(default)]
    pub options: BTreeMap<String, String>,
    #[serde(default)]
    pub phases: Vec<LegacyPhase>,
    /// The trace replayed, as that layout described it.
    #[serde(default)]
    pub trace: Option<serde_json::Map<String, serde_json::Value>>,
    /// `{before, after, delta}`.
    #[serde(default)]
    pub health: Option<LegacyHealth>,
    #[serde(default = "yes")]
    pub complete: bool,
    #[serde(default)]
    pub notes: Vec<String>,
    #[serde(default)]
    pub created_unix_ms: Option<u64>,
}

fn yes() -> bool {
    true
}

/// A command line stored as one string or as its arguments.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum CommandLine {
    Text(String),
    Args(Vec<String>),
}

/// One phase of the older layout: its name and the writer's metrics.
#[derive(Debug, Deserialize)]
pub struct LegacyPhase {
    pub name: String,
    #[serde(default)]
    pub metrics: Option<PhaseMetrics>,
}

#[derive(Debug, Default, Deserialize)]
pub struct LegacyHealth {
    #[serde(default)]
    pub before: Option<Health>,
    #[serde(default)]
    pub after: Option<Health>,
    #[serde(default)]
    pub delta: Option<Health>,
}

/// Drive health as the report shows it (before, after or the change): every figure
/// optional, as smartctl may know none of them.
#[derive(Debug, Default, Clone, PartialEq, Deserialize)]
pub struct Health {
    #[serde(default)]
    pub available: bool,
    #[serde(default)]
    pub note: Option<String>,
    #[serde(default)]
    pub host_write_bytes: Option<f64>,
    #[serde(default)]
    pub host_read_bytes: Option<f64>,
    #[serde(default)]
    pub nand_write_bytes: Option<f64>,
    #[serde(default)]
    pub temperature_c: Option<f64>,
    #[serde(default)]
    pub media_errors: Option<f64>,
    #[serde(default, alias = "percent_used")]
    pub used_pct: Option<f64>,
    #[serde(default)]
    pub write_amplification: Option<f64>,
}

impl From<&HealthSnapshot> for Health {
    fn from(h: &HealthSnapshot) -> Health {
        let f = |v: Option<u64>| v.map(|x| x as f64);
        Health {
            available: h.available,
            note: h.note.clone(),
            host_write_bytes: f(h.host_write_bytes),
            host_read_bytes: f(h.host_read_bytes),
            nand_write_bytes: f(h.nand_write_bytes),
            temperature_c: h.temperature_c,
            media_errors: f(h.media_errors),
            used_pct: f(h.used_pct),
            write_amplification: None,
        }
    }
}

impl From<&HealthDelta> for Health {
    fn from(d: &HealthDelta) -> Health {
        let f = |v: Option<u64>| v.map(|x| x as f64);
        Health {
            available: d.available,
            note: d.note.clone(),
            host_write_bytes: f(d.host_write_bytes),
            host_read_bytes: f(d.host_read_bytes),
            nand_write_bytes: f(d.nand_write_bytes),
            write_amplification: d.write_amplification,
            ..Health::default()
        }
    }
}
