//! `storbench consistency` (seed 001, METHODOLOGY section 4): its configuration and
//! its section of result.json.

use serde::{Deserialize, Serialize};
use storbench_metrics::{ConsistencyScores, SteadyState};

pub const NS_PER_S: u64 = 1_000_000_000;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConsistencyConfig {
    pub target: String,
    /// How to open a real target.
    #[serde(default)]
    pub open: crate::RealOpen,
    /// Tested span as a share of capacity (1.0 = full; 0.75 = 25% spare area).
    pub span_fraction: f64,
    pub duration_ns: u64,
    pub qd: u32,
    pub block_bytes: u64,
    pub precondition_passes: u32,
    pub precondition_block_bytes: u64,
    /// SNIA round length and window.
    pub round_ns: u64,
    pub window_rounds: usize,
    pub stop_at_steady_state: bool,
    /// Scores over the last this many seconds.
    pub score_last_s: usize,
    pub seed: u64,
    /// Content of every write (`--data`).
    #[serde(default = "crate::random_data")]
    pub data: storbench_core::DataKind,
}

impl ConsistencyConfig {
    /// The seed's defaults: full span, 2000 s, QD32, 4 KB, one 128 KB fill pass,
    /// 60-second rounds, window of 5, scores over the last 400 s.
    pub fn new(target: &str) -> Self {
        ConsistencyConfig {
            target: target.to_owned(),
            open: Default::default(),
            span_fraction: 1.0,
            duration_ns: 2000 * NS_PER_S,
            qd: 32,
            block_bytes: 4096,
            precondition_passes: 1,
            precondition_block_bytes: 128 * 1024,
            round_ns: 60 * NS_PER_S,
            window_rounds: storbench_metrics::steady::SNIA_WINDOW_ROUNDS,
            stop_at_steady_state: false,
            score_last_s: storbench_metrics::steady::CONSISTENCY_LAST_S,
            seed: 1,
            data: storbench_core::DataKind::Random,
        }
    }

    /// `--quick`: a run of seconds on a small simulated drive (tests, demo): 30 s of
    /// random writes, 3-second rounds, scores over the last 10 s.
    pub fn quick(target: &str) -> Self {
        ConsistencyConfig {
            duration_ns: 30 * NS_PER_S,
            round_ns: 3 * NS_PER_S,
            score_last_s: 10,
            ..ConsistencyConfig::new(target)
        }
    }
}

/// The consistency section of result.json.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConsistencySummary {
    pub span_bytes: u64,
    #[serde(alias = "span_percent")]
    pub span_pct: f64,
    #[serde(alias = "spare_area_percent")]
    pub spare_area_pct: f64,
    /// IOPS of every full second of the random-write phase.
    pub iops_per_s: Vec<f64>,
    pub scores: Option<ConsistencyScores>,
    pub round_s: u64,
    pub round_iops: Vec<f64>,
    pub steady_state: Option<SteadyState>,
    pub steady_state_reached: bool,
    /// Second of the random-write phase at which steady state was reached.
    pub steady_state_at_s: Option<u64>,
    pub precondition_mb_per_s: f64,
    /// How the random-write phase ended: `time-limit` or `steady-state`.
    pub ended: String,
}
