//! `storbench compare`: the report's numbers as terminal tables.

use crate::html::tables::tables;
use crate::html::view::RunView;

/// Tables `compare` prints, by id (the characterize, target and methods tables stay in
/// the HTML report, where there is room for them).
const COMPARED: [&str; 5] = [
    "consistency-scores",
    "bench-results",
    "bench-percentiles",
    "trim-validation",
    "health",
];

/// The comparison text for these runs: each table with rows, aligned for a terminal.
pub fn compare_text(runs: &[RunView]) -> String {
    let mut out = String::new();
    for t in tables(runs)
        .iter()
        .filter(|t| COMPARED.contains(&t.id.as_str()))
    {
        if !out.is_empty() {
            out.push('\n');
        }
        out += &t.to_text();
    }
    if out.is_empty() {
        out = "no consistency, trace bench or TRIM results among these runs\n".to_string();
    }
    // A run that stopped early or failed I/Os is said so beside its figures.
    for r in runs {
        if let Some(why) = crate::html::tables::incomplete_reason(r) {
            out += &format!("\nincomplete: {} ({}): {why}\n", r.label(), r.source);
        }
    }
    out
}
