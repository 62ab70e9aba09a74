//! The trace: one record per I/O, its metadata, the Parquet store, import/export
//! formats and `characterize`.
//!
//! Data flows `import | record | synth -> Trace (Parquet) -> Workload`; this crate
//! owns the first arrow and knows nothing about targets, engines or reports.

pub mod model;

pub use model::{DeviceId, IoRecord, Names, Op, StreamId, TraceMeta};
