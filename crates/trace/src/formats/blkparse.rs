//! blkparse default text output:
//!
//! ```text
//!   8,0    3        1     0.000000000   697  D  WS 3417048 + 8 [kworker/3:1H]
//!   8,0    0        1     0.000275549     0  C  WS 3417048 + 8 [0]
//!   8,0    3       10     0.000026000   697  D  FN [kworker/3:1H]
//! ```
//! `maj,min cpu seq secs.nsecs pid action RWBS [sector + nsectors] [comm|error]`.
//! Only D (issued to the driver) and C (completed) are used; other actions (Q G I M F
//! P U A X m ...) are ignored and counted. The per-CPU and total statistics blkparse
//! prints at the end are ignored.

use super::block::{parse_dev, BlockEvent, BlockImporter};
use super::lines::{fields_ws, parse_secs_ns, parse_u64, show, LineReader};
use super::{rwbs, Ctx, Sink};
use crate::error::TraceError;

#[derive(Debug, PartialEq)]
pub enum Line<'a> {
    Event(BlockEvent<'a>),
    OtherAction,
    /// Start of blkparse's closing statistics.
    Summary,
    Skip,
}

/// Cheap check used by format detection.
pub fn looks_like(line: &str) -> bool {
    let f: Vec<&str> = line.split_whitespace().collect();
    f.len() >= 7
        && parse_dev(f[0].as_bytes()).is_some()
        && f[1].bytes().all(|b| b.is_ascii_digit())
        && f[3].contains('.')
        && parse_secs_ns(f[3].as_bytes()).is_some()
        && f[5].len() <= 2
        && f[5].bytes().all(|b| b.is_ascii_alphabetic())
}

pub fn parse_line(line: &[u8]) -> Result<Line<'_>, (&'static str, String)> {
    let t = super::lines::trim(line);
    if t.is_empty() || t.starts_with(b"#") {
        return Ok(Line::Skip);
    }
    if (t.starts_with(b"CPU") || t.starts_with(b"Total (")) && t.ends_with(b":") {
        return Ok(Line::Summary);
    }
    let mut f = fields_ws(t);
    let dev_tok = f.next().ok_or_else(|| ("dev", "missing".to_owned()))?;
    let (major, minor) =
        parse_dev(dev_tok).ok_or_else(|| ("dev", format!("not MAJ,MIN: {}", show(dev_tok))))?;
    let cpu = f.next().ok_or_else(|| ("cpu", "missing".to_owned()))?;
    parse_u64(cpu).ok_or_else(|| ("cpu", format!("not a number: {}", show(cpu))))?;
    let seq = f.next().ok_or_else(|| ("seq", "missing".to_owned()))?;
    parse_u64(seq).ok_or_else(|| ("seq", format!("not a number: {}", show(seq))))?;
    let ts = f.next().ok_or_else(|| ("time", "missing".to_owned()))?;
    let ts_ns = parse_secs_ns(ts).ok_or_else(|| ("time", format!("not seconds: {}", show(ts))))?;
    let _pid = f.next().ok_or_else(|| ("pid", "missing".to_owned()))?;
    let action = f.next().ok_or_else(|| ("action", "missing".to_owned()))?;
    let complete = match action {
        b"D" => false,
        b"C" => true,
        a if !a.is_empty() && a.len() <= 2 && a.iter().all(u8::is_ascii_alphabetic) => {
            return Ok(Line::OtherAction)
        }
        a => return Err(("action", format!("not an action letter: {}", show(a)))),
    };
    let rwbs_tok = f.next().ok_or_else(|| ("rwbs", "missing".to_owned()))?;
    let rwbs = rwbs::parse(rwbs_tok)
        .ok_or_else(|| ("rwbs", format!("not RWBS letters: {}", show(rwbs_tok))))?;
    let mut sector = 0;
    let mut nsectors = 0;
    let mut tail = &[][..];
    match f.next() {
        None => {}
        Some(tok) if tok.starts_with(b"[") || tok.starts_with(b"(") => {}
        Some(sector_tok) => {
            sector = parse_u64(sector_tok)
                .ok_or_else(|| ("sector", format!("not a number: {}", show(sector_tok))))?;
            let plus = f.next().ok_or_else(|| ("nsectors", "missing".to_owned()))?;
            if plus != b"+" {
                return Err(("nsectors", format!("expected `+`: {}", show(plus))));
            }
            let n_tok = f.next().ok_or_else(|| ("nsectors", "missing".to_owned()))?;
            nsectors = parse_u64(n_tok)
                .ok_or_else(|| ("nsectors", format!("not a number: {}", show(n_tok))))?;
        }
    }
    if t.ends_with(b"]") {
        if let Some(open) = memchr::memrchr(b'[', t) {
            tail = &t[open + 1..t.len() - 1];
        }
    }
    Ok(Line::Event(BlockEvent {
        complete,
        major,
        minor,
        rwbs,
        sector,
        nsectors,
        tail,
        ts_ns,
    }))
}

pub fn import(ctx: &mut Ctx, lr: &mut LineReader, sink: &mut Sink) -> Result<(), TraceError> {
    let mut bi = BlockImporter::new();
    let mut in_summary = false;
    while let Some((n, line)) = lr.next_numbered()? {
        if in_summary {
            ctx.summary.note_ignore("blkparse closing statistics lines");
            continue;
        }
        match parse_line(line) {
            Ok(Line::Event(ev)) => bi.event(ctx, sink, &ev, n)?,
            Ok(Line::OtherAction) => ctx.summary.note_ignore("events other than D and C"),
            Ok(Line::Skip) => ctx.summary.note_ignore("comment and blank lines"),
            Ok(Line::Summary) => {
                in_summary = true;
                ctx.summary.note_ignore("blkparse closing statistics lines");
            }
            Err((field, msg)) => {
                let e = ctx.err(n, field, msg);
                ctx.bad_line(e)?;
            }
        }
    }
    bi.finish(ctx, sink)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Op;

    #[test]
    fn parses_d_c_flush_and_others() {
        let Line::Event(e) = parse_line(
            b"  8,0    3        4     0.000009466   697  D  WS 3417048 + 8 [kworker/3:1H]",
        )
        .unwrap() else {
            panic!()
        };
        assert_eq!(
            (e.major, e.minor, e.sector, e.nsectors, e.ts_ns, e.complete),
            (8, 0, 3417048, 8, 9466, false)
        );
        assert_eq!(e.tail, b"kworker/3:1H");
        let Line::Event(e) =
            parse_line(b"  8,0    0        1     0.000275549     0  C  WS 3417048 + 8 [0]")
                .unwrap()
        else {
            panic!()
        };
        assert!(e.complete);
        let Line::Event(e) =
            parse_line(b"  8,0    3       10     0.000026000   697  D  FN [kworker/3:1H]").unwrap()
        else {
            panic!()
        };
        assert_eq!((e.rwbs.op, e.nsectors), (Some(Op::Flush), 0));
        assert_eq!(
            parse_line(
                b"  8,0    3        1     0.000000000   697  Q  WS 3417048 + 8 [kworker/3:1H]"
            )
            .unwrap(),
            Line::OtherAction
        );
        assert_eq!(parse_line(b"CPU0 (8,0):").unwrap(), Line::Summary);
        assert_eq!(
            parse_line(b"  8,0    3        4     0.0000x9466   697  D  WS 3417048 + 8 [k]")
                .unwrap_err()
                .0,
            "time"
        );
        assert!(looks_like(
            "  8,0    3        4     0.000009466   697  D  WS 3417048 + 8 [kworker/3:1H]"
        ));
    }
}
