//! storbench-results: what a run writes, as the writer's own types, so the suite
//! (which fills them in) and the report (which reads them back) share one definition:
//! [`RunResult`] (result.json) with its [`PhaseRecord`]s, drive health, the replayed
//! trace, and each procedure's configuration and summary, one module per procedure
//! ([`consistency`], [`bench`], ...). No format lives here: the report alone turns these
//! into JSON, Parquet and HTML (docs/results.md has the layout, field by field).
//!
//! Names follow one rule ([`naming`], checked over every field by `tests/names.rs`): a
//! quantity's unit comes last (`duration_ns`, `span_bytes`, `data_rate_mb_per_s`,
//! `span_pct`), and a percentage is `_pct`, never `_percent`. Schema 3 renamed the
//! fields that broke it; each reads its schema-2 name too (`serde(alias)`).

pub mod bench;
pub mod consistency;
pub mod health;
pub mod naming;
pub mod phase;
pub mod purge;
pub mod replay;
pub mod result;
pub mod run;
pub mod season;
pub mod target;
pub mod trace;
pub mod trimcheck;
pub mod twin;

pub use health::{HealthDelta, HealthSnapshot};
pub use phase::{PhaseRecord, Work};
pub use result::RunResult;
pub use target::RealOpen;
pub use trace::TraceSummary;

/// Version of the result.json layout. Bump when a field changes meaning, is renamed or
/// is removed; adding a field with a default does not need a bump.
pub const SCHEMA_VERSION: u32 = 3;
/// File name of the result inside a result directory.
pub const RESULT_FILE: &str = "result.json";
/// result.json's `format`.
pub const RESULT_FORMAT: &str = "storbench-suite-result/1";

/// A trace's characterization as `storbench characterize --json` prints it (its own
/// layout, with its own `schema_version`: docs/trace-format.md), kept whole in a
/// bench's summary for the report's trace table.
pub type TraceCharacterization = serde_json::Map<String, serde_json::Value>;

/// The default content of written data: incompressible.
/// One job: the default `jobs` of every configuration (results before `--jobs`).
pub(crate) fn one_job() -> u32 {
    1
}

pub(crate) fn random_data() -> storbench_core::DataKind {
    storbench_core::DataKind::Random
}

/// Milliseconds since the Unix epoch (0 if the clock is before it).
pub fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}
