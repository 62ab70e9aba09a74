//! The vocabulary every storbench crate speaks: one I/O ([`Op`], [`IoRecord`]) and what
//! the engine loop drives ([`Target`] with its requests, completions and description),
//! and the units every flag, plan key and target spec is written in ([`units`]); what a
//! generator does ([`generator`]) and how a phase is paced ([`pacing`]), as data that
//! configurations and results record.
//!
//! Depends only on serde and thiserror, so crates that need these words and nothing
//! else (the simulated SSD, the metrics) build without Parquet, Arrow or io_uring.
//! `storbench-trace` and `storbench-engine` re-export every item from their old paths.

pub mod generator;
pub mod io;
pub mod pacing;
pub mod target;
pub mod units;

pub use io::{DeviceId, IoRecord, Op, StreamId};
pub use target::{Completion, DataKind, IoRequest, Target, TargetError, TargetInfo, TargetKind};
