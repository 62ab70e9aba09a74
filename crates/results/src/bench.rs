//! `storbench bench`, the trace bench (seeds 000, 002, 003, 004): its configuration
//! and its section of result.json.

use crate::health::HealthDelta;
use crate::RealOpen;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use storbench_core::DataKind;
use storbench_metrics::LatencyStats;

/// The trace a profile is synthesized into, in the run directory.
pub const TRACE_FILE: &str = "trace.parquet";

/// What to replay.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Workload {
    Trace { path: PathBuf },
    Profile { name: String, scale: f64, seed: u64 },
}

/// The state the drive is put in before the measured replay (2009 article).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DriveState {
    /// No preparation: the drive as it is.
    #[default]
    AsIs,
    /// Purge, then the trace's image.
    Fresh,
    /// Purge, one 128 KB sequential pass over the span, then the trace's image.
    Seasoned,
    /// Seasoned, then the trace replayed `used_passes` times.
    Used,
}

impl DriveState {
    pub fn name(self) -> &'static str {
        match self {
            DriveState::AsIs => "as-is",
            DriveState::Fresh => "fresh",
            DriveState::Seasoned => "seasoned",
            DriveState::Used => "used",
        }
    }

    /// From its name (`fresh`, `seasoned`, `used`, `as-is`).
    pub fn parse(s: &str) -> Option<DriveState> {
        [
            DriveState::AsIs,
            DriveState::Fresh,
            DriveState::Seasoned,
            DriveState::Used,
        ]
        .into_iter()
        .find(|d| d.name() == s)
    }
}

/// Replays of the trace before the measured one in the `used` state, by default.
pub const DEFAULT_USED_PASSES: u32 = 3;

fn default_used_passes() -> u32 {
    DEFAULT_USED_PASSES
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BenchConfig {
    pub target: String,
    /// How to open a real target.
    #[serde(default)]
    pub open: RealOpen,
    pub workload: Workload,
    /// Fold the trace onto this share of the drive (1.0 = whole drive).
    pub span_fraction: f64,
    /// QD for trace records without completion times.
    pub default_qd: u32,
    /// Drive state before the measured replay.
    #[serde(default)]
    pub state: DriveState,
    /// The user's disk image, restored by the state in place of the trace's own.
    #[serde(default)]
    pub image: Option<PathBuf>,
    /// `used`: replays of the trace before the measured one.
    #[serde(default = "default_used_passes")]
    pub used_passes: u32,
    /// Idle gaps of the trace kept up to this long (`None`: all idle cut).
    #[serde(default)]
    pub max_idle_ns: Option<u64>,
    /// Leave the trace's TRIMs out of every replay.
    #[serde(default)]
    pub no_trim: bool,
    /// Content of every write of the procedure.
    #[serde(default = "crate::random_data")]
    pub data: DataKind,
}

impl BenchConfig {
    pub fn new(target: &str, workload: Workload) -> Self {
        BenchConfig {
            target: target.to_owned(),
            open: Default::default(),
            workload,
            span_fraction: 1.0,
            default_qd: 1,
            state: DriveState::AsIs,
            image: None,
            used_passes: DEFAULT_USED_PASSES,
            max_idle_ns: None,
            no_trim: false,
            data: DataKind::Random,
        }
    }

    /// The state's name as results carry it.
    pub fn state_name(&self) -> &'static str {
        self.state.name()
    }

    /// What the state's image phase restores, in words (`None`: no image).
    pub fn image_name(&self) -> Option<String> {
        if self.state == DriveState::AsIs {
            return None;
        }
        Some(match &self.image {
            Some(p) => p.display().to_string(),
            None => "the trace's image".into(),
        })
    }

    /// The trace file the replay reads.
    pub fn trace_path(&self, dir: &Path) -> PathBuf {
        match &self.workload {
            Workload::Trace { path } => path.clone(),
            Workload::Profile { .. } => dir.join(TRACE_FILE),
        }
    }
}

/// The bench section of result.json.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BenchSummary {
    pub trace: String,
    pub data_rate_mb_per_s: f64,
    pub read_rate_mb_per_s: f64,
    pub write_rate_mb_per_s: f64,
    pub service: LatencyStats,
    pub service_read: LatencyStats,
    pub service_write: LatencyStats,
    pub busy_s: f64,
    pub reads: u64,
    pub writes: u64,
    #[serde(alias = "bytes_read")]
    pub read_bytes: u64,
    #[serde(alias = "bytes_written")]
    pub write_bytes: u64,
    pub span_bytes: u64,
    pub folded_ios: u64,
    pub trace_avg_qd: Option<f64>,
    pub replayed_avg_qd: Option<f64>,
    /// Drive state before the measured replay: `as-is`, `fresh`, `seasoned`, `used`.
    #[serde(default)]
    pub state: String,
    /// `used`: replays of the trace before the measured one.
    #[serde(default)]
    pub used_passes: Option<u32>,
    /// What the state restored: the trace's image or the user's image file.
    #[serde(default)]
    pub image: Option<String>,
    /// The image restored by the state (bytes, writes, rate).
    #[serde(default)]
    pub image_bytes: u64,
    #[serde(default)]
    pub image_writes: u64,
    #[serde(default)]
    pub image_mb_per_s: Option<f64>,
    /// The state's 128 KB sequential pass (seasoned, used).
    #[serde(default)]
    pub seq_pass_mb_per_s: Option<f64>,
    /// The measured replay's own host and flash writes and their ratio (the state's
    /// writes are not in it).
    #[serde(default)]
    pub replay_counters: Option<HealthDelta>,
    /// Idle gaps kept up to this long (`--max-idle`); `None`: all idle cut.
    #[serde(default)]
    pub max_idle_s: Option<f64>,
    /// TRIMs of the trace not replayed (`--no-trim`), per replay.
    #[serde(default)]
    pub trims_skipped: u64,
    /// Content of the written data (`random`, `zeros`, `compressible:R`).
    #[serde(default)]
    pub data: String,
    /// Name of the trace in the report's trace table.
    pub trace_name: String,
    /// Characterization of the trace (the report's trace table).
    pub characterize: Option<crate::TraceCharacterization>,
}
