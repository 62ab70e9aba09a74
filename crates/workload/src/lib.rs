//! Workload sources for the engine: replay of a trace, fio-style generators, and the
//! synthesized published trace profiles (which write traces).

pub mod generator;
pub mod replay;
pub mod source;
pub mod synth;
/// The one units module, kept in storbench-core (re-exported at its old path).
pub use storbench_core::units;

pub use source::{NextIo, Source, SourceError};
