//! `storbench twin measure` (issue 33): the twin's measurement plan
//! (`storbench_twin::plan`) run as a procedure, so a drive is measured with the same
//! guard, checkpoints, resume and result directory as every other; the summary is the
//! [`Measurement`] `storbench twin fit` fits a simulated drive to.

use crate::args::{self, Backend, TargetChoice};
use crate::phase::{PhasePlan, PhaseRecord, Runner, SuiteError, Work};
use crate::procedure::{Configured, Procedure};
use std::path::Path;
use storbench_engine::TargetInfo;
pub use storbench_results::twin::{Measurement, PlanShape, TwinMeasureConfig};
use storbench_twin::plan::{PhaseAmount, Plan, StepWork};

/// `storbench twin measure`'s own options. The plan sets its own queue depths and
/// block sizes (those are what it measures), so there is no `--qd`.
#[derive(clap::Args, Clone, Debug, PartialEq)]
pub struct TwinMeasureArgs {
    /// Short phases that finish in seconds on a small simulated drive
    #[arg(long)]
    pub quick: bool,
    /// I/O backend for real targets
    #[arg(long, value_enum, default_value = "auto")]
    pub backend: Backend,
    /// Written data: random (incompressible, default), zeros, compressible:RATIO
    #[arg(long, default_value = "random", value_name = "KIND", value_parser = args::data)]
    pub data: storbench_engine::DataKind,
}

impl Procedure for TwinMeasureConfig {
    const NAME: &'static str = "twin-measure";
    type Args = TwinMeasureArgs;
    type Summary = Measurement;

    fn configure(
        a: &TwinMeasureArgs,
        target: &TargetChoice,
    ) -> Result<Configured<Self>, SuiteError> {
        let t = &target.spec;
        let mut c = if a.quick {
            TwinMeasureConfig::quick(t)
        } else {
            TwinMeasureConfig::new(t)
        };
        c.data = a.data;
        c.open = crate::targets::RealOpen {
            backend: Some(a.backend.name()),
            ..target.open.clone()
        };
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
                "{}: the target does not support discard (TRIM), which the twin's plan measures",
                info.name
            )));
        }
        if info.logical_block_bytes > 4096 || info.capacity_bytes < (16 << 20) {
            return Err(SuiteError::Invalid(format!(
                "{}: the twin's plan needs 4 KiB I/O and at least 16 MiB (logical blocks of {} bytes, {} bytes)",
                info.name, info.logical_block_bytes, info.capacity_bytes
            )));
        }
        let plan = Plan::new(info.capacity_bytes, &self.shape);
        let plans = plan
            .steps
            .into_iter()
            .map(|s| match s.work {
                StepWork::Purge => PhasePlan::new(&s.name, &s.title, Work::Purge),
                StepWork::Idle { duration_ns } => {
                    PhasePlan::new(&s.name, &s.title, Work::Idle { duration_ns })
                }
                StepWork::Io {
                    spec,
                    time_limit_ns,
                } => {
                    let mut p = PhasePlan::new(&s.name, &s.title, Work::Generate { spec });
                    p.time_limit_ns = time_limit_ns;
                    p
                }
            })
            .collect();
        Ok(crate::phase::with_data(plans, self.data))
    }

    fn summarize(
        &self,
        _dir: &Path,
        runner: &Runner<'_>,
        records: &[PhaseRecord],
    ) -> Result<Measurement, SuiteError> {
        Ok(measurement(
            runner.target.info().capacity_bytes,
            &self.shape,
            records,
        ))
    }
}

/// The measurement in `records`, the phases of a twin plan on a drive of
/// `capacity_bytes`.
pub fn measurement(capacity_bytes: u64, shape: &PlanShape, records: &[PhaseRecord]) -> Measurement {
    let io = |r: &&PhaseRecord| r.work.has_io();
    Measurement {
        capacity_bytes,
        shape: shape.clone(),
        done: records
            .iter()
            .filter(io)
            .map(|r| PhaseAmount {
                name: r.name.clone(),
                ios: r.metrics.read_ios + r.metrics.write_ios + r.metrics.trim_ios,
                bytes: r.metrics.read_bytes + r.metrics.write_bytes + r.metrics.trim_bytes,
            })
            .collect(),
        figures: storbench_twin::figures::figures(|n| {
            records.iter().find(|r| r.name == n).map(|r| &r.metrics)
        }),
    }
}
