//! storbench-twin: a drive's digital twin. The measurement plan ([`plan`]), the figures
//! it yields ([`figures`]), the parameters of the simulated drive fitted to them
//! ([`params`]), the fit itself ([`fit`]: bounded, deterministic Levenberg-Marquardt in
//! scaled parameter space, each evaluation the plan run on a candidate drive in this
//! process, [`eval`]) and the `twin.json` it writes ([`file`]). See `docs/twin.md`.

pub mod eval;
pub mod figures;
pub mod file;
pub mod fit;
pub mod params;
pub mod plan;

/// What goes wrong making a twin.
#[derive(Debug, thiserror::Error)]
pub enum TwinError {
    #[error("{0}")]
    Invalid(String),
    #[error("simulating a candidate drive: {0}")]
    Sim(String),
    #[error("the fit was stopped before it finished (nothing was fitted)")]
    Stopped,
}

pub use file::{Measurement, TwinFile, TWIN_FILE};
pub use fit::{fit, FitOptions};
pub use plan::{Plan, PlanShape};

/// The measurement `plan` yields on a simulated drive `cfg`, run in this process (what
/// `storbench twin measure` records on `sim:` targets, without a run directory).
pub fn measure_sim(
    cfg: storbench_sim::SimConfig,
    shape: &PlanShape,
) -> Result<Measurement, TwinError> {
    let capacity_bytes = cfg.capacity_bytes;
    let plan = Plan::new(capacity_bytes, shape);
    let runs = eval::run_plan(cfg, &plan)?;
    Ok(Measurement {
        capacity_bytes,
        shape: shape.clone(),
        done: runs
            .iter()
            .map(|(n, m)| plan::PhaseAmount {
                name: n.clone(),
                ios: m.read_ios + m.write_ios + m.trim_ios,
                bytes: m.read_bytes + m.write_bytes + m.trim_bytes,
            })
            .collect(),
        figures: figures::figures(|n| runs.iter().find(|(k, _)| k == n).map(|(_, m)| m)),
    })
}

#[cfg(test)]
mod tests;
