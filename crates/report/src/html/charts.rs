//! Chart specifications: one description per chart, drawn by the page's JavaScript
//! (`assets/chart.js`) and by the SVG renderer in [`crate::images`].
//!
//! The browser test compares the series each chart drew with [`Chart::series`].

use super::view::RunView;
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

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Chart {
    /// Unique, usable as an HTML id and a file name.
    pub id: String,
    pub section: String,
    pub title: String,
    pub kind: ChartKind,
    pub x_label: String,
    pub y_label: String,
    pub y_scale: Scale,
    /// Visible x range; `None` = the data's range.
    pub x_min: Option<f64>,
    pub x_max: Option<f64>,
    /// Bars only: the category names along x.
    pub categories: Vec<String>,
    /// Whether the page shows a button per drive and per spare-area setting.
    pub buttons: bool,
    pub series: Vec<Series>,
}

/// Where the steady-state zoom starts. METHODOLOGY section 4 zooms from t = 1400 s of
/// a ~2000 s run; a shorter run is zoomed proportionally, from 70% of its length.
pub fn zoom_start_s(duration_s: f64) -> f64 {
    assert!(duration_s >= 0.0);
    if duration_s >= 2000.0 {
        1400.0
    } else {
        (duration_s * 0.7).floor()
    }
}

/// Every chart the report shows for these runs, in page order.
pub fn charts(runs: &[RunView]) -> Vec<Chart> {
    let mut out = Vec::new();
    consistency_charts(runs, &mut out);
    bench_charts(runs, &mut out);
    trim_chart(runs, &mut out);
    out
}

fn consistency_charts(runs: &[RunView], out: &mut Vec<Chart>) {
    let with: Vec<&RunView> = runs.iter().filter(|r| r.consistency.is_some()).collect();
    if with.is_empty() {
        return;
    }
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
    let zoom = zoom_start_s(duration_s);
    let base = |id: &str, title: String, scale: Scale, x_min: Option<f64>| Chart {
        id: id.to_string(),
        section: "consistency".to_string(),
        title,
        kind: ChartKind::Line,
        x_label: "Time (s)".to_string(),
        y_label: "IOPS".to_string(),
        y_scale: scale,
        x_min,
        x_max: x_min.map(|_| duration_s),
        categories: Vec::new(),
        buttons: true,
        series: series.clone(),
    };
    out.push(base(
        "consistency-log",
        "4 KB random write IOPS, whole run (log scale)".to_string(),
        Scale::Log,
        None,
    ));
    out.push(base(
        "consistency-zoom-log",
        format!("Steady state from t = {} s (log scale)", zoom),
        Scale::Log,
        Some(zoom),
    ));
    out.push(base(
        "consistency-zoom-linear",
        format!("Steady state from t = {} s (linear scale)", zoom),
        Scale::Linear,
        Some(zoom),
    ));
}

fn bar_chart(
    id: &str,
    title: &str,
    y_label: &str,
    scale: Scale,
    categories: Vec<String>,
    series: Vec<Series>,
) -> Chart {
    Chart {
        id: id.to_string(),
        section: "bench".to_string(),
        title: title.to_string(),
        kind: ChartKind::Bars,
        x_label: String::new(),
        y_label: y_label.to_string(),
        y_scale: scale,
        x_min: None,
        x_max: None,
        categories,
        buttons: false,
        series,
    }
}

fn bench_charts(runs: &[RunView], out: &mut Vec<Chart>) {
    let with: Vec<&RunView> = runs.iter().filter(|r| r.bench.is_some()).collect();
    if with.is_empty() {
        return;
    }
    let b = |r: &RunView| r.bench.clone().expect("filtered");
    let labels: Vec<String> = with.iter().map(|r| r.label()).collect();
    let idx: Vec<f64> = (0..with.len()).map(|i| i as f64).collect();
    let one = |name: &str, y: Vec<f64>| Series {
        name: name.to_string(),
        drive: String::new(),
        setting: String::new(),
        x: idx.clone(),
        y,
    };
    out.push(bar_chart(
        "bench-data-rate",
        "Average data rate (busy time, idle cut)",
        "MB/s",
        Scale::Linear,
        labels.clone(),
        vec![
            one("total", with.iter().map(|r| b(r).data_rate_mb_s).collect()),
            one("read", with.iter().map(|r| b(r).read_mb_s).collect()),
            one("write", with.iter().map(|r| b(r).write_mb_s).collect()),
        ],
    ));
    out.push(bar_chart(
        "bench-service-time",
        "Average service time",
        "µs",
        Scale::Linear,
        labels.clone(),
        vec![one(
            "mean service time",
            with.iter().map(|r| b(r).service_us_mean).collect(),
        )],
    ));
    out.push(bar_chart(
        "bench-busy-time",
        "Disk busy time",
        "s",
        Scale::Linear,
        labels.clone(),
        vec![one("busy time", with.iter().map(|r| b(r).busy_s).collect())],
    ));
    out.push(Chart {
        id: "bench-scatter".to_string(),
        section: "bench".to_string(),
        title: "Mean service time against std dev (near the origin = fast and consistent)"
            .to_string(),
        kind: ChartKind::Scatter,
        x_label: "mean service time (µs)".to_string(),
        y_label: "std dev (µs)".to_string(),
        y_scale: Scale::Linear,
        x_min: None,
        x_max: None,
        categories: Vec::new(),
        buttons: false,
        series: with
            .iter()
            .map(|r| Series {
                name: r.label(),
                drive: r.drive.clone(),
                setting: r.setting.clone(),
                x: vec![b(r).service_us_mean],
                y: vec![b(r).service_us_std],
            })
            .collect(),
    });
    // Percentiles: categories from the first run; a run lacking one shows no bar there.
    let cats: Vec<String> = b(with[0])
        .percentiles_us
        .iter()
        .map(|p| p.0.clone())
        .collect();
    let cat_idx: Vec<f64> = (0..cats.len()).map(|i| i as f64).collect();
    out.push(bar_chart(
        "bench-percentiles",
        "Service time percentiles (log scale)",
        "µs",
        Scale::Log,
        cats.clone(),
        with.iter()
            .map(|r| {
                let p = b(r).percentiles_us;
                Series {
                    name: r.label(),
                    drive: r.drive.clone(),
                    setting: r.setting.clone(),
                    x: cat_idx.clone(),
                    y: cats
                        .iter()
                        .map(|c| p.iter().find(|q| &q.0 == c).map_or(f64::NAN, |q| q.1))
                        .collect(),
                }
            })
            .collect(),
    ));
}

fn trim_chart(runs: &[RunView], out: &mut Vec<Chart>) {
    let with: Vec<&RunView> = runs.iter().filter(|r| r.trim.is_some()).collect();
    if with.is_empty() {
        return;
    }
    let t = |r: &RunView| r.trim.clone().expect("filtered");
    let idx: Vec<f64> = (0..with.len()).map(|i| i as f64).collect();
    let one = |name: &str, y: Vec<f64>| Series {
        name: name.to_string(),
        drive: String::new(),
        setting: String::new(),
        x: idx.clone(),
        y,
    };
    let mut c = bar_chart(
        "trim-throughput",
        "Sequential write throughput: clean, dirty, after TRIM",
        "MB/s",
        Scale::Linear,
        with.iter().map(|r| r.label()).collect(),
        vec![
            one("clean", with.iter().map(|r| t(r).clean_mb_s).collect()),
            one("dirty", with.iter().map(|r| t(r).dirty_mb_s).collect()),
            one(
                "after TRIM",
                with.iter().map(|r| t(r).after_trim_mb_s).collect(),
            ),
        ],
    );
    c.section = "trim".to_string();
    out.push(c);
}
