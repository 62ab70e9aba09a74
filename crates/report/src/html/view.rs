//! The report's view model: what one result directory contributes to a report.
//!
//! Charts, tables, the HTML page, the images and `storbench compare` are all built from
//! [`RunView`]s, so they show the same numbers. A `RunView` is made from a result
//! directory by [`crate::html::load`], or by hand in tests.

use serde::{Deserialize, Serialize};
use storbench_core::TargetInfo;

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
    /// `twin.json` beside a twin measurement (`storbench twin fit`).
    #[serde(default)]
    pub twin: Option<storbench_results::twin::TwinFile>,
    /// Characterize tables of the traces used.
    pub traces: Vec<TraceView>,
    pub health: HealthView,
    /// Drive state when the measured work began: `fresh`, `seasoned` or `used`.
    #[serde(default)]
    pub state: String,
    /// What ran: the trace or profile of a bench, the generator of other procedures
    /// (e.g. `4 KB random write QD32`).
    #[serde(default)]
    pub workload: String,
    /// When the run started (UTC, `YYYY-MM-DD HH:MM`), when known.
    #[serde(default)]
    pub date: Option<String>,
    /// The run's name in legends and tables, unique within a report: set by
    /// [`name_runs`] (or the user's `--label`); empty until then.
    #[serde(default)]
    pub name: String,
    /// How the drive was prepared before the measured work: a season run, or a
    /// bench's drive state (its sequential pass and its image restore).
    #[serde(default)]
    pub season: Option<SeasonView>,
    /// Drawn highlighted in bar charts (`--highlight`): the tested drive.
    #[serde(default)]
    pub highlight: bool,
    /// A procedure this build has no view of: its summary's numbers, by field, for the
    /// charts it declares as data ([`super::charts::ChartSpec`]).
    #[serde(default)]
    pub figures: Vec<(String, f64)>,
}

/// A drive's preparation (seed 002): the 128 KB sequential pass (none in the fresh
/// state) and the restore of an image (a generated one, the user's file, or the
/// data the bench's trace reads before writing it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeasonView {
    /// The state it left the drive in: `seasoned` (a season run), or a bench's
    /// `fresh`, `seasoned`, `used`.
    pub state: String,
    pub image: String,
    pub image_bytes: u64,
    pub image_writes: u64,
    pub seq_pass_mb_s: Option<f64>,
    pub restore_mb_s: Option<f64>,
}

impl RunView {
    /// The label of this run in legends and tables: its [`RunView::name`] once
    /// [`name_runs`] has run, else the drive plus the setting unless default.
    pub fn label(&self) -> String {
        if !self.name.is_empty() {
            self.name.clone()
        } else if self.setting == DEFAULT_SETTING {
            self.drive.clone()
        } else {
            format!("{} ({})", self.drive, self.setting)
        }
    }

    /// The capacity as people write it on a box: `256 MB`, `1 GB`, `64 GB` (10^9).
    pub fn capacity_text(&self) -> String {
        fmt_bytes(self.target.capacity_bytes)
    }
}

/// A duration as `h:mm:ss` (seconds rounded), or `0.25 s` below ten seconds.
pub fn fmt_duration(s: f64) -> String {
    if !s.is_finite() {
        return "-".to_string();
    }
    if s < 10.0 {
        return format!("{} s", fmt_num(s));
    }
    let t = s.round() as u64;
    format!("{}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60)
}

/// Bytes in decimal units with up to three significant digits: `268 MB`, `1.07 GB`.
pub fn fmt_bytes(b: u64) -> String {
    let v = b as f64;
    let (x, unit) = if v >= 1e12 {
        (v / 1e12, "TB")
    } else if v >= 1e9 {
        (v / 1e9, "GB")
    } else if v >= 1e6 {
        (v / 1e6, "MB")
    } else if v >= 1e3 {
        (v / 1e3, "kB")
    } else {
        (v, "B")
    };
    let t = if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        trim_zeros(format!("{x:.1}"))
    } else {
        trim_zeros(format!("{x:.2}"))
    };
    format!("{t} {unit}")
}

/// Names every run from what differs between the runs of a report: the drive always,
/// then capacity, spare area, state and workload when they are not the same for every
/// run of the same procedure; where names still collide, the workload, then the
/// procedure, then the date, then a number. `overrides` (source directory, name) come from `--label`
/// and are kept as given. Afterwards every name is unique.
pub fn name_runs(runs: &mut [RunView], overrides: &[(String, String)]) {
    type Part = fn(&RunView) -> String;
    let parts: [Part; 4] = [
        |r| r.capacity_text(),
        |r| {
            if r.setting == DEFAULT_SETTING {
                "no spare area".to_string()
            } else {
                r.setting.clone()
            }
        },
        |r| r.state.clone(),
        |r| r.workload.clone(),
    ];
    let mut names: Vec<String> = Vec::with_capacity(runs.len());
    for r in runs.iter() {
        let peers: Vec<&RunView> = runs.iter().filter(|o| o.procedure == r.procedure).collect();
        let mut name = r.drive.clone();
        for part in parts {
            let mine = part(r);
            if !mine.is_empty() && peers.iter().any(|o| part(o) != mine) {
                name = format!("{name}, {mine}");
            }
        }
        names.push(name);
    }
    let dup = |names: &[String], i: usize| names.iter().filter(|n| **n == names[i]).count() > 1;
    // Runs of different procedures can share a name (consistency and trim-check on
    // one drive): their workload tells them apart, then the date.
    let mut next = names.clone();
    for (i, r) in runs.iter().enumerate() {
        if dup(&names, i) && !r.workload.is_empty() && !names[i].ends_with(&r.workload) {
            next[i] = format!("{}, {}", names[i], r.workload);
        }
    }
    let names = next;
    let mut next = names.clone();
    for (i, r) in runs.iter().enumerate() {
        if dup(&names, i) {
            next[i] = format!("{} ({})", names[i], r.procedure);
        }
    }
    let names = next;
    let mut next = names.clone();
    for (i, r) in runs.iter().enumerate() {
        if dup(&names, i) {
            if let Some(d) = &r.date {
                next[i] = format!("{}, {d}", names[i]);
            }
        }
    }
    let mut names = next;
    for (source, name) in overrides {
        for (i, r) in runs.iter().enumerate() {
            if &r.source == source {
                names[i] = name.clone();
            }
        }
    }
    for i in 0..names.len() {
        if names[..i].contains(&names[i]) {
            let base = names[i].clone();
            let mut k = 2;
            while names.contains(&format!("{base} #{k}")) {
                k += 1;
            }
            names[i] = format!("{base} #{k}");
        }
    }
    for (r, n) in runs.iter_mut().zip(names) {
        r.name = n;
    }
}

/// The setting name of a full-span run.
pub const DEFAULT_SETTING: &str = "Default";

/// The spare-area setting name for a tested span in percent of capacity (100 = full span).
pub fn setting_for_span(span_pct: f64) -> String {
    assert!(
        span_pct > 0.0 && span_pct <= 100.0,
        "span {span_pct}% out of range"
    );
    if span_pct >= 100.0 {
        DEFAULT_SETTING.to_string()
    } else {
        format!("{}% spare area", fmt_num(100.0 - span_pct))
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
    /// Block size and queue depth of the random writes (from the run's configuration).
    #[serde(default = "default_block_bytes")]
    pub block_bytes: u64,
    #[serde(default = "default_qd")]
    pub qd: u32,
}

fn default_block_bytes() -> u64 {
    4096
}
fn default_qd() -> u32 {
    32
}

impl ConsistencyView {
    /// Seconds scored: the run's window, or the standard 400 s.
    pub fn window_s(&self) -> f64 {
        self.score_window_s.unwrap_or(400.0)
    }

    /// Where the scored (steady-state) window starts: the zoom graphs start exactly here.
    pub fn window_start_s(&self) -> f64 {
        (self.iops_per_s.len() as f64 - self.window_s()).max(0.0)
    }

    /// `4 KB random writes at QD32`, from the run's own block size and queue depth.
    pub fn work_text(&self) -> String {
        format!(
            "{} random writes at QD{}",
            fmt_block(self.block_bytes),
            self.qd
        )
    }
}

/// A block size as the articles write it: `4 KB`, `128 KB`, `1 MB` (binary multiples).
pub fn fmt_block(b: u64) -> String {
    if b >= 1 << 20 && b.is_multiple_of(1 << 20) {
        format!("{} MB", b >> 20)
    } else if b >= 1024 && b.is_multiple_of(1024) {
        format!("{} KB", b >> 10)
    } else {
        format!("{b} B")
    }
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
    /// Time with at least one read (write) outstanding.
    #[serde(default)]
    pub busy_read_s: f64,
    #[serde(default)]
    pub busy_write_s: f64,
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
    /// The procedure's caveat (e.g. the target showed no penalty to recover from).
    #[serde(default)]
    pub note: Option<String>,
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

    fn run(drive: &str, procedure: &str, state: &str, workload: &str) -> RunView {
        let mut r = crate::html::sample::bench_runs().remove(0);
        r.drive = drive.to_string();
        r.procedure = procedure.to_string();
        r.state = state.to_string();
        r.workload = workload.to_string();
        r.source = format!("{drive}-{procedure}-{state}-{workload}");
        r
    }

    /// Issue 25: "storbench sim client-7op" three times in one legend.
    #[test]
    fn run_names_say_what_differs_and_are_unique() {
        let mut runs = vec![
            run("A", "bench", "fresh", "heavy"),
            run("A", "bench", "seasoned", "heavy"),
            run("A", "bench", "fresh", "destroyer"),
            run("B", "bench", "fresh", "heavy"),
            run("A", "consistency", "fresh", "4 KB random write QD32"),
            run("A", "trim-check", "fresh", "TRIM check"),
            run("A", "bench", "fresh", "heavy"),
        ];
        runs[6].date = Some("2026-11-27 10:00".into());
        name_runs(&mut runs, &[]);
        let names: Vec<&str> = runs.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "A, fresh, heavy (bench), 2026-11-26 02:00",
                "A, seasoned, heavy",
                "A, fresh, destroyer",
                "B, fresh, heavy",
                "A, 4 KB random write QD32",
                "A, TRIM check",
                "A, fresh, heavy (bench), 2026-11-27 10:00",
            ]
        );
        // Same everything: numbered. A user's label is kept as given.
        let mut twins = vec![
            run("A", "bench", "fresh", "heavy"),
            run("A", "bench", "fresh", "heavy"),
        ];
        twins[1].source = "other".into();
        name_runs(&mut twins, &[]);
        assert_eq!(twins[0].name, "A, heavy (bench), 2026-11-26 02:00");
        assert_eq!(twins[1].name, "A, heavy (bench), 2026-11-26 02:00 #2");
        name_runs(&mut twins, &[("other".into(), "Mine".into())]);
        assert_eq!(twins[1].name, "Mine");
    }

    #[test]
    fn human_units() {
        assert_eq!(fmt_duration(5025.4), "1:23:45");
        assert_eq!(fmt_duration(0.25), "0.25 s");
        assert_eq!(fmt_bytes(268_435_456), "268 MB");
        assert_eq!(fmt_bytes(1_073_741_824), "1.07 GB");
        assert_eq!(fmt_block(4096), "4 KB");
        assert_eq!(fmt_block(1 << 20), "1 MB");
    }

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
