//! clap value parsers for every quantity a flag takes, built on the one units module
//! (`storbench_workload::units`): a bad value is a clap error naming the flag, and every
//! command reads `1.5k`, `250us` or `1min` the same way.

use std::time::Duration;
use storbench_workload::generator::SpanSpec;
use storbench_workload::units::{self, QuantityError};

fn expected(e: QuantityError) -> String {
    format!("expected {}", e.expected)
}

/// A size in bytes: `4096`, `4k`, `1.5k`, `128KiB`, `1g` (k/m/g/t = powers of 1024).
pub fn size(s: &str) -> Result<u64, String> {
    units::parse_size("", s).map_err(expected)
}

/// A duration: `250us`, `500ms`, `10s`, `2min`, `1h`; a bare number is seconds.
pub fn duration(s: &str) -> Result<Duration, String> {
    units::parse_duration("", s).map_err(expected)
}

/// A share of a capacity: `75%` or `0.75`.
pub fn fraction(s: &str) -> Result<f64, String> {
    units::parse_fraction("", s).map_err(expected)
}

/// A region: a size (`1g`) or a percentage of the capacity (`75%`).
pub fn span(s: &str) -> Result<SpanSpec, String> {
    SpanSpec::parse(s).map_err(|e| match e {
        storbench_workload::SourceError::Invalid(m) => m,
        other => other.to_string(),
    })
}

/// `replay --max-idle`: cut idle gaps longer than a duration, or `none`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MaxIdle(pub Option<Duration>);

/// `none` or a duration.
pub fn max_idle(s: &str) -> Result<MaxIdle, String> {
    if s.trim().eq_ignore_ascii_case("none") {
        return Ok(MaxIdle(None));
    }
    units::parse_duration("", s)
        .map(|d| MaxIdle(Some(d)))
        .map_err(|e| format!("expected `none` or {}", e.expected))
}

/// A duration in whole nanoseconds (what the configurations store).
pub fn ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsers_share_the_units_rules() {
        assert_eq!(size("1.5k"), Ok(1536));
        assert_eq!(duration("1min"), Ok(Duration::from_secs(60)));
        assert_eq!(duration("250us"), Ok(Duration::from_micros(250)));
        assert_eq!(fraction("75%"), Ok(0.75));
        assert_eq!(span("75%"), Ok(SpanSpec::Percent(75.0)));
        assert_eq!(span("1g"), Ok(SpanSpec::Bytes(1 << 30)));
        assert!(size("1.3k").unwrap_err().starts_with("expected a size"));
        assert!(duration("soon").unwrap_err().starts_with("expected a duration"));
    }
}
