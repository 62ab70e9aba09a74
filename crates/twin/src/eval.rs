//! One evaluation of the fit: the plan run on a candidate simulated drive, in this
//! process, through the engine loop every procedure uses (the simulator opens no file
//! and reads no clock, so an evaluation is deterministic and costs only CPU).

use crate::plan::{Plan, StepWork};
use crate::TwinError;
use storbench_engine::{run_phase, NoObserver, Pacing, RunOptions, Target};
use storbench_metrics::PhaseMetrics;
use storbench_sim::{SimConfig, SimSsd};
use storbench_workload::generator::Generator;

/// The seed the suite's runner mixes into every phase's written data
/// (`storbench-suite`'s `runner::DATA_SEED`, phase seed 0): the same data, so a
/// simulated drive measured by `twin measure` and evaluated here gives the same figures
/// bit for bit (`crates/suite/tests/twin.rs`).
pub const DATA_SEED: u64 = 0x5354_4f52;

/// The metrics of every phase of `plan` run on a fresh drive built from `cfg`.
pub fn run_plan(cfg: SimConfig, plan: &Plan) -> Result<Vec<(String, PhaseMetrics)>, TwinError> {
    let name = format!("sim:{}", cfg.preset);
    let mut ssd = SimSsd::new(cfg, &name);
    let mut out = Vec::with_capacity(plan.steps.len());
    for step in &plan.steps {
        let sim = |e: String| TwinError::Sim(format!("phase {}: {e}", step.name));
        match &step.work {
            StepWork::Purge => {
                let c = ssd.counters();
                if ssd.mapped_units() > 0 || c.host_write_ios > 0 || c.host_trim_ios > 0 {
                    ssd.purge().map_err(|e| sim(e.to_string()))?;
                }
            }
            StepWork::Idle { duration_ns } => {
                storbench_engine::idle(&mut ssd as &mut dyn Target, *duration_ns)
                    .map_err(|e| sim(e.to_string()))?;
            }
            StepWork::Io {
                spec,
                time_limit_ns,
            } => {
                let mut src = Generator::new(spec.clone()).map_err(|e| sim(e.to_string()))?;
                let mut opts = RunOptions::new(Pacing::QueueDepth {
                    default_qd: spec.qd,
                });
                opts.seed = DATA_SEED;
                opts.time_limit_ns = *time_limit_ns;
                let o = run_phase(&mut ssd, &mut src, &opts, &mut NoObserver)
                    .map_err(|e| sim(e.to_string()))?;
                out.push((step.name.clone(), o.metrics));
            }
        }
    }
    Ok(out)
}
