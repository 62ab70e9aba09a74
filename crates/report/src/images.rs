//! `--images DIR`: each chart as SVG (rendered here, deterministic: same data, same
//! bytes) and as PNG (that SVG rasterized at 2x by [`png`], labels in a built-in font,
//! also deterministic), and every table as Markdown and CSV, for articles.
//!
//! The layout follows `assets/chart.js` (the page's renderer), so the images look like
//! the page's charts without the buttons: every series is drawn.

use crate::html::charts::{Chart, ChartKind, Scale, Series};
use crate::html::page::esc;
use crate::html::tables::Table;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const COLORS: [&str; 10] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
    "#7f7f7f", "#bcbd22",
];
const W: f64 = 760.0;
const PLOT_H: f64 = 340.0;
const ML: f64 = 72.0;
const MR: f64 = 24.0;
const MT: f64 = 40.0;
const MB: f64 = 56.0;
const LEGEND_ROW: f64 = 18.0;

/// Same rules as `fmt` in chart.js.
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
}

impl Axis {
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
        let n = ((hi - lo) / step).round() as usize;
        let ticks = (0..=n).map(|i| lo + step * i as f64).collect();
        Axis {
            lo,
            hi,
            log: false,
            p0,
            p1,
            ticks,
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
}

fn y_axis(chart: &Chart, values: impl Iterator<Item = f64>) -> Axis {
    let log = chart.y_scale == Scale::Log;
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite() && (!log || *v > 0.0)) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if lo == f64::INFINITY {
        lo = if log { 1.0 } else { 0.0 };
        hi = lo + 1.0;
    }
    if log {
        Axis::log(lo, hi, PLOT_H - MB, MT)
    } else {
        Axis::linear(lo, hi, PLOT_H - MB, MT, true)
    }
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

/// Renders one chart as a standalone SVG document.
pub fn chart_svg(chart: &Chart) -> String {
    let legend_rows = chart.series.len().div_ceil(3);
    let h = PLOT_H + LEGEND_ROW * legend_rows as f64 + 8.0;
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {W} {h}\" width=\"{W}\" height=\"{h}\" \
         font-family=\"DejaVu Sans, Arial, sans-serif\">\n<rect width=\"{W}\" height=\"{h}\" fill=\"#fff\"/>\n\
         <text x=\"{ML}\" y=\"22\" font-size=\"14\" font-weight=\"bold\" fill=\"#222\">{}</text>\n",
        esc(&chart.title)
    );
    let y = y_axis(
        chart,
        chart
            .series
            .iter()
            .flat_map(|s| s.y.iter().cloned())
            .filter(|_| true),
    );
    match chart.kind {
        ChartKind::Line => line(&mut s, chart, y),
        ChartKind::Bars => bars(&mut s, chart, y),
        ChartKind::Scatter => scatter(&mut s, chart, y),
    }
    for (i, se) in chart.series.iter().enumerate() {
        let (row, col) = (i / 3, i % 3);
        let lx = ML + col as f64 * 230.0;
        let ly = PLOT_H + row as f64 * LEGEND_ROW;
        let _ = writeln!(
            s,
            "<rect x=\"{lx}\" y=\"{}\" width=\"12\" height=\"12\" rx=\"2\" fill=\"{}\"/>\
             <text x=\"{}\" y=\"{}\" font-size=\"12\" fill=\"#222\">{}</text>",
            ly - 10.0,
            COLORS[i % COLORS.len()],
            lx + 17.0,
            ly,
            esc(&se.name)
        );
    }
    s + "</svg>\n"
}

fn frame(s: &mut String, chart: &Chart, x: Option<&Axis>, y: &Axis, x_labels: &[(f64, String)]) {
    let bottom = PLOT_H - MB;
    for &t in &y.ticks {
        let py = y.map(t);
        let _ = writeln!(
            s,
            "<line x1=\"{ML}\" x2=\"{}\" y1=\"{py:.1}\" y2=\"{py:.1}\" stroke=\"#e3e3e3\"/>\
             <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\" font-size=\"11\" fill=\"#555\">{}</text>",
            W - MR,
            ML - 6.0,
            py + 4.0,
            fmt(t)
        );
    }
    if let Some(x) = x {
        for &t in &x.ticks {
            let px = x.map(t);
            let _ = writeln!(
                s,
                "<line x1=\"{px:.1}\" x2=\"{px:.1}\" y1=\"{bottom}\" y2=\"{}\" stroke=\"#888\"/>\
                 <text x=\"{px:.1}\" y=\"{}\" text-anchor=\"middle\" font-size=\"11\" fill=\"#555\">{}</text>",
                bottom + 5.0,
                bottom + 18.0,
                fmt(t)
            );
        }
    }
    for (px, text) in x_labels {
        let _ = writeln!(
            s,
            "<text x=\"{px:.1}\" y=\"{}\" text-anchor=\"middle\" font-size=\"11\" fill=\"#555\">{}</text>",
            bottom + 18.0,
            esc(text)
        );
    }
    let _ = writeln!(
        s,
        "<line x1=\"{ML}\" x2=\"{}\" y1=\"{bottom}\" y2=\"{bottom}\" stroke=\"#888\"/>\
         <line x1=\"{ML}\" x2=\"{ML}\" y1=\"{MT}\" y2=\"{bottom}\" stroke=\"#888\"/>",
        W - MR
    );
    if !chart.x_label.is_empty() {
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"12\" fill=\"#333\">{}</text>",
            (ML + W - MR) / 2.0,
            PLOT_H - 22.0,
            esc(&chart.x_label)
        );
    }
    let cy = (MT + bottom) / 2.0;
    let _ = writeln!(
        s,
        "<text x=\"16\" y=\"{cy}\" text-anchor=\"middle\" font-size=\"12\" fill=\"#333\" \
         transform=\"rotate(-90 16 {cy})\">{}</text>",
        esc(&chart.y_label)
    );
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

fn line(s: &mut String, chart: &Chart, _y_all: Axis) {
    let xs: Vec<f64> = chart
        .series
        .iter()
        .flat_map(|se| visible_points(chart, se).map(|p| p.0))
        .collect();
    let lo = chart
        .x_min
        .unwrap_or_else(|| xs.iter().cloned().fold(f64::INFINITY, f64::min));
    let hi = chart
        .x_max
        .unwrap_or_else(|| xs.iter().cloned().fold(f64::NEG_INFINITY, f64::max));
    let (lo, hi) = if lo.is_finite() { (lo, hi) } else { (0.0, 1.0) };
    let x = Axis::linear(lo, hi, ML, W - MR, false);
    // The y range covers only what is visible in the x range (as in the page).
    let y = y_axis(
        chart,
        chart
            .series
            .iter()
            .flat_map(|se| visible_points(chart, se).map(|p| p.1)),
    );
    frame(s, chart, Some(&x), &y, &[]);
    for (i, se) in chart.series.iter().enumerate() {
        let mut d = String::new();
        for (n, (px, py)) in visible_points(chart, se).enumerate() {
            let py = if y.log { py.max(y.lo) } else { py };
            let _ = write!(
                d,
                "{}{:.1} {:.1}",
                if n == 0 { 'M' } else { 'L' },
                x.map(px),
                y.map(py)
            );
        }
        if !d.is_empty() {
            let _ = writeln!(
                s,
                "<path d=\"{d}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.3\"/>",
                COLORS[i % COLORS.len()]
            );
        }
    }
}

fn bars(s: &mut String, chart: &Chart, y: Axis) {
    let nc = chart.categories.len().max(1) as f64;
    let ns = chart.series.len().max(1) as f64;
    let gw = (W - ML - MR) / nc;
    let bw = gw * 0.8 / ns;
    let labels: Vec<(f64, String)> = chart
        .categories
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let t = if c.chars().count() > 28 {
                c.chars().take(27).collect::<String>() + "…"
            } else {
                c.clone()
            };
            (ML + gw * (i as f64 + 0.5), t)
        })
        .collect();
    frame(s, chart, None, &y, &labels);
    let base = if y.log { y.lo } else { 0.0 };
    let small = chart.categories.len() * chart.series.len() <= 24;
    for (si, se) in chart.series.iter().enumerate() {
        for (c, v) in se.x.iter().zip(&se.y) {
            if !v.is_finite() || (y.log && *v <= 0.0) {
                continue;
            }
            let px = ML + gw * c + gw * 0.1 + bw * si as f64;
            let (y0, y1) = (y.map(base), y.map(*v));
            let _ = writeln!(
                s,
                "<rect x=\"{px:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{}\"/>",
                y0.min(y1),
                (bw - 2.0).max(1.0),
                (y0 - y1).abs().max(1.0),
                COLORS[si % COLORS.len()]
            );
            if small {
                let _ = writeln!(
                    s,
                    "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"10\" fill=\"#333\">{}</text>",
                    px + bw / 2.0 - 1.0,
                    y1 - 3.0,
                    fmt(*v)
                );
            }
        }
    }
}

fn scatter(s: &mut String, chart: &Chart, y: Axis) {
    let xmax = chart
        .series
        .iter()
        .flat_map(|se| se.x.iter().cloned())
        .fold(1.0, f64::max);
    let x = Axis::linear(0.0, xmax, ML, W - MR, true);
    frame(s, chart, Some(&x), &y, &[]);
    for (i, se) in chart.series.iter().enumerate() {
        for (px, py) in se.x.iter().zip(&se.y) {
            if !py.is_finite() || !px.is_finite() {
                continue;
            }
            let (cx, cy) = (x.map(*px), y.map(*py));
            // Label on the side with room, as in the page.
            let right = cx < W - MR - 160.0;
            let _ = writeln!(
                s,
                "<circle cx=\"{cx:.1}\" cy=\"{cy:.1}\" r=\"6\" fill=\"{}\" fill-opacity=\"0.85\"/>\
                 <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"{}\" font-size=\"10\" fill=\"#333\">{}</text>",
                COLORS[i % COLORS.len()],
                if right { cx + 9.0 } else { cx - 9.0 },
                cy + 4.0,
                if right { "start" } else { "end" },
                esc(&se.name)
            );
        }
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

fn write(path: PathBuf, bytes: &[u8], out: &mut Written) -> Result<(), ImageError> {
    storbench_trace::atomic::write_atomic(&path, bytes).map_err(|source| ImageError {
        path: path.clone(),
        source,
    })?;
    out.files.push(path);
    Ok(())
}

/// Writes `<id>.svg` and `<id>.png` per chart, `<id>.md` and `<id>.csv` per table, and
/// `tables.md` with every table, into `dir` (created if missing).
pub fn write_images(dir: &Path, charts: &[Chart], tables: &[Table]) -> Result<Written, ImageError> {
    std::fs::create_dir_all(dir).map_err(|source| ImageError {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut out = Written::default();
    let mut raster = png::Rasterizer::new();
    for c in charts {
        let svg = chart_svg(c);
        write(dir.join(format!("{}.svg", c.id)), svg.as_bytes(), &mut out)?;
        let missing = raster.missing_chars(&chart_text(c));
        if !missing.is_empty() {
            out.warnings.push(format!(
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
    Ok(out)
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
            let marks = match c.kind {
                ChartKind::Line => a.matches("<path ").count(),
                ChartKind::Bars => a.matches("<rect x=").count() - c.series.len(), // minus legend swatches
                ChartKind::Scatter => a.matches("<circle ").count(),
            };
            let expected: usize = match c.kind {
                ChartKind::Line => c.series.len(),
                _ => c
                    .series
                    .iter()
                    .map(|s| s.y.iter().filter(|v| v.is_finite()).count())
                    .sum(),
            };
            assert_eq!(marks, expected, "{}", c.id);
        }
    }

    #[test]
    fn writes_svg_markdown_and_csv_files() {
        let dir = tempfile::tempdir().unwrap();
        let runs = sample::all_runs(100);
        let (cs, ts) = (charts(&runs), tables(&runs));
        let w = write_images(dir.path(), &cs, &ts).unwrap();
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
                "bench-data-rate",
                "bench-service-time",
                "bench-busy-time",
                "bench-scatter",
                "bench-percentiles",
                "trim-throughput"
            ]
        );
        write_images(dir.path(), &cs, &[]).unwrap();
        for c in &cs {
            let bytes = std::fs::read(dir.path().join(format!("{}.png", c.id))).unwrap();
            let (w, h) = png_size(&bytes);
            let legend_rows = c.series.len().div_ceil(3) as f64;
            let svg_h = PLOT_H + LEGEND_ROW * legend_rows + 8.0;
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
        let w = write_images(dir.path(), &cs, &[]).unwrap();
        assert_eq!(w.warnings.len(), 1, "{:?}", w.warnings);
        assert!(w.warnings[0].contains("U+10FFFD"), "{}", w.warnings[0]);
        assert!(w.warnings[0].starts_with(&format!("{}.png", cs[0].id)));
        assert!(dir.path().join(format!("{}.png", cs[0].id)).is_file());
    }
}
