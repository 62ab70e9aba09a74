//! Results written by an older storbench still load in `report` and `compare` (issue
//! 32: the report reads the writer's own types, and a schema change keeps a reader for
//! the layout before it). `tests/fixtures/results/schema2/` holds one result.json of
//! each procedure as the storbench before issue 32 wrote it (schema_version 2, with
//! `bench --season`'s generated image), paths replaced by `/fixtures`.

use std::path::{Path, PathBuf};
use storbench_report::compare::compare_text;
use storbench_report::html::load::load;
use storbench_report::html::view::{name_runs, RunView};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/results/schema2")
}

fn view(name: &str) -> RunView {
    let (v, text) = load(&fixtures().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(
        text.contains("\"schema_version\":2"),
        "{name} is a schema-2 file"
    );
    v
}

#[test]
fn every_procedure_of_schema_2_loads_with_its_figures() {
    let c = view("consistency");
    let cv = c.consistency.as_ref().unwrap();
    assert_eq!(
        cv.iops_per_s.len(),
        6,
        "one IOPS figure per second of --time 6s"
    );
    assert!(cv.avg_iops_last400 > 0.0);
    assert_eq!((c.setting.as_str(), c.state.as_str()), ("Default", "fresh"));

    let t = view("trim-check");
    let tv = t.trim.as_ref().unwrap();
    assert!(tv.clean_mb_s > 0.0 && tv.dirty_mb_s > 0.0 && tv.after_trim_mb_s > 0.0);

    let s = view("season");
    let sv = s.season.as_ref().unwrap();
    assert!(sv.image.starts_with("generated"), "{}", sv.image);
    assert!(sv.seq_pass_mb_s.unwrap() > 0.0 && sv.image_writes > 0);

    // The older `bench --season`: its phases are named season-*, its image generated.
    let b = view("bench-season");
    assert_eq!(b.state, "seasoned");
    let bs = b.season.as_ref().unwrap();
    assert_eq!(bs.image, "a generated image");
    assert!(bs.seq_pass_mb_s.is_some() && bs.image_bytes > 0);
    assert!(b.bench.as_ref().unwrap().data_rate_mb_s > 0.0);
    assert_eq!(b.traces.len(), 1, "the characterize table");

    let f = view("bench-fresh");
    assert_eq!(f.state, "fresh");
    let fs = f.season.as_ref().unwrap();
    assert_eq!(
        (fs.image.as_str(), fs.seq_pass_mb_s),
        ("the trace's image", None)
    );

    let r = view("run");
    assert_eq!(r.workload, "4 KB random write QD32");
    assert!(r.phases[0].ios > 0);
    let p = view("replay");
    assert_eq!(p.workload, "t");
    assert!(p.traces[0].rows.iter().any(|(k, _)| k == "ios"));
}

#[test]
fn compare_and_the_report_take_schema_2_results() {
    let mut runs: Vec<RunView> = [
        "consistency",
        "trim-check",
        "bench-season",
        "bench-fresh",
        "season",
        "run",
        "replay",
    ]
    .iter()
    .map(|n| view(n))
    .collect();
    name_runs(&mut runs, &[]);
    let text = compare_text(&runs);
    for table in ["consistency", "TRIM", "bench"] {
        assert!(
            text.to_lowercase().contains(&table.to_lowercase()),
            "{table}: {text}"
        );
    }
    let html = storbench_report::html::render_html(&runs, "storbench test");
    for section in ["consistency", "bench", "trim", "season"] {
        assert!(
            html.contains(&format!("<section id=\"{section}\">")),
            "{section}"
        );
    }
}
