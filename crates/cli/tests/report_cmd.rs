//! `storbench report`, `compare` and `db` on result directories written here (the
//! suite's result.json layout), and, when the procedures run, on real quick runs of
//! the simulated drive, opened in headless Chromium.

#[path = "../../../tests/browser/chromium.rs"]
mod chromium;

use std::path::{Path, PathBuf};

mod common;
use common::{ok, storbench};

/// A result as the suite writes it (the writer's own types), with no phases: what
/// `report`, `compare` and `db` read of it.
fn write_result<C: serde::Serialize, S: serde::Serialize>(
    dir: &Path,
    procedure: &str,
    model: &str,
    config: C,
    summary: S,
) {
    use storbench_results::{HealthDelta, HealthSnapshot, RunResult};
    std::fs::create_dir_all(dir).unwrap();
    let target = serde_json::from_value(serde_json::json!({"kind":"sim","name":"sim:client-7op",
        "capacity_bytes":1073741824u64,"logical_block_bytes":4096,"rotational":false,"discard":true,
        "model":model,"backend":"virtual","details":{}}))
    .unwrap();
    let health = HealthSnapshot::unavailable("sim", "simulated");
    let r = RunResult {
        format: storbench_results::RESULT_FORMAT.into(),
        schema_version: storbench_results::SCHEMA_VERSION,
        command_line: Vec::new(),
        options: Default::default(),
        complete: true,
        tool_version: "0.1.0".into(),
        procedure: procedure.into(),
        target,
        config,
        phases: Vec::new(),
        summary: Some(summary),
        trace: None,
        health_before: health.clone(),
        health_after: health,
        health_delta: HealthDelta::default(),
        resumes: 0,
        notes: Vec::new(),
        created_unix_ms: 0,
        finished_unix_ms: 0,
    };
    std::fs::write(dir.join("result.json"), serde_json::to_vec(&r).unwrap()).unwrap();
}

fn consistency(dir: &Path, span: f64, level: f64) {
    use storbench_results::consistency::{ConsistencyConfig, ConsistencySummary};
    let mut c = ConsistencyConfig::new("sim:client-7op");
    c.span_fraction = span;
    let summary = ConsistencySummary {
        span_bytes: (span * (1u64 << 30) as f64) as u64,
        span_pct: span * 100.0,
        spare_area_pct: 100.0 - span * 100.0,
        iops_per_s: (0..60).map(|t| level + (t % 7) as f64 * 10.0).collect(),
        scores: Some(storbench_metrics::ConsistencyScores {
            avg: level,
            stddev: 20.0,
            min: level,
            avg_over_stddev: None,
            window_s: 400,
        }),
        round_s: 60,
        round_iops: Vec::new(),
        steady_state: None,
        steady_state_reached: true,
        steady_state_at_s: Some(30),
        precondition_mb_per_s: 0.0,
        ended: "time-limit".into(),
    };
    write_result(dir, "consistency", "Drive A", c, summary);
}

fn fixtures(root: &Path) -> Vec<PathBuf> {
    use storbench_results::trimcheck::{TrimCheckConfig, TrimTable};
    let a = root.join("a-full");
    let b = root.join("a-spare");
    let c = root.join("a-trim");
    consistency(&a, 1.0, 1000.0);
    consistency(&b, 0.75, 3000.0);
    let table = TrimTable {
        clean_mb_per_s: 500.0,
        dirty_mb_per_s: 120.0,
        after_trim_mb_per_s: 480.0,
        after_trim_of_clean_pct: 96.0,
        dirty_of_clean_pct: 24.0,
        measure_bytes: 0,
        trim_pass_s: 0.0,
        note: None,
    };
    write_result(
        &c,
        "trim-check",
        "Drive A",
        TrimCheckConfig::new("sim:client-7op"),
        table,
    );
    vec![a, b, c]
}

#[test]
fn report_compare_and_images_from_result_dirs() {
    let d = tempfile::tempdir().unwrap();
    let dirs = fixtures(d.path());
    let html = d.path().join("r.html");
    let images = d.path().join("img");
    // The parent directory stands for its three result subdirectories.
    ok(&storbench(&[
        "report",
        d.path().to_str().unwrap(),
        "-o",
        html.to_str().unwrap(),
        "--images",
        images.to_str().unwrap(),
    ]));
    let page = std::fs::read_to_string(&html).unwrap();
    for id in [
        "consistency-log",
        "consistency-zoom-log",
        "consistency-zoom-linear",
        "trim-throughput",
    ] {
        assert!(page.contains(&format!("id=\"chart-{id}\"")), "{id} missing");
        assert!(
            images.join(format!("{id}.svg")).is_file(),
            "{id}.svg missing"
        );
        let png = std::fs::read(images.join(format!("{id}.png"))).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "{id}.png is a PNG");
    }
    assert!(page.contains("Drive A, 25% spare area"));
    assert!(page.contains("Drive A, no spare area"));
    assert!(
        !page.contains("src=\"http") && !page.contains("<link"),
        "nothing loaded from a network"
    );
    let csv = std::fs::read_to_string(images.join("trim-validation.csv")).unwrap();
    assert_eq!(
        csv,
        "drive,clean MB/s,dirty MB/s,after TRIM MB/s,after TRIM / clean,note\nDrive A,500,120,480,96%,\n"
    );

    let text = ok(&storbench(&[
        "compare",
        dirs[0].to_str().unwrap(),
        dirs[1].to_str().unwrap(),
    ]));
    let row = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no row {name}: {text}"))
            .split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        row("Drive A, no spare area")[1..6],
        ["1.07 GB", "Default", "0:01:00", "last 0:06:40", "1000"]
    );
    assert_eq!(row("Drive A, 25% spare area")[5], "3000");
    // The whole terminal output, pinned: a change to the table shows in review.
    let all = ok(&storbench(&[
        "compare",
        dirs[0].to_str().unwrap(),
        dirs[1].to_str().unwrap(),
        dirs[2].to_str().unwrap(),
    ]));
    insta::assert_snapshot!("compare_cli_output", all);
}

#[test]
fn report_errors_name_the_directory() {
    let d = tempfile::tempdir().unwrap();
    let out = storbench(&["report", d.path().to_str().unwrap(), "-o", "/dev/null"]);
    assert_eq!(out.status.code(), Some(2), "a user mistake");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("{}: no result.json", d.path().display())),
        "{err}"
    );
    assert!(err.contains("hint:"), "{err}");
}

#[test]
fn catalogue_add_list_show_report() {
    let d = tempfile::tempdir().unwrap();
    let dirs = fixtures(d.path());
    let db = d.path().join("cat/results.db");
    let db = db.to_str().unwrap();
    let added = ok(&storbench(&[
        "db",
        "--db",
        db,
        "add",
        d.path().to_str().unwrap(),
    ]));
    assert_eq!(
        added.lines().filter(|l| l.starts_with("added ")).count(),
        3,
        "{added}"
    );
    let again = ok(&storbench(&[
        "db",
        "--db",
        db,
        "add",
        dirs[2].to_str().unwrap(),
    ]));
    assert!(again.starts_with("already there as 3"), "{again}");
    let list = ok(&storbench(&["db", "--db", db, "list"]));
    assert!(list.contains("3 result(s)"), "{list}");
    assert!(list.contains("trim_clean_mb_s=500"), "{list}");
    let show = ok(&storbench(&["db", "--db", db, "show", "2"]));
    assert!(show.contains("25% spare area"), "{show}");
    let json = ok(&storbench(&["db", "--db", db, "show", "3", "--json"]));
    assert!(json.contains("\"clean_mb_per_s\":500.0"), "{json}");
    let html = d.path().join("db.html");
    ok(&storbench(&[
        "db",
        "--db",
        db,
        "report",
        "1",
        "3",
        "-o",
        html.to_str().unwrap(),
    ]));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("chart-consistency-log") && page.contains("chart-trim-throughput"));
    assert!(
        !page.contains("25% spare area"),
        "entry 2 was not asked for"
    );
    // Issue 25: a report from a query on the catalogue's columns.
    let html = d.path().join("where.html");
    ok(&storbench(&[
        "db",
        "--db",
        db,
        "report",
        "--where",
        "procedure = 'trim-check' AND drive = 'Drive A' AND state = 'fresh'",
        "-o",
        html.to_str().unwrap(),
    ]));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("chart-trim-throughput") && !page.contains("chart-consistency-log"));
    let none = storbench(&["db", "--db", db, "report", "--where", "state = 'used'"]);
    assert!(!none.status.success());
    assert!(String::from_utf8_lossy(&none.stderr).contains("no entry matches"));
    let missing = storbench(&["db", "--db", db, "show", "99"]);
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no entry 99"));
}

/// Real quick runs on the simulated drive, reported and opened in Chromium.
#[test]
fn real_quick_runs_report_in_a_browser() {
    let d = tempfile::tempdir().unwrap();
    let full = d.path().join("full");
    let spare = d.path().join("spare");
    for (dir, span) in [(&full, "100%"), (&spare, "75%")] {
        let out = storbench(&[
            "consistency",
            "--target",
            "sim:client-7op",
            "--quick",
            "--span",
            span,
            "-q",
            "--out",
            dir.to_str().unwrap(),
        ]);
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            panic!("consistency --quick failed: {err}");
        }
    }
    let html = d.path().join("real.html");
    ok(&storbench(&[
        "report",
        full.to_str().unwrap(),
        spare.to_str().unwrap(),
        "-o",
        html.to_str().unwrap(),
    ]));
    let compare = ok(&storbench(&[
        "compare",
        full.to_str().unwrap(),
        spare.to_str().unwrap(),
    ]));
    assert!(compare.contains("25% spare area"), "{compare}");
    assert!(
        compare.contains("last 10 s of 4 KB random writes"),
        "quick runs score 10 s: {compare}"
    );
    let Some(chrome) = chromium::find_chromium() else {
        eprintln!("skipped (browser part): chromium not found");
        return;
    };
    let art = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("browser-cli");
    std::fs::create_dir_all(&art).unwrap();
    std::fs::copy(&html, art.join("real.html")).unwrap();
    let run = chromium::run(
        &chrome,
        &art.join("real.html"),
        &art,
        &["--dump-dom".into()],
        std::time::Duration::from_secs(90),
    );
    assert!(
        chromium::console_errors(&run.stderr).is_empty(),
        "{}",
        run.stderr
    );
    let v: serde_json::Value =
        serde_json::from_str(&chromium::verify_json(&run.stdout).expect("verify element")).unwrap();
    assert_eq!(
        v["errors"].as_array().map(Vec::len),
        Some(0),
        "{}",
        v["errors"]
    );
    let charts = v["charts"].as_array().unwrap();
    assert_eq!(charts.len(), 3, "three consistency graphs");
    for c in charts {
        assert_eq!(c["drawn"].as_u64(), Some(2), "{c}: both runs drawn");
    }
    chromium::run(
        &chrome,
        &art.join("real.html"),
        &art,
        &[
            format!("--screenshot={}", art.join("real.png").display()),
            "--window-size=1100,2400".into(),
        ],
        std::time::Duration::from_secs(90),
    );
}

/// Issue 25: a report a reviewer would publish. Ten real runs on two simulated drives
/// (fresh and seasoned benches on two workloads, consistency, trim-check, season),
/// rendered in headless Chromium: every section present, every chart drawn, no two
/// legend, axis or row labels equal, no text box overlapping another (measured in the
/// DOM by the page's self-check), no console errors. Screenshots of each section are
/// kept under target/tmp/browser-issue25/ (docs/report-*.png are copies).
#[test]
fn issue_25_report_of_ten_runs_in_chromium() {
    let d = tempfile::tempdir().unwrap();
    let mut dirs = Vec::new();
    let mut go = |name: &str, args: &[&str]| {
        let dir = d.path().join(name);
        let mut a: Vec<&str> = args.to_vec();
        let out = dir.to_str().unwrap().to_string();
        a.extend(["-q", "--out", &out]);
        let o = storbench(&a);
        assert!(
            o.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        dirs.push(dir);
    };
    let drives = ["client-7op", "enterprise-28op"];
    for p in drives {
        let t = format!("sim:{p},capacity=1g,seed=1");
        for w in ["heavy-2011", "light-2011"] {
            for state in ["fresh", "seasoned"] {
                go(
                    &format!("bench-{p}-{w}-{state}"),
                    &["bench", "--quick", "--state", state, "-t", &t, w],
                );
            }
        }
        go(
            &format!("consistency-{p}"),
            &["consistency", "--quick", "-t", &t],
        );
        go(&format!("trim-{p}"), &["trim-check", "--quick", "-t", &t]);
    }
    go(
        "season-client-7op",
        &[
            "season",
            "--quick",
            "-t",
            "sim:client-7op,capacity=1g,seed=1",
        ],
    );
    assert!(dirs.len() >= 8);
    let html = d.path().join("report.html");
    let mut args: Vec<String> = vec!["report".into()];
    args.extend(dirs.iter().map(|p| p.display().to_string()));
    args.extend([
        "-o".into(),
        html.display().to_string(),
        "--highlight".into(),
        "sim client-7op, seasoned, heavy-2011".into(),
    ]);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    ok(&storbench(&argv));
    let page = std::fs::read_to_string(&html).unwrap();
    for section in [
        "consistency",
        "bench",
        "trim",
        "season",
        "traces",
        "targets",
        "methods",
    ] {
        assert!(
            page.contains(&format!("<section id=\"{section}\">")),
            "section {section} missing"
        );
    }
    assert!(page.contains("class=\"highlight\""), "--highlight drawn");

    let Some(chrome) = chromium::find_chromium() else {
        eprintln!("skipped (browser part): chromium not found (install Debian's `chromium`)");
        return;
    };
    let art = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("browser-issue25");
    std::fs::create_dir_all(&art).unwrap();
    let page_path = art.join("report.html");
    std::fs::write(&page_path, &page).unwrap();
    let run = chromium::run(
        &chrome,
        &page_path,
        &art,
        &["--dump-dom".into(), "--window-size=1100,3000".into()],
        std::time::Duration::from_secs(120),
    );
    let errors = chromium::console_errors(&run.stderr);
    assert!(errors.is_empty(), "console errors: {errors:#?}");
    let v: serde_json::Value =
        serde_json::from_str(&chromium::verify_json(&run.stdout).expect("verify element")).unwrap();
    assert_eq!(
        v["errors"].as_array().map(Vec::len),
        Some(0),
        "{}",
        v["errors"]
    );
    let charts = v["charts"].as_array().unwrap();
    // 3 consistency graphs, 5 charts for each of 2 workloads, TRIM, seasoning.
    assert_eq!(charts.len(), 3 + 2 * 5 + 1 + 1, "{v}");
    for c in charts {
        assert_eq!(c["drawn"], c["expected"], "{}: every series drawn", c["id"]);
        let l = &c["layout"];
        assert!(
            l["texts"].as_u64().unwrap() > 5,
            "{}: text measured",
            c["id"]
        );
        assert_eq!(
            l["overlaps"].as_array().map(Vec::len),
            Some(0),
            "{}: {}",
            c["id"],
            l["overlaps"]
        );
        assert_eq!(
            l["duplicates"].as_array().map(Vec::len),
            Some(0),
            "{}: {}",
            c["id"],
            l["duplicates"]
        );
        for b in c["buttons"].as_array().into_iter().flatten() {
            assert_eq!(
                b["drawn"], b["expected"],
                "{}: button {}",
                c["id"], b["button"]
            );
        }
    }
    // One screenshot per section: the page with the other sections hidden.
    for (section, height) in [
        ("consistency", 2300),
        ("bench", 2600),
        ("trim", 760),
        ("season", 820),
    ] {
        let only = page.replacen(
            "</style>",
            &format!("section:not(#{section}) {{ display: none; }}</style>"),
            1,
        );
        let p = art.join(format!("report-{section}.html"));
        std::fs::write(&p, only).unwrap();
        let shot = art.join(format!("report-{section}.png"));
        chromium::run(
            &chrome,
            &p,
            &art,
            &[
                format!("--screenshot={}", shot.display()),
                format!("--window-size=1100,{height}"),
                "--hide-scrollbars".into(),
            ],
            std::time::Duration::from_secs(120),
        );
        let png = std::fs::read(&shot).expect("screenshot written");
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        eprintln!("screenshot: {}", shot.display());
    }
}
