//! fio iolog v2 and v3.
//!
//! ```text
//! fio version 2 iolog                 fio version 3 iolog
//! /dev/sdb add                        0 /dev/sdb add
//! /dev/sdb open                       0 /dev/sdb open
//! /dev/sdb write 0 4096               5 /dev/sdb write 0 4096
//! /dev/sdb wait 100                   9 /dev/sdb read 4096 4096
//! /dev/sdb sync                       12 /dev/sdb sync 0 0
//! /dev/sdb close                      15 /dev/sdb close
//! ```
//! v2 has no timestamps: an I/O is issued at the sum of the `wait`s before it (µs).
//! v3 timestamps are µs since the start (rebased to the smallest; lines out of order
//! are sorted by the sink). File names may contain spaces (fields are
//! taken from the right). `sync` and `datasync` become flushes (offset and length 0);
//! `trim` becomes trim. The file name is the record's device. No completions are known.

use super::lines::{parse_u64, show, LineReader};
use super::{Ctx, Sink};
use crate::error::TraceError;
use crate::model::{DeviceId, IoRecord, Op};
use super::{EachPart, FormatSpec};

/// fio iolog version 2 (`--read_iolog`'s old format: waits, no times).
pub const FIO_IOLOG_V2: FormatSpec = FormatSpec {
    name: "fio-iolog-v2",
    headers: &[],
    detect: |s| s.first.starts_with("fio version 2 iolog"),
    keep_times: false,
    importer: |_| Box::new(EachPart(|c, l, s| import(c, l, s, 2))),
};

/// fio iolog version 3 (µs times).
pub const FIO_IOLOG_V3: FormatSpec = FormatSpec {
    name: "fio-iolog-v3",
    headers: &[],
    detect: |s| s.first.starts_with("fio version 3 iolog"),
    keep_times: false,
    importer: |_| Box::new(EachPart(|c, l, s| import(c, l, s, 3))),
};

#[derive(Debug, PartialEq)]
pub enum Line<'a> {
    Io {
        ts_us: Option<u64>,
        file: &'a [u8],
        op: Op,
        offset: u64,
        len: u64,
    },
    Wait(u64),
    /// add / open / close.
    FileAction,
}

fn parse_action(a: &[u8]) -> Option<Option<Op>> {
    Some(match a {
        b"read" => Some(Op::Read),
        b"write" => Some(Op::Write),
        b"trim" => Some(Op::Trim),
        b"sync" | b"datasync" => Some(Op::Flush),
        b"add" | b"open" | b"close" | b"wait" => None,
        _ => return None,
    })
}

/// Position of the first space or tab.
#[inline]
fn find_blank(s: &[u8]) -> Option<usize> {
    s.iter().position(|&b| b == b' ' || b == b'\t')
}

/// Position of the last space or tab.
#[inline]
fn rfind_blank(s: &[u8]) -> Option<usize> {
    s.iter().rposition(|&b| b == b' ' || b == b'\t')
}

/// Parses one non-header line of the given version.
pub fn parse_line(line: &[u8], version: u8) -> Result<Line<'_>, (&'static str, String)> {
    // Rightmost fields first: file names may contain spaces.
    let mut rest = super::lines::trim(line);
    let mut ts_us = None;
    if version == 3 {
        let sp = find_blank(rest).ok_or_else(|| ("timestamp", "line has one field".to_owned()))?;
        let ts = &rest[..sp];
        ts_us = Some(parse_u64(ts).ok_or_else(|| ("timestamp", format!("not µs: {}", show(ts))))?);
        rest = super::lines::trim(&rest[sp..]);
    }
    // Up to 3 fields from the right: [action, offset, len] or [action] or [wait, usec].
    let mut right: [&[u8]; 3] = [&[]; 3];
    let mut k = 0;
    while k < 3 {
        let Some(sp) = rfind_blank(rest) else {
            break;
        };
        right[k] = &rest[sp + 1..];
        rest = super::lines::trim(&rest[..sp]);
        k += 1;
    }
    let mut toks: [&[u8]; 4] = [&[]; 4];
    toks[0] = rest;
    for j in 0..k {
        toks[1 + j] = right[k - 1 - j];
    }
    let toks = &toks[..k + 1];
    // toks: [file?, ..., action, a, b] with the file possibly holding spaces.
    // Find the action from the right.
    let n = toks.len();
    let act_at = |i: usize| -> Option<Option<Op>> { toks.get(i).and_then(|a| parse_action(a)) };
    if n >= 4 {
        if let Some(Some(op)) = act_at(n - 3) {
            let file = if n == 4 { toks[0] } else { &line[..0] };
            let off = parse_u64(toks[n - 2])
                .ok_or_else(|| ("offset", format!("not bytes: {}", show(toks[n - 2]))))?;
            let len = parse_u64(toks[n - 1])
                .ok_or_else(|| ("length", format!("not bytes: {}", show(toks[n - 1]))))?;
            return Ok(Line::Io {
                ts_us,
                file,
                op,
                offset: off,
                len,
            });
        }
    }
    // Shorter forms: "<file> <action>" or "<file> wait <usec>" or "<file> sync".
    // Re-split: the last one or two tokens.
    let last = toks[n - 1];
    if n >= 2 {
        if toks[n - 2] == b"wait" {
            let us = parse_u64(last).ok_or_else(|| ("wait", format!("not µs: {}", show(last))))?;
            return Ok(Line::Wait(us));
        }
        match parse_action(last) {
            Some(None) if last != b"wait" => return Ok(Line::FileAction),
            Some(Some(op @ Op::Flush)) => {
                return Ok(Line::Io {
                    ts_us,
                    file: toks[n - 2],
                    op,
                    offset: 0,
                    len: 0,
                });
            }
            _ => {}
        }
    }
    Err((
        "action",
        format!("not a fio iolog action line: {}", show(line)),
    ))
}

/// Reads line 1 and fails unless it is `header`.
fn expect_header(ctx: &mut Ctx, lr: &mut LineReader, header: &[u8]) -> Result<(), TraceError> {
    match lr.next_line()? {
        Some(l) if super::lines::trim(l) == header => Ok(()),
        Some(l) => {
            let msg = format!(
                "expected header {:?}, found {}",
                String::from_utf8_lossy(header),
                show(l)
            );
            Err(ctx.err(1, "header", msg))
        }
        None => Err(ctx.err(1, "header", "empty file")),
    }
}

pub fn import(
    ctx: &mut Ctx,
    lr: &mut LineReader,
    sink: &mut Sink,
    version: u8,
) -> Result<(), TraceError> {
    let header: &[u8] = if version == 2 {
        b"fio version 2 iolog"
    } else {
        b"fio version 3 iolog"
    };
    expect_header(ctx, lr, header)?;
    let mut clock_us: u64 = 0;
    let mut last_file: Vec<u8> = Vec::new();
    let mut last_dev: Option<DeviceId> = None;
    while let Some((n, line)) = lr.next_numbered()? {
        if super::lines::trim(line).is_empty() {
            ctx.summary.note_ignore("blank lines");
            continue;
        }
        match parse_line(line, version) {
            Ok(Line::Io {
                ts_us,
                file,
                op,
                offset,
                len,
            }) => {
                let t_ns = match ts_us {
                    Some(ts) => ctx.time.rel(ts, 1000),
                    None => clock_us.checked_mul(1000),
                };
                let Some(t_ns) = t_ns else {
                    let us = ts_us.unwrap_or(clock_us);
                    let e = ctx.err(n, "timestamp", format!("{us} µs overflows"));
                    ctx.bad_line(e)?;
                    continue;
                };
                if !matches!(offset.checked_add(len), Some(e) if e <= i64::MAX as u64) {
                    let e = ctx.err(
                        n,
                        "offset",
                        format!("offset {offset} + length {len} beyond 2^63"),
                    );
                    ctx.bad_line(e)?;
                    continue;
                }
                // A flush carries no range.
                let (offset, len) = if op == Op::Flush { (0, 0) } else { (offset, len) };
                if len == 0 && op != Op::Flush {
                    ctx.summary.note_drop("zero-length reads, writes or trims");
                    continue;
                }
                let mut rec = IoRecord::new(op, offset, len, t_ns);
                if !file.is_empty() {
                    if last_dev.is_none() || file != last_file.as_slice() {
                        last_file.clear();
                        last_file.extend_from_slice(file);
                        last_dev = Some(sink.writer.intern_device(&String::from_utf8_lossy(file)));
                    }
                    rec.device = last_dev;
                }
                sink.push_ordered(rec)?;
            }
            Ok(Line::Wait(us)) => {
                if version == 3 {
                    ctx.summary
                        .note_ignore("wait lines in a v3 log (timestamps rule)");
                } else {
                    clock_us = clock_us.saturating_add(us);
                }
            }
            Ok(Line::FileAction) => ctx.summary.note_ignore("file add/open/close lines"),
            Err(_) if super::lines::trim(line) == header => {
                ctx.summary
                    .note_ignore("iolog headers repeated (logs joined)");
            }
            Err((field, msg)) => {
                let e = ctx.err(n, field, msg);
                ctx.bad_line(e)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_v2_and_v3_lines() {
        assert_eq!(
            parse_line(b"/dev/sdb write 0 4096", 2).unwrap(),
            Line::Io {
                ts_us: None,
                file: b"/dev/sdb",
                op: Op::Write,
                offset: 0,
                len: 4096
            }
        );
        assert_eq!(
            parse_line(b"123 /tmp/my file.dat read 8192 512", 3).unwrap(),
            Line::Io {
                ts_us: Some(123),
                file: b"/tmp/my file.dat",
                op: Op::Read,
                offset: 8192,
                len: 512
            }
        );
        assert_eq!(
            parse_line(b"/dev/sdb wait 100", 2).unwrap(),
            Line::Wait(100)
        );
        assert_eq!(parse_line(b"0 /dev/sdb open", 3).unwrap(), Line::FileAction);
        assert_eq!(
            parse_line(b"/dev/sdb sync", 2).unwrap(),
            Line::Io {
                ts_us: None,
                file: b"/dev/sdb",
                op: Op::Flush,
                offset: 0,
                len: 0
            }
        );
        assert_eq!(
            parse_line(b"5 /dev/sdb sync 0 0", 3).unwrap(),
            Line::Io {
                ts_us: Some(5),
                file: b"/dev/sdb",
                op: Op::Flush,
                offset: 0,
                len: 0
            }
        );
        assert_eq!(
            parse_line(b"x /dev/sdb read 0 1", 3).unwrap_err().0,
            "timestamp"
        );
        assert_eq!(parse_line(b"/dev/sdb read 0 x", 2).unwrap_err().0, "length");
        assert_eq!(
            parse_line(b"/dev/sdb frobnicate 0 1", 2).unwrap_err().0,
            "action"
        );
    }
}
