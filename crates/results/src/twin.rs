//! `storbench twin measure` and `storbench twin fit` (issue 33, docs/twin.md): the
//! measurement's configuration and its section of result.json (the [`Measurement`] a
//! twin is fitted to), and `twin.json`, the fitted twin ([`TwinFile`]). The plan, the
//! figures' definitions and the fit live in `storbench-twin`; these are what they write.

use crate::consistency::NS_PER_S;
use serde::{Deserialize, Serialize};

/// File name of the twin `storbench twin fit` writes beside a measurement's result.
pub const TWIN_FILE: &str = "twin.json";
/// twin.json's `schema_version`.
pub const TWIN_SCHEMA_VERSION: u32 = 1;

/// `storbench twin measure`'s configuration (result.json's `config`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TwinMeasureConfig {
    pub target: String,
    /// How to open a real target.
    #[serde(default)]
    pub open: crate::RealOpen,
    pub shape: PlanShape,
    /// Content of every write (`--data`).
    #[serde(default = "crate::random_data")]
    pub data: storbench_core::DataKind,
}

impl TwinMeasureConfig {
    /// The plan for a real drive (about 40 minutes on a 256 GB SATA drive).
    pub fn new(target: &str) -> Self {
        TwinMeasureConfig {
            target: target.to_owned(),
            open: Default::default(),
            shape: PlanShape::full(),
            data: storbench_core::DataKind::Random,
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

/// How long the plan's phases are.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanShape {
    /// I/Os of each random 4 KB phase (QD1, QD4, QD32; the mixed probe).
    pub rand_ios: u64,
    /// Random writes before steady state is measured, in multiples of the span.
    pub warm_span_writes: f64,
    /// Random writes measured as steady state, in multiples of the span.
    pub steady_span_writes: f64,
    /// Idle time after the TRIM pass.
    pub settle_ns: u64,
    /// Cap of each random 4 KB phase on the drive's clock (a real drive's plan).
    pub rand_time_limit_ns: Option<u64>,
    /// Cap of each warm-up phase on the drive's clock (a real drive's plan: its
    /// figure then holds as many span writes as the drive did in that time).
    pub warm_time_limit_ns: Option<u64>,
    /// Cap of each measured steady phase on the drive's clock.
    #[serde(default)]
    pub steady_time_limit_ns: Option<u64>,
}

impl PlanShape {
    /// The plan for a drive: about 40 minutes on a 256 GB SATA drive (its two fills,
    /// one read pass and a quarter written after TRIM, about 25 minutes, then the capped
    /// random-write phases). A large drive does not reach steady state in the capped
    /// warm-ups; the fit replays the same share of the span, so the twin starts from
    /// the state the drive was measured in.
    pub fn full() -> PlanShape {
        PlanShape {
            rand_ios: 50_000,
            warm_span_writes: 2.0,
            steady_span_writes: 0.25,
            settle_ns: 10 * NS_PER_S,
            rand_time_limit_ns: Some(30 * NS_PER_S),
            warm_time_limit_ns: Some(240 * NS_PER_S),
            steady_time_limit_ns: Some(120 * NS_PER_S),
        }
    }

    /// `--quick`: short phases for tests and demos on small simulated drives.
    pub fn quick() -> PlanShape {
        PlanShape {
            rand_ios: 6_000,
            warm_span_writes: 1.5,
            steady_span_writes: 0.25,
            settle_ns: 2 * NS_PER_S,
            rand_time_limit_ns: Some(30 * NS_PER_S),
            warm_time_limit_ns: Some(600 * NS_PER_S),
            steady_time_limit_ns: Some(600 * NS_PER_S),
        }
    }
}

/// What one I/O phase of a measurement completed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhaseAmount {
    pub name: String,
    pub ios: u64,
    pub bytes: u64,
}

/// A measured (or simulated) figure.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    pub name: String,
    pub unit: String,
    pub value: f64,
}

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

/// How the fit moves a parameter between its bounds: times and rates on a log scale
/// (a 10% change is the same step anywhere in the range), shares on a linear one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scale {
    Linear,
    Log,
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
