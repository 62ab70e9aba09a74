//! Header lines and byte order marks of the CSV formats (MSR, Alibaba, Tencent, SPC),
//! skipped by rule rather than by a format's exact header text, which differs between
//! redistributions of the same traces:
//!
//! - a **header** is a line of at least two comma-separated fields, each holding a
//!   letter and none a number (data lines always hold numbers); it is skipped when it
//!   comes before any data line of its file or member, or when it repeats (case aside)
//!   the header seen first (per-volume files joined with `cat`);
//! - a UTF-8 **byte order mark** is skipped at the start of any line (the line reader
//!   skips it at the start of input; joined files carry one per file).
//!
//! Only lines that fail to parse as data are looked at, so the rule costs nothing per
//! data line.

use super::lines::{strip_bom, trim};

/// Whether `line` has the shape of a header (see the module docs).
pub fn looks_like_header(line: &[u8]) -> bool {
    let t = trim(strip_bom(line));
    let mut fields = 0;
    for f in t.split(|&b| b == b',') {
        let f = trim(f);
        let f = f
            .strip_prefix(b"\"")
            .and_then(|f| f.strip_suffix(b"\""))
            .unwrap_or(f);
        let has_letter = f.iter().any(u8::is_ascii_alphabetic);
        let numeric = std::str::from_utf8(f).is_ok_and(|s| s.trim().parse::<f64>().is_ok())
            && f.iter().any(u8::is_ascii_digit);
        if !has_letter || numeric {
            return false;
        }
        fields += 1;
    }
    fields >= 2
}

/// What to do with a line that did not parse as data.
#[derive(Debug, PartialEq, Eq)]
pub enum BadLine<'a> {
    /// A header: skip it.
    Header,
    /// A data line behind a byte order mark: parse this instead.
    Again(&'a [u8]),
    /// Malformed.
    Bad,
}

/// Per file or member: where the leading lines end, and the first header seen.
#[derive(Debug, Default)]
pub struct Headers {
    /// Lines 1..=prefix_end were blank or headers.
    prefix_end: u64,
    /// The first header, lowercased.
    seen: Option<Vec<u8>>,
}

impl Headers {
    /// Line `n` is blank.
    #[inline]
    pub fn blank(&mut self, n: u64) {
        if n == self.prefix_end + 1 {
            self.prefix_end = n;
        }
    }

    /// Judges line `n`, which did not parse as data.
    #[cold]
    pub fn bad_line<'a>(&mut self, n: u64, line: &'a [u8]) -> BadLine<'a> {
        if looks_like_header(line) {
            let t = trim(strip_bom(line)).to_ascii_lowercase();
            let leading = n == self.prefix_end + 1;
            if leading || self.seen.as_deref() == Some(&t[..]) {
                if leading {
                    self.prefix_end = n;
                }
                self.seen.get_or_insert(t);
                return BadLine::Header;
            }
            return BadLine::Bad;
        }
        let stripped = strip_bom(line);
        if stripped.len() != line.len() {
            return BadLine::Again(stripped);
        }
        BadLine::Bad
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_by_rule() {
        for h in [
            &b"Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime"[..],
            b"\xef\xbb\xbfTimestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime",
            b"device_id,opcode,offset,length,timestamp",
            b"Timestamp, Offset, Size, IOType, VolumeID",
            b"\"ASU\",\"LBA\",\"Size\",\"Opcode\",\"Timestamp\"",
        ] {
            assert!(looks_like_header(h), "{}", String::from_utf8_lossy(h));
        }
        for d in [
            &b"128166372003061629,hm,1,Read,383496192,32768,1179"[..],
            b"0,20941264,8192,W,0.551706",
            b"Timestamp",
            b"a,,b",
            b"1e5,x",
            b"",
        ] {
            assert!(!looks_like_header(d), "{}", String::from_utf8_lossy(d));
        }
    }

    #[test]
    fn leading_and_repeated_headers_only() {
        let mut h = Headers::default();
        h.blank(1);
        assert_eq!(
            h.bad_line(2, b"ASU,LBA,Size,Opcode,Timestamp"),
            BadLine::Header
        );
        // Data, then the same header again (a second file joined on): skipped.
        assert_eq!(
            h.bad_line(40, b"asu,lba,size,opcode,timestamp"),
            BadLine::Header
        );
        // Another header-shaped line after data: malformed.
        assert_eq!(h.bad_line(41, b"foo,bar"), BadLine::Bad);
        assert_eq!(
            h.bad_line(42, b"\xef\xbb\xbf0,1,2,r,0.5"),
            BadLine::Again(b"0,1,2,r,0.5")
        );
        assert_eq!(h.bad_line(43, b"0,1,2,x,0.5"), BadLine::Bad);
    }
}
