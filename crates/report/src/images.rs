//! `--images DIR`: each chart as SVG (rendered here, deterministic: same data, same
//! bytes) and as PNG (that SVG rasterized at 2x by [`png`], labels in a built-in font,
//! also deterministic), and every table as Markdown and CSV, for articles.
//!
//! This is the report's only chart renderer: the HTML page embeds the same SVG
//! ([`chart_svg_inline`]: plus the lines of line charts, which the page's Lines button
//! shows instead of dots), so an exported image is what the page draws.

use crate::html::charts::{Chart, ChartKind, Scale, Series};
use crate::html::page::esc;
use crate::html::tables::Table;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const COLORS: [&str; 10] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
    "#7f7f7f", "#bcbd22",
];
/// Width of every chart (SVG units; the page scales it down to fit).
pub const W: f64 = 900.0;
const PLOT_H: f64 = 340.0;
const ML: f64 = 72.0;
const MR: f64 = 24.0;
const MB: f64 = 56.0;
const LEGEND_ROW: f64 = 18.0;
const TITLE_SIZE: f64 = 14.0;

/// Width of `text` at `size` px in DejaVu Sans, from above (0.62 em per character is
/// more than its average): layout keeps labels apart with it.
pub fn text_w(text: &str, size: f64) -> f64 {
    text.chars().count() as f64 * size * 0.62
}

/// Same rules as the page always used for values on bars and tooltips.
fn fmt(v: f64) -> String {
    let a = v.abs();
    let p3 = |x: f64| {
        let s = format!(
            "{:.*}",
            (2 - x.abs().log10().floor() as i32).max(0) as usize,
            x
        );
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if a >= 1e9 {
        format!("{}G", p3(v / 1e9))
    } else if a >= 1e6 {
        format!("{}M", p3(v / 1e6))
    } else if a >= 1e4 {
        format!("{}k", p3(v / 1e3))
    } else if a >= 100.0 || v == v.round() {
        format!("{}", v.round())
    } else {
        p3(v)
    }
}

/// A tick label: as many decimals as the step needs, so no two ticks read the same.
fn tick_fmt(v: f64, step: f64, top: f64) -> String {
    if v == 0.0 {
        return "0".to_string();
    }
    let (div, suffix) = if top.abs() >= 1e6 {
        (1e6, "M")
    } else if top.abs() >= 1e4 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    let d = if step > 0.0 {
        (-(step / div).log10()).ceil().max(0.0) as usize
    } else {
        0
    };
    format!("{:.*}{suffix}", d, v / div)
}

fn nice_step(range: f64, count: f64) -> f64 {
    let raw = range / count.max(1.0);
    let p = 10f64.powf(raw.log10().floor());
    let f = raw / p;
    (if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    }) * p
}

struct Axis {
    lo: f64,
    hi: f64,
    log: bool,
    p0: f64,
    p1: f64,
    ticks: Vec<f64>,
    step: f64,
}

impl Axis {
    /// A linear axis on nice round bounds (`zero`: from 0).
    fn linear(mut lo: f64, mut hi: f64, p0: f64, p1: f64, zero: bool) -> Axis {
        if zero {
            lo = lo.min(0.0);
        }
        if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater) {
            hi = lo + 1.0;
        }
        let step = nice_step(hi - lo, 5.0);
        lo = (lo / step).floor() * step;
        hi = (hi / step).ceil() * step;
        Axis::exact(lo, hi, p0, p1, step)
    }

    /// A linear axis from exactly `lo` to `hi`, ticks at round values inside.
    fn exact(lo: f64, hi: f64, p0: f64, p1: f64, step: f64) -> Axis {
        let hi = if hi > lo { hi } else { lo + 1.0 };
        let first = (lo / step - 1e-9).ceil() * step;
        let mut ticks = Vec::new();
        let mut i = 0.0;
        while first + step * i <= hi + step * 1e-9 {
            ticks.push(first + step * i);
            i += 1.0;
        }
        Axis {
            lo,
            hi,
            log: false,
            p0,
            p1,
            ticks,
            step,
        }
    }

    fn log(lo: f64, hi: f64, p0: f64, p1: f64) -> Axis {
        let lo = if lo > 0.0 { lo } else { 1.0 };
        let hi = if hi > lo { hi } else { lo * 10.0 };
        let a = lo.log10().floor() as i32;
        let mut b = hi.log10().ceil() as i32;
        if b == a {
            b = a + 1;
        }
        let ticks = (a..=b).map(|k| 10f64.powi(k)).collect();
        Axis {
            lo: 10f64.powi(a),
            hi: 10f64.powi(b),
            log: true,
            p0,
            p1,
            ticks,
            step: 0.0,
        }
    }

    fn map(&self, v: f64) -> f64 {
        let f = if self.log {
            (v.log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        };
        self.p0 + f * (self.p1 - self.p0)
    }

    fn label(&self, t: f64) -> String {
        if self.log {
            fmt(t)
        } else {
            let top = self.ticks.iter().fold(0.0f64, |m, x| m.max(x.abs()));
            tick_fmt(t, self.step, top)
        }
    }
}

fn range(values: impl Iterator<Item = f64>, log: bool) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite() && (!log || *v > 0.0)) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if lo == f64::INFINITY {
        lo = if log { 1.0 } else { 0.0 };
        hi = lo + 1.0;
    }
    (lo, hi)
}

/// Every piece of text a chart draws besides numbers (for the font coverage check).
fn chart_text(c: &Chart) -> String {
    let mut t = format!("{}{}{}…", c.title, c.x_label, c.y_label);
    for x in &c.categories {
        t += x;
    }
    for se in &c.series {
        t += &se.name;
    }
    t
}

/// The title split into lines that fit the width.
fn title_lines(title: &str) -> Vec<String> {
    let room = W - 2.0 * 16.0;
    let mut lines = vec![String::new()];
    for word in title.split(' ') {
        let last = lines.last_mut().expect("one line");
        let candidate = if last.is_empty() {
            word.to_string()
        } else {
            format!("{last} {word}")
        };
        if text_w(&candidate, TITLE_SIZE) > room && !last.is_empty() {
            lines.push(word.to_string());
        } else {
            *last = candidate;
        }
    }
    lines
}

/// The legend laid out in rows (flowing left to right): (x, row) per entry.
fn legend_layout(names: &[&str]) -> (Vec<(f64, usize)>, usize) {
    let mut out = Vec::new();
    let (mut x, mut row) = (ML, 0);
    for n in names {
        let w = 17.0 + text_w(n, 12.0) + 18.0;
        if x + w > W - MR && x > ML {
            x = ML;
            row += 1;
        }
        out.push((x, row));
        x += w;
    }
    (out, if names.is_empty() { 0 } else { row + 1 })
}

/// Renders one chart as a standalone SVG document: what the page shows by default
/// (every series, dots on line charts).
pub fn chart_svg(chart: &Chart) -> String {
    render(chart, false)
}

/// The chart as the page embeds it: the same drawing, plus the lines of line charts
/// (hidden until the page's Lines button shows them).
pub fn chart_svg_inline(chart: &Chart) -> String {
    render(chart, true)
}

struct Frame {
    top: f64,
    bottom: f64,
    height: f64,
}

fn render(chart: &Chart, inline: bool) -> String {
    let titles = title_lines(&chart.title);
    let top = 18.0 + titles.len() as f64 * 18.0;
    let show_legend = chart.kind != ChartKind::Bars || chart.series.len() > 1;
    let names: Vec<&str> = chart.series.iter().map(|s| s.name.as_str()).collect();
    let (legend, legend_rows) = if show_legend {
        legend_layout(&names)
    } else {
        (Vec::new(), 0)
    };
    let plot_h = match chart.kind {
        ChartKind::Bars => bar_rows_h(chart),
        _ => PLOT_H - 16.0 - 40.0,
    };
    let bottom = top + plot_h;
    let height = bottom + MB + LEGEND_ROW * legend_rows as f64 + 8.0;
    let f = Frame {
        top,
        bottom,
        height,
    };
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {W} {h}\" width=\"{W}\" height=\"{h}\" \
         font-family=\"DejaVu Sans, Arial, sans-serif\" role=\"img\" aria-label=\"{t}\">\n<rect width=\"{W}\" height=\"{h}\" fill=\"#fff\"/>\n",
        h = f.height,
        t = esc(&chart.title)
    );
    for (i, line) in titles.iter().enumerate() {
        let _ = writeln!(
            s,
            "<text class=\"title\" x=\"16\" y=\"{}\" font-size=\"{TITLE_SIZE}\" font-weight=\"bold\" fill=\"#222\">{}</text>",
            26.0 + i as f64 * 18.0,
            esc(line)
        );
    }
    match chart.kind {
        ChartKind::Line => line(&mut s, chart, &f, inline),
        ChartKind::Bars => bars(&mut s, chart, &f),
        ChartKind::Scatter => scatter(&mut s, chart, &f),
    }
    let ly0 = f.bottom + MB;
    for (i, (se, (lx, row))) in chart.series.iter().zip(&legend).enumerate() {
        let ly = ly0 + *row as f64 * LEGEND_ROW;
        let _ = writeln!(
            s,
            "<g class=\"legend-item\" data-drive=\"{}\" data-setting=\"{}\"><rect x=\"{lx:.1}\" y=\"{}\" width=\"12\" height=\"12\" rx=\"2\" fill=\"{}\"/>\
             <text class=\"legend\" x=\"{:.1}\" y=\"{}\" font-size=\"12\" fill=\"#222\">{}</text></g>",
            esc(&se.drive),
            esc(&se.setting),
            ly - 10.0,
            COLORS[i % COLORS.len()],
            lx + 17.0,
            ly,
            esc(&se.name)
        );
    }
    s + "</svg>\n"
}

fn axes_lines(s: &mut String, left: f64, f: &Frame) {
    let _ = writeln!(
        s,
        "<line x1=\"{left}\" x2=\"{}\" y1=\"{b}\" y2=\"{b}\" stroke=\"#888\"/>\
         <line x1=\"{left}\" x2=\"{left}\" y1=\"{}\" y2=\"{b}\" stroke=\"#888\"/>",
        W - MR,
        f.top,
        b = f.bottom
    );
}

fn y_ticks(s: &mut String, y: &Axis, left: f64) {
    for &t in &y.ticks {
        let py = y.map(t);
        let _ = writeln!(
            s,
            "<line x1=\"{left}\" x2=\"{}\" y1=\"{py:.1}\" y2=\"{py:.1}\" stroke=\"#e3e3e3\"/>\
             <text class=\"tick y-tick\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" font-size=\"11\" fill=\"#555\">{}</text>",
            W - MR,
            left - 6.0,
            py + 4.0,
            y.label(t)
        );
    }
}

fn x_ticks(s: &mut String, x: &Axis, f: &Frame, grid: bool) {
    // Leave out a tick whose label would run into the previous one.
    let mut last_end = f64::NEG_INFINITY;
    for &t in &x.ticks {
        let px = x.map(t);
        let text = x.label(t);
        let half = text_w(&text, 11.0) / 2.0;
        if px - half < last_end + 4.0 {
            continue;
        }
        last_end = px + half;
        if grid {
            let _ = writeln!(
                s,
                "<line x1=\"{px:.1}\" x2=\"{px:.1}\" y1=\"{}\" y2=\"{}\" stroke=\"#e3e3e3\"/>",
                f.top, f.bottom
            );
        }
        let _ = writeln!(
            s,
            "<line x1=\"{px:.1}\" x2=\"{px:.1}\" y1=\"{b}\" y2=\"{}\" stroke=\"#888\"/>\
             <text class=\"tick x-tick\" x=\"{px:.1}\" y=\"{}\" text-anchor=\"middle\" font-size=\"11\" fill=\"#555\">{text}</text>",
            f.bottom + 5.0,
            f.bottom + 18.0,
            b = f.bottom
        );
    }
}

fn axis_labels(s: &mut String, chart: &Chart, f: &Frame, left: f64) {
    if !chart.x_label.is_empty() {
        let _ = writeln!(
            s,
            "<text class=\"axis-label\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"12\" fill=\"#333\">{}</text>",
            (left + W - MR) / 2.0,
            f.bottom + 38.0,
            esc(&chart.x_label)
        );
    }
    if !chart.y_label.is_empty() {
        let cy = (f.top + f.bottom) / 2.0;
        let _ = writeln!(
            s,
            "<text class=\"axis-label\" x=\"16\" y=\"{cy}\" text-anchor=\"middle\" font-size=\"12\" fill=\"#333\" \
             transform=\"rotate(-90 16 {cy})\">{}</text>",
            esc(&chart.y_label)
        );
    }
}

fn visible_points<'a>(chart: &'a Chart, se: &'a Series) -> impl Iterator<Item = (f64, f64)> + 'a {
    se.x.iter()
        .zip(&se.y)
        .map(|(x, y)| (*x, *y))
        .filter(move |(x, y)| {
            y.is_finite()
                && chart.x_min.is_none_or(|m| *x >= m)
                && chart.x_max.is_none_or(|m| *x <= m)
        })
}

fn series_open(s: &mut String, se: &Series, marks: usize) {
    let _ = writeln!(
        s,
        "<g class=\"series\" data-name=\"{}\" data-drive=\"{}\" data-setting=\"{}\" data-marks=\"{marks}\">",
        esc(&se.name),
        esc(&se.drive),
        esc(&se.setting)
    );
}

fn line(s: &mut String, chart: &Chart, f: &Frame, inline: bool) {
    let xs: Vec<f64> = chart
        .series
        .iter()
        .flat_map(|se| visible_points(chart, se).map(|p| p.0))
        .collect();
    let (dlo, dhi) = range(xs.iter().cloned(), false);
    let x = match chart.x_min {
        // The zoom starts exactly where the scored window starts.
        Some(lo) => {
            let hi = chart.x_max.unwrap_or(dhi).max(lo + 1.0);
            Axis::exact(lo, hi, ML, W - MR, nice_step(hi - lo, 6.0))
        }
        None => Axis::linear(dlo.clamp(0.0, 1.0), dhi, ML, W - MR, false),
    };
    let log = chart.y_scale == Scale::Log;
    let (lo, hi) = range(
        chart
            .series
            .iter()
            .flat_map(|se| visible_points(chart, se).map(|p| p.1)),
        log,
    );
    let y = if log {
        Axis::log(lo, hi, f.bottom, f.top)
    } else {
        Axis::linear(lo, hi, f.bottom, f.top, true)
    };
    y_ticks(s, &y, ML);
    x_ticks(s, &x, f, false);
    axes_lines(s, ML, f);
    axis_labels(s, chart, f, ML);
    for (i, se) in chart.series.iter().enumerate() {
        let pts: Vec<(f64, f64)> = visible_points(chart, se)
            .map(|(px, py)| (x.map(px), y.map(if y.log { py.max(y.lo) } else { py })))
            .collect();
        series_open(s, se, pts.len());
        let color = COLORS[i % COLORS.len()];
        let mut dots = String::new();
        let mut path = String::new();
        for (n, (px, py)) in pts.iter().enumerate() {
            let _ = write!(dots, "M{px:.1} {py:.1}h0.1");
            let _ = write!(path, "{}{px:.1} {py:.1}", if n == 0 { 'M' } else { 'L' });
        }
        if !pts.is_empty() {
            let _ = writeln!(
                s,
                "<path class=\"dots\" d=\"{dots}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"3.4\" stroke-linecap=\"round\"/>"
            );
            if inline {
                let _ = writeln!(
                    s,
                    "<path class=\"line\" d=\"{path}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"1.3\"/>"
                );
            }
        }
        s.push_str("</g>\n");
    }
}

const BAR_H: f64 = 13.0;
const ROW_PAD: f64 = 10.0;

fn bar_row_h(chart: &Chart) -> f64 {
    chart.series.len().max(1) as f64 * (BAR_H + 2.0) + ROW_PAD
}

fn bar_rows_h(chart: &Chart) -> f64 {
    bar_row_h(chart) * chart.categories.len().max(1) as f64
}

/// Horizontal bars: a row per run (best first), a bar per series, the value at the end
/// of each bar, the run's name at the left.
fn bars(s: &mut String, chart: &Chart, f: &Frame) {
    let left = chart
        .categories
        .iter()
        .map(|c| text_w(c, 11.0) + 16.0)
        .fold(80.0, f64::max)
        .min(W * 0.5);
    let log = chart.y_scale == Scale::Log;
    let (lo, hi) = range(chart.series.iter().flat_map(|se| se.y.iter().cloned()), log);
    // Room at the right for the value text of the longest bar.
    let value_w = chart
        .series
        .iter()
        .flat_map(|se| se.y.iter())
        .filter(|v| v.is_finite())
        .map(|v| text_w(&fmt(*v), 10.0))
        .fold(0.0, f64::max)
        + 8.0;
    let right = W - MR - value_w;
    let x = if log {
        Axis::log(lo, hi, left, right)
    } else {
        Axis::linear(0.0, hi, left, right, true)
    };
    let row_h = bar_row_h(chart);
    for (ci, (cat, hl)) in chart.categories.iter().zip(&chart.highlight).enumerate() {
        let ry = f.top + row_h * ci as f64;
        if *hl {
            let _ = writeln!(
                s,
                "<rect class=\"highlight\" x=\"0\" y=\"{ry:.1}\" width=\"{W}\" height=\"{row_h:.1}\" fill=\"#fff3c4\"/>"
            );
        }
        let _ = writeln!(
            s,
            "<text class=\"category\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" font-size=\"11\" fill=\"#222\"{}>{}</text>",
            left - 8.0,
            ry + row_h / 2.0 + 4.0,
            if *hl { " font-weight=\"bold\"" } else { "" },
            esc(cat)
        );
    }
    x_ticks(s, &x, f, true);
    axes_lines(s, left, f);
    axis_labels(s, chart, f, left);
    let base = if x.log { x.lo } else { 0.0 };
    for (si, se) in chart.series.iter().enumerate() {
        let n =
            se.y.iter()
                .filter(|v| v.is_finite() && (!log || **v > 0.0))
                .count();
        series_open(s, se, n);
        for (c, v) in se.x.iter().zip(&se.y) {
            if !v.is_finite() || (log && *v <= 0.0) {
                continue;
            }
            let py = f.top + row_h * c + ROW_PAD / 2.0 + (BAR_H + 2.0) * si as f64;
            let (x0, x1) = (x.map(base), x.map(*v));
            let _ = writeln!(
                s,
                "<rect x=\"{x0:.1}\" y=\"{py:.1}\" width=\"{:.1}\" height=\"{BAR_H}\" fill=\"{}\"><title>{}: {}</title></rect>\
                 <text class=\"value\" x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" fill=\"#333\">{}</text>",
                (x1 - x0).max(1.0),
                COLORS[si % COLORS.len()],
                esc(&se.name),
                fmt(*v),
                x1.max(x0 + 1.0) + 4.0,
                py + BAR_H - 3.0,
                fmt(*v)
            );
        }
        s.push_str("</g>\n");
    }
}

/// A box in SVG units: (x0, y0, x1, y1).
type Box4 = (f64, f64, f64, f64);

fn overlaps(a: Box4, b: Box4) -> bool {
    a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3
}

/// Places each point's label where it overlaps no other label and no point: tried
/// right, left, above, below, then further out; failing all, the least crowded spot,
/// joined to its point by a leader line.
fn place_labels(points: &[(f64, f64)], names: &[&str], plot: Box4) -> Vec<(f64, f64, bool)> {
    let mut placed: Vec<Box4> = Vec::new();
    let dots: Vec<Box4> = points
        .iter()
        .map(|(x, y)| (x - 7.0, y - 7.0, x + 7.0, y + 7.0))
        .collect();
    let mut out = Vec::new();
    for ((cx, cy), name) in points.iter().zip(names) {
        let w = text_w(name, 10.0);
        let h = 12.0;
        let mut candidates = Vec::new();
        for d in [0.0, 14.0, 28.0, 42.0, 56.0, 70.0] {
            candidates.push((cx + 9.0, cy + 4.0 - d * 0.0 + d.min(0.0), false));
            candidates.push((cx + 9.0, cy + 4.0 + d, d > 0.0));
            candidates.push((cx + 9.0, cy + 4.0 - d, d > 0.0));
            candidates.push((cx - 9.0 - w, cy + 4.0 + d, d > 0.0));
            candidates.push((cx - 9.0 - w, cy + 4.0 - d, d > 0.0));
            candidates.push((cx - w / 2.0, cy - 10.0 - d, d > 0.0));
            candidates.push((cx - w / 2.0, cy + 18.0 + d, d > 0.0));
        }
        let fits = |(x, y, _): &(f64, f64, bool)| {
            let b = (*x, y - h + 2.0, x + w, *y + 3.0);
            b.0 >= plot.0
                && b.2 <= plot.2
                && b.1 >= plot.1
                && b.3 <= plot.3
                && !placed.iter().chain(dots.iter()).any(|o| overlaps(b, *o))
        };
        let pick = candidates
            .iter()
            .find(|c| fits(c))
            .cloned()
            .unwrap_or_else(|| {
                // Stack at the right edge, below the last label there.
                let y = placed
                    .iter()
                    .filter(|b| b.2 >= plot.2 - 1.0)
                    .map(|b| b.3 + h)
                    .fold(plot.1 + h, f64::max);
                (plot.2 - w, y, true)
            });
        placed.push((pick.0, pick.1 - h + 2.0, pick.0 + w, pick.1 + 3.0));
        out.push(pick);
    }
    out
}

fn scatter(s: &mut String, chart: &Chart, f: &Frame) {
    let (_, xmax) = range(
        chart.series.iter().flat_map(|se| se.x.iter().cloned()),
        false,
    );
    let (ylo, yhi) = range(
        chart.series.iter().flat_map(|se| se.y.iter().cloned()),
        false,
    );
    // Room at the right for labels of the rightmost points.
    let x = Axis::linear(0.0, xmax * 1.25, ML, W - MR, true);
    let y = Axis::linear(ylo, yhi * 1.1, f.bottom, f.top, true);
    y_ticks(s, &y, ML);
    x_ticks(s, &x, f, false);
    axes_lines(s, ML, f);
    axis_labels(s, chart, f, ML);
    let mut pts = Vec::new();
    let mut names = Vec::new();
    for se in &chart.series {
        for (px, py) in se.x.iter().zip(&se.y) {
            if px.is_finite() && py.is_finite() {
                pts.push((x.map(*px), y.map(*py)));
                names.push(se.name.as_str());
            }
        }
    }
    let labels = place_labels(&pts, &names, (ML + 2.0, f.top, W - MR, f.bottom - 2.0));
    let mut k = 0;
    for (i, se) in chart.series.iter().enumerate() {
        let n =
            se.x.iter()
                .zip(&se.y)
                .filter(|(a, b)| a.is_finite() && b.is_finite())
                .count();
        series_open(s, se, n);
        for _ in 0..n {
            let (cx, cy) = pts[k];
            let (lx, ly, leader) = labels[k];
            let color = COLORS[i % COLORS.len()];
            if leader {
                let tx = if lx > cx {
                    lx - 2.0
                } else {
                    lx + text_w(names[k], 10.0) + 2.0
                };
                let _ = writeln!(
                    s,
                    "<line x1=\"{cx:.1}\" y1=\"{cy:.1}\" x2=\"{tx:.1}\" y2=\"{:.1}\" stroke=\"#aaa\" stroke-width=\"0.8\"/>",
                    ly - 4.0
                );
            }
            let _ = writeln!(
                s,
                "<circle cx=\"{cx:.1}\" cy=\"{cy:.1}\" r=\"6\" fill=\"{color}\" fill-opacity=\"0.85\"/>\
                 <text class=\"value\" x=\"{lx:.1}\" y=\"{ly:.1}\" font-size=\"10\" fill=\"#333\">{}</text>",
                esc(names[k])
            );
            k += 1;
        }
        s.push_str("</g>\n");
    }
}

/// What [`write_images`] wrote.
#[derive(Debug, Default)]
pub struct Written {
    pub files: Vec<PathBuf>,
    /// What the reader must know about the images (label characters no font has).
    pub warnings: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
#[error("writing {path}: {source}")]
pub struct ImageError {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

/// Where [`write_images`] writes: the directory, and the rule of its files (they are
/// named outputs: a file of the user's there is kept unless `--overwrite`).
struct Out<'a> {
    rule: &'a storbench_trace::atomic::Rule,
    written: Written,
}

fn write(path: PathBuf, bytes: &[u8], out: &mut Out<'_>) -> Result<(), ImageError> {
    storbench_trace::atomic::write_atomic_with(&path, bytes, out.rule).map_err(|source| {
        ImageError {
            path: path.clone(),
            source,
        }
    })?;
    out.written.files.push(path);
    Ok(())
}

/// Writes `<id>.svg` and `<id>.png` per chart, `<id>.md` and `<id>.csv` per table, and
/// `tables.md` with every table, into `dir` (created if missing), each file under
/// `rule` (`storbench_trace::atomic`).
pub fn write_images(
    dir: &Path,
    charts: &[Chart],
    tables: &[Table],
    rule: &storbench_trace::atomic::Rule,
) -> Result<Written, ImageError> {
    std::fs::create_dir_all(dir).map_err(|source| ImageError {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut out = Out {
        rule,
        written: Written::default(),
    };
    let mut raster = png::Rasterizer::new();
    for c in charts {
        let svg = chart_svg(c);
        write(dir.join(format!("{}.svg", c.id)), svg.as_bytes(), &mut out)?;
        let missing = raster.missing_chars(&chart_text(c));
        if !missing.is_empty() {
            out.written.warnings.push(format!(
                "{}.png: no font here has {}; those characters are drawn as boxes (install fonts-dejavu or fonts-noto and run again)",
                c.id,
                missing
                    .iter()
                    .map(|ch| format!("{ch:?} (U+{:04X})", *ch as u32))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        let path = dir.join(format!("{}.png", c.id));
        let bytes = raster.render(&svg).map_err(|e| ImageError {
            path: path.clone(),
            source: std::io::Error::other(e),
        })?;
        write(path, &bytes, &mut out)?;
    }
    let mut all = String::new();
    for t in tables {
        write(
            dir.join(format!("{}.md", t.id)),
            t.to_markdown().as_bytes(),
            &mut out,
        )?;
        write(
            dir.join(format!("{}.csv", t.id)),
            t.to_csv().as_bytes(),
            &mut out,
        )?;
        all += &t.to_markdown();
        all += "\n";
    }
    write(dir.join("tables.md"), all.as_bytes(), &mut out)?;
    Ok(out.written)
}

/// SVG to PNG with resvg (pure Rust). Labels are drawn with the DejaVu Sans subset built
/// into the binary (`assets/fonts`, its licence beside it), so a PNG has its labels and
/// the same bytes on every machine whatever fonts are installed. A label character
/// outside the subset is looked for in the system's fonts; one found nowhere is reported
/// (never dropped silently).
pub mod png {
    use resvg::{tiny_skia, usvg};
    use std::sync::Arc;

    static SANS: &[u8] = include_bytes!("../assets/fonts/DejaVuSans-subset.ttf");
    static SANS_BOLD: &[u8] = include_bytes!("../assets/fonts/DejaVuSans-Bold-subset.ttf");
    /// The family name of the built-in fonts (and the first one `chart_svg` asks for).
    pub const FAMILY: &str = "DejaVu Sans";
    /// Pixels per SVG unit: 2 gives sharp images on high-density screens and in print.
    pub const SCALE: f32 = 2.0;

    /// Renders our chart SVGs; holds the font database (built once per batch).
    pub struct Rasterizer {
        options: usvg::Options<'static>,
        system_fonts: bool,
    }

    impl Default for Rasterizer {
        fn default() -> Self {
            Self::new()
        }
    }

    impl Rasterizer {
        pub fn new() -> Rasterizer {
            let mut options = usvg::Options {
                font_family: FAMILY.to_string(),
                ..usvg::Options::default()
            };
            let db = options.fontdb_mut();
            db.load_font_data(SANS.to_vec());
            db.load_font_data(SANS_BOLD.to_vec());
            db.set_sans_serif_family(FAMILY);
            assert_eq!(db.len(), 2, "the built-in fonts parse");
            Rasterizer {
                options,
                system_fonts: false,
            }
        }

        fn covered(&self, c: char) -> bool {
            let db = &self.options.fontdb;
            c.is_control()
                || db.faces().any(|f| {
                    db.with_face_data(f.id, |data, index| {
                        skrifa::FontRef::from_index(data, index)
                            .ok()
                            .and_then(|font| skrifa::MetadataProvider::charmap(&font).map(c))
                            .is_some()
                    }) == Some(true)
                })
        }

        /// The characters of `text` no loaded font has. Loads the system's fonts (once)
        /// when the built-in ones lack a character, and looks again.
        pub fn missing_chars(&mut self, text: &str) -> Vec<char> {
            let mut missing: Vec<char> = text.chars().filter(|c| !self.covered(*c)).collect();
            if !missing.is_empty() && !self.system_fonts {
                self.system_fonts = true;
                Arc::make_mut(&mut self.options.fontdb).load_system_fonts();
                missing.retain(|c| !self.covered(*c));
            }
            missing.sort_unstable();
            missing.dedup();
            missing
        }

        /// `svg` (one of ours) as PNG bytes, at [`SCALE`] pixels per unit.
        pub fn render(&self, svg: &str) -> Result<Vec<u8>, String> {
            let tree = usvg::Tree::from_str(svg, &self.options)
                .map_err(|e| format!("parsing the SVG: {e}"))?;
            let size = tree
                .size()
                .to_int_size()
                .scale_by(SCALE)
                .ok_or("empty SVG")?;
            let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height())
                .ok_or_else(|| format!("{}x{} pixels is too large", size.width(), size.height()))?;
            resvg::render(
                &tree,
                tiny_skia::Transform::from_scale(SCALE, SCALE),
                &mut pixmap.as_mut(),
            );
            pixmap
                .encode_png()
                .map_err(|e| format!("encoding the PNG: {e}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::html::{charts, sample, tables};

    #[test]
    fn tick_labels_read_like_the_page() {
        assert_eq!(fmt(25000.0), "25k");
        assert_eq!(fmt(1_500_000.0), "1.5M");
        assert_eq!(fmt(250.0), "250");
        assert_eq!(fmt(0.25), "0.25");
        assert_eq!(fmt(12.5), "12.5");
    }

    #[test]
    fn svg_is_deterministic_and_draws_every_series() {
        let runs = sample::all_runs(200);
        let cs = charts(&runs);
        for c in &cs {
            let a = chart_svg(c);
            assert_eq!(a, chart_svg(c), "{}: same input, same bytes", c.id);
            assert!(a.starts_with("<svg") && a.ends_with("</svg>\n"));
            // Every series is a group that says how many marks it drew.
            let marks: usize = a
                .split("data-marks=\"")
                .skip(1)
                .map(|t| t[..t.find('"').unwrap()].parse::<usize>().unwrap())
                .sum();
            let drawn = match c.kind {
                ChartKind::Line => a.matches("class=\"dots\"").count(),
                ChartKind::Bars => {
                    a.matches("<rect x=").count()
                        - if c.series.len() > 1 {
                            c.series.len()
                        } else {
                            0
                        }
                } // legend swatches
                ChartKind::Scatter => a.matches("<circle ").count(),
            };
            assert!(
                !a.contains("class=\"line\""),
                "{}: the export shows dots",
                c.id
            );
            let expected: usize = c
                .series
                .iter()
                .map(|s| {
                    s.x.iter()
                        .zip(&s.y)
                        .filter(|(x, y)| {
                            y.is_finite()
                                && c.x_min.is_none_or(|m| **x >= m)
                                && c.x_max.is_none_or(|m| **x <= m)
                        })
                        .count()
                })
                .sum();
            let drawn_expected = match c.kind {
                ChartKind::Line => c.series.len(),
                _ => expected,
            };
            assert_eq!(drawn, drawn_expected, "{}", c.id);
            assert_eq!(marks, expected, "{}", c.id);
        }
    }

    #[test]
    fn writes_svg_markdown_and_csv_files() {
        let dir = tempfile::tempdir().unwrap();
        let runs = sample::all_runs(100);
        let (cs, ts) = (charts(&runs), tables(&runs));
        let w = write_images(dir.path(), &cs, &ts, &Default::default()).unwrap();
        for c in &cs {
            assert!(dir.path().join(format!("{}.svg", c.id)).is_file());
        }
        let csv = std::fs::read_to_string(dir.path().join("trim-validation.csv")).unwrap();
        assert_eq!(csv.lines().count(), 3, "header + 2 drives");
        assert!(csv.starts_with("drive,clean MB/s,dirty MB/s,after TRIM MB/s"));
        assert!(std::fs::read_to_string(dir.path().join("tables.md"))
            .unwrap()
            .contains("### Targets"));
        assert_eq!(w.files.len(), cs.len() * 2 + ts.len() * 2 + 1);
        assert!(w.warnings.is_empty(), "{:?}", w.warnings);
    }

    /// Width and height from a PNG's IHDR chunk, after checking the signature.
    fn png_size(bytes: &[u8]) -> (u32, u32) {
        assert!(bytes.len() > 33, "too short for a PNG");
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
        assert_eq!(&bytes[8..16], b"\0\0\0\x0dIHDR", "IHDR first, 13 bytes");
        let be = |i: usize| u32::from_be_bytes(bytes[i..i + 4].try_into().unwrap());
        (be(16), be(20))
    }

    #[test]
    fn writes_one_png_per_chart_with_its_marks_and_labels() {
        let dir = tempfile::tempdir().unwrap();
        let runs = sample::all_runs(200);
        let cs = charts(&runs);
        // The charts issue 7 asks for: three consistency graphs, four trace-bench charts
        // (data rate, service time, busy time, scatter) plus percentiles, and TRIM.
        let ids: Vec<&str> = cs.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "consistency-log",
                "consistency-zoom-log",
                "consistency-zoom-linear",
                "bench-heavy-2011-data-rate",
                "bench-heavy-2011-service-time",
                "bench-heavy-2011-busy-time",
                "bench-heavy-2011-scatter",
                "bench-heavy-2011-percentiles",
                "trim-throughput"
            ]
        );
        write_images(dir.path(), &cs, &[], &Default::default()).unwrap();
        for c in &cs {
            let bytes = std::fs::read(dir.path().join(format!("{}.png", c.id))).unwrap();
            let (w, h) = png_size(&bytes);
            let svg = chart_svg(c);
            let svg_h: f64 = svg
                .split("height=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            assert_eq!(w, (W * png::SCALE as f64) as u32, "{}", c.id);
            assert_eq!(h, (svg_h * png::SCALE as f64).round() as u32, "{}", c.id);
            let px = resvg::tiny_skia::Pixmap::decode_png(&bytes).unwrap();
            let data = px.data();
            let rgb = |i: usize| (data[i * 4], data[i * 4 + 1], data[i * 4 + 2]);
            let n = (w * h) as usize;
            assert!((1..n).any(|i| rgb(i) != rgb(0)), "{}: one colour", c.id);
            // Every series' colour is drawn (at least its legend swatch, solid).
            for (i, _) in c.series.iter().enumerate() {
                let hex = COLORS[i % COLORS.len()];
                let want = (
                    u8::from_str_radix(&hex[1..3], 16).unwrap(),
                    u8::from_str_radix(&hex[3..5], 16).unwrap(),
                    u8::from_str_radix(&hex[5..7], 16).unwrap(),
                );
                let count = (0..n).filter(|&i| rgb(i) == want).count();
                assert!(
                    count >= 100,
                    "{}: series {i} colour {hex}: {count} px",
                    c.id
                );
            }
            // The title is text drawn with the built-in font: dark pixels in its band
            // (y 8..28 SVG units), none without a font.
            let s = png::SCALE as usize;
            let dark = (8 * s..28 * s)
                .flat_map(|y| (0..w as usize).map(move |x| y * w as usize + x))
                .filter(|&i| {
                    let (r, g, b) = rgb(i);
                    r < 0x60 && g < 0x60 && b < 0x60
                })
                .count();
            assert!(dark > 200, "{}: title not drawn ({dark} dark px)", c.id);
        }
    }

    #[test]
    fn png_bytes_do_not_depend_on_the_machine_fonts() {
        let runs = sample::all_runs(50);
        let c = &charts(&runs)[0];
        let svg = chart_svg(c);
        let a = png::Rasterizer::new().render(&svg).unwrap();
        let mut r = png::Rasterizer::new();
        assert!(r.missing_chars("µs é … Ω").is_empty(), "in the subset");
        assert_eq!(r.render(&svg).unwrap(), a, "same SVG, same PNG");
    }

    #[test]
    fn a_character_no_font_has_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let runs = sample::all_runs(50);
        let mut cs = charts(&runs);
        cs.truncate(1);
        cs[0].series[0].name = "drive \u{10FFFD}".to_string();
        let w = write_images(dir.path(), &cs, &[], &Default::default()).unwrap();
        assert_eq!(w.warnings.len(), 1, "{:?}", w.warnings);
        assert!(w.warnings[0].contains("U+10FFFD"), "{}", w.warnings[0]);
        assert!(w.warnings[0].starts_with(&format!("{}.png", cs[0].id)));
        assert!(dir.path().join(format!("{}.png", cs[0].id)).is_file());
    }
}
