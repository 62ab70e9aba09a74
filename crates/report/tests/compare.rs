//! `storbench compare`'s text, pinned by a snapshot: the same numbers as the report.

use storbench_report::compare::compare_text;
use storbench_report::html::sample;

#[test]
fn compare_table_snapshot() {
    let runs = sample::all_runs(600);
    insta::assert_snapshot!("compare_all", compare_text(&runs));
}

#[test]
fn compare_says_when_there_is_nothing_to_compare() {
    let mut runs = sample::trim_runs();
    for r in &mut runs {
        r.trim = None;
        r.health.rows.clear();
    }
    assert_eq!(
        compare_text(&runs),
        "no consistency, trace bench or TRIM results among these runs\n"
    );
}

#[test]
fn compare_rows_match_the_views() {
    let runs = sample::trim_runs();
    let text = compare_text(&runs);
    let t = runs[1].trim.as_ref().unwrap();
    let row = text
        .lines()
        .find(|l| l.starts_with("Sim TLC"))
        .expect("TLC row");
    let cells: Vec<&str> = row.split_whitespace().collect();
    // drive label is 5 words: "Sim TLC 64G 12% OP" then the numbers
    assert_eq!(
        cells[5..9],
        [
            t.clean_mb_s.to_string(),
            t.dirty_mb_s.to_string(),
            t.after_trim_mb_s.to_string(),
            "97.92%".to_string()
        ]
    );
}
