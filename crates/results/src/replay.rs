//! `storbench replay`: its configuration and its section of result.json.

use crate::trace::TraceSummary;
use crate::RealOpen;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use storbench_core::generator::SpanSpec;
use storbench_core::pacing::{Fidelity, Pacing};
use storbench_core::DataKind;

/// A replay's configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplayConfig {
    pub target: String,
    #[serde(default)]
    pub open: RealOpen,
    pub trace: TraceSummary,
    pub pacing: Pacing,
    /// Stop after this long on the target's clock.
    pub time_limit_ns: Option<u64>,
    /// Fold the trace onto this part of the target.
    pub span: Option<SpanSpec>,
    pub seed: u64,
    pub data: DataKind,
    pub log_ios: bool,
}

impl ReplayConfig {
    pub fn path(&self) -> PathBuf {
        PathBuf::from(&self.trace.path)
    }

    /// The queue depth of trace I/Os without one of their own.
    pub fn default_qd(&self) -> u32 {
        match self.pacing {
            Pacing::QueueDepth { default_qd } => default_qd,
            Pacing::FixedQd(n) => n,
            Pacing::Timed { .. } => 1,
        }
    }
}

/// The replay's own section of result.json.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplaySummary {
    /// I/Os of the trace replayed (fewer than the trace's when a time limit ended it).
    #[serde(alias = "ios_replayed")]
    pub replayed_ios: u64,
    pub trace_ios: u64,
    pub fold_span_bytes: Option<u64>,
    pub fidelity: Option<Fidelity>,
}
