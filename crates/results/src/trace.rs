//! The trace a replay replayed (result.json's `trace`).

use serde::{Deserialize, Serialize};

/// What the replayed trace holds (result.json's `trace`), from one pass over it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TraceSummary {
    pub path: String,
    pub ios: u64,
    pub read_ios: u64,
    pub write_ios: u64,
    pub trim_ios: u64,
    pub flush_ios: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// From the first issue to the last, in trace time.
    pub duration_ns: u64,
    /// The largest read or write.
    #[serde(default)]
    pub max_io_bytes: u64,
    pub source_format: Option<String>,
    pub capacity_bytes: Option<u64>,
}

impl TraceSummary {
    /// Whether replaying the trace writes or trims.
    pub fn writes(&self) -> bool {
        self.write_ios + self.trim_ios > 0
    }
}
