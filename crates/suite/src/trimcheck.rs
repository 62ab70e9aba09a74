//! TRIM validation (seed 001): sequential-write throughput when clean (after purge);
//! fill the span, then 4 KB random writes at QD32 for the given time (120 min in the
//! seed); throughput when dirty; one TRIM pass over the span; throughput after TRIM.
//! The clean / dirty / after-TRIM table.
//!
//! Each throughput measurement writes `measure_fraction` of the span sequentially with
//! 128 KB writes from its start (enough to run through the drive's free blocks, so
//! garbage collection shows; the seed used Iometer's sequential write).

use crate::phase::{PhasePlan, PhaseRecord, Runner, SuiteError, Work};
use crate::procedure::Procedure;
use serde::{Deserialize, Serialize};
use std::path::Path;
use storbench_engine::TargetInfo;

pub const NS_PER_S: u64 = 1_000_000_000;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrimCheckConfig {
    pub target: String,
    /// How to open a real target.
    #[serde(default)]
    pub open: crate::targets::RealOpen,
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
    #[serde(default = "crate::phase::random_data")]
    pub data: storbench_engine::DataKind,
    /// Jobs that do the random writes at once, each keeping `qd` in flight with
    /// offsets from a seed of its own (`--jobs`, fio's numjobs).
    #[serde(default = "crate::phase::one_job")]
    pub jobs: u32,
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
            data: storbench_engine::DataKind::Random,
            jobs: 1,
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
    pub after_trim_pct_of_clean: f64,
    pub dirty_pct_of_clean: f64,
    pub measure_bytes: u64,
    pub trim_pass_s: f64,
    /// Set when the table cannot show TRIM's effect (dirty is not clearly slower).
    #[serde(default)]
    pub note: Option<String>,
}

/// Dirty throughput at or above this percent of clean shows no garbage-collection
/// penalty to undo, so the table says it cannot judge TRIM.
pub const NO_PENALTY_PCT: f64 = 90.0;

fn measure(name: &str, title: &str, bytes: u64, qd: u32) -> PhasePlan {
    PhasePlan::new(
        name,
        title,
        Work::SeqWrite {
            start_bytes: 0,
            len_bytes: bytes,
            block_bytes: 128 * 1024,
            qd,
            passes: 1,
        },
    )
}

impl Procedure for TrimCheckConfig {
    const NAME: &'static str = "trim-check";

    fn target_spec(&self) -> &str {
        &self.target
    }

    fn real_open(&self) -> crate::targets::RealOpen {
        self.open.clone()
    }

    fn plans(&self, _dir: &Path, info: &TargetInfo) -> Result<Vec<PhasePlan>, SuiteError> {
        if !info.discard {
            return Err(SuiteError::Invalid(format!(
                "{}: the target does not support discard (TRIM), so a TRIM check cannot run",
                info.name
            )));
        }
        if !(self.measure_fraction > 0.0 && self.measure_fraction <= 1.0) {
            return Err(SuiteError::Invalid("--measure must be in (0, 100%]".into()));
        }
        use crate::units::{check_duration, check_qd};
        check_qd("--qd", self.qd)
            .and_then(|_| crate::units::check_jobs(self.jobs).map_err(|e| e.to_string()))
            .and_then(|_| check_qd("the measurements' queue depth", self.measure_qd))
            .and_then(|_| check_duration("--dirty-for", self.dirty_for_ns))
            .map_err(SuiteError::Invalid)?;
        if info.logical_block_bytes > 4096 {
            return Err(SuiteError::Invalid(format!(
                "{}: logical blocks of {} bytes; the TRIM check writes 4 KiB blocks",
                info.name, info.logical_block_bytes
            )));
        }
        let span = crate::consistency::span_of(info, self.span_fraction);
        let mbytes =
            ((span as f64 * self.measure_fraction) as u64 / (128 * 1024)).max(1) * 128 * 1024;
        let mut dirty = PhasePlan::new(
            "dirty",
            "4 KB random writes at QD32 across the span",
            Work::RandWrite {
                span_bytes: span,
                block_bytes: 4096,
                qd: self.qd,
                seed: self.seed,
            },
        );
        dirty.time_limit_ns = Some(self.dirty_for_ns);
        dirty.jobs = self.jobs;
        Ok(crate::phase::with_data(
            vec![
                PhasePlan::new("purge", "secure erase (purge)", Work::Purge),
                measure(
                    "clean",
                    "sequential write throughput, clean drive",
                    mbytes,
                    self.measure_qd,
                ),
                PhasePlan::new(
                    "fill",
                    "fill the span sequentially with 128 KB writes",
                    Work::SeqWrite {
                        start_bytes: 0,
                        len_bytes: span,
                        block_bytes: 128 * 1024,
                        qd: self.qd,
                        passes: 1,
                    },
                ),
                dirty,
                measure(
                    "dirty-seq",
                    "sequential write throughput, dirty drive",
                    mbytes,
                    self.measure_qd,
                ),
                PhasePlan::new(
                    "trim",
                    "one TRIM pass over the span",
                    Work::Trim {
                        span_bytes: span,
                        chunk_bytes: (span / 64).clamp(1 << 20, 1 << 30) / 4096 * 4096,
                        qd: 1,
                    },
                ),
                PhasePlan::new(
                    "settle",
                    "idle after the TRIM pass (background erase)",
                    Work::Idle {
                        duration_ns: self.settle_ns,
                    },
                ),
                measure(
                    "after-trim",
                    "sequential write throughput after TRIM",
                    mbytes,
                    self.measure_qd,
                ),
            ],
            self.data,
        ))
    }

    fn summarize(
        &self,
        _dir: &Path,
        _runner: &Runner<'_>,
        records: &[PhaseRecord],
    ) -> Result<serde_json::Value, SuiteError> {
        let get = |n: &str| {
            records
                .iter()
                .find(|r| r.name == n)
                .map(|r| r.metrics.clone())
                .unwrap_or_default()
        };
        let clean = get("clean");
        let dirty = get("dirty-seq");
        let after = get("after-trim");
        let pct = |x: f64| {
            if clean.write_rate_mb_per_s > 0.0 {
                100.0 * x / clean.write_rate_mb_per_s
            } else {
                0.0
            }
        };
        let dirty_pct = pct(dirty.write_rate_mb_per_s);
        let note = (dirty_pct >= NO_PENALTY_PCT).then(|| {
            format!(
                "dirty sequential writes ran at {dirty_pct:.0}% of clean: the target showed no garbage-collection \
                 penalty (a file or loop device has none; a drive may hide it behind spare area or a short \
                 --dirty-for), so this run cannot show whether TRIM restores speed"
            )
        });
        let t = TrimTable {
            clean_mb_per_s: clean.write_rate_mb_per_s,
            dirty_mb_per_s: dirty.write_rate_mb_per_s,
            after_trim_mb_per_s: after.write_rate_mb_per_s,
            after_trim_pct_of_clean: pct(after.write_rate_mb_per_s),
            dirty_pct_of_clean: dirty_pct,
            measure_bytes: clean.write_bytes,
            trim_pass_s: get("trim").elapsed_ns as f64 / 1e9,
            note,
        };
        Ok(serde_json::to_value(t).expect("serializes"))
    }
}
