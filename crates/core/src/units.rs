//! The one set of quantity rules every flag, plan key and target spec uses:
//!
//! - sizes in bytes, as fio reads them: `4096`, `4k`, `128KiB`, `1m`, `2g`, `1t`; k, m,
//!   g, t (with or without `b` or `ib`: `4kb`, `4KiB`) are powers of 1024; a fraction
//!   is taken when it lands on a whole byte (`1.5k` = 1536, `0.3k` is refused);
//! - durations: `250us`, `500ms`, `10s`, `2min` (or `2m`), `1h`, `20ns`; a bare number
//!   is seconds, everywhere;
//! - shares of a capacity: `75%` or `0.75`, more than 0 and at most all of it.
//!
//! Each parse error names the field and the text and says what is accepted. This module
//! depends on nothing but std, so every crate that parses reaches it without a cycle
//! (`storbench_workload::units` re-exports it).

use std::fmt;
use std::time::Duration;

/// A user mistake in a quantity: names the field, the text and what is accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuantityError {
    pub field: String,
    pub text: String,
    pub expected: &'static str,
}

impl fmt::Display for QuantityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: cannot read {:?}; expected {}",
            self.field, self.text, self.expected
        )
    }
}

impl std::error::Error for QuantityError {}

fn err(field: &str, text: &str, expected: &'static str) -> QuantityError {
    QuantityError {
        field: field.to_owned(),
        text: text.to_owned(),
        expected,
    }
}

/// What a size may look like (in error messages and help).
pub const SIZE_EXPECTED: &str =
    "a size like 4096, 4k, 1.5k, 128KiB, 1m, 2g (k/m/g/t = powers of 1024)";

/// What a duration may look like (in error messages and help).
pub const DURATION_EXPECTED: &str =
    "a duration like 250us, 500ms, 10s, 2min, 1h (a bare number is seconds)";

/// What a share of a capacity may look like.
pub const FRACTION_EXPECTED: &str =
    "a share of the capacity like 100%, 75% or 0.75 (more than 0, at most 100%)";

/// A decimal number `digits[.digits]` as an exact ratio `mantissa / 10^scale`.
fn decimal(t: &str) -> Option<(u128, u32)> {
    let (int, frac) = t.split_once('.').unwrap_or((t, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(int) || !all_digits(frac) || frac.len() > 18 || int.len() > 20 {
        return None;
    }
    let mut m: u128 = 0;
    for b in int.bytes().chain(frac.bytes()) {
        m = m.checked_mul(10)?.checked_add(u128::from(b - b'0'))?;
    }
    Some((m, frac.len() as u32))
}

/// Split `text` (lowercased, trimmed) into its number and its unit.
fn split_number(t: &str) -> (&str, &str) {
    let end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    (&t[..end], t[end..].trim_start())
}

/// Parse a size in bytes: `4096`, `4k`, `1.5k`, `128KiB`, `1m`, `2g`, `1t`.
pub fn parse_size(field: &str, text: &str) -> Result<u64, QuantityError> {
    let bad = || err(field, text, SIZE_EXPECTED);
    let lower = text.trim().to_ascii_lowercase();
    let (num, unit) = split_number(&lower);
    let shift = match unit {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return Err(bad()),
    };
    let (mantissa, scale) = decimal(num).ok_or_else(bad)?;
    let scaled = mantissa.checked_mul(1u128 << shift).ok_or_else(bad)?;
    let divisor = 10u128.pow(scale);
    if scaled % divisor != 0 {
        return Err(bad());
    }
    u64::try_from(scaled / divisor).map_err(|_| bad())
}

/// Parse a duration into nanoseconds: `250us`, `500ms`, `10s`, `10`, `2min`, `2m`, `1h`.
pub fn parse_duration_ns(field: &str, text: &str) -> Result<u64, QuantityError> {
    let bad = || err(field, text, DURATION_EXPECTED);
    let lower = text.trim().to_ascii_lowercase();
    let (num, unit) = split_number(&lower);
    let unit_ns: u128 = match unit {
        "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "" | "s" | "sec" => 1_000_000_000,
        "m" | "min" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        _ => return Err(bad()),
    };
    let (mantissa, scale) = decimal(num).ok_or_else(bad)?;
    let ns = mantissa.checked_mul(unit_ns).ok_or_else(bad)? / 10u128.pow(scale);
    // Half of u64 keeps sums of two durations from overflowing.
    u64::try_from(ns)
        .ok()
        .filter(|&n| n <= u64::MAX / 2)
        .ok_or_else(bad)
}

/// Parse a duration as a `Duration` (same rules as `parse_duration_ns`).
pub fn parse_duration(field: &str, text: &str) -> Result<Duration, QuantityError> {
    parse_duration_ns(field, text).map(Duration::from_nanos)
}

/// Parse a share of a capacity in (0, 1]: `75%`, `100%`, `0.75`.
pub fn parse_fraction(field: &str, text: &str) -> Result<f64, QuantityError> {
    let bad = || err(field, text, FRACTION_EXPECTED);
    let t = text.trim();
    let v = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map_err(|_| bad())? / 100.0,
        None => t.parse::<f64>().map_err(|_| bad())?,
    };
    if !(v > 0.0 && v <= 1.0) {
        return Err(bad());
    }
    Ok(v)
}

/// Print a byte count with a binary unit (`4 KiB`, `1.5 GiB`).
pub fn fmt_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 || v.fract() == 0.0 {
        format!("{} {}", v as u64, UNITS[u])
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_table() {
        let ok: &[(&str, u64)] = &[
            ("4096", 4096),
            ("0", 0),
            ("4k", 4096),
            ("4K", 4096),
            ("4kb", 4096),
            ("4KiB", 4096),
            ("128KiB", 131072),
            ("1m", 1 << 20),
            ("1MiB", 1 << 20),
            ("2g", 2 << 30),
            ("1GB", 1 << 30),
            ("1t", 1 << 40),
            ("1TiB", 1 << 40),
            ("1.5k", 1536),
            ("1.5m", 3 << 19),
            ("0.5g", 1 << 29),
            ("512b", 512),
            (" 4k ", 4096),
            ("4 KiB", 4096),
        ];
        for (text, want) in ok {
            assert_eq!(parse_size("--bs", text), Ok(*want), "{text}");
        }
        for text in [
            "",
            "k",
            "4q",
            "-4k",
            "1.3k",
            "0.1",
            "4kk",
            "1e3",
            "1..5k",
            ".",
            "99999999999999999999t",
            "16777216t",
        ] {
            let e = parse_size("--bs", text).unwrap_err();
            assert_eq!(e.field, "--bs");
            assert_eq!(e.text, text);
        }
    }

    #[test]
    fn durations_table() {
        let ok: &[(&str, u64)] = &[
            ("10", 10_000_000_000),
            ("1.5", 1_500_000_000),
            ("10s", 10_000_000_000),
            ("10sec", 10_000_000_000),
            ("500ms", 500_000_000),
            ("250us", 250_000),
            ("20ns", 20),
            ("1min", 60_000_000_000),
            ("2m", 120_000_000_000),
            ("120m", 7_200_000_000_000),
            ("2h", 7_200_000_000_000),
            ("0.5h", 1_800_000_000_000),
            ("0", 0),
            ("1MIN", 60_000_000_000),
        ];
        for (text, want) in ok {
            assert_eq!(parse_duration_ns("--time", text), Ok(*want), "{text}");
        }
        for text in [
            "",
            "soon",
            "10x",
            "-1s",
            "s",
            "1e3s",
            "10 years",
            "9999999999999h",
        ] {
            let e = parse_duration_ns("--time", text).unwrap_err();
            assert_eq!(e.field, "--time", "{text}");
        }
        assert_eq!(
            parse_duration("--duration", "250us"),
            Ok(Duration::from_micros(250))
        );
    }

    #[test]
    fn fractions_table() {
        assert_eq!(parse_fraction("--span", "75%"), Ok(0.75));
        assert_eq!(parse_fraction("--span", "100%"), Ok(1.0));
        assert_eq!(parse_fraction("--span", "1"), Ok(1.0));
        assert_eq!(parse_fraction("--span", "0.25"), Ok(0.25));
        for text in ["0%", "120%", "0", "1.5", "x%", ""] {
            assert!(parse_fraction("--span", text).is_err(), "{text}");
        }
    }

    #[test]
    fn errors_name_the_field_and_say_what_is_accepted() {
        let e = parse_size("--bs", "4q").unwrap_err().to_string();
        assert_eq!(
            e,
            format!("--bs: cannot read \"4q\"; expected {SIZE_EXPECTED}")
        );
    }

    #[test]
    fn formats_bytes() {
        assert_eq!(fmt_bytes(4096), "4 KiB");
        assert_eq!(fmt_bytes(1536 << 20), "1.5 GiB");
        assert_eq!(fmt_bytes(100), "100 B");
    }
}
