//! Turning block-layer issue/complete events (ftrace, blkparse) into records.

use super::pair::{CompleteNote, Completed, Pairer};
use super::rwbs::Rwbs;
use super::{Ctx, Sink};
use crate::error::TraceError;
use crate::model::{IoRecord, Op};

/// One parsed issue or completion event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockEvent<'a> {
    pub complete: bool,
    pub major: u32,
    pub minor: u32,
    pub rwbs: Rwbs,
    pub sector: u64,
    pub nsectors: u64,
    /// Issuing process (issue events) or error status text (completions).
    pub tail: &'a [u8],
    pub ts_ns: u64,
}

/// Events come with absolute times (the capture's clock, ns); the sink rebases them.
pub struct BlockImporter {
    pairer: Pairer,
    last_dev: Option<(u32, u32, crate::model::DeviceId)>,
    /// The last issuing process seen and its id (a one-entry cache).
    last_stream: Option<(Vec<u8>, crate::model::StreamId)>,
}

/// How far back in time a later line's issue may be stamped (per-CPU clocks, events
/// merged from per-CPU buffers) and still be written straight out in issue order
/// (earlier ones still are, through the sink's external sort).
const SKEW_ALLOWANCE_NS: u64 = 10_000_000;

/// Pairing key of zero-length flushes (their printed sector is meaningless).
const FLUSH_SECTOR: u64 = u64::MAX;

const N_DROPPED: &str =
    "requests with RWBS op letter N (write-zeroes or driver-private: no host data moved)";

impl BlockImporter {
    pub fn new() -> Self {
        BlockImporter {
            pairer: Pairer::new(),
            last_dev: None,
            last_stream: None,
        }
    }

    pub fn event(
        &mut self,
        ctx: &mut Ctx,
        sink: &mut Sink,
        ev: &BlockEvent,
        line: u64,
    ) -> Result<(), TraceError> {
        if let Some((maj, min)) = ctx.opts.device {
            if (ev.major, ev.minor) != (maj, min) {
                ctx.summary
                    .note_ignore("events of other devices (--device)");
                return Ok(());
            }
        }
        let Some(op) = ev.rwbs.op else {
            if ev.complete {
                ctx.summary
                    .note_ignore("completions of requests with RWBS op letter N");
            } else {
                ctx.summary.note_drop(N_DROPPED);
            }
            return Ok(());
        };
        if ev.complete {
            self.complete(ctx, sink, ev, op)
        } else {
            self.issue(ctx, sink, ev, op, line)
        }
    }

    /// Pairs a completion with its issue and writes out what can no longer be preceded.
    #[inline(always)]
    fn complete(
        &mut self,
        ctx: &mut Ctx,
        sink: &mut Sink,
        ev: &BlockEvent,
        op: Op,
    ) -> Result<(), TraceError> {
        let t = ev.ts_ns;
        // Flushes carry no meaningful sector (the kernel prints 0 at issue and
        // 2^64-1 at completion): they pair FIFO per device. A write without data
        // that asks for a preflush or FUA is one (see the issue side).
        let is_flush = ev.nsectors == 0
            && (op == Op::Flush || ev.rwbs.preflush || (op == Op::Write && ev.rwbs.fua));
        let sector = if is_flush { FLUSH_SECTOR } else { ev.sector };
        match self.pairer.complete(dev_key(ev), sector, ev.nsectors, t) {
            Completed::Done(rec, note) => {
                match note {
                    CompleteNote::Normal => {}
                    CompleteNote::ClockSkew => ctx
                        .summary
                        .note_reclassify("completions stamped before their issue (per-CPU clock skew): service time 0"),
                    CompleteNote::AfterPartial => ctx
                        .summary
                        .note_reclassify("requests completed in parts (split): kept as one record"),
                }
                if !ev.tail.is_empty() && ev.tail != b"0" {
                    ctx.summary
                        .note_reclassify("requests completed with an error status (kept)");
                }
                sink.push(rec)?;
                // Nothing still to come was issued before the oldest pending issue
                // or (captures are printed in time order) before now: write out
                // what precedes both, less an allowance for per-CPU clock skew.
                let w = self.pairer.oldest_pending_issue_ns().unwrap_or(t).min(t);
                sink.release_upto(w.saturating_sub(SKEW_ALLOWANCE_NS))?;
            }
            Completed::Partial => {}
            // The request that asked for a flush completes after the flush the
            // kernel issued for it (the flush itself was paired above): blkparse
            // prints it as `C WS <sector> [0]`, ftrace as `+ 0`.
            Completed::Unmatched if ev.nsectors == 0 && op == Op::Write => ctx.summary.note_ignore(
                "zero-length write completions ending a flush sequence (FUA/preflush writes)",
            ),
            Completed::Unmatched => ctx.summary.note_drop(
                "completions without an issue (in flight when the capture started, or issue lost)",
            ),
        }
        Ok(())
    }

    /// Records an issue, pending until its completion.
    #[inline(always)]
    fn issue(
        &mut self,
        ctx: &mut Ctx,
        sink: &mut Sink,
        ev: &BlockEvent,
        op: Op,
        line: u64,
    ) -> Result<(), TraceError> {
        let Some((op, offset, len)) = issue_range(ctx, ev, op, line)? else {
            return Ok(());
        };
        let t = ev.ts_ns;
        ctx.time.note_order(t);
        let mut rec = IoRecord::new(op, offset, len, t);
        rec.device = Some(self.device_id(sink, ev));
        if !ev.tail.is_empty() {
            rec.stream = Some(self.stream_id(sink, ev.tail));
        }
        let sector = if op == Op::Flush && ev.nsectors == 0 {
            FLUSH_SECTOR
        } else {
            ev.sector
        };
        let (replaced, evicted) = self.pairer.issue(dev_key(ev), sector, ev.nsectors, rec);
        if replaced {
            ctx.summary
                .note_drop("re-issues of a pending request (requeue): the earlier issue");
        }
        for r in evicted {
            ctx.summary.note_reclassify(
                "issues pending beyond the pairing bound (65536): kept without completion",
            );
            sink.push(r)?;
        }
        Ok(())
    }

    /// The device's id, interned once per change of device.
    #[inline(always)]
    fn device_id(&mut self, sink: &mut Sink, ev: &BlockEvent) -> crate::model::DeviceId {
        match self.last_dev {
            Some((a, b, id)) if (a, b) == (ev.major, ev.minor) => id,
            _ => {
                let id = sink
                    .writer
                    .intern_device(&format!("{},{}", ev.major, ev.minor));
                self.last_dev = Some((ev.major, ev.minor, id));
                id
            }
        }
    }

    /// The issuing process's id. Consecutive I/Os mostly come from the same process:
    /// the last one is remembered, skipping the hash lookup.
    #[inline(always)]
    fn stream_id(&mut self, sink: &mut Sink, tail: &[u8]) -> crate::model::StreamId {
        match &self.last_stream {
            Some((name, id)) if name.as_slice() == tail => *id,
            _ => {
                let id = sink.writer.intern_stream(&String::from_utf8_lossy(tail));
                self.last_stream = Some((tail.to_vec(), id));
                id
            }
        }
    }

    pub fn finish(&mut self, ctx: &mut Ctx, sink: &mut Sink) -> Result<(), TraceError> {
        for r in self.pairer.drain() {
            ctx.summary
                .note_reclassify("issues never completed (capture ended): kept without completion");
            sink.push(r)?;
        }
        Ok(())
    }
}

impl Default for BlockImporter {
    fn default() -> Self {
        Self::new()
    }
}

/// Pairing key of an event's device.
#[inline(always)]
fn dev_key(ev: &BlockEvent) -> u64 {
    (u64::from(ev.major) << 32) | u64::from(ev.minor)
}

/// An issue's (op, byte offset, byte length): a flush has neither; a write with no data
/// that asks for a preflush or FUA is recorded as a flush; None for other zero-length
/// requests (dropped, and counted).
#[inline(always)]
fn issue_range(
    ctx: &mut Ctx,
    ev: &BlockEvent,
    op: Op,
    line: u64,
) -> Result<Option<(Op, u64, u64)>, TraceError> {
    let len = ev.nsectors.checked_mul(512).ok_or_else(|| {
        ctx.err(
            line,
            "nsectors",
            format!("{} sectors overflow", ev.nsectors),
        )
    })?;
    if op == Op::Flush {
        return Ok(Some((op, 0, 0)));
    }
    let offset = ev
        .sector
        .checked_mul(512)
        .filter(|o| o.checked_add(len).is_some_and(|e| e <= i64::MAX as u64))
        .ok_or_else(|| {
            ctx.err(
                line,
                "sector",
                format!("sector {} is beyond 2^63 bytes", ev.sector),
            )
        })?;
    if len > 0 {
        return Ok(Some((op, offset, len)));
    }
    if op == Op::Write && (ev.rwbs.preflush || ev.rwbs.fua) {
        ctx.summary
            .note_reclassify("preflush or FUA writes with no data: recorded as flush");
        return Ok(Some((Op::Flush, 0, 0)));
    }
    ctx.summary
        .note_drop("zero-length reads, writes or discards");
    Ok(None)
}

/// Parses `MAJ,MIN`.
pub fn parse_dev(s: &[u8]) -> Option<(u32, u32)> {
    let i = memchr::memchr(b',', s)?;
    let maj = super::lines::parse_u64(&s[..i])?;
    let min = super::lines::parse_u64(&s[i + 1..])?;
    Some((u32::try_from(maj).ok()?, u32::try_from(min).ok()?))
}
