//! Performance consistency (seed 001, METHODOLOGY section 4): purge, fill the tested
//! span sequentially (128 KB writes, incompressible; two passes for the SNIA variant),
//! then 4 KB random writes at QD32 across the span for ~2000 s, IOPS every second.
//! Scores over the last 400 s (average, std dev, min, average ÷ std dev) and the SNIA
//! steady-state test on rounds (window of 5), reported as reached or not and when.
//! `span < 100%` is the over-provisioning variant ("25% spare area" at 75%).

use crate::args::{self, EngineArgs, TargetChoice};
use crate::phase::{PhasePlan, PhaseRecord, Runner, SteadyStop, SuiteError, Work};
use crate::procedure::{Configured, Procedure};
use std::path::Path;
use std::time::Duration;
use storbench_engine::TargetInfo;
use storbench_metrics::{consistency_scores, snia_steady_state};
pub use storbench_results::consistency::{ConsistencyConfig, ConsistencySummary, NS_PER_S};

/// `storbench consistency`'s own options.
#[derive(clap::Args, Clone, Debug, PartialEq)]
pub struct ConsistencyArgs {
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Short parameters that finish in seconds on a small simulated drive
    #[arg(long)]
    pub quick: bool,
    /// Tested span, e.g. 75% (= 25% spare area)
    #[arg(long, default_value = "100%", value_name = "PCT%", value_parser = args::fraction)]
    pub span: f64,
    /// Length of the random-write phase (30s, 2min, 1h; a bare number is seconds)
    /// [default: 2000s; --quick: 30s]
    #[arg(long, visible_alias = "duration", value_name = "TIME", value_parser = args::duration)]
    pub time: Option<Duration>,
    /// Block size of the random writes (4k, 8k, 1.5k; a multiple of the logical block)
    #[arg(long, default_value = "4k", value_name = "SIZE", value_parser = args::size)]
    pub bs: u64,
    /// Sequential fill passes before the random writes (2 = SNIA variant)
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=2))]
    pub precondition_passes: u32,
    /// SNIA steady-state round length, at least 1s [default: 60s; --quick: 3s]
    #[arg(long, value_name = "TIME", value_parser = args::duration)]
    pub round: Option<Duration>,
    /// End the random writes once SNIA steady state is reached
    #[arg(long)]
    pub stop_at_steady_state: bool,
    /// Seed of the random offsets and written data: the same seed, the same I/O
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

pub fn span_of(info: &TargetInfo, fraction: f64) -> u64 {
    crate::units::span_bytes(info.capacity_bytes, fraction, 128 * 1024)
}

impl Procedure for ConsistencyConfig {
    const NAME: &'static str = "consistency";
    type Args = ConsistencyArgs;
    type Summary = ConsistencySummary;

    fn configure(
        a: &ConsistencyArgs,
        target: &TargetChoice,
    ) -> Result<Configured<Self>, SuiteError> {
        let t = &target.spec;
        let mut c = if a.quick {
            ConsistencyConfig::quick(t)
        } else {
            ConsistencyConfig::new(t)
        };
        c.span_fraction = a.span;
        if let Some(d) = a.time {
            c.duration_ns = args::ns(d);
        }
        if let Some(d) = a.round {
            c.round_ns = args::ns(d);
            if c.round_ns < NS_PER_S {
                return Err(SuiteError::Invalid(format!(
                    "--round {d:?}: must be at least 1s"
                )));
            }
        }
        c.qd = a.engine.qd_or(args::DEFAULT_QD)?;
        c.block_bytes = a.bs;
        c.precondition_passes = a.precondition_passes;
        c.stop_at_steady_state = a.stop_at_steady_state;
        c.seed = a.seed;
        c.data = a.engine.data;
        c.open = a.engine.open(target);
        Ok(Configured::new(c))
    }

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
    ) -> Result<ConsistencySummary, SuiteError> {
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
        let span_pct = 100.0 * span as f64 / info.capacity_bytes as f64;
        let s = ConsistencySummary {
            span_bytes: span,
            span_pct,
            spare_area_pct: 100.0 - span_pct,
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
        Ok(s)
    }
}
