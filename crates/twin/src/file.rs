//! What a twin reads and writes: the measurement (the `twin measure` procedure's
//! summary in result.json) and `twin.json`.

use crate::figures::Figure;
use crate::params::Scale;
use crate::plan::{PhaseAmount, PlanShape};
use serde::{Deserialize, Serialize};

/// A drive's measurement: the summary `storbench twin measure` writes in result.json.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// The measured drive's capacity (the plan's spans are shares of it).
    pub capacity_bytes: u64,
    /// The plan's phase lengths.
    pub shape: PlanShape,
    /// What each I/O phase completed (a phase a time limit ended is shorter).
    pub done: Vec<PhaseAmount>,
    pub figures: Vec<Figure>,
}

/// One figure, measured and the twin's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FigureReport {
    pub name: String,
    pub unit: String,
    pub measured: f64,
    pub twin: f64,
    /// (twin - measured) / measured.
    pub error_pct: f64,
    /// The fit's residual: log(twin / measured) over the figure's noise.
    pub residual: f64,
}

/// One fitted parameter.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParamReport {
    pub key: String,
    pub unit: String,
    pub value: f64,
    /// Its value in the preset the fit started from.
    pub start: f64,
    pub lo: f64,
    pub hi: f64,
    pub scale: Scale,
    /// Whether some measured figure moves when it does.
    pub identified: bool,
    /// The largest move of a figure, in that figure's noises, when the parameter moves
    /// across a tenth of its range.
    pub sensitivity: f64,
    /// The figure that moves most with it.
    pub most_moved: Option<String>,
}

/// `twin.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TwinFile {
    pub schema_version: u32,
    /// The twin: a `sim:` spec at the measured drive's capacity.
    pub target: String,
    /// The preset the fit started from (the nearest to the measurement).
    pub preset: String,
    pub capacity_bytes: u64,
    /// Capacity of the simulated drives the fit ran the plan on.
    pub eval_capacity_bytes: u64,
    pub parameters: Vec<ParamReport>,
    /// Parameters no measured figure moves with: the twin keeps the preset's guess.
    pub unidentified: Vec<String>,
    pub figures: Vec<FigureReport>,
    /// Half the sum of squared residuals at the start and at the end.
    pub start_cost: f64,
    pub cost: f64,
    pub iterations: usize,
    /// Simulated measurements the fit ran.
    pub evaluations: usize,
}
