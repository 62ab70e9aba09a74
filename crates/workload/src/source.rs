//! The [`Source`] trait: what the engine pulls I/Os from.

use storbench_trace::Op;

/// The next I/O a source wants issued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NextIo {
    pub op: Op,
    pub offset_bytes: u64,
    pub len_bytes: u64,
    /// Issue time in the source's own timeline (trace time, ns), for `timed` replay.
    pub at_ns: Option<u64>,
    /// How many I/Os were in flight in the trace when this one was issued, this one
    /// included (from the trace's completion times), for `queue-depth` replay.
    pub trace_qd: Option<u32>,
}

#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("{file}: {message}")]
    Read { file: String, message: String },
    #[error("{0}")]
    Invalid(String),
}

/// A stream of I/Os. Sources are pulled one I/O at a time and must not buffer more
/// than a bounded amount (a row group of a trace, say), so memory stays flat.
pub trait Source {
    /// The next I/O, or `None` when the source is exhausted.
    fn next_io(&mut self) -> Option<Result<NextIo, SourceError>>;

    /// Total I/Os this source will give, when known (for progress and ETA).
    fn total_ios(&self) -> Option<u64> {
        None
    }

    /// Total bytes this source will move, when known.
    fn total_bytes(&self) -> Option<u64> {
        None
    }

    /// Time-weighted average number of I/Os in flight over the trace's busy time, from
    /// the trace's completion times, once the source has been read to the end (for the
    /// `queue-depth` replay fidelity figure). `None` when unknown.
    fn trace_avg_qd(&self) -> Option<f64> {
        None
    }
}
