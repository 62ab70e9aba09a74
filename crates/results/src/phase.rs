//! What a phase did ([`Work`]) and measured ([`PhaseRecord`]): result.json's `phases`.

use crate::health::HealthDelta;
use crate::purge::PurgeReport;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use storbench_core::generator::GenSpec;
use storbench_core::pacing::Fidelity;
use storbench_metrics::PhaseMetrics;

/// What one phase does.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Work {
    /// Return the drive to its fresh state (secure erase).
    Purge,
    /// `passes` sequential passes of `block_bytes` writes over `[start, start+len)`.
    SeqWrite {
        start_bytes: u64,
        len_bytes: u64,
        block_bytes: u64,
        qd: u32,
        passes: u32,
    },
    /// Uniform random writes of `block_bytes` over `[0, span)`; no end of its own.
    RandWrite {
        span_bytes: u64,
        block_bytes: u64,
        qd: u32,
        seed: u64,
    },
    /// One TRIM pass over `[0, span)` in `chunk_bytes` pieces.
    Trim {
        span_bytes: u64,
        chunk_bytes: u64,
        qd: u32,
    },
    /// Restore a generated image (see [`crate::image`]).
    GeneratedImage {
        span_bytes: u64,
        fill: f64,
        seed: u64,
        qd: u32,
    },
    /// Restore the user's image file.
    FileImage {
        path: PathBuf,
        span_bytes: u64,
        qd: u32,
    },
    /// Restore a trace's pre-existing data (see [`crate::image::TraceImage`]).
    TraceImage {
        path: PathBuf,
        span_bytes: u64,
        qd: u32,
    },
    /// Replay a Parquet trace, queue-depth pacing (idle time cut). `skip_trims`: the
    /// trace's TRIMs are not replayed (Tom's Hardware's bench, seed 004).
    Replay {
        path: PathBuf,
        default_qd: u32,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        skip_trims: bool,
    },
    /// Leave the drive idle (no I/O) so it can do its background work.
    Idle { duration_ns: u64 },
    /// A fio-style generator (`storbench run`).
    Generate { spec: GenSpec },
}

impl Work {
    /// The queue depth the work keeps.
    pub fn qd(&self) -> u32 {
        match self {
            Work::Purge | Work::Idle { .. } => 1,
            Work::SeqWrite { qd, .. }
            | Work::RandWrite { qd, .. }
            | Work::Trim { qd, .. }
            | Work::GeneratedImage { qd, .. }
            | Work::TraceImage { qd, .. }
            | Work::FileImage { qd, .. } => *qd,
            Work::Replay { default_qd, .. } => *default_qd,
            Work::Generate { spec } => spec.qd,
        }
    }

    /// Whether the work drives I/O through the engine (not a purge or idle time).
    pub fn has_io(&self) -> bool {
        !matches!(self, Work::Purge | Work::Idle { .. })
    }
}

/// The result of one phase, stored in the run state and in result.json.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhaseRecord {
    pub name: String,
    pub title: String,
    pub work: Work,
    pub time_limit_ns: Option<u64>,
    /// Aggregates of the whole phase (series not included: see the journal and the
    /// phase's Parquet series). All zero for a purge.
    pub metrics: PhaseMetrics,
    pub purge: Option<PurgeReport>,
    /// I/Os the phase's source issued (the rebuild of a simulated drive re-issues them).
    #[serde(alias = "ios_issued")]
    pub issued_ios: u64,
    pub folded_ios: u64,
    pub aligned_ios: u64,
    /// Bytes the aligned I/Os moved beyond what they asked for.
    #[serde(default)]
    pub aligned_extra_bytes: u64,
    /// Why the phase ended: `source-done`, `time-limit`, `steady-state`, or (in the
    /// result of a run that did not finish) `interrupted` or `io-errors`.
    pub ended: String,
    /// Process runs the phase took (1 unless it was interrupted and resumed).
    pub segments: u32,
    pub fidelity: Option<Fidelity>,
    /// The first I/O that failed (`op at offset O length L: error`); the count is
    /// `metrics.errors`.
    #[serde(default)]
    pub first_error: Option<String>,
    /// What the phase did to the drive: host and flash writes over the phase and
    /// their ratio (the simulator's exact counters; SMART where a drive reports it).
    #[serde(default)]
    pub counters: Option<HealthDelta>,
    /// Wall time the phase took, summed over segments.
    pub wall_ms: u64,
}
