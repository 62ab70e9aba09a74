//! Drive health before and after a run, and the run's effect on the drive
//! (result.json's `health_before`, `health_after`, `health_delta`, and each phase's
//! `counters`). Read by `storbench_suite::health` (smartctl, the simulator's counters).

use serde::{Deserialize, Serialize};

/// Drive health at one instant.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HealthSnapshot {
    /// What was asked (`smartctl /dev/sda`, `simulator counters`).
    pub source: String,
    /// Whether any health figure could be read.
    pub available: bool,
    /// Why not, or what to keep in mind (in plain words).
    pub note: Option<String>,
    pub model: Option<String>,
    pub firmware: Option<String>,
    pub host_read_bytes: Option<u64>,
    pub host_write_bytes: Option<u64>,
    pub nand_write_bytes: Option<u64>,
    /// Lifetime WA when the drive reports only ratios of page counts.
    pub lifetime_wa: Option<f64>,
    pub temperature_c: Option<f64>,
    pub media_errors: Option<u64>,
    #[serde(alias = "percent_used")]
    pub used_pct: Option<u64>,
    pub taken_unix_ms: u64,
}

impl HealthSnapshot {
    pub fn unavailable(source: impl Into<String>, note: impl Into<String>) -> Self {
        HealthSnapshot {
            source: source.into(),
            available: false,
            note: Some(note.into()),
            taken_unix_ms: crate::unix_ms(),
            ..Default::default()
        }
    }
}

/// What changed between two snapshots (the procedure's own effect on the drive).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HealthDelta {
    pub available: bool,
    pub host_write_bytes: Option<u64>,
    pub host_read_bytes: Option<u64>,
    pub nand_write_bytes: Option<u64>,
    /// NAND writes ÷ host writes over the procedure.
    pub write_amplification: Option<f64>,
    #[serde(alias = "temperature_c_before")]
    pub temperature_before_c: Option<f64>,
    #[serde(alias = "temperature_c_after")]
    pub temperature_after_c: Option<f64>,
    pub media_errors_new: Option<u64>,
    pub note: Option<String>,
}

fn sub(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(after), Some(before)) => Some(after.saturating_sub(before)),
        _ => None,
    }
}

/// The change from `before` to `after`: the run's own effect on the drive.
pub fn delta(before: &HealthSnapshot, after: &HealthSnapshot) -> HealthDelta {
    let host = sub(after.host_write_bytes, before.host_write_bytes);
    let nand = sub(after.nand_write_bytes, before.nand_write_bytes);
    let wa = match (host, nand) {
        (Some(h), Some(n)) if h > 0 => Some(n as f64 / h as f64),
        _ => None,
    };
    let mut notes = Vec::new();
    if !before.available || !after.available {
        notes.push(
            after
                .note
                .clone()
                .or_else(|| before.note.clone())
                .unwrap_or_else(|| "drive health not available".into()),
        );
    } else {
        if nand.is_none() {
            notes.push("the drive does not report NAND writes, so WA is unknown".to_owned());
        }
        if host == Some(0) {
            notes.push(
                "host-write counter did not move (drives count in coarse units, e.g. 32 MiB or 512,000 bytes)"
                    .to_owned(),
            );
        }
    }
    HealthDelta {
        available: before.available && after.available,
        host_write_bytes: host,
        host_read_bytes: sub(after.host_read_bytes, before.host_read_bytes),
        nand_write_bytes: nand,
        write_amplification: wa,
        temperature_before_c: before.temperature_c,
        temperature_after_c: after.temperature_c,
        media_errors_new: sub(after.media_errors, before.media_errors),
        note: if notes.is_empty() {
            None
        } else {
            Some(notes.join("; "))
        },
    }
}
