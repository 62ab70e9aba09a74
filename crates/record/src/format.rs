//! Trace event format files (`events/<system>/<event>/format`) and reading fields out of
//! an event record by name.
//!
//! ```text
//! name: block_rq_issue
//! ID: 2104
//! format:
//!     field:unsigned short common_type;   offset:0;   size:2; signed:0;
//!     ...
//!     field:char rwbs[10];                offset:34;  size:10;    signed:0;
//!     field:__data_loc char[] cmd;        offset:60;  size:4; signed:0;
//! ```
//!
//! Strings come in three shapes: fixed arrays (`char comm[16]`, NUL-terminated unless
//! full), `__data_loc` (a u32: offset from the record start in the low 16 bits, length
//! in the high 16 bits) and `__rel_loc` (the same, but the offset counts from the end
//! of the field). Reading never panics: a field outside the record gives `None`.

use crate::ringbuf::parse_field_line;

/// How a field's bytes are found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldKind {
    /// A scalar or fixed array at `offset`, `size` bytes.
    Inline,
    /// `__data_loc`: u32 at `offset` locating the data from the record start.
    DataLoc,
    /// `__rel_loc`: u32 at `offset` locating the data from the end of the field.
    RelLoc,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    pub name: String,
    /// The C type as declared (`unsigned int`, `char`, `__data_loc char[]`).
    pub type_name: String,
    pub offset: usize,
    pub size: usize,
    pub signed: bool,
    pub kind: FieldKind,
}

/// One event's format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventFormat {
    pub name: String,
    pub id: u16,
    pub fields: Vec<Field>,
}

/// What is wrong with a format file, with the 1-based line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct FormatError {
    pub line: usize,
    pub message: String,
}

impl EventFormat {
    pub fn parse(text: &str) -> Result<EventFormat, FormatError> {
        let mut name = None;
        let mut id = None;
        let mut fields = Vec::new();
        let err = |line: usize, message: String| FormatError { line, message };
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if let Some(v) = line.strip_prefix("name:") {
                name = Some(v.trim().to_owned());
            } else if let Some(v) = line.strip_prefix("ID:") {
                let v = v.trim();
                id =
                    Some(v.parse::<u16>().map_err(|_| {
                        err(i + 1, format!("event ID `{v}` is not a 16-bit number"))
                    })?);
            } else if line.starts_with("field:") {
                let (decl, offset, size) = parse_field_line(line)
                    .ok_or_else(|| err(i + 1, format!("cannot parse field `{line}`")))?;
                let signed = line.contains("signed:1");
                let (kind, rest) = if let Some(r) = decl.strip_prefix("__data_loc ") {
                    (FieldKind::DataLoc, r)
                } else if let Some(r) = decl.strip_prefix("__rel_loc ") {
                    (FieldKind::RelLoc, r)
                } else {
                    (FieldKind::Inline, decl)
                };
                let last = rest
                    .split_whitespace()
                    .last()
                    .ok_or_else(|| err(i + 1, format!("field without a name: `{line}`")))?;
                let fname = last
                    .split('[')
                    .next()
                    .unwrap_or(last)
                    .trim_start_matches('*');
                if fname.is_empty() {
                    return Err(err(i + 1, format!("field without a name: `{line}`")));
                }
                let type_name = decl[..decl.len() - last.len()].trim().to_owned();
                if kind != FieldKind::Inline && size != 4 {
                    return Err(err(
                        i + 1,
                        format!("dynamic field `{fname}` of size {size}, expected 4"),
                    ));
                }
                fields.push(Field {
                    name: fname.to_owned(),
                    type_name,
                    offset,
                    size,
                    signed,
                    kind,
                });
            }
        }
        let name = name.ok_or_else(|| err(1, "no `name:` line".into()))?;
        let id = id.ok_or_else(|| err(1, "no `ID:` line".into()))?;
        Ok(EventFormat { name, id, fields })
    }

    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }
}

impl Field {
    /// An unsigned integer field of 1, 2, 4 or 8 bytes (native endian).
    pub fn read_u64(&self, rec: &[u8]) -> Option<u64> {
        if self.kind != FieldKind::Inline {
            return None;
        }
        let b = rec.get(self.offset..self.offset.checked_add(self.size)?)?;
        Some(match self.size {
            1 => u64::from(b[0]),
            2 => u64::from(u16::from_ne_bytes(b.try_into().ok()?)),
            4 => u64::from(u32::from_ne_bytes(b.try_into().ok()?)),
            8 => u64::from_ne_bytes(b.try_into().ok()?),
            _ => return None,
        })
    }

    /// A signed integer field, sign-extended.
    pub fn read_i64(&self, rec: &[u8]) -> Option<i64> {
        let v = self.read_u64(rec)?;
        Some(match self.size {
            1 => i64::from(v as u8 as i8),
            2 => i64::from(v as u16 as i16),
            4 => i64::from(v as u32 as i32),
            _ => v as i64,
        })
    }

    /// The raw bytes of a string or array field (inline, `__data_loc` or `__rel_loc`),
    /// cut at the first NUL.
    pub fn read_bytes<'a>(&self, rec: &'a [u8]) -> Option<&'a [u8]> {
        let b = match self.kind {
            FieldKind::Inline => rec.get(self.offset..self.offset.checked_add(self.size)?)?,
            FieldKind::DataLoc | FieldKind::RelLoc => {
                let w = rec.get(self.offset..self.offset.checked_add(4)?)?;
                let loc = u32::from_ne_bytes(w.try_into().ok()?);
                let mut off = (loc & 0xffff) as usize;
                let len = (loc >> 16) as usize;
                if self.kind == FieldKind::RelLoc {
                    off += self.offset + 4;
                }
                rec.get(off..off.checked_add(len)?)?
            }
        };
        let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
        Some(&b[..end])
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub const ISSUE_FORMAT: &str = "name: block_rq_issue
ID: 2104
format:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;

\tfield:dev_t dev;\toffset:8;\tsize:4;\tsigned:0;
\tfield:sector_t sector;\toffset:16;\tsize:8;\tsigned:0;
\tfield:unsigned int nr_sector;\toffset:24;\tsize:4;\tsigned:0;
\tfield:unsigned int bytes;\toffset:28;\tsize:4;\tsigned:0;
\tfield:unsigned short ioprio;\toffset:32;\tsize:2;\tsigned:0;
\tfield:char rwbs[10];\toffset:34;\tsize:10;\tsigned:0;
\tfield:char comm[16];\toffset:44;\tsize:16;\tsigned:0;
\tfield:__data_loc char[] cmd;\toffset:60;\tsize:4;\tsigned:0;

print fmt: \"%d,%d %s %u (%s) %llu + %u %s,%u,%u [%s]\", REC->comm
";

    #[test]
    fn parses_block_rq_issue_format() {
        let f = EventFormat::parse(ISSUE_FORMAT).unwrap();
        assert_eq!(f.name, "block_rq_issue");
        assert_eq!(f.id, 2104);
        assert_eq!(f.fields.len(), 12);
        let rwbs = f.field("rwbs").unwrap();
        assert_eq!(
            (rwbs.offset, rwbs.size, rwbs.kind),
            (34, 10, FieldKind::Inline)
        );
        assert_eq!(rwbs.type_name, "char");
        let cmd = f.field("cmd").unwrap();
        assert_eq!((cmd.offset, cmd.kind), (60, FieldKind::DataLoc));
        assert!(f.field("common_pid").unwrap().signed);
        assert_eq!(f.field("sector").unwrap().type_name, "sector_t");
    }

    #[test]
    fn reads_scalars_arrays_and_dynamic_strings() {
        let f = EventFormat::parse(ISSUE_FORMAT).unwrap();
        let mut rec = vec![0u8; 72];
        rec[0..2].copy_from_slice(&2104u16.to_ne_bytes());
        rec[4..8].copy_from_slice(&(-5i32).to_ne_bytes());
        rec[16..24].copy_from_slice(&123_456_789_012u64.to_ne_bytes());
        rec[34..37].copy_from_slice(b"WS\0");
        rec[44..60].copy_from_slice(b"0123456789abcdef"); // full: no NUL
        rec[60..64].copy_from_slice(&(64u32 | (3 << 16)).to_ne_bytes());
        rec[64..67].copy_from_slice(b"ab\0");
        assert_eq!(f.field("common_type").unwrap().read_u64(&rec), Some(2104));
        assert_eq!(f.field("common_pid").unwrap().read_i64(&rec), Some(-5));
        assert_eq!(
            f.field("sector").unwrap().read_u64(&rec),
            Some(123_456_789_012)
        );
        assert_eq!(f.field("rwbs").unwrap().read_bytes(&rec), Some(&b"WS"[..]));
        assert_eq!(
            f.field("comm").unwrap().read_bytes(&rec),
            Some(&b"0123456789abcdef"[..])
        );
        assert_eq!(f.field("cmd").unwrap().read_bytes(&rec), Some(&b"ab"[..]));
        // A data_loc pointing outside the record.
        rec[60..64].copy_from_slice(&(70u32 | (8 << 16)).to_ne_bytes());
        assert_eq!(f.field("cmd").unwrap().read_bytes(&rec), None);
        // A record cut short.
        assert_eq!(f.field("sector").unwrap().read_u64(&rec[..20]), None);
    }

    #[test]
    fn rel_loc_counts_from_end_of_field() {
        let text = "name: x\nID: 7\nformat:\n\tfield:__rel_loc char[] rwbs;\toffset:8;\tsize:4;\tsigned:0;\n";
        let f = EventFormat::parse(text).unwrap();
        let mut rec = vec![0u8; 24];
        rec[8..12].copy_from_slice(&(4u32 | (3 << 16)).to_ne_bytes());
        rec[16..19].copy_from_slice(b"RA\0");
        assert_eq!(f.field("rwbs").unwrap().read_bytes(&rec), Some(&b"RA"[..]));
    }

    #[test]
    fn bad_format_files_name_the_line() {
        let e = EventFormat::parse("name: x\nID: abc\n").unwrap_err();
        assert_eq!(e.line, 2);
        let e = EventFormat::parse("name: x\nID: 3\nformat:\n\tfield:int a;\toffset:x;\tsize:4;\n")
            .unwrap_err();
        assert_eq!(e.line, 4);
        assert!(EventFormat::parse("ID: 3\n").is_err());
    }

    proptest::proptest! {
        #[test]
        fn reading_fields_never_panics(rec in proptest::collection::vec(proptest::num::u8::ANY, 0..100)) {
            let f = EventFormat::parse(ISSUE_FORMAT).unwrap();
            for field in &f.fields {
                let _ = field.read_u64(&rec);
                let _ = field.read_i64(&rec);
                let _ = field.read_bytes(&rec);
            }
        }
    }
}
