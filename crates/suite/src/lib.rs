//! storbench-suite: drive procedures (trace bench, performance consistency, seasoning,
//! TRIM validation), each a sequence of phases with resumable checkpoint state.

pub mod args;
pub mod bench;
pub mod consistency;
pub mod health;
pub mod image;
pub mod output;
pub mod phase;
pub mod procedure;
pub mod progress;
pub mod purge;
pub mod replay;
pub mod run;
pub mod runner;
pub mod season;
pub mod state;
pub mod targets;
pub mod trimcheck;
pub mod trust;
pub mod twin;
pub mod units;

pub use phase::{Control, PhasePlan, PhaseRecord, SeriesRow, SuiteError, Work};
pub use procedure::{execute, read_result, Configured, Procedure, Scans, Start, SuiteResult};
