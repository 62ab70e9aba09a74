//! Typed reading of `result.json` for the HTML report and `compare`: the fields the
//! report uses, deserialized with serde, from every layout storbench has written.
//!
//! The writer's type is [`crate::RunResult`], whose phases, health and trace are the
//! suite's own types ([`crate::ResultParts`]), which this crate cannot name (the suite
//! depends on the report). So this module reads the parts the report shows into its
//! own lenient view and reuses the writer's types where they live below the report:
//! [`PhaseMetrics`], [`LatencyStats`], [`ConsistencyScores`], [`SteadyState`] and
//! [`TargetInfo`]. A field the writer renames therefore fails here with the file and
//! the field named, instead of turning silently into zero.
//!
//! Both layouts load: the current one (`config`, `summary`, `health_before`/`_after`/
//! `_delta`) and the older `run`/`replay` one (`options`, nested `health`, `scores`
//! and `info` per phase).

use serde::Deserialize;
use std::collections::BTreeMap;
use storbench_core::TargetInfo;
use storbench_metrics::steady::{ConsistencyScores, SteadyState};
use storbench_metrics::{LatencyStats, PhaseMetrics};

/// The top level of a result.json, as far as the report reads it.
#[derive(Debug, Deserialize)]
pub struct ResultFile {
    #[serde(default)]
    pub schema_version: Option<u32>,
    pub procedure: String,
    pub target: TargetInfo,
    #[serde(default)]
    pub tool_version: Option<String>,
    #[serde(default)]
    pub command_line: Option<CommandLine>,
    /// The suite's configuration (per procedure; see [`Config`]).
    #[serde(default)]
    pub config: Option<serde_json::Value>,
    /// `name = value` text of the options (both layouts).
    #[serde(default)]
    pub options: BTreeMap<String, String>,
    #[serde(default)]
    pub phases: Vec<PhaseFile>,
    /// The procedure's own figures (see [`Summary`]); absent in the RunResult layout.
    #[serde(default)]
    pub summary: Option<serde_json::Value>,
    #[serde(default)]
    pub trace: Option<serde_json::Value>,
    #[serde(default)]
    pub health_before: Option<Health>,
    #[serde(default)]
    pub health_after: Option<Health>,
    #[serde(default)]
    pub health_delta: Option<Health>,
    /// RunResult layout: `{before, after, delta}`.
    #[serde(default)]
    pub health: Option<NestedHealth>,
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

/// One phase: its name and the writer's metrics (null for a phase that did not run).
#[derive(Debug, Deserialize)]
pub struct PhaseFile {
    pub name: String,
    #[serde(default)]
    pub metrics: Option<PhaseMetrics>,
}

/// Drive health (before, after or the delta): every field optional, as smartctl may
/// know none of them.
#[derive(Debug, Default, Deserialize)]
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
    #[serde(default)]
    pub percent_used: Option<f64>,
    #[serde(default)]
    pub write_amplification: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
pub struct NestedHealth {
    #[serde(default)]
    pub before: Option<Health>,
    #[serde(default)]
    pub after: Option<Health>,
    #[serde(default)]
    pub delta: Option<Health>,
}

/// `summary` of a consistency run (`storbench_suite::consistency::ConsistencySummary`).
#[derive(Debug, Default, Deserialize)]
pub struct ConsistencySummary {
    #[serde(default)]
    pub span_percent: Option<f64>,
    #[serde(default)]
    pub iops_per_s: Vec<f64>,
    #[serde(default)]
    pub scores: Option<ConsistencyScores>,
    #[serde(default)]
    pub round_s: Option<u64>,
    #[serde(default)]
    pub steady_state: Option<SteadyState>,
    #[serde(default)]
    pub steady_state_at_s: Option<f64>,
}

/// `summary` of a trim-check run (`storbench_suite::trimcheck::TrimTable`).
#[derive(Debug, Deserialize)]
pub struct TrimSummary {
    pub clean_mb_per_s: f64,
    pub dirty_mb_per_s: f64,
    pub after_trim_mb_per_s: f64,
    #[serde(default)]
    pub note: Option<String>,
}

/// `summary` of a season run, and a bench's `seasoning`
/// (`storbench_suite::season::SeasonSummary`).
#[derive(Clone, Debug, Deserialize)]
pub struct SeasonSummary {
    pub image: String,
    pub image_bytes_restored: u64,
    pub image_writes: u64,
    pub seq_pass_mb_per_s: f64,
    pub restore_mb_per_s: f64,
}

/// `summary` of a bench run (`storbench_suite::bench::BenchSummary`), the fields read.
#[derive(Debug, Deserialize)]
pub struct BenchSummary {
    #[serde(default)]
    pub trace_name: Option<String>,
    /// What the state restored (the trace's image or the user's file).
    #[serde(default)]
    pub image: Option<String>,
    /// Results of the older `bench --season`: its seasoning.
    #[serde(default)]
    pub seasoning: Option<SeasonSummary>,
    /// The drive state p21's bench writes (`fresh`, `seasoned`, `used`), when present.
    #[serde(default)]
    pub state: Option<String>,
    #[serde(default)]
    pub characterize: Option<serde_json::Value>,
    #[serde(default)]
    pub service_read: Option<LatencyStats>,
    #[serde(default)]
    pub service_write: Option<LatencyStats>,
}

/// The configuration fields the report titles charts with, whichever procedure wrote
/// them (each optional: a procedure has only some).
#[derive(Debug, Default, Deserialize)]
pub struct Config {
    #[serde(default)]
    pub target: Option<String>,
    #[serde(default)]
    pub span_fraction: Option<f64>,
    #[serde(default)]
    pub qd: Option<u32>,
    #[serde(default)]
    pub block_bytes: Option<u64>,
    #[serde(default)]
    pub duration_ns: Option<u64>,
    #[serde(default)]
    pub score_last_s: Option<u64>,
    #[serde(default)]
    pub dirty_for_ns: Option<u64>,
    /// A bench's seasoning (non-null = the drive was seasoned first).
    #[serde(default)]
    pub season: Option<serde_json::Value>,
    /// A bench's drive state (p21), when the writer records it.
    #[serde(default)]
    pub state: Option<String>,
    #[serde(default)]
    pub workload: Option<BenchWorkload>,
    /// `run`: the generator's pattern and mix.
    #[serde(default)]
    pub pattern: Option<String>,
    #[serde(default)]
    pub mix: Option<serde_json::Value>,
    /// `replay`: the trace.
    #[serde(default)]
    pub trace: Option<serde_json::Value>,
}

/// A bench's workload (`storbench_suite::bench::Workload`).
#[derive(Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum BenchWorkload {
    Trace {
        path: std::path::PathBuf,
    },
    Profile {
        name: String,
        #[serde(default)]
        scale: Option<f64>,
    },
}
