//! Tables of the report: the same rows feed the HTML page, the Markdown and CSV files
//! of `--images`, and `storbench compare`.

use super::view::{fmt_bytes, fmt_duration, fmt_num, RunView};
use serde::Serialize;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Table {
    /// Unique, usable as an HTML id and a file name.
    pub id: String,
    pub section: String,
    pub title: String,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    fn new(id: &str, section: &str, title: &str, columns: &[&str]) -> Table {
        Table {
            id: id.to_string(),
            section: section.to_string(),
            title: title.to_string(),
            columns: columns.iter().map(|c| c.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    fn push(&mut self, row: Vec<String>) {
        assert_eq!(
            row.len(),
            self.columns.len(),
            "table {}: row width",
            self.id
        );
        self.rows.push(row);
    }

    /// GitHub-flavoured Markdown.
    pub fn to_markdown(&self) -> String {
        let esc = |s: &str| md_text(s);
        let mut s = format!("### {}\n\n", esc(&self.title));
        s += &format!(
            "| {} |\n",
            self.columns
                .iter()
                .map(|c| esc(c))
                .collect::<Vec<_>>()
                .join(" | ")
        );
        s += &format!("|{}\n", "---|".repeat(self.columns.len()));
        for r in &self.rows {
            s += &format!(
                "| {} |\n",
                r.iter().map(|c| esc(c)).collect::<Vec<_>>().join(" | ")
            );
        }
        s
    }

    /// RFC 4180 CSV with a header line; a cell a spreadsheet would run as a formula is
    /// written as text (see [`csv_text`]).
    pub fn to_csv(&self) -> String {
        let field = |s: &str| {
            let s = &csv_text(s);
            if s.contains([',', '"', '\n', '\r']) {
                format!("\"{}\"", s.replace('"', "\"\""))
            } else {
                s.to_string()
            }
        };
        let mut out = String::new();
        for r in std::iter::once(&self.columns).chain(self.rows.iter()) {
            out += &r.iter().map(|c| field(c)).collect::<Vec<_>>().join(",");
            out += "\n";
        }
        out
    }

    /// Aligned plain text for a terminal: numbers right-aligned, text left-aligned.
    pub fn to_text(&self) -> String {
        let n = self.columns.len();
        let mut w: Vec<usize> = self.columns.iter().map(|c| c.chars().count()).collect();
        for r in &self.rows {
            for (i, c) in r.iter().enumerate() {
                w[i] = w[i].max(c.chars().count());
            }
        }
        let numeric = |s: &str| s.parse::<f64>().is_ok() || s == "-";
        let line = |cells: &[String], header: bool| {
            let mut s = String::new();
            for (i, c) in cells.iter().enumerate() {
                let pad = w[i] - c.chars().count();
                if i > 0 {
                    s += "  ";
                }
                if !header && numeric(c) {
                    s += &" ".repeat(pad);
                    s += c;
                } else {
                    s += c;
                    if i + 1 < n {
                        s += &" ".repeat(pad);
                    }
                }
            }
            s.trim_end().to_string() + "\n"
        };
        let mut s = format!("{}\n", self.title);
        s += &line(&self.columns, true);
        s += &(w
            .iter()
            .map(|k| "-".repeat(*k))
            .collect::<Vec<_>>()
            .join("  ")
            + "\n");
        for r in &self.rows {
            s += &line(r, false);
        }
        s
    }
}

fn opt(v: Option<f64>) -> String {
    v.map_or("-".to_string(), fmt_num)
}

/// Every table the report shows for these runs, in page order. Tables with no rows are left out.
pub fn tables(runs: &[RunView]) -> Vec<Table> {
    let mut out = consistency_tables(runs);
    out.push(bench_table(runs));
    out.extend(percentile_table(runs));
    out.push(trim_table(runs));
    out.extend(twin_tables(runs));
    out.push(season_table(runs));
    out.extend(trace_tables(runs));
    out.push(target_table(runs));
    out.push(health_table(runs));
    out.push(methods_table(runs));
    out.retain(|t| !t.rows.is_empty());
    out
}

/// One scores table per consistency workload, titled from the runs' own configuration
/// (block size, queue depth, score window).
fn consistency_tables(runs: &[RunView]) -> Vec<Table> {
    let cons: Vec<&RunView> = runs.iter().filter(|r| r.consistency.is_some()).collect();
    let groups = super::charts::by_workload(&cons);
    let many = groups.len() > 1;
    groups
        .iter()
        .map(|(workload, group)| {
            let id = if many {
                format!("consistency-scores-{}", super::charts::slug(workload))
            } else {
                "consistency-scores".to_string()
            };
            consistency_table(&id, group)
        })
        .collect()
}

/// The scores of consistency runs of one workload.
fn consistency_table(id: &str, group: &[&RunView]) -> Table {
    let first = group[0].consistency.as_ref().expect("filtered");
    let same_window = group
        .iter()
        .all(|r| r.consistency.as_ref().map(|c| c.window_s()) == Some(first.window_s()));
    let window = if same_window {
        format!("last {} s", fmt_num(first.window_s()))
    } else {
        "each run's score window".to_string()
    };
    let mut t = Table::new(
        id,
        "consistency",
        &format!("Performance consistency: {window} of {}", first.work_text()),
        &[
            "run",
            "capacity",
            "spare area",
            "duration",
            "scored",
            "avg IOPS",
            "std dev",
            "min IOPS",
            "avg / std dev",
            "steady state (SNIA)",
        ],
    );
    for r in group {
        let c = r.consistency.as_ref().expect("filtered");
        t.push(vec![
            r.label(),
            r.capacity_text(),
            r.setting.clone(),
            fmt_duration(c.iops_per_s.len() as f64),
            format!("last {}", fmt_duration(c.window_s())),
            fmt_num(c.avg_iops_last400),
            fmt_num(c.std_iops_last400),
            fmt_num(c.min_iops),
            opt(c.avg_over_std()),
            c.steady_state_at_s.map_or("not reached".to_string(), |s| {
                format!("reached at {}", fmt_duration(s))
            }),
        ]);
    }
    t
}

/// Trace bench results: data rate over busy time, service time.
fn bench_table(runs: &[RunView]) -> Table {
    let mut t = Table::new(
        "bench-results",
        "bench",
        "Trace bench: data rate over busy time, service time",
        &[
            "run",
            "drive",
            "capacity",
            "spare area",
            "state",
            "workload",
            "MB/s",
            "read MB/s",
            "write MB/s",
            "mean µs",
            "std dev µs",
            "p99 µs",
            "busy",
            "read busy",
            "write busy",
            "reads",
            "writes",
            "GB read",
            "GB written",
        ],
    );
    for r in runs {
        if let Some(b) = &r.bench {
            let p99 = b.percentiles_us.iter().find(|p| p.0 == "p99").map(|p| p.1);
            t.push(vec![
                r.label(),
                r.drive.clone(),
                r.capacity_text(),
                r.setting.clone(),
                r.state.clone(),
                r.workload.clone(),
                fmt_num(b.data_rate_mb_s),
                fmt_num(b.read_mb_s),
                fmt_num(b.write_mb_s),
                fmt_num(b.service_us_mean),
                fmt_num(b.service_us_std),
                opt(p99),
                fmt_duration(b.busy_s),
                fmt_duration(b.busy_read_s),
                fmt_duration(b.busy_write_s),
                b.reads.to_string(),
                b.writes.to_string(),
                fmt_num(b.bytes_read as f64 / 1e9),
                fmt_num(b.bytes_written as f64 / 1e9),
            ]);
        }
    }
    t
}

/// Service time percentiles: one column per percentile of the first bench run.
fn percentile_table(runs: &[RunView]) -> Option<Table> {
    let first = runs.iter().find_map(|r| r.bench.as_ref())?;
    let labels: Vec<String> = first.percentiles_us.iter().map(|p| p.0.clone()).collect();
    let mut cols = vec!["run".to_string()];
    cols.extend(labels.iter().map(|l| format!("{l} µs")));
    let mut t = Table {
        id: "bench-percentiles".to_string(),
        section: "bench".to_string(),
        title: "Service time percentiles".to_string(),
        columns: cols,
        rows: Vec::new(),
    };
    for r in runs {
        if let Some(b) = &r.bench {
            let mut row = vec![r.label()];
            row.extend(
                labels
                    .iter()
                    .map(|l| opt(b.percentiles_us.iter().find(|p| &p.0 == l).map(|p| p.1))),
            );
            t.push(row);
        }
    }
    Some(t)
}

/// TRIM validation: sequential write throughput clean, dirty and after TRIM.
fn trim_table(runs: &[RunView]) -> Table {
    let mut t = Table::new(
        "trim-validation",
        "trim",
        "TRIM validation: sequential write throughput",
        &[
            "drive",
            "clean MB/s",
            "dirty MB/s",
            "after TRIM MB/s",
            "after TRIM / clean",
            "note",
        ],
    );
    for r in runs {
        if let Some(x) = &r.trim {
            t.push(vec![
                r.label(),
                fmt_num(x.clean_mb_s),
                fmt_num(x.dirty_mb_s),
                fmt_num(x.after_trim_mb_s),
                x.recovered_percent()
                    .map_or("-".to_string(), |p| format!("{}%", fmt_num(p))),
                x.note.clone().unwrap_or_default(),
            ]);
        }
    }
    t
}

/// Each twin: every figure measured beside the twin's (`storbench twin fit`).
fn twin_tables(runs: &[RunView]) -> Vec<Table> {
    runs.iter()
        .enumerate()
        .filter_map(|(i, r)| r.twin.as_ref().map(|tw| (i, r, tw)))
        .map(|(i, r, tw)| {
            let unid = if tw.unidentified.is_empty() {
                "every parameter identified".to_string()
            } else {
                format!("unidentified: {}", tw.unidentified.join(", "))
            };
            let mut t = Table::new(
                &format!("twin-{i}"),
                "twin",
                &format!("Twin of {}: {} ({unid})", r.label(), tw.target),
                &["figure", "unit", "measured", "twin", "twin / measured"],
            );
            for f in &tw.figures {
                t.push(vec![
                    f.name.clone(),
                    f.unit.clone(),
                    fmt_num(f.measured),
                    fmt_num(f.twin),
                    format!("{:+.1}%", f.error_pct),
                ]);
            }
            t
        })
        .collect()
}

/// Seasoning: how each drive was prepared (a season run, or a bench's state), its
/// sequential pass and its image restore.
fn season_table(runs: &[RunView]) -> Table {
    let mut t = Table::new(
        "seasoning",
        "season",
        "Seasoning: sequential pass and image restore",
        &[
            "run",
            "procedure",
            "state",
            "sequential pass MB/s",
            "image",
            "image data",
            "image writes",
            "restore MB/s",
        ],
    );
    for r in runs {
        if let Some(x) = &r.season {
            t.push(vec![
                r.label(),
                r.procedure.clone(),
                x.state.clone(),
                opt(x.seq_pass_mb_s),
                x.image.clone(),
                fmt_bytes(x.image_bytes),
                x.image_writes.to_string(),
                opt(x.restore_mb_s),
            ]);
        }
    }
    t
}

/// Characterize tables: one per distinct trace (by name).
fn trace_tables(runs: &[RunView]) -> Vec<Table> {
    let mut out = Vec::new();
    let mut seen = Vec::<String>::new();
    for r in runs {
        for tr in &r.traces {
            if seen.contains(&tr.name) {
                continue;
            }
            seen.push(tr.name.clone());
            let mut t = Table::new(
                &format!("trace-{}", seen.len()),
                "traces",
                &format!("Trace {}", tr.name),
                &["statistic", "value"],
            );
            for (k, v) in &tr.rows {
                t.push(vec![k.clone(), v.clone()]);
            }
            out.push(t);
        }
    }
    out
}

/// The targets: kind, name, capacity, block size, discard, backend and its details.
fn target_table(runs: &[RunView]) -> Table {
    let mut t = Table::new(
        "targets",
        "targets",
        "Targets",
        &[
            "drive",
            "spare area",
            "procedure",
            "kind",
            "name",
            "capacity",
            "block size",
            "discard",
            "backend",
            "details",
        ],
    );
    for r in runs {
        let g = &r.target;
        t.push(vec![
            r.drive.clone(),
            r.setting.clone(),
            r.procedure.clone(),
            format!("{:?}", g.kind).to_lowercase(),
            g.name.clone(),
            fmt_bytes(g.capacity_bytes),
            format!("{} B", g.logical_block_bytes),
            if g.discard { "yes" } else { "no" }.to_string(),
            g.backend.clone(),
            g.details
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(" "),
        ]);
    }
    t
}

/// Drive health before and after each run, or why it is not available.
fn health_table(runs: &[RunView]) -> Table {
    let mut t = Table::new(
        "health",
        "targets",
        "Drive health before and after",
        &["drive", "procedure", "metric", "before", "after", "delta"],
    );
    for r in runs {
        if let Some(why) = &r.health.unavailable {
            t.push(vec![
                r.label(),
                r.procedure.clone(),
                format!("not available: {why}"),
                "-".into(),
                "-".into(),
                "-".into(),
            ]);
        }
        for h in &r.health.rows {
            t.push(vec![
                r.label(),
                r.procedure.clone(),
                h.metric.clone(),
                opt(h.before),
                opt(h.after),
                opt(h.delta()),
            ]);
        }
    }
    t
}

/// What ran: version, command line, options, phases, completeness, notes.
fn methods_table(runs: &[RunView]) -> Table {
    let mut t = Table::new(
        "methods",
        "methods",
        "What ran",
        &[
            "drive",
            "procedure",
            "result",
            "storbench",
            "command line",
            "options",
            "phases",
            "complete",
            "notes",
        ],
    );
    for r in runs {
        t.push(vec![
            r.label(),
            r.procedure.clone(),
            r.source.clone(),
            r.tool_version.clone(),
            r.command_line.clone(),
            r.options
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(" "),
            r.phases
                .iter()
                .map(|p| {
                    format!(
                        "{} ({}, {} I/Os)",
                        p.name,
                        fmt_duration(p.duration_s),
                        p.ios
                    )
                })
                .collect::<Vec<_>>()
                .join("; "),
            completeness(r),
            r.notes.join("; "),
        ]);
    }
    t
}

/// A cell's text as Markdown shows it literally: HTML (`<script>`, `&amp;`) escaped as
/// entities, Markdown's inline marks and the table's `|` backslash-escaped, line breaks
/// as spaces (labels, notes and command lines are the user's text; issue 30).
pub fn md_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// A cell's text for a CSV file: one that starts as a spreadsheet formula (`=`, `+`,
/// `-`, `@`, a tab or a carriage return) gets a leading `'`, so Excel, LibreOffice
/// and Sheets show it as text instead of running it (OWASP's CSV injection advice;
/// issue 30). Numbers, negative ones included, and the `-` of an empty figure stay.
pub fn csv_text(s: &str) -> std::borrow::Cow<'_, str> {
    let formula = s.starts_with(['=', '+', '-', '@', '\t', '\r']);
    if formula && s != "-" && s.trim().parse::<f64>().is_err() {
        std::borrow::Cow::Owned(format!("'{s}"))
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}

/// Why a run is incomplete (its first note says so), or `None` when it is complete.
pub fn incomplete_reason(r: &RunView) -> Option<String> {
    if r.complete {
        return None;
    }
    Some(
        r.notes
            .first()
            .and_then(|n| n.strip_prefix("incomplete: "))
            .unwrap_or("it stopped before its end")
            .to_string(),
    )
}

/// The methods table's "complete" cell: "yes", or "NO: " and why.
fn completeness(r: &RunView) -> String {
    incomplete_reason(r).map_or_else(|| "yes".into(), |why| format!("NO: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Table {
        let mut t = Table::new("x", "s", "Title", &["name", "value"]);
        t.push(vec!["a,b".into(), "1.5".into()]);
        t.push(vec!["say \"hi\"".into(), "22".into()]);
        t
    }

    #[test]
    fn csv_quotes_fields_that_need_it() {
        assert_eq!(
            table().to_csv(),
            "name,value\n\"a,b\",1.5\n\"say \"\"hi\"\"\",22\n"
        );
    }

    #[test]
    fn markdown_has_header_rule_and_rows() {
        assert_eq!(
            table().to_markdown(),
            "### Title\n\n| name | value |\n|---|---|\n| a,b | 1.5 |\n| say \"hi\" | 22 |\n"
        );
    }

    /// Regression (issue 30): `report --images` wrote labels raw: a label of
    /// `=HYPERLINK(...)` ran as a formula in a spreadsheet, and `<img onerror=...>` or
    /// `|` broke out of a Markdown table as HTML or as a new cell.
    #[test]
    fn labels_are_inert_in_csv_and_markdown() {
        let mut t = Table::new("x", "s", "<b>T</b>", &["run", "value"]);
        for bad in [
            "=HYPERLINK(\"http://x\",\"y\")",
            "+1+cmd|' /C calc'!A0",
            "-2+3",
            "@SUM(A1:A2)",
            "\t=1",
            "\r=1",
        ] {
            t.push(vec![bad.into(), "-1.5".into()]);
        }
        t.push(vec![
            "<img src=x onerror=alert(1)> a|b *c* [d](e) `f` _g_ ~h~ \\ &".into(),
            "-".into(),
        ]);
        let csv = t.to_csv();
        for line in csv.lines().skip(1).take(6) {
            let first = line.trim_start_matches('"');
            assert!(first.starts_with('\''), "{line}");
        }
        // Numbers stay numbers, the empty figure stays `-`.
        assert!(csv.contains(",-1.5\n") && csv.ends_with(",-\n"), "{csv}");
        let md = t.to_markdown();
        assert!(md.starts_with("### &lt;b&gt;T&lt;/b&gt;\n"), "{md}");
        assert!(
            md.contains(
                "| &lt;img src=x onerror=alert(1)&gt; a\\|b \\*c\\* \\[d\\](e) \\`f\\` \\_g\\_ \\~h\\~ \\\\ &amp; | - |"
            ),
            "{md}"
        );
        assert!(!md.contains('<'), "{md}");
        // Every row still has its two cells (no `|` broke out).
        for row in md.lines().skip(4) {
            assert_eq!(row.matches(" | ").count(), 1, "{row}");
        }
    }

    #[test]
    fn text_right_aligns_numbers() {
        assert_eq!(
            table().to_text(),
            "Title\nname      value\n--------  -----\na,b         1.5\nsay \"hi\"     22\n"
        );
    }
}

#[cfg(test)]
mod twin_tests {
    use storbench_results::twin::{FigureReport, TwinFile};

    /// Issue 33: a twin measurement with its twin.json gets a table of every figure,
    /// measured beside fitted, on the page's twin section, titled with the unidentified
    /// parameters; a run without one gets none.
    #[test]
    fn a_twin_shows_measured_beside_fitted() {
        let mut runs = crate::html::sample::trim_runs();
        assert!(super::tables(&runs).iter().all(|t| t.section != "twin"));
        runs[0].twin = Some(TwinFile {
            schema_version: 1,
            target: "sim:sata-mlc-2013,capacity=268435456,program_us=1400.000".into(),
            preset: "sata-mlc-2013".into(),
            capacity_bytes: 268435456,
            eval_capacity_bytes: 268435456,
            parameters: Vec::new(),
            unidentified: vec!["suspend_erase_us".into()],
            figures: vec![FigureReport {
                name: "steady_full_iops".into(),
                unit: "IOPS".into(),
                measured: 19387.3,
                twin: 19463.6,
                error_pct: 0.39,
                residual: 0.1,
            }],
            start_cost: 1.0,
            cost: 0.1,
            iterations: 3,
            evaluations: 40,
        });
        let t: Vec<_> = super::tables(&runs)
            .into_iter()
            .filter(|t| t.section == "twin")
            .collect();
        assert_eq!(t.len(), 1);
        assert!(
            t[0].title.contains("unidentified: suspend_erase_us"),
            "{}",
            t[0].title
        );
        assert_eq!(t[0].rows[0][0], "steady_full_iops");
        assert_eq!(t[0].rows[0][4], "+0.4%");
        let page = crate::html::render_html(&runs, "test");
        assert!(page.contains("<section id=\"twin\">") && page.contains("Digital twin"));
    }
}
