//! The trace: one record per I/O, its metadata, the Parquet store, import/export
//! formats and `characterize`.
//!
//! Data flows `import | record | synth -> Trace (Parquet) -> Workload`; this crate
//! owns the first arrow and knows nothing about targets, engines or reports.

pub mod atomic;
pub mod characterize;
mod checksum;
pub mod error;
pub mod formats;
pub mod model;
pub mod store;
#[cfg(test)]
mod test_rng;

pub use characterize::{characterize_file, Characterization, Characterizer};
pub use error::TraceError;
pub use model::{DeviceId, IoRecord, Names, Op, StreamId, TraceMeta};
pub use store::{read_all, TraceReader, TraceWriter};
