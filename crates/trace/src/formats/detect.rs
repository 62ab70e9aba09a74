//! Telling an input's format from its first lines: each format's own test
//! ([`super::FormatSpec::detect`]), asked in the registry's order, on a [`Sample`].

use super::{input, lines, Format, FormatSpec};
use crate::error::TraceError;
use std::io::Read;
use std::path::Path;

/// Lines looked at to detect a format, and the most bytes read for them.
const DETECT_LINES: usize = 64;
const DETECT_BYTES: usize = 1 << 20;

/// The first lines of an input, as a format's detection test sees them.
pub struct Sample<'a> {
    /// Trimmed, non-empty lines (a byte order mark skipped), at most 64.
    pub lines: &'a [String],
    /// The first line without a byte order mark.
    pub first: &'a str,
    /// The first line that is neither a `#` comment nor a CSV header
    /// ([`super::header::looks_like_header`]), if any.
    pub data: Option<&'a str>,
    /// `data` split at commas, each field trimmed (empty without a data line).
    pub csv: Vec<&'a str>,
}

impl Sample<'_> {
    /// Whether any sample line satisfies `f`.
    pub fn any(&self, f: impl Fn(&str) -> bool) -> bool {
        self.lines.iter().any(|l| f(l))
    }
}

/// A field of digits only.
pub fn is_int(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// A field that parses as a number.
pub fn is_num(s: &str) -> bool {
    !s.is_empty() && s.parse::<f64>().is_ok()
}

fn strip(l: &str) -> &str {
    l.strip_prefix('\u{feff}').unwrap_or(l).trim()
}

fn undetected(path: &Path) -> TraceError {
    TraceError::Format {
        path: path.to_path_buf(),
        message: format!(
            "cannot tell the trace format from its first lines; give --format (one of {})",
            Format::names()
        ),
    }
}

/// Detects the format of a file (decompressed, or its first tar member) from its first
/// lines.
pub fn detect(path: &Path) -> Result<Format, TraceError> {
    let f = std::fs::File::open(path).map_err(|e| TraceError::io(path, "open", e))?;
    let mut found = None;
    let mut opened = input::Opened::default();
    let r = input::for_each_part(path, Box::new(f), None, &mut opened, &mut |name, r| {
        let (format, _) = detect_reader(name, r)?;
        found = Some(format);
        // Only the first part: stop here (the error is never shown).
        Err(undetected(name))
    });
    match found {
        Some(f) => Ok(f),
        None => Err(r.expect_err("no part was detected")),
    }
}

/// Detects the format of a stream from its first lines; returns it with a reader that
/// yields the whole input again (the sample read, then the rest).
pub fn detect_reader<'r>(
    name: &Path,
    mut reader: Box<dyn Read + 'r>,
) -> Result<(Format, Box<dyn Read + 'r>), TraceError> {
    let mut buf: Vec<u8> = Vec::with_capacity(64 << 10);
    let mut chunk = vec![0u8; 64 << 10];
    let mut eof = false;
    // Read until enough non-empty lines, the byte bound, or the end.
    loop {
        let complete = match memchr::memrchr(b'\n', &buf) {
            Some(i) => &buf[..i],
            None => &[][..],
        };
        let lines = complete
            .split(|&b| b == b'\n')
            .filter(|l| !l.trim_ascii().is_empty())
            .count();
        if lines >= DETECT_LINES || buf.len() >= DETECT_BYTES || eof {
            break;
        }
        let n = match reader.read(&mut chunk) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(TraceError::read(name, e)),
        };
        eof = n == 0;
        buf.extend_from_slice(&chunk[..n]);
    }
    // The last line counts only when the input ended (it may be cut otherwise).
    let upto = if eof {
        buf.len()
    } else {
        memchr::memrchr(b'\n', &buf).unwrap_or(0)
    };
    let sample: Vec<String> = buf[..upto]
        .split(|&b| b == b'\n')
        .map(|l| {
            String::from_utf8_lossy(lines::strip_bom(l))
                .trim()
                .to_owned()
        })
        .filter(|l| !l.is_empty())
        .take(DETECT_LINES)
        .collect();
    let format = detect_lines(&sample).ok_or_else(|| undetected(name))?;
    Ok((format, Box::new(std::io::Cursor::new(buf).chain(reader))))
}

/// Format detection on sample lines (trimmed, non-empty; a byte order mark is skipped):
/// the first format in the registry whose test accepts them; failing every test, a
/// known header line names the format (a file of only a header).
pub fn detect_lines(lines: &[String]) -> Option<Format> {
    let first = strip(lines.first()?);
    let data = lines
        .iter()
        .map(|l| strip(l))
        .find(|l| !l.starts_with('#') && !super::header::looks_like_header(l.as_bytes()));
    let csv = data
        .map(|d| d.split(',').map(str::trim).collect())
        .unwrap_or_default();
    let sample = Sample {
        lines,
        first,
        data,
        csv,
    };
    let specs = || Format::all().map(|f| (f, f.spec()));
    if let Some((f, _)) = specs().find(|(_, s)| (s.detect)(&sample)) {
        return Some(f);
    }
    if data.is_some() {
        return None;
    }
    // Headers only: a known one names the format.
    let norm = |l: &str| -> String {
        l.split(',')
            .map(|f| f.trim().trim_matches('"').to_ascii_lowercase())
            .collect::<Vec<_>>()
            .join(",")
    };
    lines.iter().find_map(|l| {
        let n = norm(strip(l));
        specs()
            .find(|(_, s): &(Format, &FormatSpec)| s.headers.contains(&n.as_str()))
            .map(|(f, _)| f)
    })
}
