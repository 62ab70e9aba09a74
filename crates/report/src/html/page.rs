//! The self-contained HTML page: CSS, chart code and data inline, nothing fetched.

use super::charts::Chart;
use super::tables::Table;
use super::view::{fmt_num, RunView};

/// The page's chart interactions (filter buttons, dots or lines) and its self-check.
/// The charts themselves are drawn once, in Rust ([`crate::images::chart_svg`]), so
/// the page shows exactly the SVG and PNG files `--images` writes.
const CHART_JS: &str = include_str!("../../assets/chart.js");

/// Captures script errors and console.error calls before anything else runs, so the
/// verification summary (and the browser test) sees them.
const CAPTURE_JS: &str = r#"window.__sbErrors = [];
window.addEventListener('error', function (e) { window.__sbErrors.push(String(e.message)); });
(function () { var ce = console.error; console.error = function () {
  window.__sbErrors.push(Array.prototype.join.call(arguments, ' ')); ce.apply(console, arguments); }; })();"#;

const CSS: &str = r#"
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: #222; margin: 0; background: #f6f7f9; }
main { max-width: 1000px; margin: 0 auto; padding: 8px 24px 48px; background: #fff; }
header { border-bottom: 2px solid #1f77b4; margin-bottom: 12px; }
h1 { font-size: 26px; margin: 16px 0 4px; }
h2 { font-size: 20px; margin: 32px 0 8px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 18px 0 6px; }
nav a { margin-right: 14px; }
.note { color: #555; font-size: 13px; }
.chart { margin: 10px 0 22px; }
.chart svg { max-width: 100%; height: auto; }
.chart .line { display: none; }
.chart.show-lines .line { display: inline; }
.chart.show-lines .dots { display: none; }
.chart .off { display: none; }
.buttons { margin: 2px 0; font-size: 13px; }
.buttons span { display: inline-block; width: 80px; color: #555; }
.buttons button { font: inherit; margin: 2px 3px 2px 0; padding: 2px 9px; border: 1px solid #bbb; border-radius: 3px; background: #f4f4f4; cursor: pointer; }
.buttons button.on { background: #1f77b4; color: #fff; border-color: #1f77b4; }
table { border-collapse: collapse; margin: 6px 0 18px; font-size: 13px; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f0f3f7; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
pre { background: #f4f4f4; padding: 8px; overflow-x: auto; font-size: 12px; }
"#;

/// HTML-escapes text for element content and attribute values.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            _ => o.push(c),
        }
    }
    o
}

fn table_html(t: &Table) -> String {
    let mut s = format!(
        "<h3>{}</h3>\n<table id=\"table-{}\">\n<tr>",
        esc(&t.title),
        esc(&t.id)
    );
    for c in &t.columns {
        s += &format!("<th>{}</th>", esc(c));
    }
    s += "</tr>\n";
    for r in &t.rows {
        s += "<tr>";
        for c in r {
            let num = c.parse::<f64>().is_ok();
            s += &format!(
                "<td{}>{}</td>",
                if num { " class=\"num\"" } else { "" },
                esc(c)
            );
        }
        s += "</tr>\n";
    }
    s + "</table>\n"
}

fn uniq(v: impl Iterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for x in v {
        if !out.contains(&x) {
            out.push(x);
        }
    }
    out
}

fn button_row(kind: &str, label: &str, values: &[String]) -> String {
    let mut s = format!(
        "<div class=\"buttons\" data-filter=\"{kind}\"><span>{label}</span><button type=\"button\" class=\"on\" data-value=\"\">All</button>"
    );
    for v in values {
        s += &format!(
            "<button type=\"button\" data-value=\"{}\">{}</button>",
            esc(v),
            esc(v)
        );
    }
    s + "</div>\n"
}

/// One chart: its title, its buttons and its SVG (the one `--images` writes).
fn chart_div(c: &Chart, index: usize) -> String {
    // The title is drawn in the SVG itself (so exported images carry it).
    let _ = index;
    let mut s = format!(
        "<div class=\"chart{}\" id=\"chart-{}\" data-series=\"{}\">\n",
        if c.kind == super::charts::ChartKind::Line {
            " lines"
        } else {
            ""
        },
        esc(&c.id),
        c.series.len(),
    );
    if c.buttons {
        let drives = uniq(c.series.iter().map(|x| x.drive.clone()));
        let settings = uniq(c.series.iter().map(|x| x.setting.clone()));
        s += &button_row("drive", "Drive", &drives);
        s += &button_row("setting", "Spare area", &settings);
    }
    if c.kind == super::charts::ChartKind::Line {
        s += "<div class=\"buttons\" data-filter=\"style\"><span>Draw</span>\
              <button type=\"button\" class=\"on\" data-value=\"dots\">Dots</button>\
              <button type=\"button\" data-value=\"lines\">Lines</button></div>\n";
    }
    s += &crate::images::chart_svg_inline(c);
    s + "</div>\n"
}

struct Section {
    id: &'static str,
    title: &'static str,
}

const SECTIONS: [Section; 8] = [
    Section {
        id: "consistency",
        title: "Performance consistency",
    },
    Section {
        id: "bench",
        title: "Trace bench",
    },
    Section {
        id: "trim",
        title: "TRIM validation",
    },
    Section {
        id: "twin",
        title: "Digital twin",
    },
    Section {
        id: "season",
        title: "Seasoning",
    },
    Section {
        id: "traces",
        title: "Traces used",
    },
    Section {
        id: "targets",
        title: "Targets and drive health",
    },
    Section {
        id: "methods",
        title: "Methods: what ran",
    },
];

fn intro(section: &str, runs: &[RunView]) -> String {
    match section {
        "consistency" => {
            let works = super::charts::by_workload(
                &runs.iter().filter(|r| r.consistency.is_some()).collect::<Vec<_>>(),
            )
            .into_iter()
            .map(|(_, rs)| {
                let c = rs[0].consistency.as_ref().expect("filtered");
                format!(
                    "{} for {} s, scored over the last {} s",
                    c.work_text(),
                    c.iops_per_s.len(),
                    fmt_num(c.window_s())
                )
            })
            .collect::<Vec<_>>()
            .join("; ");
            format!(
                "<p>Each drive is purged, filled with one sequential pass over the tested span, \
                 then takes random writes with incompressible data ({}); IOPS are counted every second and \
                 drawn as one dot per second. The first graph shows the whole run on a log scale; the second \
                 and third zoom into the steady-state window each run was scored on, on a log and on a linear \
                 scale. A smaller span leaves the rest of the drive as spare area. Use the buttons to show one \
                 drive or one spare-area setting, or lines instead of dots.</p>",
                esc(&works)
            )
        }
        "bench" => "<p>A trace is replayed with idle time cut, one group of charts per workload; bars are \
                    sorted best first. Average data rate = bytes moved ÷ busy time (time with at least one \
                    I/O outstanding), MB = 10<sup>6</sup> bytes; per direction, that direction's bytes ÷ its \
                    busy time. Service time = completion − submission of one I/O, queueing included. \
                    Percentiles come from a mergeable histogram.</p>"
            .to_string(),
        "trim" => "<p>Sequential write throughput on a clean (purged) drive, after filling it and running \
                   random writes (dirty), and after one TRIM pass over the span. A working TRIM brings \
                   the last figure back near the first.</p>"
            .to_string(),
        "twin" => "<p>A twin measurement's figures beside those of the simulated drive fitted to them \
                   (<code>storbench twin fit</code>, docs/twin.md). The twin's <code>sim:</code> spec opens \
                   the fitted drive with every command; unidentified parameters are the preset's guesses, \
                   no measured figure moved with them.</p>"
            .to_string(),
        "season" => "<p>How each drive was prepared before the measured work (seed 002): a purge, one \
                     128 KB sequential pass over the span (seasoned and used drives; none for a fresh \
                     one), then the restore of a disk image: a generated one for a season run, the \
                     data the trace reads before writing it (or the user's image) for a trace bench. \
                     A used drive then replays the trace before the measured pass.</p>"
            .to_string(),
        _ => String::new(),
    }
}

/// A section drawn outside the run charts (the sweep section): its own HTML.
pub struct ExtraSection {
    pub id: &'static str,
    pub title: &'static str,
    pub html: String,
}

/// Renders the complete page. `generator` names the tool and version that wrote it.
pub fn render(runs: &[RunView], charts: &[Chart], tables: &[Table], generator: &str) -> String {
    render_with(runs, charts, tables, &[], generator)
}

/// The sections in page order: the built-in procedures' first, then a section per
/// procedure whose charts are declared as data (named by the procedure), then the rest.
fn section_order(charts: &[Chart]) -> Vec<(&str, &str)> {
    let mut own: Vec<&str> = Vec::new();
    for c in charts {
        let id = c.section.as_str();
        if !SECTIONS.iter().any(|s| s.id == id) && !own.contains(&id) {
            own.push(id);
        }
    }
    let builtin = |s: &'static Section| (s.id, s.title);
    SECTIONS[..4]
        .iter()
        .map(builtin)
        .chain(own.iter().map(|id| (*id, *id)))
        .chain(SECTIONS[4..].iter().map(builtin))
        .collect()
}

/// The methods section's list of the command lines that made each result.
fn command_lines(runs: &[RunView]) -> String {
    let mut out = String::from("<h3>Command lines</h3>\n<pre>");
    for r in runs {
        out += &format!(
            "# {} ({})\n{}\n",
            esc(&r.label()),
            esc(&r.source),
            esc(&r.command_line)
        );
    }
    out + "</pre>\n"
}

/// [`render`] with extra sections first (the sweeps).
pub fn render_with(
    runs: &[RunView],
    charts: &[Chart],
    tables: &[Table],
    extra: &[ExtraSection],
    generator: &str,
) -> String {
    let mut body = String::new();
    let mut nav = String::new();
    for sec in extra.iter().filter(|s| !s.html.is_empty()) {
        nav += &format!("<a href=\"#{}\">{}</a>", sec.id, sec.title);
        body += &format!(
            "<section id=\"{}\">\n<h2>{}</h2>\n{}</section>\n",
            sec.id, sec.title, sec.html
        );
    }
    for (id, title) in section_order(charts) {
        let sc: Vec<&Chart> = charts.iter().filter(|c| c.section == id).collect();
        let st: Vec<&Table> = tables.iter().filter(|t| t.section == id).collect();
        if sc.is_empty() && st.is_empty() {
            continue;
        }
        nav += &format!("<a href=\"#{}\">{}</a>", esc(id), esc(title));
        body += &format!(
            "<section id=\"{}\">\n<h2>{}</h2>\n{}\n",
            esc(id),
            esc(title),
            intro(id, runs)
        );
        for c in sc {
            let index = charts.iter().position(|x| x.id == c.id).unwrap_or(0);
            body += &chart_div(c, index);
        }
        for t in st {
            body += &table_html(t);
        }
        if id == "methods" {
            body += &command_lines(runs);
        }
        body += "</section>\n";
    }
    let drives: Vec<String> = {
        let mut d: Vec<String> = Vec::new();
        for r in runs {
            if !d.contains(&r.drive) {
                d.push(r.drive.clone());
            }
        }
        d
    };
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>storbench report</title>\n<script>\n{CAPTURE_JS}\n</script>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n\
         <header><h1>storbench report</h1>\n<p class=\"note\">{n} result director{ies} · drives: {drives} · written by {gen}. \
         This file is self-contained: it works offline.</p>\n<nav>{nav}</nav></header>\n{body}\
         <pre id=\"sb-verify\" hidden></pre>\n</main>\n\
         <script>\n{CHART_JS}\n</script>\n\
         <script>StorbenchCharts.init();</script>\n\
         </body>\n</html>\n",
        n = runs.len(),
        ies = if runs.len() == 1 { "y" } else { "ies" },
        drives = esc(&drives.join(", ")),
        gen = esc(generator),
    )
}
