//! Line reading and byte-level field parsing shared by the text importers.

use crate::error::TraceError;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// Longest line accepted (bytes); longer is a malformed line, not an allocation.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// Reads text line by line into one reused buffer. A UTF-8 byte order mark at the very
/// start is skipped (editors on Windows write one before a CSV header).
pub struct LineReader<'r> {
    path: PathBuf,
    inner: BufReader<Box<dyn Read + 'r>>,
    buf: Vec<u8>,
    line_no: u64,
    /// The current line was longer than [`MAX_LINE_BYTES`] and was cut.
    pub truncated: bool,
    /// Bytes of the line last returned straight from the read buffer, consumed on the
    /// next call (the line borrowed them until then).
    pending_consume: usize,
    /// The start was checked for a byte order mark.
    bom_checked: bool,
}

/// The UTF-8 byte order mark.
pub const BOM: &[u8] = b"\xef\xbb\xbf";

/// `s` without a leading UTF-8 byte order mark.
#[inline]
pub fn strip_bom(s: &[u8]) -> &[u8] {
    s.strip_prefix(BOM).unwrap_or(s)
}

impl<'r> LineReader<'r> {
    pub fn open(path: &Path) -> Result<LineReader<'static>, TraceError> {
        let f = File::open(path).map_err(|e| TraceError::io(path, "open", e))?;
        Ok(LineReader::from_reader(path, Box::new(f)))
    }

    pub fn from_reader(path: &Path, r: Box<dyn Read + 'r>) -> LineReader<'r> {
        LineReader {
            path: path.to_path_buf(),
            inner: BufReader::with_capacity(1 << 20, r),
            buf: Vec::with_capacity(256),
            line_no: 0,
            truncated: false,
            pending_consume: 0,
            bom_checked: false,
        }
    }

    /// The input's name (in errors).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// 1-based number of the line last returned.
    pub fn line_no(&self) -> u64 {
        self.line_no
    }

    /// The next line with its 1-based number.
    pub fn next_numbered(&mut self) -> Result<Option<(u64, &[u8])>, TraceError> {
        let n = self.line_no + 1;
        Ok(self.next_line()?.map(|l| (n, l)))
    }

    /// The next line without its `\n` / `\r\n`, or None at the end.
    pub fn next_line(&mut self) -> Result<Option<&[u8]>, TraceError> {
        if self.pending_consume > 0 {
            self.inner.consume(self.pending_consume);
            self.pending_consume = 0;
        }
        self.truncated = false;
        if !self.bom_checked {
            self.skip_bom()?;
        }
        // Fast path: the whole line is in the read buffer; hand it out without a copy.
        let avail = self
            .inner
            .fill_buf()
            .map_err(|e| TraceError::read(&self.path, e))?;
        if avail.is_empty() {
            return Ok(None);
        }
        if let Some(i) = memchr::memchr(b'\n', avail) {
            self.pending_consume = i + 1;
            self.line_no += 1;
            let line = &self.inner.buffer()[..i];
            return Ok(Some(line.strip_suffix(b"\r").unwrap_or(line)));
        }
        // A line across the buffer's end (or the last line, without newline): copy.
        self.buf.clear();
        // Read at most MAX_LINE_BYTES + 1 so a line without newline cannot grow unbounded.
        let n = (&mut self.inner)
            .take(MAX_LINE_BYTES as u64 + 1)
            .read_until(b'\n', &mut self.buf)
            .map_err(|e| TraceError::read(&self.path, e))?;
        if n == 0 {
            return Ok(None);
        }
        self.line_no += 1;
        if self.buf.last() == Some(&b'\n') {
            self.buf.pop();
        } else if self.buf.len() > MAX_LINE_BYTES {
            // Skip the rest of the overlong line.
            self.truncated = true;
            loop {
                let avail = self
                    .inner
                    .fill_buf()
                    .map_err(|e| TraceError::read(&self.path, e))?;
                if avail.is_empty() {
                    break;
                }
                if let Some(i) = memchr::memchr(b'\n', avail) {
                    self.inner.consume(i + 1);
                    break;
                }
                let l = avail.len();
                self.inner.consume(l);
            }
            self.buf.clear();
            return Err(TraceError::Parse {
                path: self.path.clone(),
                line: self.line_no,
                field: "line",
                message: format!("longer than {MAX_LINE_BYTES} bytes: not a text trace"),
            });
        }
        if self.buf.last() == Some(&b'\r') {
            self.buf.pop();
        }
        Ok(Some(&self.buf))
    }
}

impl LineReader<'_> {
    /// Consumes a byte order mark at the start of the input. The first read buffer
    /// holds it whole: inputs come through `input::for_each_part`, which reads the
    /// first 8 KiB at once (a mark cut over two reads of a raw pipe would be kept).
    #[cold]
    fn skip_bom(&mut self) -> Result<(), TraceError> {
        self.bom_checked = true;
        let avail = self
            .inner
            .fill_buf()
            .map_err(|e| TraceError::read(&self.path, e))?;
        if avail.starts_with(BOM) {
            self.inner.consume(BOM.len());
        }
        Ok(())
    }
}

/// Parses an unsigned decimal integer (no sign, no spaces).
#[inline]
pub fn parse_u64(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 20 {
        return None;
    }
    if s.len() <= 19 {
        // Up to 19 digits cannot overflow: no checked arithmetic per digit.
        let mut v: u64 = 0;
        for &b in s {
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                return None;
            }
            v = v * 10 + u64::from(d);
        }
        return Some(v);
    }
    let mut v: u64 = 0;
    for &b in s {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(d))?;
    }
    Some(v)
}

/// Parses `SECONDS[.FRACTION]` into nanoseconds (fraction digits beyond 9 are cut).
#[inline]
pub fn parse_secs_ns(s: &[u8]) -> Option<u64> {
    let (int, frac) = match memchr::memchr(b'.', s) {
        Some(i) => (&s[..i], &s[i + 1..]),
        None => (s, &[][..]),
    };
    let secs = if int.is_empty() && !frac.is_empty() {
        0
    } else {
        parse_u64(int)?
    };
    let mut ns: u64 = 0;
    let mut digits = 0;
    for &b in frac {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        if digits < 9 {
            ns = ns * 10 + u64::from(d);
            digits += 1;
        }
    }
    if frac.is_empty() && s.last() == Some(&b'.') {
        return None;
    }
    while digits < 9 {
        ns *= 10;
        digits += 1;
    }
    secs.checked_mul(1_000_000_000)?.checked_add(ns)
}

/// Splits on spaces and tabs (runs count as one separator).
#[inline]
pub fn fields_ws(line: &[u8]) -> FieldsWs<'_> {
    FieldsWs { s: line, i: 0 }
}

/// Iterator of [`fields_ws`]: a cursor over the line, one pass, no allocation.
#[derive(Clone, Debug)]
pub struct FieldsWs<'a> {
    s: &'a [u8],
    i: usize,
}

#[inline]
fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

impl<'a> FieldsWs<'a> {
    /// What follows the last field returned (starting with its separator).
    #[inline]
    pub fn rest(&self) -> &'a [u8] {
        &self.s[self.i..]
    }
}

impl<'a> Iterator for FieldsWs<'a> {
    type Item = &'a [u8];

    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        let s = self.s;
        let mut i = self.i;
        while i < s.len() && is_blank(s[i]) {
            i += 1;
        }
        if i == s.len() {
            self.i = i;
            return None;
        }
        let start = i;
        while i < s.len() && !is_blank(s[i]) {
            i += 1;
        }
        self.i = i;
        Some(&s[start..i])
    }
}

/// The last whitespace-separated field of `s` (None when `s` is blank).
#[inline]
pub fn last_field_ws(s: &[u8]) -> Option<&[u8]> {
    let mut end = s.len();
    while end > 0 && is_blank(s[end - 1]) {
        end -= 1;
    }
    if end == 0 {
        return None;
    }
    let mut start = end;
    while start > 0 && !is_blank(s[start - 1]) {
        start -= 1;
    }
    Some(&s[start..end])
}

/// Splits a CSV line on commas (no quoting: none of the trace CSVs quote) and trims spaces.
#[inline]
pub fn fields_csv(line: &[u8]) -> FieldsCsv<'_> {
    FieldsCsv {
        s: line,
        done: false,
    }
}

/// Iterator of [`fields_csv`].
#[derive(Clone, Debug)]
pub struct FieldsCsv<'a> {
    s: &'a [u8],
    done: bool,
}

impl<'a> Iterator for FieldsCsv<'a> {
    type Item = &'a [u8];

    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        if self.done {
            return None;
        }
        let s = self.s;
        let mut i = 0;
        while i < s.len() && s[i] != b',' {
            i += 1;
        }
        if i == s.len() {
            self.done = true;
            self.s = &s[i..];
        } else {
            self.s = &s[i + 1..];
        }
        Some(trim(&s[..i]))
    }
}

/// Named, in-order access to the fields of one CSV line: every error names the field
/// that was missing or malformed, as the importers' `(field, message)` errors need.
pub struct CsvLine<'a> {
    fields: FieldsCsv<'a>,
}

impl<'a> CsvLine<'a> {
    #[inline]
    pub fn new(line: &'a [u8]) -> CsvLine<'a> {
        CsvLine {
            fields: fields_csv(line),
        }
    }

    /// The next field as text.
    #[inline]
    pub fn text(&mut self, name: &'static str) -> Result<&'a [u8], (&'static str, String)> {
        self.fields
            .next()
            .ok_or_else(|| (name, "missing".to_owned()))
    }

    /// The next field as an unsigned decimal.
    #[inline]
    pub fn num(&mut self, name: &'static str) -> Result<u64, (&'static str, String)> {
        let s = self.text(name)?;
        parse_u64(s).ok_or_else(|| (name, format!("not a number: {}", show(s))))
    }

    /// Rejects fields after the `count`th; `last` names the last expected field.
    #[inline]
    pub fn end(mut self, last: &'static str, count: usize) -> Result<(), (&'static str, String)> {
        match self.fields.next() {
            Some(_) => Err((last, format!("more than {count} fields"))),
            None => Ok(()),
        }
    }
}

#[inline]
pub fn trim(s: &[u8]) -> &[u8] {
    // Fast path: nothing to trim (the usual case for machine-written traces).
    match (s.first(), s.last()) {
        (None, _) => return s,
        (Some(a), Some(z)) if !a.is_ascii_whitespace() && !z.is_ascii_whitespace() => return s,
        _ => {}
    }
    let start = s
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(s.len());
    let end = s
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |e| e + 1);
    &s[start..end.max(start)]
}

/// Shows a field for an error message: quoted, shortened to 60 bytes, with control
/// characters and bytes that are not UTF-8 escaped (`\x00`), so an error never prints
/// binary garbage.
pub fn show(s: &[u8]) -> String {
    let cut = &s[..s.len().min(60)];
    let mut out = String::with_capacity(cut.len() + 2);
    out.push('"');
    for chunk in cut.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                c if c.is_control() || c == '\u{feff}' => {
                    out.extend(c.escape_default());
                }
                c => out.push(c),
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out.push('"');
    if s.len() > 60 {
        out.push_str("...");
    }
    out
}

/// Sectors of 512 bytes to bytes, checked.
#[inline]
pub fn sectors_to_bytes(s: u64) -> Option<u64> {
    s.checked_mul(512)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_numbers_and_times() {
        assert_eq!(parse_u64(b"0"), Some(0));
        assert_eq!(parse_u64(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_u64(b"18446744073709551616"), None);
        assert_eq!(parse_u64(b"-1"), None);
        assert_eq!(
            parse_u64(b"9999999999999999999"),
            Some(9_999_999_999_999_999_999)
        );
        assert_eq!(parse_u64(b"99999999999999999999"), None);
        assert_eq!(parse_u64(b"00000000000000000001"), Some(1));
        assert_eq!(parse_u64(b"1a"), None);
        assert_eq!(parse_u64(b""), None);
        assert_eq!(parse_secs_ns(b"1234.567890"), Some(1_234_567_890_000));
        assert_eq!(parse_secs_ns(b"0.000000001"), Some(1));
        assert_eq!(parse_secs_ns(b"2"), Some(2_000_000_000));
        assert_eq!(parse_secs_ns(b"1.1234567899"), Some(1_123_456_789));
        assert_eq!(parse_secs_ns(b"1.x"), None);
        assert_eq!(parse_secs_ns(b"1."), None);
        assert_eq!(parse_secs_ns(b"."), None);
    }

    #[test]
    fn whitespace_fields_match_split_and_filter() {
        for line in [
            &b""[..],
            b"   ",
            b"a",
            b" a  b\tc ",
            b"\t\tx\t y  z",
            b"  8,0    3        4     0.000009466   697  D  WS 3417048 + 8 [k]",
        ] {
            let want: Vec<&[u8]> = line
                .split(|b| *b == b' ' || *b == b'\t')
                .filter(|f| !f.is_empty())
                .collect();
            let got: Vec<&[u8]> = fields_ws(line).collect();
            assert_eq!(got, want, "{:?}", String::from_utf8_lossy(line));
            assert_eq!(last_field_ws(line), want.last().copied());
        }
        for line in [&b""[..], b",", b"a", b" a , b,,c ", b"1,2,3,"] {
            let want: Vec<&[u8]> = line.split(|b| *b == b',').map(trim).collect();
            let got: Vec<&[u8]> = fields_csv(line).collect();
            assert_eq!(got, want, "{:?}", String::from_utf8_lossy(line));
        }
        let mut f = fields_ws(b"a b  c");
        f.next();
        assert_eq!(f.rest(), b" b  c");
        assert_eq!(trim(b" x "), b"x");
        assert_eq!(trim(b"x"), b"x");
        assert_eq!(trim(b" "), b"");
        assert_eq!(trim(b""), b"");
    }

    #[test]
    fn line_reader_matches_split_across_buffer_boundaries() {
        // ~3 MiB of lines of varied length (some CRLF, one overlong): lines cross the
        // 1 MiB read buffer's end and take the copying path.
        let mut data = Vec::new();
        let mut want: Vec<Vec<u8>> = Vec::new();
        for i in 0..60_000usize {
            let line: Vec<u8> = std::iter::repeat_n(b'a' + (i % 26) as u8, i % 97).collect();
            data.extend_from_slice(&line);
            data.extend_from_slice(if i % 5 == 0 { b"\r\n" } else { b"\n" });
            want.push(line);
        }
        data.extend_from_slice(&vec![b'x'; MAX_LINE_BYTES + 10]);
        data.extend_from_slice(b"\nlast");
        let mut r = LineReader::from_reader(Path::new("x"), Box::new(std::io::Cursor::new(data)));
        for (i, w) in want.iter().enumerate() {
            assert_eq!(r.next_line().unwrap(), Some(&w[..]), "line {}", i + 1);
        }
        let e = r.next_line().unwrap_err();
        assert_eq!(e.line(), Some(60_001));
        assert_eq!(r.next_line().unwrap(), Some(&b"last"[..]));
        assert_eq!(r.next_line().unwrap(), None);
        assert_eq!(r.line_no(), 60_002);
    }

    #[test]
    fn line_reader_strips_crlf_and_counts() {
        let data = b"a\r\nbb\n\nccc".to_vec();
        let mut r = LineReader::from_reader(Path::new("x"), Box::new(std::io::Cursor::new(data)));
        assert_eq!(r.next_line().unwrap(), Some(&b"a"[..]));
        assert_eq!(r.next_line().unwrap(), Some(&b"bb"[..]));
        assert_eq!(r.next_line().unwrap(), Some(&b""[..]));
        assert_eq!(r.next_line().unwrap(), Some(&b"ccc"[..]));
        assert_eq!(r.line_no(), 4);
        assert_eq!(r.next_line().unwrap(), None);
    }
}
