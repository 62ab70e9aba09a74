//! Command-line quantities: sizes (fio rules: k, m, g, t are powers of 1024),
//! durations (`2000s`, `120m`, `2h`, `500ms`) and span fractions (`75%`, `0.75`).
//!
//! Every parse error names the field and the text, and says what is accepted.

use std::fmt;

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

const SIZE_EXPECTED: &str = "a byte count like 4096, 4k, 128k, 1m, 2g (k/m/g/t = powers of 1024)";

/// Parse a size in bytes, fio style: `4096`, `4k`, `128KiB`, `1m`, `2g`, `1t`.
pub fn parse_size(field: &str, text: &str) -> Result<u64, QuantityError> {
    let t = text.trim();
    let lower = t.to_ascii_lowercase();
    let digits_end = lower
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(lower.len());
    if digits_end == 0 {
        return Err(err(field, text, SIZE_EXPECTED));
    }
    let n: u64 = lower[..digits_end]
        .parse()
        .map_err(|_| err(field, text, SIZE_EXPECTED))?;
    let shift = match &lower[digits_end..] {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return Err(err(field, text, SIZE_EXPECTED)),
    };
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| err(field, text, SIZE_EXPECTED))
}

const DURATION_EXPECTED: &str = "a duration like 2000s, 120m, 2h, 500ms (a bare number is seconds)";

/// Parse a duration into nanoseconds: `2000s`, `2000`, `120m`, `2h`, `500ms`.
pub fn parse_duration_ns(field: &str, text: &str) -> Result<u64, QuantityError> {
    let t = text.trim().to_ascii_lowercase();
    let digits_end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    if digits_end == 0 {
        return Err(err(field, text, DURATION_EXPECTED));
    }
    let n: f64 = t[..digits_end]
        .parse()
        .map_err(|_| err(field, text, DURATION_EXPECTED))?;
    let unit_ns: f64 = match &t[digits_end..] {
        "" | "s" | "sec" => 1e9,
        "ms" => 1e6,
        "us" => 1e3,
        "m" | "min" => 60e9,
        "h" => 3600e9,
        _ => return Err(err(field, text, DURATION_EXPECTED)),
    };
    let ns = n * unit_ns;
    if !ns.is_finite() || ns < 0.0 || ns > u64::MAX as f64 / 2.0 {
        return Err(err(field, text, DURATION_EXPECTED));
    }
    Ok(ns.round() as u64)
}

const FRACTION_EXPECTED: &str =
    "a share of the capacity like 100%, 75% or 0.75 (more than 0, at most 100%)";

/// Parse a span as a fraction of capacity in (0, 1]: `75%`, `100%`, `0.75`.
pub fn parse_fraction(field: &str, text: &str) -> Result<f64, QuantityError> {
    let t = text.trim();
    let v = if let Some(p) = t.strip_suffix('%') {
        p.trim()
            .parse::<f64>()
            .map_err(|_| err(field, text, FRACTION_EXPECTED))?
            / 100.0
    } else {
        t.parse::<f64>()
            .map_err(|_| err(field, text, FRACTION_EXPECTED))?
    };
    if !(v > 0.0 && v <= 1.0) {
        return Err(err(field, text, FRACTION_EXPECTED));
    }
    Ok(v)
}

/// The byte span `fraction` of `capacity_bytes` covers, rounded down to `align_bytes`
/// (at least one aligned unit).
pub fn span_bytes(capacity_bytes: u64, fraction: f64, align_bytes: u64) -> u64 {
    assert!(align_bytes > 0 && fraction > 0.0 && fraction <= 1.0);
    let raw = (capacity_bytes as f64 * fraction).floor() as u64;
    let aligned = raw.min(capacity_bytes) / align_bytes * align_bytes;
    aligned.max(align_bytes.min(capacity_bytes / align_bytes * align_bytes))
}

/// Largest block size a procedure takes (as `run --bs`).
pub const MAX_BLOCK_BYTES: u64 = 64 << 20;

/// A block size as `run` checks it: more than 0, at most 64 MiB, and a multiple of the
/// target's logical block size (an unaligned size would be widened on every I/O while
/// the result still named the size asked for).
pub fn check_block(field: &str, bytes: u64, logical_block_bytes: u32) -> Result<(), String> {
    let lbs = u64::from(logical_block_bytes.max(1));
    if bytes == 0 || bytes > MAX_BLOCK_BYTES {
        return Err(format!(
            "{field} {}: must be between 1 byte and 64m",
            fmt_bytes(bytes)
        ));
    }
    if !bytes.is_multiple_of(lbs) {
        return Err(format!(
            "{field} {}: not a multiple of the target's logical block size ({lbs} bytes)",
            fmt_bytes(bytes)
        ));
    }
    Ok(())
}

/// A queue depth as `run` checks it: 1 to 4096.
pub fn check_qd(field: &str, qd: u32) -> Result<(), String> {
    if qd == 0 || qd > 4096 {
        return Err(format!("{field} {qd}: must be between 1 and 4096"));
    }
    Ok(())
}

/// A phase length that must do some work.
pub fn check_duration(field: &str, ns: u64) -> Result<(), String> {
    if ns == 0 {
        return Err(format!(
            "{field} 0: the phase would do no work; give a duration like 30s"
        ));
    }
    Ok(())
}

/// The name `--data` takes for a kind of written data (`random`, `zeros`,
/// `compressible:R`), as results carry it.
pub fn data_name(d: storbench_engine::DataKind) -> String {
    match d {
        storbench_engine::DataKind::Random => "random".into(),
        storbench_engine::DataKind::Zeros => "zeros".into(),
        storbench_engine::DataKind::Compressible(r) => format!("compressible:{r}"),
    }
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
    fn sizes_follow_fio() {
        assert_eq!(parse_size("bs", "4k").unwrap(), 4096);
        assert_eq!(parse_size("bs", "128KiB").unwrap(), 131072);
        assert_eq!(parse_size("bs", "4096").unwrap(), 4096);
        assert_eq!(parse_size("bs", "2g").unwrap(), 2 << 30);
        let e = parse_size("--bs", "4q").unwrap_err();
        assert!(e.to_string().contains("--bs") && e.to_string().contains("4q"));
        assert!(parse_size("bs", "k").is_err());
        assert!(parse_size("bs", "99999999999999999999t").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ns("d", "2000s").unwrap(), 2_000_000_000_000);
        assert_eq!(parse_duration_ns("d", "120m").unwrap(), 7_200_000_000_000);
        assert_eq!(parse_duration_ns("d", "2h").unwrap(), 7_200_000_000_000);
        assert_eq!(parse_duration_ns("d", "500ms").unwrap(), 500_000_000);
        assert_eq!(parse_duration_ns("d", "1.5").unwrap(), 1_500_000_000);
        assert!(parse_duration_ns("d", "soon").is_err());
    }

    #[test]
    fn fractions_and_spans() {
        assert_eq!(parse_fraction("span", "75%").unwrap(), 0.75);
        assert_eq!(parse_fraction("span", "1").unwrap(), 1.0);
        assert!(parse_fraction("span", "0%").is_err());
        assert!(parse_fraction("span", "120%").is_err());
        assert_eq!(span_bytes(1 << 30, 0.75, 4096), 805_306_368);
        assert_eq!(span_bytes(10_000, 1.0, 4096), 8192);
        assert_eq!(fmt_bytes(4096), "4 KiB");
        assert_eq!(fmt_bytes(1536 << 20), "1.5 GiB");
    }
}
