//! The one engine loop: pull I/Os from a [`Source`], pace them, submit them to a
//! [`Target`], reap completions and feed the metrics [`Recorder`].
//!
//! The loop reads no clock of its own: every time comes from [`Target::now_ns`] and time
//! passes only inside [`Target::advance`], so a real device (CLOCK_MONOTONIC) and a
//! simulated one (virtual time) run through the same code with no special case.
//!
//! Pacing:
//! - [`Pacing::QueueDepth`]: keep the source's order; issue an I/O once the number in
//!   flight is below its `trace_qd` (the in-flight count it had in the trace, itself
//!   included), or `default_qd` when the source has none. Idle time disappears.
//! - [`Pacing::Timed`]: issue each I/O at `at_ns / speed` after the first I/O (which is
//!   due when the source hands it over, so opening the source is not lateness), with gaps
//!   between consecutive trace issue times longer than `max_idle_ns` cut to that length
//!   (gaps measured in trace time, before dividing by speed). I/Os due together go in
//!   one submission; the target sleeps then spins towards each deadline.
//! - [`Pacing::FixedQd`]: ignore times, keep N in flight.
//!
//! Offsets past the end of the fold span (the target's capacity unless
//! [`RunOptions::fold_span_bytes`] says less) are folded onto it, and unaligned I/O is
//! aligned to the target's logical block size; both are counted in [`PhaseOutcome`].

use crate::target::{DataKind, Target, TargetError};
use serde::{Deserialize, Serialize};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
pub use storbench_core::pacing::{Fidelity, Pacing};
use storbench_metrics::{PhaseMetrics, SecondSample};
use storbench_trace::{IoRecord, Op};
use storbench_workload::{NextIo, Source, SourceError};

/// Default gap cut of `timed` replay: idle gaps longer than 1 s in the trace are cut
/// to 1 s (`--max-idle none` keeps every gap).
pub const DEFAULT_MAX_IDLE_NS: u64 = 1_000_000_000;

/// Default interval between [`Observer::on_tick`] calls, on the target's clock.
pub const DEFAULT_TICK_NS: u64 = 250_000_000;

/// Options of one phase.
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub pacing: Pacing,
    /// Content of written data.
    pub data: DataKind,
    /// Seed of the data filler.
    pub seed: u64,
    /// Stop submitting after this long (target clock) and drain; still `complete`.
    pub time_limit_ns: Option<u64>,
    /// Set (by a Ctrl-C handler, say) to stop submitting, drain, and return
    /// `complete == false`.
    pub stop: Option<Arc<AtomicBool>>,
    /// Pass every completed I/O to [`Observer::on_io`] (for ios.parquet).
    pub log_ios: bool,
    /// I/Os are folded onto `[0, fold_span_bytes)`; `None`: the target's capacity.
    pub fold_span_bytes: Option<u64>,
    /// Interval of [`Observer::on_tick`] on the target's clock.
    pub tick_ns: u64,
    /// [`Pacing::QueueDepth`] only: keep idle time instead of cutting it all. An I/O
    /// the trace issued with none other in flight waits, once none is in flight in
    /// the replay either, for its gap since the trace's previous I/O, capped at this
    /// (`bench --max-idle`). Busy time does not count the wait. `None`: all idle cut.
    pub max_idle_ns: Option<u64>,
}

impl RunOptions {
    pub fn new(pacing: Pacing) -> RunOptions {
        RunOptions {
            pacing,
            data: DataKind::Random,
            seed: 0,
            time_limit_ns: None,
            stop: None,
            log_ios: false,
            fold_span_bytes: None,
            tick_ns: DEFAULT_TICK_NS,
            max_idle_ns: None,
        }
    }
}

/// Watches a phase: progress bars, ios.parquet writers, checkpoints.
pub trait Observer {
    /// A completed I/O (only with [`RunOptions::log_ios`]), in completion order. Times
    /// on the target clock. A failed I/O comes with `complete_ns == None`.
    fn on_io(&mut self, _io: &IoRecord) {}
    /// About every [`RunOptions::tick_ns`] of target time: time since the phase start,
    /// I/Os completed so far, finished per-second windows so far.
    fn on_tick(&mut self, _elapsed_ns: u64, _done_ios: u64, _series: &[SecondSample]) {}
    /// At each whole second of phase time, before any event at or after it is fed to
    /// the metrics: where the phase stands at exactly that instant (checkpoints).
    /// [`Flow::Stop`] stops submitting, as [`RunOptions::stop`] does.
    fn on_second(&mut self, _mark: &SecondMark<'_>) -> Flow {
        Flow::Continue
    }
}

/// What the engine does after [`Observer::on_second`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Stop,
}

/// An I/O in flight at a [`SecondMark`]: what the source gave (offset and length
/// already folded and aligned) and when it was submitted.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct InFlightIo {
    pub op: Op,
    pub offset_bytes: u64,
    pub len_bytes: u64,
    pub at_ns: Option<u64>,
    pub trace_qd: Option<u32>,
    pub issue_ns: u64,
}

impl InFlightIo {
    /// The I/O as a source hands it out (to issue it again on resume).
    pub fn next_io(&self) -> NextIo {
        NextIo {
            op: self.op,
            offset_bytes: self.offset_bytes,
            len_bytes: self.len_bytes,
            at_ns: self.at_ns,
            trace_qd: self.trace_qd,
        }
    }
}

pub use phase::SecondMark;

/// An observer that watches nothing.
pub struct NoObserver;
impl Observer for NoObserver {}

/// The result of one phase.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhaseOutcome {
    pub metrics: PhaseMetrics,
    /// False when stopped by [`RunOptions::stop`] before the source was exhausted.
    pub complete: bool,
    /// Issued I/Os whose offset was past the fold span and was folded onto it.
    pub folded_ios: u64,
    /// Issued I/Os whose offset or length was not a multiple of the logical block size.
    pub aligned_ios: u64,
    /// Bytes those I/Os moved beyond what they asked for (the widening).
    #[serde(default)]
    pub aligned_extra_bytes: u64,
    pub fidelity: Fidelity,
    /// The target's I/O backend (`io_uring`, `threads`, `virtual`).
    pub backend: String,
    pub submitted_ios: u64,
    /// First failed completion, for the error message (`op offset+len: errno`).
    pub first_error: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Target(#[from] TargetError),
    #[error(transparent)]
    Source(#[from] SourceError),
    #[error("{0}")]
    Invalid(String),
}
mod pace;
mod phase;

/// Run one phase: drive `target` with `source` until the source is exhausted, the time
/// limit passes or `stop` is set; drain what is in flight; return the metrics.
pub fn run_phase(
    target: &mut dyn Target,
    source: &mut dyn Source,
    opts: &RunOptions,
    observer: &mut dyn Observer,
) -> Result<PhaseOutcome, EngineError> {
    phase::PhaseRun::new(target, source, opts, observer)?.run()
}

/// Let `duration_ns` of idle time pass on `target` (nothing may be in flight).
pub fn idle(target: &mut dyn Target, duration_ns: u64) -> Result<(), EngineError> {
    let deadline = target.now_ns().saturating_add(duration_ns);
    let mut out = Vec::new();
    target.advance(0, Some(deadline), &mut out)?;
    assert!(
        out.is_empty(),
        "completions during idle: something was in flight"
    );
    Ok(())
}

#[cfg(test)]
mod fidelity_keys {
    use super::Fidelity;

    /// Issue 22: the fidelity keys put the unit first (`issue_error_ns_p50`, `p999`);
    /// result schema 2 puts it last. A schema-1 result still reads.
    #[test]
    fn schema_1_fidelity_keys_still_read() {
        let old = r#"{"mode":"timed","issue_error_ns_p50":1,"issue_error_ns_p90":2,
            "issue_error_ns_p99":3,"issue_error_ns_p999":4,"issue_error_ns_max":5,
            "issue_error_ns_mean":2.5,"drift_ns":null,"drift_pct":null,"slot_starved_ios":0,
            "qd_capped_ios":0,"replayed_avg_qd":null,"trace_avg_qd":null}"#;
        let f: Fidelity = serde_json::from_str(old).unwrap();
        assert_eq!(
            (
                f.issue_error_p50_ns,
                f.issue_error_p99_9_ns,
                f.issue_error_max_ns
            ),
            (Some(1), Some(4), Some(5))
        );
        assert_eq!(f.issue_error_mean_ns, Some(2.5));
        let new = serde_json::to_string(&f).unwrap();
        assert!(new.contains("\"issue_error_p99_9_ns\":4"), "{new}");
        assert!(!new.contains("issue_error_ns_"), "{new}");
    }
}
