//! The target trait: what the engine loop drives.
//!
//! A target carries its own clock. A real target (file, block device) reads
//! CLOCK_MONOTONIC; a virtual one (the simulated SSD, the test target) keeps virtual
//! time and advances it only inside [`Target::advance`]. The engine loop never reads a
//! clock of its own, so the same loop drives both with no special case.

use crate::io::Op;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What kind of target was measured (reported in results; metrics never look at it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TargetKind {
    File,
    BlockDevice,
    Sim,
    Test,
}

/// Description of a target, probed when it is opened.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TargetInfo {
    pub kind: TargetKind,
    /// Path, or `sim:PRESET,...` spec.
    pub name: String,
    pub capacity_bytes: u64,
    pub logical_block_bytes: u32,
    pub rotational: Option<bool>,
    pub discard: bool,
    pub model: Option<String>,
    /// The I/O backend in use (`io_uring`, `threads`, `virtual`).
    pub backend: String,
    /// Anything else worth reporting (sysfs queue settings, sim parameters, ...).
    pub details: BTreeMap<String, String>,
}

/// Content of the data a write carries. Real targets get it in the slot's buffer;
/// a compressing simulated drive reads the hint.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind", content = "ratio")]
pub enum DataKind {
    /// Fresh pseudo-random bytes: incompressible, never dedupable (the default).
    Random,
    /// All zero bytes.
    Zeros,
    /// Compresses to about 1/ratio of its size (ratio >= 1).
    Compressible(f64),
}

/// One I/O handed to a target.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IoRequest {
    /// Engine slot: index of the buffer this I/O uses, returned in its [`Completion`].
    /// A slot is reused only after its completion has been reaped.
    pub slot: u32,
    pub op: Op,
    pub offset_bytes: u64,
    pub len_bytes: u64,
    /// Content of a write (ignored for other ops).
    pub data: DataKind,
}

/// One completed I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    pub slot: u32,
    /// Completion time on the target's clock (ns).
    pub complete_ns: u64,
    /// Bytes transferred, or an errno (the engine accepts either sign).
    pub result: Result<u64, i32>,
}

#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Invalid(String),
    /// The safety guard (or the file-ownership guard) refused: a user decision, with a hint.
    #[error("{message}\n  hint: {hint}")]
    Refused { message: String, hint: String },
}

/// What the engine loop drives.
///
/// Contract (asserted by the engine and by each target):
/// - at most [`Target::max_in_flight`] I/Os are outstanding;
/// - every submitted slot comes back exactly once in a [`Completion`];
/// - `now_ns` never goes backwards and every completion's `complete_ns` is at least
///   the `now_ns` at which the I/O was submitted and at most `now_ns` after `advance` returns.
pub trait Target {
    fn info(&self) -> &TargetInfo;

    /// Current time on this target's clock, ns since the target was opened.
    fn now_ns(&self) -> u64;

    /// Largest number of I/Os this target accepts in flight.
    fn max_in_flight(&self) -> usize;

    /// The buffer of `slot`, for the engine to fill a write's data or read it back.
    /// `None` when the target does not use data (virtual targets).
    fn buffer(&mut self, slot: u32) -> Option<&mut [u8]>;

    /// Submit a batch of I/Os at the current time. Real targets submit all of them in
    /// one system call where they can.
    fn submit(&mut self, reqs: &[IoRequest]) -> Result<(), TargetError>;

    /// Let time pass until at least `min_complete` completions have been pushed to
    /// `out`, or the clock reaches `deadline_ns`, whichever comes first. With
    /// `min_complete == 0` and no deadline, only collects what has already completed.
    /// With `min_complete == 0` and a deadline, lets time pass until the deadline
    /// (idle time, or waiting for a timed I/O's issue time), collecting completions on
    /// the way. Real targets sleep then spin towards a deadline; virtual targets jump.
    ///
    /// On return, every completion with `complete_ns < now_ns()` has been pushed (the
    /// engine feeds events to the metrics in time order). Real targets stamp a
    /// completion when they reap it, which guarantees this.
    fn advance(
        &mut self,
        min_complete: usize,
        deadline_ns: Option<u64>,
        out: &mut Vec<Completion>,
    ) -> Result<(), TargetError>;
}
