//! The report's view model: what one result directory contributes to a report.
//!
//! Charts, tables, the HTML page, the images and `storbench compare` are all built from
//! [`RunView`]s, so they show the same numbers. A `RunView` is made from a result
//! directory by [`crate::html::load`], or by hand in tests.

use serde::{Deserialize, Serialize};
use storbench_engine::target::TargetInfo;

/// One result directory (one drive at one setting running one procedure).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunView {
    /// Where the result was read from (shown in the methods section).
    pub source: String,
    /// The drive: its model when known, otherwise the target name.
    pub drive: String,
    /// The spare-area setting: "Default" for the full span, "25% spare area" for a 75% span.
    pub setting: String,
    /// Procedure name: "consistency", "trim-check", "bench", "season", ...
    pub procedure: String,
    pub target: TargetInfo,
    pub tool_version: String,
    pub command_line: String,
    /// Options as `name = value` pairs, in the order the result gives them.
    pub options: Vec<(String, String)>,
    /// Whether every phase finished.
    pub complete: bool,
    pub notes: Vec<String>,
    /// Phases that ran, in order.
    pub phases: Vec<PhaseView>,
    pub consistency: Option<ConsistencyView>,
    pub bench: Option<BenchView>,
    pub trim: Option<TrimView>,
    /// Characterize tables of the traces used.
    pub traces: Vec<TraceView>,
    pub health: HealthView,
}

impl RunView {
    /// The label of this run in legends and tables: drive, plus the setting unless default.
    pub fn label(&self) -> String {
        if self.setting == DEFAULT_SETTING {
            self.drive.clone()
        } else {
            format!("{} ({})", self.drive, self.setting)
        }
    }
}

/// The setting name of a full-span run.
pub const DEFAULT_SETTING: &str = "Default";

/// The spare-area setting name for a tested span in percent of capacity (100 = full span).
pub fn setting_for_span(span_percent: f64) -> String {
    assert!(
        span_percent > 0.0 && span_percent <= 100.0,
        "span {span_percent}% out of range"
    );
    if span_percent >= 100.0 {
        DEFAULT_SETTING.to_string()
    } else {
        format!("{}% spare area", fmt_num(100.0 - span_percent))
    }
}

/// One phase of a run, for the methods section.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhaseView {
    pub name: String,
    pub duration_s: f64,
    pub ios: u64,
    pub data_rate_mb_s: f64,
}

/// The random-write phase of a performance-consistency run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConsistencyView {
    /// Completions in each 1-second window since the phase started (index 0 = second 1).
    pub iops_per_s: Vec<f64>,
    pub avg_iops_last400: f64,
    pub std_iops_last400: f64,
    pub min_iops: f64,
    /// SNIA steady state: the second at which it was reached, if it was.
    pub steady_state_at_s: Option<f64>,
    /// Length of the score window when not the standard 400 s (quick runs use less).
    #[serde(default)]
    pub score_window_s: Option<f64>,
}

impl ConsistencyView {
    /// Average divided by std dev over the last 400 s (higher is more consistent);
    /// `None` when the std dev is zero.
    pub fn avg_over_std(&self) -> Option<f64> {
        (self.std_iops_last400 > 0.0).then(|| self.avg_iops_last400 / self.std_iops_last400)
    }
}

/// The replay phase of a trace bench.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BenchView {
    pub data_rate_mb_s: f64,
    pub read_mb_s: f64,
    pub write_mb_s: f64,
    pub service_us_mean: f64,
    pub service_us_std: f64,
    pub busy_s: f64,
    /// (label, service time µs): p50, p90, p99, p99.9, p99.99.
    pub percentiles_us: Vec<(String, f64)>,
    pub reads: u64,
    pub writes: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
}

/// Sequential-write throughput in the three states of a TRIM check.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrimView {
    pub clean_mb_s: f64,
    pub dirty_mb_s: f64,
    pub after_trim_mb_s: f64,
}

impl TrimView {
    /// After-TRIM throughput as a percentage of clean.
    pub fn recovered_percent(&self) -> Option<f64> {
        (self.clean_mb_s > 0.0).then(|| 100.0 * self.after_trim_mb_s / self.clean_mb_s)
    }
}

/// The characterize table of one trace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TraceView {
    pub name: String,
    pub rows: Vec<(String, String)>,
}

/// Drive health before and after the run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HealthView {
    pub rows: Vec<HealthRow>,
    /// Why health could not be read, when it could not (said plainly in the report).
    pub unavailable: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HealthRow {
    pub metric: String,
    pub before: Option<f64>,
    pub after: Option<f64>,
}

impl HealthRow {
    pub fn delta(&self) -> Option<f64> {
        Some(self.after? - self.before?)
    }
}

/// Formats a number for tables: integers without decimals, others with up to 3
/// significant decimals, never in exponent form; thousands are not separated so the
/// same text works in CSV.
pub fn fmt_num(v: f64) -> String {
    if !v.is_finite() {
        return "-".to_string();
    }
    let a = v.abs();
    if a >= 1000.0 || (v.fract() == 0.0 && a < 1e15) {
        format!("{:.0}", v)
    } else if a >= 100.0 {
        trim_zeros(format!("{:.1}", v))
    } else if a >= 1.0 {
        trim_zeros(format!("{:.2}", v))
    } else {
        trim_zeros(format!("{:.3}", v))
    }
}

fn trim_zeros(s: String) -> String {
    if s.contains('.') {
        let t = s.trim_end_matches('0').trim_end_matches('.');
        t.to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_format_for_tables() {
        assert_eq!(fmt_num(12345.678), "12346");
        assert_eq!(fmt_num(250.0), "250");
        assert_eq!(fmt_num(123.45), "123.5");
        assert_eq!(fmt_num(1.5), "1.5");
        assert_eq!(fmt_num(0.1234), "0.123");
        assert_eq!(fmt_num(f64::NAN), "-");
        assert_eq!(fmt_num(-2.0), "-2");
    }

    #[test]
    fn settings_name_spare_area() {
        assert_eq!(setting_for_span(100.0), "Default");
        assert_eq!(setting_for_span(75.0), "25% spare area");
    }
}
