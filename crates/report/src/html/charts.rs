//! Chart specifications: one description per chart, drawn by the one SVG renderer
//! in [`crate::images`] for the page and for `--images` alike.
//!
//! The browser test compares the series each chart drew with [`Chart::series`].

use super::view::{fmt_num, BenchView, RunView};
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ChartKind {
    /// Lines over a numeric x axis (per-second IOPS).
    Line,
    /// Grouped bars: `categories` along x, one bar per series in each group.
    Bars,
    /// One marker per point.
    Scatter,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scale {
    Linear,
    Log,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Series {
    pub name: String,
    /// For filter buttons: the drive and spare-area setting this series belongs to.
    pub drive: String,
    pub setting: String,
    /// x values (for bars: the category index).
    pub x: Vec<f64>,
    pub y: Vec<f64>,
}

/// Which end of a bar chart is best (bars are sorted best first).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    Higher,
    Lower,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Chart {
    /// Unique, usable as an HTML id and a file name.
    pub id: String,
    pub section: String,
    pub title: String,
    pub kind: ChartKind,
    /// Bars: the value axis label (the bars run along x); lines and scatter: x axis.
    pub x_label: String,
    pub y_label: String,
    pub y_scale: Scale,
    /// Visible x range; `None` = the data's range. A line chart's axis starts exactly
    /// at `x_min`.
    pub x_min: Option<f64>,
    pub x_max: Option<f64>,
    /// Bars only: one row per category (a run), sorted best first; one bar per series.
    pub categories: Vec<String>,
    /// Bars only: rows drawn highlighted (`--highlight`), parallel to `categories`.
    pub highlight: Vec<bool>,
    /// Whether the page shows a button per drive and per spare-area setting.
    pub buttons: bool,
    pub series: Vec<Series>,
}

/// Where the steady-state zoom of these runs starts: the earliest start of their score
/// windows (the last `window` seconds each run scored).
pub fn zoom_start_s(runs: &[&RunView]) -> f64 {
    runs.iter()
        .filter_map(|r| r.consistency.as_ref().map(|c| c.window_start_s()))
        .fold(f64::INFINITY, f64::min)
        .max(0.0)
}

/// Every chart the report shows for these runs, in page order.
pub fn charts(runs: &[RunView]) -> Vec<Chart> {
    charts_with(runs, PROCEDURE_CHARTS)
}

/// [`charts`], and the charts `specs` declare.
pub fn charts_with(runs: &[RunView], specs: &[ChartSpec]) -> Vec<Chart> {
    let mut out = Vec::new();
    consistency_charts(runs, &mut out);
    bench_charts(runs, &mut out);
    trim_chart(runs, &mut out);
    season_chart(runs, &mut out);
    out.extend(specs.iter().filter_map(|s| s.chart(runs)));
    out
}

/// A procedure's chart declared as data, for a procedure the report has no view of:
/// one row per run of `procedure`, one bar per figure of its summary (`fields`: the
/// summary's field and its legend), in a section of its own (`procedure` its id,
/// `title` its heading). Adding a procedure's chart is one entry of
/// [`PROCEDURE_CHARTS`]; `crates/suite/tests/tiny_procedure.rs` adds one in a test.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChartSpec {
    pub procedure: &'static str,
    pub title: &'static str,
    pub fields: &'static [(&'static str, &'static str)],
    /// The value axis label.
    pub unit: &'static str,
    /// Rows are sorted by the first field, this end first.
    pub better: Better,
}

/// The charts procedures declare as data (the built-in procedures draw their own).
pub const PROCEDURE_CHARTS: &[ChartSpec] = &[];

impl ChartSpec {
    /// The chart over the runs of its procedure (`None`: there are none).
    pub fn chart(&self, runs: &[RunView]) -> Option<Chart> {
        let with: Vec<&RunView> = runs
            .iter()
            .filter(|r| r.procedure == self.procedure)
            .collect();
        if with.is_empty() || self.fields.is_empty() {
            return None;
        }
        let figure = |r: &RunView, field: &str| {
            r.figures
                .iter()
                .find(|(k, _)| k == field)
                .map_or(f64::NAN, |(_, v)| *v)
        };
        let series = self
            .fields
            .iter()
            .map(|&(field, legend)| (legend, with.iter().map(|r| figure(r, field)).collect()))
            .collect();
        Some(bar_chart(
            format!("{}-chart", slug(self.procedure)),
            self.procedure,
            self.title.to_string(),
            self.unit,
            Scale::Linear,
            self.better,
            0,
            &with,
            series,
        ))
    }
}

/// `heavy-2011` → `heavy-2011`; `4 KB random write QD32` → `4-kb-random-write-qd32`.
pub fn slug(s: &str) -> String {
    let mut o = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            o.push(c.to_ascii_lowercase());
        } else if !o.ends_with('-') && !o.is_empty() {
            o.push('-');
        }
    }
    o.trim_end_matches('-').to_string()
}

/// Runs grouped by workload, in first-seen order.
pub fn by_workload<'a>(runs: &[&'a RunView]) -> Vec<(String, Vec<&'a RunView>)> {
    let mut out: Vec<(String, Vec<&RunView>)> = Vec::new();
    for r in runs {
        match out.iter_mut().find(|(w, _)| *w == r.workload) {
            Some((_, v)) => v.push(r),
            None => out.push((r.workload.clone(), vec![r])),
        }
    }
    out
}

fn consistency_charts(runs: &[RunView], out: &mut Vec<Chart>) {
    let with: Vec<&RunView> = runs.iter().filter(|r| r.consistency.is_some()).collect();
    let groups = by_workload(&with);
    let many = groups.len() > 1;
    for (workload, with) in groups {
        let series: Vec<Series> = with
            .iter()
            .map(|r| {
                let c = r.consistency.as_ref().expect("filtered");
                Series {
                    name: r.label(),
                    drive: r.drive.clone(),
                    setting: r.setting.clone(),
                    x: (1..=c.iops_per_s.len()).map(|t| t as f64).collect(),
                    y: c.iops_per_s.clone(),
                }
            })
            .collect();
        let duration_s = with
            .iter()
            .map(|r| r.consistency.as_ref().expect("filtered").iops_per_s.len())
            .max()
            .unwrap_or(0) as f64;
        let zoom = zoom_start_s(&with);
        let first = with[0].consistency.as_ref().expect("filtered");
        let work = first.work_text();
        let window = fmt_num(first.window_s());
        let prefix = if many {
            format!("consistency-{}", slug(&workload))
        } else {
            "consistency".to_string()
        };
        let base = |id: &str, title: String, scale: Scale, x_min: Option<f64>| Chart {
            id: format!("{prefix}{id}"),
            section: "consistency".to_string(),
            title,
            kind: ChartKind::Line,
            x_label: "Time (s)".to_string(),
            y_label: "IOPS".to_string(),
            y_scale: scale,
            x_min,
            x_max: x_min.map(|_| duration_s),
            categories: Vec::new(),
            highlight: Vec::new(),
            buttons: true,
            series: series.clone(),
        };
        out.push(base(
            "-log",
            format!("{work}: IOPS every second, whole run (log scale)"),
            Scale::Log,
            None,
        ));
        out.push(base(
            "-zoom-log",
            format!(
                "{work}: steady state, the last {window} s scored (t = {} to {} s, log scale)",
                fmt_num(zoom),
                fmt_num(duration_s)
            ),
            Scale::Log,
            Some(zoom),
        ));
        out.push(base(
            "-zoom-linear",
            format!(
                "{work}: steady state, the last {window} s scored (t = {} to {} s, linear scale)",
                fmt_num(zoom),
                fmt_num(duration_s)
            ),
            Scale::Linear,
            Some(zoom),
        ));
    }
}

/// A horizontal bar chart: one row per run, one bar per series, rows sorted best first
/// by the series `sort_by`.
#[allow(clippy::too_many_arguments)]
fn bar_chart(
    id: String,
    section: &str,
    title: String,
    unit: &str,
    scale: Scale,
    better: Better,
    sort_by: usize,
    rows: &[&RunView],
    series: Vec<(&str, Vec<f64>)>,
) -> Chart {
    let mut order: Vec<usize> = (0..rows.len()).collect();
    let key = |i: usize| {
        let v = series[sort_by].1[i];
        if v.is_finite() {
            v
        } else {
            f64::NAN
        }
    };
    order.sort_by(|&a, &b| {
        let (x, y) = (key(a), key(b));
        let o = match better {
            Better::Higher => y.partial_cmp(&x),
            Better::Lower => x.partial_cmp(&y),
        };
        o.unwrap_or_else(|| x.is_nan().cmp(&y.is_nan()))
    });
    let idx: Vec<f64> = (0..rows.len()).map(|i| i as f64).collect();
    Chart {
        id,
        section: section.to_string(),
        title,
        kind: ChartKind::Bars,
        x_label: unit.to_string(),
        y_label: String::new(),
        y_scale: scale,
        x_min: None,
        x_max: None,
        categories: order.iter().map(|&i| rows[i].label()).collect(),
        highlight: order.iter().map(|&i| rows[i].highlight).collect(),
        buttons: false,
        series: series
            .into_iter()
            .map(|(name, y)| Series {
                name: name.to_string(),
                drive: String::new(),
                setting: String::new(),
                x: idx.clone(),
                y: order.iter().map(|&i| y[i]).collect(),
            })
            .collect(),
    }
}

/// The bench section, per workload: data rate, service and busy time as bars, mean
/// against std dev of service time, and the service time percentiles.
fn bench_charts(runs: &[RunView], out: &mut Vec<Chart>) {
    let all: Vec<&RunView> = runs.iter().filter(|r| r.bench.is_some()).collect();
    for (workload, with) in by_workload(&all) {
        out.extend(bench_bar_charts(&workload, &with));
        out.push(service_scatter(&workload, &with));
        out.extend(percentile_chart(&workload, &with));
    }
}

/// A bench run's figures (the runs given are those with one).
fn bench_of(r: &RunView) -> &BenchView {
    r.bench.as_ref().expect("filtered")
}

/// The id of one of a workload's bench charts.
fn bench_id(workload: &str, what: &str) -> String {
    format!("bench-{}-{what}", slug(workload))
}

/// Data rate, service time and busy time of one workload's bench runs, as bars.
fn bench_bar_charts(workload: &str, with: &[&RunView]) -> [Chart; 3] {
    let col = |f: fn(&BenchView) -> f64| with.iter().map(|r| f(bench_of(r))).collect::<Vec<f64>>();
    let id = |what: &str| bench_id(workload, what);
    let s = "bench";
    [
        bar_chart(
            id("data-rate"),
            s,
            format!("{workload}: average data rate (busy time, idle cut), total, read and write"),
            "MB/s (higher is better)",
            Scale::Linear,
            Better::Higher,
            0,
            with,
            vec![
                ("total", col(|b| b.data_rate_mb_s)),
                ("read", col(|b| b.read_mb_s)),
                ("write", col(|b| b.write_mb_s)),
            ],
        ),
        bar_chart(
            id("service-time"),
            s,
            format!("{workload}: average service time"),
            "µs (lower is better)",
            Scale::Linear,
            Better::Lower,
            0,
            with,
            vec![("mean service time", col(|b| b.service_us_mean))],
        ),
        bar_chart(
            id("busy-time"),
            s,
            format!("{workload}: disk busy time, total, read and write"),
            "seconds (lower is better)",
            Scale::Linear,
            Better::Lower,
            0,
            with,
            vec![
                ("total busy", col(|b| b.busy_s)),
                ("read busy", col(|b| b.busy_read_s)),
                ("write busy", col(|b| b.busy_write_s)),
            ],
        ),
    ]
}

/// Mean service time against its standard deviation, one point per run.
fn service_scatter(workload: &str, with: &[&RunView]) -> Chart {
    Chart {
        id: bench_id(workload, "scatter"),
        section: "bench".to_string(),
        title: format!(
            "{workload}: mean service time against std dev (near the origin = fast and consistent)"
        ),
        kind: ChartKind::Scatter,
        x_label: "mean service time (µs)".to_string(),
        y_label: "std dev (µs)".to_string(),
        y_scale: Scale::Linear,
        x_min: None,
        x_max: None,
        categories: Vec::new(),
        highlight: Vec::new(),
        buttons: false,
        series: with
            .iter()
            .map(|r| Series {
                name: r.label(),
                drive: r.drive.clone(),
                setting: r.setting.clone(),
                x: vec![bench_of(r).service_us_mean],
                y: vec![bench_of(r).service_us_std],
            })
            .collect(),
    }
}

/// Service time percentiles on a log scale, sorted by p99; none when the first run
/// has no percentiles.
fn percentile_chart(workload: &str, with: &[&RunView]) -> Option<Chart> {
    let cats: Vec<String> = bench_of(with[0])
        .percentiles_us
        .iter()
        .map(|p| p.0.clone())
        .collect();
    if cats.is_empty() {
        return None;
    }
    let p99 = cats.iter().position(|c| c == "p99").unwrap_or(0);
    let series: Vec<(&str, Vec<f64>)> = cats
        .iter()
        .map(|c| {
            (
                c.as_str(),
                with.iter()
                    .map(|r| {
                        bench_of(r)
                            .percentiles_us
                            .iter()
                            .find(|q| &q.0 == c)
                            .map_or(f64::NAN, |q| q.1)
                    })
                    .collect(),
            )
        })
        .collect();
    Some(bar_chart(
        bench_id(workload, "percentiles"),
        "bench",
        format!("{workload}: service time percentiles (log scale, sorted by p99)"),
        "µs (lower is better)",
        Scale::Log,
        Better::Lower,
        p99,
        with,
        series,
    ))
}

fn trim_chart(runs: &[RunView], out: &mut Vec<Chart>) {
    let with: Vec<&RunView> = runs.iter().filter(|r| r.trim.is_some()).collect();
    if with.is_empty() {
        return;
    }
    let t = |r: &&RunView| r.trim.clone().expect("filtered");
    out.push(bar_chart(
        "trim-throughput".to_string(),
        "trim",
        "Sequential write throughput: clean, dirty, after TRIM (sorted by after TRIM)".to_string(),
        "MB/s (higher is better)",
        Scale::Linear,
        Better::Higher,
        2,
        &with,
        vec![
            ("clean", with.iter().map(|r| t(r).clean_mb_s).collect()),
            ("dirty", with.iter().map(|r| t(r).dirty_mb_s).collect()),
            (
                "after TRIM",
                with.iter().map(|r| t(r).after_trim_mb_s).collect(),
            ),
        ],
    ));
}

/// Every prepared drive's sequential pass (none for a fresh one) and image restore.
fn season_chart(runs: &[RunView], out: &mut Vec<Chart>) {
    let with: Vec<&RunView> = runs.iter().filter(|r| r.season.is_some()).collect();
    if with.is_empty() {
        return;
    }
    let t = |r: &&RunView| r.season.clone().expect("filtered");
    out.push(bar_chart(
        "season-throughput".to_string(),
        "season",
        "Seasoning: sequential pass and image restore".to_string(),
        "MB/s",
        Scale::Linear,
        Better::Higher,
        0,
        &with,
        vec![
            (
                "sequential pass",
                with.iter()
                    .map(|r| t(r).seq_pass_mb_s.unwrap_or(f64::NAN))
                    .collect(),
            ),
            (
                "image restore",
                with.iter()
                    .map(|r| t(r).restore_mb_s.unwrap_or(f64::NAN))
                    .collect(),
            ),
        ],
    ));
}
