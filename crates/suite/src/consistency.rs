//! Performance consistency (seed 001, METHODOLOGY section 4): purge, fill the tested
//! span sequentially (128 KB writes, incompressible; two passes for the SNIA variant),
//! then 4 KB random writes at QD32 across the span for ~2000 s, IOPS every second.
//! Scores over the last 400 s (average, std dev, min, average ÷ std dev) and the SNIA
//! steady-state test on rounds (window of 5), reported as reached or not and when.
//! `span < 100%` is the over-provisioning variant ("25% spare area" at 75%).

use crate::phase::{PhasePlan, PhaseRecord, Runner, SteadyStop, SuiteError, Work};
use crate::procedure::Procedure;
use serde::{Deserialize, Serialize};
use std::path::Path;
use storbench_engine::TargetInfo;
use storbench_metrics::{consistency_scores, snia_steady_state, ConsistencyScores, SteadyState};

pub const NS_PER_S: u64 = 1_000_000_000;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConsistencyConfig {
    pub target: String,
    /// How to open a real target.
    #[serde(default)]
    pub open: crate::targets::RealOpen,
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
    #[serde(default = "crate::phase::random_data")]
    pub data: storbench_engine::DataKind,
    /// Jobs that do the random writes at once, each keeping `qd` in flight with
    /// offsets from a seed of its own (`--jobs`, fio's numjobs).
    #[serde(default = "crate::phase::one_job")]
    pub jobs: u32,
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
            data: storbench_engine::DataKind::Random,
            jobs: 1,
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
    pub span_percent: f64,
    pub spare_area_percent: f64,
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

pub fn span_of(info: &TargetInfo, fraction: f64) -> u64 {
    crate::units::span_bytes(info.capacity_bytes, fraction, 128 * 1024)
}

impl Procedure for ConsistencyConfig {
    const NAME: &'static str = "consistency";

    fn target_spec(&self) -> &str {
        &self.target
    }

    fn real_open(&self) -> crate::targets::RealOpen {
        self.open.clone()
    }

    fn plans(&self, _dir: &Path, info: &TargetInfo) -> Result<Vec<PhasePlan>, SuiteError> {
        if !(self.span_fraction > 0.0 && self.span_fraction <= 1.0) {
            return Err(SuiteError::Invalid(format!(
                "--span {}: must be in (0, 100%]",
                self.span_fraction
            )));
        }
        if self.precondition_passes == 0 {
            return Err(SuiteError::Invalid(
                "--precondition-passes must be at least 1".into(),
            ));
        }
        use crate::units::{check_block, check_duration, check_qd};
        check_qd("--qd", self.qd)
            .and_then(|_| crate::units::check_jobs(self.jobs).map_err(|e| e.to_string()))
            .and_then(|_| check_block("--bs", self.block_bytes, info.logical_block_bytes))
            .and_then(|_| {
                check_block(
                    "the fill's block size",
                    self.precondition_block_bytes,
                    info.logical_block_bytes,
                )
            })
            .and_then(|_| check_duration("--time", self.duration_ns))
            .map_err(SuiteError::Invalid)?;
        if self.round_ns < NS_PER_S || self.score_last_s == 0 || self.window_rounds < 2 {
            return Err(SuiteError::Invalid(
                "--round must be at least 1s, and scores and the steady-state window need at least 1 s and 2 rounds".into(),
            ));
        }
        let span = span_of(info, self.span_fraction);
        if span < self.block_bytes {
            return Err(SuiteError::Invalid(format!(
                "--span: the tested span ({}) is smaller than one --bs block",
                crate::units::fmt_bytes(span)
            )));
        }
        let title = format!(
            "{} random writes across the span, IOPS every second",
            crate::units::fmt_bytes(self.block_bytes)
        );
        let mut rand = PhasePlan::new(
            "random-write",
            &title,
            Work::RandWrite {
                span_bytes: span,
                block_bytes: self.block_bytes,
                qd: self.qd,
                seed: self.seed,
            },
        );
        rand.time_limit_ns = Some(self.duration_ns);
        rand.jobs = self.jobs;
        if self.stop_at_steady_state {
            rand.steady_stop = Some(SteadyStop {
                round_s: (self.round_ns / NS_PER_S).max(1),
                window_rounds: self.window_rounds,
            });
        }
        Ok(crate::phase::with_data(
            vec![
                PhasePlan::new("purge", "secure erase (purge)", Work::Purge),
                PhasePlan::new(
                    "precondition",
                    "fill the span sequentially with 128 KB writes",
                    Work::SeqWrite {
                        start_bytes: 0,
                        len_bytes: span,
                        block_bytes: self.precondition_block_bytes,
                        qd: self.qd,
                        passes: self.precondition_passes,
                    },
                ),
                rand,
            ],
            self.data,
        ))
    }

    fn summarize(
        &self,
        _dir: &Path,
        runner: &Runner<'_>,
        records: &[PhaseRecord],
    ) -> Result<serde_json::Value, SuiteError> {
        let rows = runner.series("random-write")?;
        let iops: Vec<f64> = rows
            .iter()
            .filter(|r| r.s.window_ns == NS_PER_S)
            .map(|r| r.s.iops())
            .collect();
        let round_s = (self.round_ns / NS_PER_S).max(1);
        let round_iops: Vec<f64> = iops
            .chunks_exact(round_s as usize)
            .map(|c| c.iter().sum::<f64>() / c.len() as f64)
            .collect();
        let steady = if round_iops.len() >= self.window_rounds.max(2) {
            snia_steady_state(&round_iops, self.window_rounds.max(2))
        } else {
            None
        };
        let info = runner.target.info();
        let span = span_of(info, self.span_fraction);
        let pre = records
            .iter()
            .find(|r| r.name == "precondition")
            .map_or(0.0, |r| r.metrics.data_rate_mb_per_s);
        let ended = records
            .iter()
            .find(|r| r.name == "random-write")
            .map_or(String::new(), |r| r.ended.clone());
        let span_percent = 100.0 * span as f64 / info.capacity_bytes as f64;
        let s = ConsistencySummary {
            span_bytes: span,
            span_percent,
            spare_area_percent: 100.0 - span_percent,
            scores: consistency_scores(&iops, self.score_last_s),
            round_s,
            steady_state_reached: steady.is_some(),
            steady_state_at_s: steady
                .as_ref()
                .map(|s| (s.round_index as u64 + 1) * round_s),
            steady_state: steady,
            round_iops,
            iops_per_s: iops,
            precondition_mb_per_s: pre,
            ended,
        };
        Ok(serde_json::to_value(s).expect("summary serializes"))
    }
}
