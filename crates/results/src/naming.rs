//! The one rule for the names of what storbench writes (result.json's fields, the
//! columns of series.parquet and of a sweep's dataset), checked by tests of each:
//!
//! - a name that carries a unit ends with it: `duration_ns`, `span_bytes`,
//!   `latency_mean_us`, `data_rate_mb_per_s`, `issued_ios`; never `bytes_read` or
//!   `time_ns_by_qd`;
//! - a percentage is `_pct` (the spelling most fields already used), never
//!   `percent`: `span_pct`, `dirty_of_clean_pct`.
//!
//! Units: `ns`, `us`, `ms`, `s`, `ns2` (a sum of squares), `bytes`, `ios` (a count of
//! I/Os), `pct`, `c` (°C), and the rate `mb_per_s`.

/// The units a name may end with, as `_`-separated words (`per_s`, one value per
/// second, ends in the unit `s`; `slope_per_round` carries none).
const UNITS: [&[&str]; 10] = [
    &["mb", "per", "s"],
    &["ns"],
    &["us"],
    &["ms"],
    &["s"],
    &["ns2"],
    &["bytes"],
    &["ios"],
    &["pct"],
    &["c"],
];

/// Whether a word is (part of) a unit.
fn unit_word(w: &str) -> bool {
    w != "per" && UNITS.iter().any(|u| u.contains(&w))
}

/// Why `name` breaks the rule, or `None`.
pub fn check(name: &str) -> Option<String> {
    if name.contains("percent") {
        return Some(format!("`{name}`: a percentage is `_pct`, not `percent`"));
    }
    let words: Vec<&str> = name.split('_').collect();
    // The first word that belongs to a unit must start the unit the name ends with.
    let first = words.iter().position(|w| unit_word(w))?;
    let tail = &words[first..];
    if UNITS.contains(&tail) {
        return None;
    }
    Some(format!(
        "`{name}`: the unit `{}` is not last (units last: `{}`)",
        words[first],
        units_last(&words, first)
    ))
}

/// `name` with its unit word moved to the end, as a suggestion.
fn units_last(words: &[&str], unit: usize) -> String {
    let mut w: Vec<&str> = words.to_vec();
    let u = w.remove(unit);
    w.push(u);
    w.join("_")
}

#[cfg(test)]
mod tests {
    use super::check;

    #[test]
    fn units_last_and_pct_only() {
        for ok in [
            "duration_ns",
            "data_rate_mb_per_s",
            "iops_per_s",
            "p99_9_us",
            "sum_sq_ns2",
            "created_unix_ms",
            "span_pct",
            "temperature_c",
            "issued_ios",
            "steady_state_at_s",
            "reads",
            "span_fraction",
            "slope_per_round",
        ] {
            assert_eq!(check(ok), None, "{ok}");
        }
        for bad in [
            "bytes_read",
            "time_ns_by_qd",
            "ios_issued",
            "span_percent",
            "dirty_pct_of_clean",
            "latency_us_mean",
            "temperature_c_before",
        ] {
            assert!(check(bad).is_some(), "{bad}");
        }
        assert!(check("latency_us_mean")
            .unwrap()
            .contains("latency_mean_us"));
    }
}
