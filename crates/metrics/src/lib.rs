//! storbench-metrics: per-I/O metrics as defined in METHODOLOGY section 2.
//!
//! - [`Recorder`]: fed by the engine loop (one submission and one completion event per
//!   I/O, in time order); O(1) per event, no allocation per event, memory flat in run
//!   length except the per-second series (one [`SecondSample`] per second).
//! - [`PhaseMetrics`]: the aggregates of one phase (counts, bytes, busy time, data
//!   rates, service-time statistics with a mergeable histogram, QD distribution).
//! - [`calc`]: the same definitions as pure functions over hand-built sets, used by
//!   tests as the reference and by anyone computing a metric outside a replay.
//! - [`steady`]: SNIA steady-state detection and the consistency scores.

pub mod calc;
pub mod recorder;
pub mod stats;
pub mod steady;

pub use calc::{busy_ns, busy_ns_by_op, data_rate_mb_per_s, qd_time_ns, quantile_nearest_rank};
pub use recorder::Recorder;
pub use stats::{
    HistogramData, LatencyStats, MergeError, PhaseMetrics, QdStats, SecondSample, ServiceHistogram,
};
pub use steady::{consistency_scores, snia_steady_state, ConsistencyScores, SteadyState};

/// Nanoseconds per second.
pub const NS_PER_S: u64 = 1_000_000_000;
