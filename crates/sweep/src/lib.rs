//! storbench-sweep: design sweeps on the simulated SSD.
//!
//! A plan ([`plan`]) is a TOML file of targets (simulator presets with key = value axes
//! as lists or ranges), workloads, procedures with their options, and seeds; its
//! cartesian product is the list of points. [`local::run_local`] runs the points on
//! this machine's cores, each through the procedures the CLI runs ([`point`], the one
//! module that knows `storbench-suite`), resumably; [`store`] keeps each point's own
//! result directory and writes the dataset, one row per point with its parameters and
//! headline figures, through `storbench-report`. The Python package runs the same
//! points as Ray tasks ([`local::run_detached`]) and records them through the same
//! [`store::SweepDir`], so a point's row is the same whichever way it ran.

pub mod local;
pub mod plan;
pub mod point;
pub mod store;

pub use local::{run_detached, run_local, Failure, LocalOptions, Outcome};
pub use plan::{Plan, PlanError, Point, RunSpec, WorkloadSpec};
pub use point::{run_point, PointError, PointSpecError, Row};
pub use store::{PointRecord, SweepDir, SweepError};
