//! What a purge did (result.json's `phases[].purge`). Done by
//! `storbench_suite::purge`.

use serde::{Deserialize, Serialize};

/// How a target was returned to its fresh state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PurgeMethod {
    SecureDiscard,
    Discard,
    ZeroOut,
    PunchHole,
    Truncate,
    Simulator,
}

/// A purge: how, over how many bytes, whether the target is fresh now.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PurgeReport {
    pub method: PurgeMethod,
    pub bytes: u64,
    /// Whether the target is now in a fresh, unmapped state.
    pub fresh: bool,
    pub wall_ms: u64,
    pub note: Option<String>,
}
