//! The report in a real browser: headless Chromium opens the self-contained page with
//! the network cut off, and the test fails on any console error or a chart that did not
//! draw its series. Screenshots are kept under target/tmp/browser/ as artifacts.
//! Skips (with a printed reason) when Chromium is not installed.

#[path = "../../../tests/browser/chromium.rs"]
mod chromium;

use serde_json::Value;
use std::path::PathBuf;
use std::time::Duration;
use storbench_report::html::{charts, render_html, sample};

fn artifacts() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("browser");
    std::fs::create_dir_all(&d).expect("artifact dir");
    d
}

#[test]
#[allow(
    clippy::too_many_lines,
    reason = "one end-to-end scenario on one device or directory; its steps share state and read in order"
)]
fn report_draws_every_chart_without_console_errors() {
    let Some(chrome) = chromium::find_chromium() else {
        eprintln!("skipped: chromium not found (install Debian's `chromium` package)");
        return;
    };
    let dir = artifacts();
    let mut runs = sample::all_runs(300);
    storbench_report::html::view::name_runs(&mut runs, &[]);
    let expected = charts(&runs);
    let page = dir.join("report.html");
    std::fs::write(&page, render_html(&runs, "storbench test")).expect("write report");

    let dom = chromium::run(
        &chrome,
        &page,
        &dir,
        &["--dump-dom".to_string()],
        Duration::from_secs(90),
    );
    let errors = chromium::console_errors(&dom.stderr);
    assert!(errors.is_empty(), "console errors: {errors:#?}");
    let json = chromium::verify_json(&dom.stdout)
        .unwrap_or_else(|| panic!("no #sb-verify in the DOM; stderr:\n{}", dom.stderr));
    let v: Value =
        serde_json::from_str(&json).unwrap_or_else(|e| panic!("verify JSON {e}: {json}"));
    assert_eq!(
        v["errors"].as_array().map(Vec::len),
        Some(0),
        "page errors: {}",
        v["errors"]
    );
    let got = v["charts"].as_array().expect("charts array");
    assert_eq!(got.len(), expected.len(), "charts drawn vs specified");
    assert!(
        expected.len() >= 9,
        "sample covers consistency, bench and trim charts"
    );
    for (g, e) in got.iter().zip(&expected) {
        assert_eq!(g["id"], e.id.as_str());
        assert_eq!(
            g["expected"].as_u64(),
            Some(e.series.len() as u64),
            "{}",
            e.id
        );
        assert_eq!(
            g["drawn"].as_u64(),
            Some(e.series.len() as u64),
            "{}: series drawn",
            e.id
        );
        let min_marks: usize = e
            .series
            .iter()
            .map(|s| s.y.iter().filter(|y| y.is_finite()).count().min(1))
            .sum();
        assert!(
            g["marks"].as_u64().unwrap_or(0) as usize >= min_marks,
            "{}: marks {}",
            e.id,
            g["marks"]
        );
        let l = &g["layout"];
        assert_eq!(
            l["overlaps"].as_array().map(Vec::len),
            Some(0),
            "{}: overlapping text {}",
            e.id,
            l["overlaps"]
        );
        assert_eq!(
            l["duplicates"].as_array().map(Vec::len),
            Some(0),
            "{}: equal labels {}",
            e.id,
            l["duplicates"]
        );
        if e.buttons {
            let b = g["buttons"].as_array().expect("button checks");
            assert_eq!(b.len(), 4, "{}: 2 drives + 2 spare-area settings", e.id);
            for c in b {
                assert_eq!(
                    c["drawn"], c["expected"],
                    "{}: button {}",
                    e.id, c["button"]
                );
                assert!(c["drawn"].as_u64().unwrap_or(0) >= 1);
            }
        }
    }

    let shot = dir.join("report.png");
    let _ = std::fs::remove_file(&shot);
    chromium::run(
        &chrome,
        &page,
        &dir,
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1100,5200".to_string(),
        ],
        Duration::from_secs(90),
    );
    let png = std::fs::read(&shot).expect("screenshot written");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    eprintln!("screenshot: {}", shot.display());
}

/// The page's layout self-check is not blind: two runs with the same name show up as
/// equal row labels.
#[test]
fn layout_check_reports_equal_labels() {
    let Some(chrome) = chromium::find_chromium() else {
        eprintln!("skipped: chromium not found (install Debian's `chromium` package)");
        return;
    };
    let dir = artifacts().join("equal-labels");
    std::fs::create_dir_all(&dir).unwrap();
    let mut runs = sample::trim_runs();
    for r in &mut runs {
        r.name = "same name".to_string();
    }
    let page = dir.join("report.html");
    std::fs::write(&page, render_html(&runs, "storbench test")).unwrap();
    let dom = chromium::run(
        &chrome,
        &page,
        &dir,
        &["--dump-dom".to_string()],
        Duration::from_secs(90),
    );
    let v: Value = serde_json::from_str(&chromium::verify_json(&dom.stdout).unwrap()).unwrap();
    let dups = &v["charts"][0]["layout"]["duplicates"];
    assert_eq!(dups, &serde_json::json!(["category: same name"]), "{v}");
}
