//! blkparse default text output:
//!
//! ```text
//!   8,0    3        1     0.000000000   697  D  WS 3417048 + 8 [kworker/3:1H]
//!   8,0    0        1     0.000275549     0  C  WS 3417048 + 8 [0]
//!   8,0    3       10     0.000026000   697  D  FN [kworker/3:1H]
//!   8,16   5      324     3.832956675     0  C  WS 1950885322 [0]
//! ```
//! `maj,min cpu seq secs.nsecs pid action RWBS ...`, what follows depending on the
//! action. The actions are blkparse's own (`dump_trace_fs`, `dump_trace_pc` and
//! `handle_notify` in blkparse.c print them; `process_default` in blkparse_fmt.c what
//! follows): one or two letters, each used or skipped by rule:
//!
//! | action | what | printed after RWBS | rule |
//! |---|---|---|---|
//! | D | issued to the driver | `sector + n [comm]`; `[comm]` without sectors (a flush); `(elapsed)` before `[comm]` with `-t` | the record's issue |
//! | C | completed | `sector + n [error]`; `sector [error]` when no sectors are left (the flush tail of a FUA/preflush write); `(elapsed)` with `-t` | the record's completion; zero-length ones pair with a flush or are counted as the end of a flush sequence |
//! | R | requeued: the driver gave the request back, it is issued again | `sector + n [error]` | the pending issue it names is dropped (its later D is the record) |
//! | Q G I B | queued, request allocated, inserted, bounced (before issue) | `sector + n [comm]` | skipped: D is the issue |
//! | M F | back / front merge into a queued request | `sector + n [comm]` | skipped: the merged request is issued as one D |
//! | S | sleep waiting for a request | `sector + n [comm]` | skipped |
//! | P | plug | `[comm]` | skipped |
//! | U, UT | unplug by I/O, unplug by the timer (`log_unplug(pci, t, "UT")`) | `[comm] N` | skipped |
//! | X | split | `sector / new sector [comm]` | skipped: the parts are issued as D each |
//! | A | remap from another device | `sector + n <- (maj,min) sector` | skipped: the I/O is traced on the device it is issued to |
//! | m | message (`handle_notify`) | `text` (RWBS `N`, sequence 0) | skipped |
//! | ZP, ZU, ZM | zone write plug, zone unplug, zone management (blktrace's zoned-device patches, 2025) | `[comm]`, `[comm] N` | skipped |
//!
//! SCSI/NVMe passthrough requests (`D` with a byte count and a command dump, `C` and `R`
//! with only a command dump) have no sector and are skipped. Any other action is a
//! malformed line (blkparse prints no other; `T` appears in blkparse's man page for
//! timer unplugs but has been printed as `UT` since 2005). The per-CPU and total
//! statistics blkparse prints at the end are skipped.

use super::block::{parse_dev, BlockEvent, BlockImporter, EventKind};
use super::lines::{fields_ws, parse_secs_ns, parse_u64, show, FieldsWs, LineReader};
use super::{rwbs, Ctx, Sink};
use crate::error::TraceError;
use super::FormatSpec;

/// blkparse's default text.
pub const BLKPARSE: FormatSpec = FormatSpec {
    name: "blkparse",
    headers: &[],
    detect: |s| s.any(looks_like),
    keep_times: false,
    importer: |o| {
        Box::new(Importer {
            block: BlockImporter::new(o),
        })
    },
};

#[derive(Debug, PartialEq)]
pub enum Line<'a> {
    Event(BlockEvent<'a>),
    /// An action skipped by rule (the reason names it).
    Skipped(&'static str),
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

/// The rule for each skipped action (see the module docs).
fn skipped(action: &[u8]) -> Option<&'static str> {
    Some(match action {
        b"Q" => "Q (queued) events: D is the issue",
        b"G" => "G (get request) events: D is the issue",
        b"I" => "I (inserted) events: D is the issue",
        b"B" => "B (bounced) events: D is the issue",
        b"M" => "M (back merge) events: the merged request is issued as one D",
        b"F" => "F (front merge) events: the merged request is issued as one D",
        b"S" => "S (sleep) events",
        b"P" => "P (plug) events",
        b"U" => "U (unplug) events",
        b"UT" => "UT (unplug by timer) events",
        b"X" => "X (split) events: the parts are issued as D each",
        b"A" => "A (remap) events: traced again on the device issued to",
        b"m" => "m (message) lines",
        b"ZP" => "ZP (zone write plug) events",
        b"ZU" => "ZU (zone write unplug) events",
        b"ZM" => "ZM (zone management) events",
        _ => return None,
    })
}

/// Every action blkparse prints, for the error about any other.
const ACTIONS: &str = "Q G I B M F S P U UT X A D C R m ZP ZU ZM";

const PASSTHROUGH: &str = "SCSI/NVMe passthrough requests (no sector: a command, not a block I/O)";

/// Skips a `(elapsed)` group, which blkparse pads inside the parentheses.
fn skip_parens<'a>(first: &'a [u8], f: &mut FieldsWs<'a>) -> Result<(), (&'static str, String)> {
    let mut tok = first;
    let mut guard = 0;
    while !tok.ends_with(b")") {
        tok = f
            .next()
            .ok_or_else(|| ("elapsed", "unterminated (...)".to_owned()))?;
        guard += 1;
        if guard > 64 {
            return Err(("elapsed", "too long".to_owned()));
        }
    }
    Ok(())
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
    let kind = match action {
        b"D" => EventKind::Issue,
        b"C" => EventKind::Complete,
        b"R" => EventKind::Requeue,
        a => return other_action(a),
    };
    // Completions and requeues print `sector + n [error]`, issues `... [comm]`.
    let complete = kind != EventKind::Issue;
    let rwbs_tok = f.next().ok_or_else(|| ("rwbs", "missing".to_owned()))?;
    let rwbs = rwbs::parse(rwbs_tok)
        .ok_or_else(|| ("rwbs", format!("not RWBS letters: {}", show(rwbs_tok))))?;
    let mut sector = 0;
    let mut nsectors = 0;
    match f.next() {
        None => {}
        // No sector at all: a passthrough completion unless it is a flush's ...
        Some(tok)
            if tok.starts_with(b"[")
                && complete
                && rwbs.op != Some(crate::model::Op::Flush)
                && !rwbs.preflush =>
        {
            return Ok(Line::Skipped(PASSTHROUGH));
        }
        // ... or a request without sectors (D; a flush's completion).
        Some(tok) if tok.starts_with(b"[") => {}
        Some(tok) if tok.starts_with(b"(") => {
            if complete {
                // `(command dump) [error]`: a passthrough completion.
                return Ok(Line::Skipped(PASSTHROUGH));
            }
            // `(elapsed) [comm]`: an issue without sectors.
            skip_parens(tok, &mut f)?;
        }
        Some(sector_tok) => {
            sector = parse_u64(sector_tok)
                .ok_or_else(|| ("sector", format!("not a number: {}", show(sector_tok))))?;
            match f.next() {
                Some(b"+") => {
                    let n_tok = f.next().ok_or_else(|| ("nsectors", "missing".to_owned()))?;
                    nsectors = parse_u64(n_tok)
                        .ok_or_else(|| ("nsectors", format!("not a number: {}", show(n_tok))))?;
                }
                // An issue's number without `+ n` is a passthrough's byte count.
                Some(tok) if !complete && (tok.starts_with(b"[") || tok.starts_with(b"(")) => {
                    return Ok(Line::Skipped(PASSTHROUGH));
                }
                // A completion with no sectors left: `sector [error]` or
                // `sector (elapsed) [error]`.
                Some(tok) if tok.starts_with(b"[") || tok.starts_with(b"(") => {}
                None if complete => {}
                Some(tok) => return Err(("nsectors", format!("expected `+`: {}", show(tok)))),
                None => return Err(("nsectors", "missing".to_owned())),
            }
        }
    }
    Ok(Line::Event(BlockEvent {
        kind,
        major,
        minor,
        rwbs,
        sector,
        nsectors,
        tail: bracketed_tail(t),
        ts_ns,
    }))
}

/// A line whose action is not D or C: skipped by rule, or not blkparse's.
#[cold]
fn other_action(a: &[u8]) -> Result<Line<'_>, (&'static str, String)> {
    match skipped(a) {
        Some(reason) => Ok(Line::Skipped(reason)),
        None => Err((
            "action",
            format!("not a blkparse action ({ACTIONS}): {}", show(a)),
        )),
    }
}

/// The text of a line's closing `[...]` (the issuing process, or a completion's error
/// status); empty if it has none.
#[inline(always)]
fn bracketed_tail(t: &[u8]) -> &[u8] {
    if t.ends_with(b"]") {
        if let Some(open) = memchr::memrchr(b'[', t) {
            return &t[open + 1..t.len() - 1];
        }
    }
    &[]
}

/// blkparse's text: the events of every part of an import, paired once the last is
/// read ([`BlockImporter`]).
pub struct Importer {
    block: BlockImporter,
}

impl super::Importer for Importer {
    fn part(&mut self, ctx: &mut Ctx, lr: &mut LineReader, sink: &mut Sink) -> Result<(), TraceError> {
        let mut in_summary = false;
        while let Some((n, line)) = lr.next_numbered()? {
            if in_summary {
                ctx.summary.note_ignore("blkparse closing statistics lines");
                continue;
            }
            match parse_line(line) {
                Ok(Line::Event(ev)) => self.block.event(ctx, sink, &ev, n)?,
                Ok(Line::Skipped(reason)) => ctx.summary.note_ignore(reason),
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
        Ok(())
    }

    fn finish(&mut self, ctx: &mut Ctx, sink: &mut Sink) -> Result<(), TraceError> {
        self.block.finish(ctx, sink)
    }
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
            (e.major, e.minor, e.sector, e.nsectors, e.ts_ns, e.kind),
            (8, 0, 3417048, 8, 9466, EventKind::Issue)
        );
        assert_eq!(e.tail, b"kworker/3:1H");
        let Line::Event(e) =
            parse_line(b"  8,0    0        1     0.000275549     0  C  WS 3417048 + 8 [0]")
                .unwrap()
        else {
            panic!()
        };
        assert_eq!(e.kind, EventKind::Complete);
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
            Line::Skipped("Q (queued) events: D is the issue")
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
