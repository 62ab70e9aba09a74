//! storbench-record: recording block I/O on Linux from the tracefs binary ring buffers.
//!
//! The pieces, from bytes to I/Os:
//! * [`ringbuf`]: pages of `per_cpu/cpuN/trace_pipe_raw` -> timed raw events;
//! * [`format`]: event format files -> field offsets, field reads;
//! * [`block`]: raw records -> block issue/complete/requeue events, RWBS -> op;
//! * [`pair`]: per-CPU streams -> one time order -> issue/complete pairs in issue order;
//! * [`tracefs`]: a private tracing instance, removed on every exit;
//! * [`recorder`]: the loop that ties them together;
//! * [`sink`]: recorded I/Os -> Parquet trace records.
//!
//! Times: the instance uses `trace_clock` `mono`, so event times are CLOCK_MONOTONIC
//! ns; a trace's time 0 is the moment tracing was switched on, so idle time before the
//! first I/O (and between I/Os) stays in the trace.

pub mod block;
pub mod format;
pub mod pair;
pub mod recorder;
pub mod ringbuf;
pub mod sink;
pub mod tracefs;

pub use recorder::{
    device_info, DeviceInfo, PartitionRange, RecordOptions, RecordSummary, Recorder,
};

use std::path::PathBuf;

/// Why recording failed.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("recording block I/O needs root (tracefs block events); run as root, e.g. with sudo")]
    NotRoot,
    #[error("{} is not a block device", path.display())]
    NotBlockDevice { path: PathBuf },
    #[error("{} does not exist", path.display())]
    NoSuchDevice { path: PathBuf },
    #[error("tracefs unavailable: {detail}")]
    NoTracefs { detail: String },
    #[error("the kernel has no block request tracepoints ({} missing; needs CONFIG_BLK_DEV_IO_TRACE or CONFIG_EVENT_TRACING)", path.display())]
    NoBlockEvents { path: PathBuf },
    #[error("{}: line {line}: {message}", path.display())]
    Format {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{what} {}", path.display())]
    Io {
        what: String,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("writing the trace: {0}")]
    Sink(Box<dyn std::error::Error + Send + Sync>),
}
