//! `storbench season` (seed 002): its configuration and its section of result.json.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Share of the span a generated image covers. The seed's test image is not sized;
/// a used system disk of the era held roughly 30-50% of its capacity in data, so 40%.
pub const DEFAULT_IMAGE_FILL: f64 = 0.40;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeasonConfig {
    pub target: String,
    /// How to open a real target.
    #[serde(default)]
    pub open: crate::RealOpen,
    /// The user's image; `None`: a generated one.
    pub image: Option<PathBuf>,
    pub image_fill: f64,
    pub image_seed: u64,
    pub passes: u32,
    pub qd: u32,
    /// Content of every write (`--data`).
    #[serde(default = "crate::random_data")]
    pub data: storbench_core::DataKind,
}

impl SeasonConfig {
    pub fn new(target: &str) -> Self {
        SeasonConfig {
            target: target.to_owned(),
            open: Default::default(),
            image: None,
            image_fill: DEFAULT_IMAGE_FILL,
            image_seed: 2009,
            passes: 1,
            qd: 32,
            data: storbench_core::DataKind::Random,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeasonSummary {
    pub image: String,
    #[serde(alias = "image_bytes_restored")]
    pub image_restored_bytes: u64,
    pub image_writes: u64,
    pub seq_pass_mb_per_s: f64,
    pub restore_mb_per_s: f64,
}
