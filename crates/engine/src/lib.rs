//! The engine: one loop that keeps I/Os in flight on a [`Target`] and reaps
//! completions. Real and simulated targets differ only in the target and its clock.

pub mod backend;
pub mod data;
pub mod prefetch;
pub mod real;
pub mod run;
pub mod safety;
pub mod spec;
pub mod target;
pub mod testing;

pub use backend::{BufferPlan, BufferTooSmall, DEFAULT_BUFFER_MEMORY_BYTES};
pub use prefetch::Prefetch;
pub use real::{BackendChoice, RealTarget};
pub use run::{
    idle, job_seed, run_jobs, run_lanes, run_phase, EngineError, Fidelity, Flow, InFlightIo,
    NoObserver, Observer, Pacing, PhaseOutcome, RunOptions, SecondMark,
};
pub use safety::identity::TargetIdentity;
pub use spec::{open_real, open_real_as, OpenOptions, TargetSpec};
pub use target::{Completion, DataKind, IoRequest, Target, TargetError, TargetInfo, TargetKind};
