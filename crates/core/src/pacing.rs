//! How a phase paces its I/Os ([`Pacing`], stored with a run) and how faithfully a
//! replay followed its trace ([`Fidelity`], in a result's phases). The engine loop
//! that does the pacing is `storbench_engine::run`, which re-exports these.

use serde::{Deserialize, Serialize};

/// How I/Os are paced.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pacing {
    /// Keep the trace's in-flight count (`trace_qd`), or `default_qd` where it has none.
    QueueDepth { default_qd: u32 },
    /// Issue at trace time / speed, idle gaps cut to `max_idle_ns` (None: keep all).
    Timed {
        speed: f64,
        max_idle_ns: Option<u64>,
    },
    /// Ignore times, keep N in flight.
    FixedQd(u32),
}

impl Pacing {
    pub fn name(&self) -> &'static str {
        match self {
            Pacing::QueueDepth { .. } => "queue-depth",
            Pacing::Timed { .. } => "timed",
            Pacing::FixedQd(_) => "fixed-qd",
        }
    }
}

/// How faithfully the replay followed the trace.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Fidelity {
    /// `queue-depth`, `timed` or `fixed-qd`.
    pub mode: String,
    /// Timed: issue-time error (actual minus scheduled submission), ns. Units last
    /// since result schema 2; the aliases read schema-1 results.
    #[serde(alias = "issue_error_ns_p50")]
    pub issue_error_p50_ns: Option<u64>,
    #[serde(alias = "issue_error_ns_p90")]
    pub issue_error_p90_ns: Option<u64>,
    #[serde(alias = "issue_error_ns_p99")]
    pub issue_error_p99_ns: Option<u64>,
    #[serde(alias = "issue_error_ns_p999")]
    pub issue_error_p99_9_ns: Option<u64>,
    #[serde(alias = "issue_error_ns_max")]
    pub issue_error_max_ns: Option<u64>,
    #[serde(alias = "issue_error_ns_mean")]
    pub issue_error_mean_ns: Option<f64>,
    /// Timed: actual minus scheduled time of the last issue, ns, and that as a percent
    /// of the scheduled duration.
    pub drift_ns: Option<i64>,
    pub drift_pct: Option<f64>,
    /// Timed: I/Os issued late because every slot of the target was busy.
    pub slot_starved_ios: u64,
    /// Queue-depth: time-weighted average QD over busy time, in the trace and replayed.
    pub trace_avg_qd: Option<f64>,
    pub replayed_avg_qd: Option<f64>,
    /// Queue-depth: I/Os whose trace QD exceeded what the target accepts in flight.
    pub qd_capped_ios: u64,
}
