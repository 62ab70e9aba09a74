//! Linux ftrace block events as text: tracefs `trace` / `trace_pipe` and `trace-cmd
//! report` output. `block_rq_issue` and `block_rq_complete` make the records:
//!
//! ```text
//! <task>-<pid> [cpu] <flags> <secs.frac>: block_rq_issue: MAJ,MIN RWBS BYTES (CMD) SECTOR + NSECTORS [IOPRIO] [COMM]
//! <task>-<pid> [cpu] <flags> <secs.frac>: block_rq_complete: MAJ,MIN RWBS (CMD) SECTOR + NSECTORS [IOPRIO] [ERROR]
//! ```
//! `block_rq_requeue` (printed as a completion is) drops the pending issue it names: the
//! request is issued again. Comment lines (`#`), trace-cmd headers (`cpus=N`,
//! `version = ...`), `CPU:N [LOST ...]` markers and other events are ignored and
//! counted. Events are ordered by time before pairing ([`super::block`]), so per-CPU
//! files given one after another pair as the merged trace does.

use super::block::{parse_dev, BlockEvent, BlockImporter, EventKind};
use super::lines::{fields_ws, last_field_ws, parse_secs_ns, parse_u64, show, LineReader};
use super::{rwbs, Ctx, Sink};
use crate::error::TraceError;
use super::FormatSpec;

/// tracefs text and `trace-cmd report`.
pub const FTRACE: FormatSpec = FormatSpec {
    name: "ftrace",
    headers: &[],
    detect: |s| {
        s.any(|l| l.contains("block_rq_issue:") || l.contains("block_rq_complete:"))
            || s.any(|l| l.starts_with("# tracer:"))
    },
    keep_times: false,
    importer: |o| {
        Box::new(Importer {
            block: BlockImporter::new(o),
        })
    },
};

const MARK: &[u8] = b": block_rq_";

/// The searcher for [`MARK`], built once (building one per line cost more than the search).
static MARK_FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memchr::memmem::Finder::new(MARK));

/// What one line is.
#[derive(Debug, PartialEq)]
pub enum Line<'a> {
    Event(BlockEvent<'a>),
    /// Another trace event (block_rq_insert, sched_switch, ...).
    OtherEvent,
    /// Comment, header, blank.
    Skip,
    /// The kernel lost events (buffer overrun).
    Lost,
}

/// What a line without a block event is: a header, a lost-events note, another event.
fn not_a_block_event(line: &[u8]) -> Result<Line<'_>, (&'static str, String)> {
    let t = super::lines::trim(line);
    if t.is_empty()
        || t.starts_with(b"#")
        || t.starts_with(b"cpus=")
        || t.starts_with(b"version")
        || t.starts_with(b"trace-cmd")
    {
        return Ok(Line::Skip);
    }
    if t.starts_with(b"CPU:") || memchr::memmem::find(t, b"LOST").is_some() {
        return Ok(Line::Lost);
    }
    // An event line: "... <ts>: <name>:" somewhere.
    if memchr::memmem::find(t, b": ").is_some() {
        return Ok(Line::OtherEvent);
    }
    Err(("line", format!("not an ftrace event line: {}", show(line))))
}

/// Parses one line; errors name the field.
pub fn parse_line(line: &[u8]) -> Result<Line<'_>, (&'static str, String)> {
    let Some(pos) = MARK_FINDER.find(line) else {
        return not_a_block_event(line);
    };
    let after = &line[pos + MARK.len()..];
    // block_rq_requeue prints what block_rq_complete does: `(CMD) SECTOR + N ... [0]`.
    let (kind, rest) = if let Some(r) = after.strip_prefix(b"issue:") {
        (EventKind::Issue, r)
    } else if let Some(r) = after.strip_prefix(b"complete:") {
        (EventKind::Complete, r)
    } else if let Some(r) = after.strip_prefix(b"requeue:") {
        (EventKind::Requeue, r)
    } else {
        return Ok(Line::OtherEvent);
    };
    let complete = kind != EventKind::Issue;
    let ts_tok = last_field_ws(&line[..pos]).ok_or_else(|| ("timestamp", "missing".to_owned()))?;
    let ts_ns = parse_secs_ns(ts_tok)
        .ok_or_else(|| ("timestamp", format!("not seconds: {}", show(ts_tok))))?;
    let mut f = fields_ws(rest);
    let dev_tok = f.next().ok_or_else(|| ("dev", "missing".to_owned()))?;
    let (major, minor) =
        parse_dev(dev_tok).ok_or_else(|| ("dev", format!("not MAJ,MIN: {}", show(dev_tok))))?;
    let rwbs_tok = f.next().ok_or_else(|| ("rwbs", "missing".to_owned()))?;
    let rwbs = rwbs::parse(rwbs_tok)
        .ok_or_else(|| ("rwbs", format!("not RWBS letters: {}", show(rwbs_tok))))?;
    if !complete {
        let bytes = f.next().ok_or_else(|| ("bytes", "missing".to_owned()))?;
        parse_u64(bytes).ok_or_else(|| ("bytes", format!("not a number: {}", show(bytes))))?;
    }
    // (CMD): one or more tokens from "(" to ")".
    let cmd = f.next().ok_or_else(|| ("cmd", "missing".to_owned()))?;
    if !cmd.starts_with(b"(") {
        return Err(("cmd", format!("expected (...): {}", show(cmd))));
    }
    let mut tok = cmd;
    let mut guard = 0;
    while !tok.ends_with(b")") {
        tok = f
            .next()
            .ok_or_else(|| ("cmd", "unterminated (...)".to_owned()))?;
        guard += 1;
        if guard > 64 {
            return Err(("cmd", "too long".to_owned()));
        }
    }
    let sector_tok = f.next().ok_or_else(|| ("sector", "missing".to_owned()))?;
    let sector = parse_u64(sector_tok)
        .ok_or_else(|| ("sector", format!("not a number: {}", show(sector_tok))))?;
    let plus = f.next().ok_or_else(|| ("nsectors", "missing".to_owned()))?;
    if plus != b"+" {
        return Err(("nsectors", format!("expected `+`: {}", show(plus))));
    }
    let n_tok = f.next().ok_or_else(|| ("nsectors", "missing".to_owned()))?;
    let nsectors =
        parse_u64(n_tok).ok_or_else(|| ("nsectors", format!("not a number: {}", show(n_tok))))?;
    // Tail: the last [...] of the line (comm for issues, error for completions); may
    // contain spaces, so take it from the raw line.
    let tail = {
        let t = super::lines::trim(rest);
        if t.ends_with(b"]") {
            let open =
                memchr::memrchr(b'[', t).ok_or_else(|| ("comm", "unbalanced ]".to_owned()))?;
            &t[open + 1..t.len() - 1]
        } else {
            &[][..]
        }
    };
    Ok(Line::Event(BlockEvent {
        kind,
        major,
        minor,
        rwbs,
        sector,
        nsectors,
        tail,
        ts_ns,
    }))
}

/// tracefs text: the events of every part of an import (per-CPU files given one after
/// another, say), paired once the last is read ([`BlockImporter`]).
pub struct Importer {
    block: BlockImporter,
}

impl super::Importer for Importer {
    fn part(&mut self, ctx: &mut Ctx, lr: &mut LineReader, sink: &mut Sink) -> Result<(), TraceError> {
        while let Some((n, line)) = lr.next_numbered()? {
            match parse_line(line) {
                Ok(Line::Event(ev)) => self.block.event(ctx, sink, &ev, n)?,
                Ok(Line::OtherEvent) => ctx.summary.note_ignore("other trace events"),
                Ok(Line::Skip) => ctx.summary.note_ignore("comment and header lines"),
                Ok(Line::Lost) => ctx.summary.note_drop(
                    "lines reporting events LOST by the kernel (records may be missing)",
                ),
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
    fn parses_tracefs_and_trace_cmd_lines() {
        let l = b"     kworker/0:1H-123     [000] d..1.  1234.567890: block_rq_issue: 7,0 WS 4096 () 2048 + 8 be,0,4 [kworker/0:1H]";
        let Line::Event(e) = parse_line(l).unwrap() else {
            panic!()
        };
        assert_eq!(
            (e.major, e.minor, e.sector, e.nsectors, e.kind),
            (7, 0, 2048, 8, EventKind::Issue)
        );
        assert_eq!(e.rwbs.op, Some(Op::Write));
        assert_eq!(e.tail, b"kworker/0:1H");
        assert_eq!(e.ts_ns, 1_234_567_890_000);
        let l = b"          <idle>-0     [001] d.h1. 1234.568000: block_rq_complete: 7,0 WS () 2048 + 8 [0]";
        let Line::Event(e) = parse_line(l).unwrap() else {
            panic!()
        };
        assert_eq!(e.kind, EventKind::Complete);
        assert_eq!(e.tail, b"0");
        let l = b"             fio-4321  [001]  5.000000001: block_rq_issue:       259,0 R 131072 () 0 + 256 [fio]";
        let Line::Event(e) = parse_line(l).unwrap() else {
            panic!()
        };
        assert_eq!((e.major, e.nsectors, e.ts_ns), (259, 256, 5_000_000_001));
        assert_eq!(parse_line(b"# tracer: nop").unwrap(), Line::Skip);
        assert_eq!(parse_line(b"cpus=2").unwrap(), Line::Skip);
        assert_eq!(parse_line(b"CPU:1 [LOST 123 EVENTS]").unwrap(), Line::Lost);
        assert_eq!(
            parse_line(b" x-1 [000] ..... 1.0: block_rq_insert: 7,0 W 4096 () 0 + 8 [x]").unwrap(),
            Line::OtherEvent
        );
        let e = parse_line(b" x-1 [000] ..... 1.0: block_rq_issue: 7,0 W 4096 () 0 + zz [x]")
            .unwrap_err();
        assert_eq!(e.0, "nsectors");
        let e = parse_line(b" x-1 [000] ..... 1.0: block_rq_issue: 7:0 W 4096 () 0 + 8 [x]")
            .unwrap_err();
        assert_eq!(e.0, "dev");
        assert_eq!(parse_line(b"garbage").unwrap_err().0, "line");
    }
}
