//! `storbench twin measure` (issue 33): the twin's measurement plan
//! (`storbench_twin::plan`) run as a procedure, so a drive is measured with the same
//! guard, checkpoints, resume and result directory as every other; the summary is the
//! [`Measurement`] `storbench twin fit` fits a simulated drive to.

use crate::phase::{PhasePlan, PhaseRecord, Runner, SuiteError, Work};
use crate::procedure::Procedure;
use serde::{Deserialize, Serialize};
use std::path::Path;
use storbench_engine::TargetInfo;
use storbench_twin::plan::{PhaseAmount, Plan, PlanShape, StepWork};
use storbench_twin::Measurement;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TwinMeasureConfig {
    pub target: String,
    /// How to open a real target.
    #[serde(default)]
    pub open: crate::targets::RealOpen,
    pub shape: PlanShape,
    /// Content of every write (`--data`).
    #[serde(default = "crate::phase::random_data")]
    pub data: storbench_engine::DataKind,
}

impl TwinMeasureConfig {
    /// The plan for a real drive (about 40 minutes on a 256 GB SATA drive).
    pub fn new(target: &str) -> Self {
        TwinMeasureConfig {
            target: target.to_owned(),
            open: Default::default(),
            shape: PlanShape::full(),
            data: storbench_engine::DataKind::Random,
        }
    }

    /// `--quick`: short phases for a small simulated drive.
    pub fn quick(target: &str) -> Self {
        TwinMeasureConfig {
            shape: PlanShape::quick(),
            ..TwinMeasureConfig::new(target)
        }
    }
}

impl Procedure for TwinMeasureConfig {
    const NAME: &'static str = "twin-measure";

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
    ) -> Result<serde_json::Value, SuiteError> {
        let m = measurement(runner.target.info().capacity_bytes, &self.shape, records);
        Ok(serde_json::to_value(m).expect("a measurement serializes"))
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
