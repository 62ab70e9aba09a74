//! TRIM validation (seed 001): sequential-write throughput when clean (after purge);
//! fill the span, then 4 KB random writes at QD32 for the given time (120 min in the
//! seed); throughput when dirty; one TRIM pass over the span; throughput after TRIM.
//! The clean / dirty / after-TRIM table.
//!
//! Each throughput measurement writes `measure_fraction` of the span sequentially with
//! 128 KB writes from its start (enough to run through the drive's free blocks, so
//! garbage collection shows; the seed used Iometer's sequential write).

use crate::args::{self, EngineArgs, TargetChoice};
use crate::phase::{PhasePlan, PhaseRecord, Runner, SuiteError, Work};
use crate::procedure::{Configured, Procedure};
use std::path::Path;
use std::time::Duration;
use storbench_engine::TargetInfo;
pub use storbench_results::consistency::NS_PER_S;
pub use storbench_results::trimcheck::{TrimCheckConfig, TrimTable, NO_PENALTY_PCT};

/// `storbench trim-check`'s own options.
#[derive(clap::Args, Clone, Debug, PartialEq)]
pub struct TrimCheckArgs {
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Short parameters that finish in seconds on a small simulated drive
    #[arg(long)]
    pub quick: bool,
    /// Time of 4 KB random writes that dirty the drive [default: 120m; --quick: 20s]
    #[arg(long, value_name = "TIME", value_parser = args::duration)]
    pub dirty_for: Option<Duration>,
    /// Share of the span each throughput measurement writes
    #[arg(long, default_value = "25%", value_name = "PCT%", value_parser = args::fraction)]
    pub measure: f64,
    /// Tested span, e.g. 75% (= 25% spare area)
    #[arg(long, default_value = "100%", value_name = "PCT%", value_parser = args::fraction)]
    pub span: f64,
    /// Idle time after the TRIM pass, before measuring (background erase)
    #[arg(long, default_value = "10s", value_name = "TIME", value_parser = args::duration)]
    pub settle: Duration,
    /// Seed of the random writes and written data: the same seed, the same I/O
    #[arg(long, default_value_t = 3)]
    pub seed: u64,
}

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
    type Args = TrimCheckArgs;
    type Summary = TrimTable;

    fn configure(a: &TrimCheckArgs, target: &TargetChoice) -> Result<Configured<Self>, SuiteError> {
        let t = &target.spec;
        let mut c = if a.quick {
            TrimCheckConfig::quick(t)
        } else {
            TrimCheckConfig::new(t)
        };
        if let Some(d) = a.dirty_for {
            c.dirty_for_ns = args::ns(d);
        }
        c.measure_fraction = a.measure;
        c.span_fraction = a.span;
        c.settle_ns = args::ns(a.settle);
        c.seed = a.seed;
        c.qd = a.engine.qd_or(args::DEFAULT_QD)?;
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
    ) -> Result<TrimTable, SuiteError> {
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
            after_trim_of_clean_pct: pct(after.write_rate_mb_per_s),
            dirty_of_clean_pct: dirty_pct,
            measure_bytes: clean.write_bytes,
            trim_pass_s: get("trim").elapsed_ns as f64 / 1e9,
            note,
        };
        Ok(t)
    }
}
