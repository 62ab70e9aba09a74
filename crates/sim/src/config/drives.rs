//! Presets for named drives, built from their datasheets and public NAND facts only.

use super::Preset;

/// The named drives.
pub(super) fn named() -> Vec<Preset> {
    Vec::new()
}
