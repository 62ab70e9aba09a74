//! `storbench run`: its configuration and its section of result.json.

use crate::RealOpen;
use serde::{Deserialize, Serialize};
use storbench_core::generator::{Mix, Pattern, SpanSpec};
use storbench_core::DataKind;

/// A run's configuration, as the user gave it (resolved against the target when the
/// phase is planned).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    pub target: String,
    #[serde(default)]
    pub open: RealOpen,
    pub pattern: Pattern,
    pub mix: Mix,
    pub block_bytes: u64,
    pub qd: u32,
    /// Start of the region.
    pub offset_bytes: u64,
    /// Length of the region from the offset (`None`: to the end of the target).
    pub span: Option<SpanSpec>,
    /// Run this long on the target's clock.
    pub time_limit_ns: Option<u64>,
    /// Move this many bytes; without a time or byte limit, one pass over the span.
    #[serde(alias = "bytes_limit")]
    pub limit_bytes: Option<u64>,
    pub seed: u64,
    pub data: DataKind,
    pub log_ios: bool,
}

impl RunConfig {
    /// 4 KB random reads at QD32 over the whole target, one pass.
    pub fn new(target: &str) -> RunConfig {
        RunConfig {
            target: target.to_owned(),
            open: RealOpen {
                write: false,
                max_in_flight: Some(32),
                buffer_bytes: Some(4096),
                ..Default::default()
            },
            pattern: Pattern::Random,
            mix: Mix::ReadWrite { read_pct: 100 },
            block_bytes: 4096,
            qd: 32,
            offset_bytes: 0,
            span: None,
            time_limit_ns: None,
            limit_bytes: None,
            seed: 1,
            data: DataKind::Random,
            log_ios: false,
        }
    }

    /// Whether the run writes or trims.
    pub fn writes(&self) -> bool {
        !matches!(self.mix, Mix::ReadWrite { read_pct: 100 })
    }
}

/// The run's own section of result.json.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// The region the generator worked on.
    pub offset_bytes: u64,
    pub span_bytes: u64,
    pub iops: f64,
    pub data_rate_mb_per_s: f64,
}
