//! `storbench trim-check` (seed 001): its configuration and its section of
//! result.json, the clean / dirty / after-TRIM table.

use crate::consistency::NS_PER_S;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrimCheckConfig {
    pub target: String,
    /// How to open a real target.
    #[serde(default)]
    pub open: crate::RealOpen,
    pub span_fraction: f64,
    pub dirty_for_ns: u64,
    pub qd: u32,
    /// Share of the span each throughput measurement writes.
    pub measure_fraction: f64,
    pub measure_qd: u32,
    /// Idle time after the TRIM pass before measuring: the seed measured once the
    /// pass was done, and drives erase trimmed blocks in the background.
    #[serde(default)]
    pub settle_ns: u64,
    pub seed: u64,
    /// Content of every write (`--data`).
    #[serde(default = "crate::random_data")]
    pub data: storbench_core::DataKind,
}

impl TrimCheckConfig {
    pub fn new(target: &str) -> Self {
        TrimCheckConfig {
            target: target.to_owned(),
            open: Default::default(),
            span_fraction: 1.0,
            dirty_for_ns: 120 * 60 * NS_PER_S,
            qd: 32,
            measure_fraction: 0.25,
            measure_qd: 32,
            settle_ns: 10 * NS_PER_S,
            seed: 3,
            data: storbench_core::DataKind::Random,
        }
    }

    /// `--quick`: 20 s of random writes.
    pub fn quick(target: &str) -> Self {
        TrimCheckConfig {
            dirty_for_ns: 20 * NS_PER_S,
            ..TrimCheckConfig::new(target)
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrimTable {
    pub clean_mb_per_s: f64,
    pub dirty_mb_per_s: f64,
    pub after_trim_mb_per_s: f64,
    /// After-TRIM as a percent of clean.
    #[serde(alias = "after_trim_pct_of_clean")]
    pub after_trim_of_clean_pct: f64,
    #[serde(alias = "dirty_pct_of_clean")]
    pub dirty_of_clean_pct: f64,
    pub measure_bytes: u64,
    pub trim_pass_s: f64,
    /// Set when the table cannot show TRIM's effect (dirty is not clearly slower).
    #[serde(default)]
    pub note: Option<String>,
}

/// Dirty throughput at or above this percent of clean shows no garbage-collection
/// penalty to undo, so the table says it cannot judge TRIM.
pub const NO_PENALTY_PCT: f64 = 90.0;
