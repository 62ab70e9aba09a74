//! storbench's own CSV (written by `export --format csv`, read back by import):
//!
//! ```text
//! issue_ns,complete_ns,offset_bytes,len_bytes,op,stream,device
//! 0,1500,4096,4096,read,fio,"8,16"
//! 100,,8192,4096,write,,
//! ```
//! Empty `complete_ns`, `stream`, `device` mean unknown. Names containing a comma,
//! quote or line break are quoted, quotes doubled (RFC 4180). Lossless: every field of
//! a record round-trips (times are not rebased). The header repeated further on (files
//! joined with `cat`) is skipped; rows out of order are sorted by the sink.

use super::lines::{parse_u64, show, LineReader};
use super::{Ctx, Sink};
use crate::error::TraceError;
use crate::model::{IoRecord, Op};
use std::borrow::Cow;
use std::collections::HashMap;
use super::{EachPart, FormatSpec};

/// storbench's own CSV (what `export --format csv` writes): times kept as written.
pub const CSV: FormatSpec = FormatSpec {
    name: "csv",
    headers: &[],
    detect: |s| s.first.starts_with(HEADER),
    keep_times: true,
    importer: |_| Box::new(EachPart(import)),
};

pub const HEADER: &str = "issue_ns,complete_ns,offset_bytes,len_bytes,op,stream,device";

/// Quotes a name for a CSV field when needed.
pub fn quote(s: &str) -> Cow<'_, str> {
    if s.is_empty() || s.contains([',', '"', '\n', '\r']) || s.trim() != s {
        Cow::Owned(format!("\"{}\"", s.replace('"', "\"\"")))
    } else {
        Cow::Borrowed(s)
    }
}

/// Splits one CSV line with RFC 4180 quoting (no embedded line breaks: the exporter
/// writes none because stream/device names never hold them in practice; a quoted field
/// spanning lines is reported as unterminated).
pub fn split(line: &[u8]) -> Result<Vec<Cow<'_, [u8]>>, String> {
    let mut out = Vec::with_capacity(7);
    let mut i = 0;
    loop {
        if line.get(i) == Some(&b'"') {
            let mut v = Vec::new();
            i += 1;
            loop {
                match line.get(i) {
                    None => return Err("unterminated quoted field".into()),
                    Some(b'"') if line.get(i + 1) == Some(&b'"') => {
                        v.push(b'"');
                        i += 2;
                    }
                    Some(b'"') => {
                        i += 1;
                        break;
                    }
                    Some(&b) => {
                        v.push(b);
                        i += 1;
                    }
                }
            }
            out.push(Cow::Owned(v));
            match line.get(i) {
                None => return Ok(out),
                Some(b',') => i += 1,
                Some(_) => return Err("text after closing quote".into()),
            }
        } else {
            let end = memchr::memchr(b',', &line[i..]).map_or(line.len(), |e| i + e);
            out.push(Cow::Borrowed(&line[i..end]));
            if end == line.len() {
                return Ok(out);
            }
            i = end + 1;
        }
    }
}

pub fn import(ctx: &mut Ctx, lr: &mut LineReader, sink: &mut Sink) -> Result<(), TraceError> {
    match lr.next_line()? {
        Some(l) if l == HEADER.as_bytes() => {}
        Some(l) => {
            let msg = format!("expected header {HEADER:?}, found {}", show(l));
            return Err(ctx.err(1, "header", msg));
        }
        None => return Err(ctx.err(1, "header", "empty file")),
    }
    let mut streams: HashMap<Vec<u8>, crate::model::StreamId> = HashMap::new();
    let mut devices: HashMap<Vec<u8>, crate::model::DeviceId> = HashMap::new();
    while let Some((n, line)) = lr.next_numbered()? {
        match parse_row(line) {
            Ok((mut rec, stream, device)) => {
                ctx.time.note_order(rec.issue_ns);
                if let Some(s) = stream {
                    let id = match streams.get(&*s) {
                        Some(&id) => id,
                        None => {
                            let id = sink.writer.intern_stream(&String::from_utf8_lossy(&s));
                            streams.insert(s.to_vec(), id);
                            id
                        }
                    };
                    rec.stream = Some(id);
                }
                if let Some(d) = device {
                    let id = match devices.get(&*d) {
                        Some(&id) => id,
                        None => {
                            let id = sink.writer.intern_device(&String::from_utf8_lossy(&d));
                            devices.insert(d.to_vec(), id);
                            id
                        }
                    };
                    rec.device = Some(id);
                }
                sink.push_ordered(rec)?;
            }
            Err(_) if super::lines::strip_bom(line) == HEADER.as_bytes() => {
                ctx.summary
                    .note_ignore("header lines repeated (files joined)");
            }
            Err((field, msg)) => {
                let e = ctx.err(n, field, msg);
                ctx.bad_line(e)?;
            }
        }
    }
    Ok(())
}

type Row<'a> = (IoRecord, Option<Cow<'a, [u8]>>, Option<Cow<'a, [u8]>>);

pub fn parse_row(line: &[u8]) -> Result<Row<'_>, (&'static str, String)> {
    let f = split(line).map_err(|m| ("line", m))?;
    if f.len() != 7 {
        return Err(("line", format!("{} fields, expected 7", f.len())));
    }
    let num = |name: &'static str, s: &[u8]| {
        parse_u64(s).ok_or_else(|| (name, format!("not a number: {}", show(s))))
    };
    let issue = num("issue_ns", &f[0])?;
    let complete = if f[1].is_empty() {
        None
    } else {
        Some(num("complete_ns", &f[1])?)
    };
    let offset = num("offset_bytes", &f[2])?;
    let len = num("len_bytes", &f[3])?;
    let op = std::str::from_utf8(&f[4])
        .ok()
        .and_then(Op::parse)
        .ok_or_else(|| {
            (
                "op",
                format!("expected read, write, trim or flush: {}", show(&f[4])),
            )
        })?;
    if issue > i64::MAX as u64 {
        return Err(("issue_ns", "beyond 2^63".into()));
    }
    if let Some(c) = complete {
        if c < issue || c > i64::MAX as u64 {
            return Err((
                "complete_ns",
                format!("{c} is before issue_ns {issue} or beyond 2^63"),
            ));
        }
    }
    if !matches!(offset.checked_add(len), Some(e) if e <= i64::MAX as u64) {
        return Err(("len_bytes", "offset_bytes + len_bytes beyond 2^63".into()));
    }
    let mut it = f.into_iter().skip(5);
    // Unquoted empty = unknown; a quoted empty name ("") is an empty name.
    let named = |s: &Cow<'_, [u8]>| matches!(s, Cow::Owned(_)) || !s.is_empty();
    let stream = it.next().filter(named);
    let device = it.next().filter(named);
    let mut rec = IoRecord::new(op, offset, len, issue);
    rec.complete_ns = complete;
    Ok((rec, stream, device))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_handles_quotes() {
        let f = split(b"1,,\"a,\"\"b\",x").unwrap();
        let f: Vec<&[u8]> = f.iter().map(|c| c.as_ref()).collect();
        assert_eq!(f, vec![&b"1"[..], b"", b"a,\"b", b"x"]);
        assert!(split(b"\"abc").is_err());
        assert_eq!(quote("8,16"), "\"8,16\"");
        assert_eq!(quote("fio"), "fio");
    }
}
