//! `DIR/result.json`: the result of one run (schema in docs/results.md).

use crate::health::{HealthDelta, HealthSnapshot};
use crate::phase::PhaseRecord;
use crate::trace::TraceSummary;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use storbench_core::TargetInfo;

/// The result of one run (`DIR/result.json`): one file per result directory, the
/// procedure's configuration `C` and summary `S` typed (`consistency::ConsistencyConfig`
/// and `consistency::ConsistencySummary`, ...). Field by field in docs/results.md; the
/// per-second series are in series.parquet, not here.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunResult<C, S> {
    /// [`crate::RESULT_FORMAT`].
    pub format: String,
    /// [`crate::SCHEMA_VERSION`] when written; readers refuse a newer one.
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
    pub config: C,
    /// Phases in the order they ran; names are unique.
    pub phases: Vec<PhaseRecord>,
    /// The procedure's own figures; none (null) in an incomplete result.
    pub summary: Option<S>,
    /// The replayed trace (`replay`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceSummary>,
    pub health_before: HealthSnapshot,
    pub health_after: HealthSnapshot,
    pub health_delta: HealthDelta,
    /// Times the run was interrupted and resumed.
    pub resumes: u32,
    pub notes: Vec<String>,
    pub created_unix_ms: u64,
    pub finished_unix_ms: u64,
}

impl<C, S> RunResult<C, S> {
    pub fn phase(&self, name: &str) -> Option<&PhaseRecord> {
        self.phases.iter().find(|p| p.name == name)
    }

    /// The first phase with failed I/Os: (phase, failures, the first one).
    pub fn failed_ios(&self) -> Option<(&str, u64, &str)> {
        self.phases.iter().find(|p| p.metrics.errors > 0).map(|p| {
            (
                p.name.as_str(),
                p.metrics.errors,
                p.first_error.as_deref().unwrap_or("(no detail)"),
            )
        })
    }
}
