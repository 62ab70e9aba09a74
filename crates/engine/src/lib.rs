//! The engine: one loop that keeps I/Os in flight on a [`Target`] and reaps
//! completions. Real and simulated targets differ only in the target and its clock.

pub mod target;

pub use target::{Completion, DataKind, IoRequest, Target, TargetError, TargetInfo, TargetKind};
