//! Turning block-layer events (ftrace, blkparse) into records.
//!
//! Two steps. While the lines are read, each event is checked (its range fits, its
//! op is one the trace holds, its device is the one asked for), reduced to an
//! [`Ev`] and put into an [`EventSort`]. After the last part of the import, the
//! events come back in time order and are paired ([`super::pair`]): pairing in time
//! order, not file order, is what keeps the completions of a capture whose per-CPU
//! buffers were printed one after another ([`super::events`]). The sort and the
//! pairing each have a bound ([`super::events`], [`super::pair::MAX_PENDING`],
//! [`EARLY_MAX`]).

use super::events::{Ev, EventSort, Kind, FLAG_ERROR, NO_STREAM};
use super::pair::{CompleteNote, Completed, PairMap, Pairer};
use super::rwbs::Rwbs;
use super::{Ctx, ImportOptions, Sink};
use crate::error::TraceError;
use crate::model::{DeviceId, IoRecord, Op, StreamId};
use std::collections::{BTreeSet, VecDeque};

/// What a block event is.
pub use super::events::Kind as EventKind;

/// One parsed block event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockEvent<'a> {
    pub kind: EventKind,
    pub major: u32,
    pub minor: u32,
    pub rwbs: Rwbs,
    pub sector: u64,
    pub nsectors: u64,
    /// Issuing process (issue events) or error status text (completions, requeues).
    pub tail: &'a [u8],
    pub ts_ns: u64,
}

/// The block events of one import (every part), ordered, then paired into records.
/// Events come with absolute times (the capture's clock, ns); the sink rebases them.
pub struct BlockImporter {
    /// `--device`: keep only this (major, minor).
    only: Option<(u32, u32)>,
    /// Device slot -> (major, minor, the trace's device id).
    devices: Vec<(u32, u32, DeviceId)>,
    /// The last event's device and its slot (a one-entry cache).
    last_dev: Option<(u32, u32, u32)>,
    /// Every device the input has events of (kept or not), for the `--device` error.
    seen: BTreeSet<(u32, u32)>,
    last_seen: Option<(u32, u32)>,
    /// The last issuing process seen and its id (a one-entry cache).
    last_stream: Option<(Vec<u8>, StreamId)>,
    /// Created with the first event (it needs the sink's output path).
    events: Option<EventSort>,
    limits: super::spill::SortLimits,
    /// Completion events read (kept devices).
    completions: u64,
}

/// How far back in time a later issue may be stamped (per-CPU clocks) and still be
/// written straight out in issue order (earlier ones still are, through the sink's
/// external sort).
const SKEW_ALLOWANCE_NS: u64 = 10_000_000;

/// How long a completion stamped before any pending issue of its range waits for that
/// issue: per-CPU clocks may stamp a completion a little before its issue. Such a
/// pair gets service time 0 (counted); past this, the completion is one without an
/// issue (in flight when the capture started).
pub const EARLY_COMPLETION_NS: u64 = 1_000_000;
/// Bound on completions waiting for their issue; past it the oldest is dropped (counted).
pub const EARLY_MAX: usize = 1 << 16;

/// Pairing key of zero-length flushes (their printed sector is meaningless).
const FLUSH_SECTOR: u64 = u64::MAX;

const N_DROPPED: &str =
    "requests with RWBS op letter N (write-zeroes or driver-private: no host data moved)";
const UNMATCHED: &str =
    "completions without an issue (in flight when the capture started, or issue lost)";

impl BlockImporter {
    pub fn new(opts: &ImportOptions) -> Self {
        BlockImporter {
            only: opts.device,
            devices: Vec::new(),
            last_dev: None,
            seen: BTreeSet::new(),
            last_seen: None,
            last_stream: None,
            events: None,
            limits: opts.sort_limits,
            completions: 0,
        }
    }

    /// Reads one event (of line `line`): checked, reduced and held for ordering.
    pub fn event(
        &mut self,
        ctx: &mut Ctx,
        sink: &mut Sink,
        ev: &BlockEvent,
        line: u64,
    ) -> Result<(), TraceError> {
        let dev = (ev.major, ev.minor);
        if self.last_seen != Some(dev) {
            self.seen.insert(dev);
            self.last_seen = Some(dev);
        }
        if self.only.is_some_and(|d| d != dev) {
            ctx.summary
                .note_ignore("events of other devices (--device)");
            return Ok(());
        }
        let Some(op) = ev.rwbs.op else {
            match ev.kind {
                EventKind::Issue => ctx.summary.note_drop(N_DROPPED),
                _ => ctx
                    .summary
                    .note_ignore("completions and requeues of requests with RWBS op letter N"),
            }
            return Ok(());
        };
        let e = match ev.kind {
            EventKind::Issue => {
                let Some((op, sector, nsectors)) = issue_range(ctx, ev, op, line)? else {
                    return Ok(());
                };
                ctx.time.note_order(ev.ts_ns);
                let stream = if ev.tail.is_empty() {
                    NO_STREAM
                } else {
                    self.stream_id(sink, ev.tail).0
                };
                Ev {
                    ts_ns: ev.ts_ns,
                    sector,
                    nsectors,
                    dev: self.device_slot(sink, ev),
                    stream,
                    kind: EventKind::Issue,
                    op: op as u8,
                    flags: 0,
                }
            }
            kind => {
                // Flushes carry no meaningful sector (the kernel prints 0 at issue and
                // 2^64-1 at completion): they pair FIFO per device. A write without
                // data that asks for a preflush or FUA is one (see `issue_range`).
                let is_flush = ev.nsectors == 0
                    && (op == Op::Flush || ev.rwbs.preflush || (op == Op::Write && ev.rwbs.fua));
                if kind == EventKind::Complete {
                    self.completions += 1;
                }
                let error = !ev.tail.is_empty() && ev.tail != b"0";
                Ev {
                    ts_ns: ev.ts_ns,
                    sector: if is_flush { FLUSH_SECTOR } else { ev.sector },
                    nsectors: ev.nsectors,
                    dev: self.device_slot(sink, ev),
                    stream: NO_STREAM,
                    kind,
                    op: op as u8,
                    flags: if error { FLAG_ERROR } else { 0 },
                }
            }
        };
        let limits = self.limits;
        self.events
            .get_or_insert_with(|| EventSort::new(sink.output(), limits))
            .push(e)
    }

    /// The device's slot, its name interned once per change of device.
    #[inline(always)]
    fn device_slot(&mut self, sink: &mut Sink, ev: &BlockEvent) -> u32 {
        match self.last_dev {
            Some((a, b, slot)) if (a, b) == (ev.major, ev.minor) => slot,
            _ => {
                let slot = match self
                    .devices
                    .iter()
                    .position(|&(a, b, _)| (a, b) == (ev.major, ev.minor))
                {
                    Some(i) => i,
                    None => {
                        let id = sink
                            .writer
                            .intern_device(&format!("{},{}", ev.major, ev.minor));
                        self.devices.push((ev.major, ev.minor, id));
                        self.devices.len() - 1
                    }
                } as u32;
                self.last_dev = Some((ev.major, ev.minor, slot));
                slot
            }
        }
    }

    /// The issuing process's id. Consecutive I/Os mostly come from the same process:
    /// the last one is remembered, skipping the hash lookup.
    #[inline(always)]
    fn stream_id(&mut self, sink: &mut Sink, tail: &[u8]) -> StreamId {
        match &self.last_stream {
            Some((name, id)) if name.as_slice() == tail => *id,
            _ => {
                let id = sink.writer.intern_stream(&String::from_utf8_lossy(tail));
                self.last_stream = Some((tail.to_vec(), id));
                id
            }
        }
    }

    /// After the last part: pairs every event in time order and writes the records.
    pub fn finish(&mut self, ctx: &mut Ctx, sink: &mut Sink) -> Result<(), TraceError> {
        if let Some((maj, min)) = self.only {
            if !self.seen.contains(&(maj, min)) {
                return Err(self.device_absent(ctx, maj, min));
            }
        }
        let Some(events) = self.events.take() else {
            return Ok(());
        };
        let mut p = Pairing {
            pairer: Pairer::new(),
            early: Early::default(),
            devices: &self.devices,
            evicted: 0,
        };
        let runs = events.runs_written();
        events.drain(&mut |e| p.event(ctx, sink, e))?;
        p.early.expire(u64::MAX, ctx);
        let never = p.pairer.drain();
        let (evicted, never_n) = (p.evicted, never.len() as u64);
        for r in never {
            sink.push(r)?;
        }
        if runs > 0 {
            ctx.summary.note_reclassify_n(
                "events sorted into time order on disk before pairing (runs)",
                runs,
            );
        }
        if self.completions == 0 {
            // Nothing was pending: the capture has no completions (blktrace -a issue).
            ctx.summary.note_reclassify_n(
                "issues without completion: the capture has no completion events (e.g. blktrace -a issue)",
                evicted + never_n,
            );
            return Ok(());
        }
        ctx.summary.note_reclassify_n(
            "issues pending beyond the pairing bound (65536): kept without completion",
            evicted,
        );
        ctx.summary.note_reclassify_n(
            "issues never completed (capture ended): kept without completion",
            never_n,
        );
        Ok(())
    }

    /// `--device MAJ,MIN` names no device of the input: an error listing those it has.
    fn device_absent(&self, ctx: &Ctx, maj: u32, min: u32) -> TraceError {
        let present: Vec<String> = self.seen.iter().map(|(a, b)| format!("{a},{b}")).collect();
        TraceError::Input {
            path: ctx.path.clone(),
            message: if present.is_empty() {
                format!("--device {maj},{min}: the input has no block events at all")
            } else {
                format!(
                    "--device {maj},{min}: the input has no events of that device; it has {}",
                    present.join(", ")
                )
            },
            hint: match present.first() {
                Some(d) => format!("give --device one of the devices present (e.g. --device {d}), or drop it to import them all"),
                None => "is this the capture meant? (blkparse or tracefs text with D/C or block_rq_issue/complete events)".to_owned(),
            },
        }
    }
}

/// The pairing of one import's events, in time order.
struct Pairing<'a> {
    pairer: Pairer,
    early: Early,
    devices: &'a [(u32, u32, DeviceId)],
    /// Issues written without completion to bound the pending map.
    evicted: u64,
}

impl Pairing<'_> {
    fn event(&mut self, ctx: &mut Ctx, sink: &mut Sink, e: Ev) -> Result<(), TraceError> {
        if !self.early.is_empty() {
            self.early.expire(e.ts_ns, ctx);
        }
        let dev = u64::from(e.dev);
        match e.kind {
            Kind::Issue => self.issue(ctx, sink, e, dev),
            Kind::Requeue => {
                match self.pairer.requeue(dev, e.sector, e.nsectors) {
                    Some(_) => ctx.summary.note_drop(
                        "issues of requeued requests (R / block_rq_requeue): the request's next issue is the record",
                    ),
                    None => ctx
                        .summary
                        .note_ignore("requeues of requests not pending (issued before the capture started)"),
                }
                Ok(())
            }
            Kind::Complete => self.complete(ctx, sink, e, dev),
        }
    }

    fn issue(&mut self, ctx: &mut Ctx, sink: &mut Sink, e: Ev, dev: u64) -> Result<(), TraceError> {
        let op = Op::ALL[usize::from(e.op & 3)];
        let mut rec = if op == Op::Flush {
            IoRecord::new(op, 0, 0, e.ts_ns)
        } else {
            // Checked when the line was read (`issue_range`).
            IoRecord::new(op, e.sector * 512, e.nsectors * 512, e.ts_ns)
        };
        rec.device = Some(self.devices[e.dev as usize].2);
        rec.stream = (e.stream != NO_STREAM).then_some(StreamId(e.stream));
        if !self.early.is_empty() && self.early.take(dev, e.sector, e.nsectors).is_some() {
            // Its completion was stamped just before it (per-CPU clocks).
            rec.complete_ns = Some(rec.issue_ns);
            ctx.summary.note_reclassify(
                "completions stamped before their issue (per-CPU clock skew): service time 0",
            );
            return sink.push(rec);
        }
        for r in self.pairer.issue(dev, e.sector, e.nsectors, rec) {
            self.evicted += 1;
            sink.push(r)?;
        }
        Ok(())
    }

    fn complete(
        &mut self,
        ctx: &mut Ctx,
        sink: &mut Sink,
        e: Ev,
        dev: u64,
    ) -> Result<(), TraceError> {
        let t = e.ts_ns;
        let op = Op::ALL[usize::from(e.op & 3)];
        match self.pairer.complete(dev, e.sector, e.nsectors, t) {
            Completed::Done(rec, note) => {
                match note {
                    CompleteNote::Normal => {}
                    CompleteNote::ClockSkew => ctx.summary.note_reclassify(
                        "completions stamped before their issue (per-CPU clock skew): service time 0",
                    ),
                    CompleteNote::AfterPartial => ctx
                        .summary
                        .note_reclassify("requests completed in parts (split): kept as one record"),
                }
                if e.flags & FLAG_ERROR != 0 {
                    ctx.summary
                        .note_reclassify("requests completed with an error status (kept)");
                }
                sink.push(rec)?;
                // Nothing still to come was issued before the oldest pending issue or
                // (events come in time order) before now: write out what precedes
                // both, less an allowance for per-CPU clock skew.
                let w = self.pairer.oldest_pending_issue_ns().unwrap_or(t).min(t);
                sink.release_upto(w.saturating_sub(SKEW_ALLOWANCE_NS))?;
            }
            Completed::Partial => {}
            // The request that asked for a flush completes after the flush the kernel
            // issued for it (the flush itself was paired above): blkparse prints it as
            // `C WS <sector> [0]`, ftrace as `+ 0`.
            Completed::Unmatched if e.nsectors == 0 && op == Op::Write => ctx.summary.note_ignore(
                "zero-length write completions ending a flush sequence (FUA/preflush writes)",
            ),
            Completed::Unmatched => {
                if self.early.len() >= EARLY_MAX {
                    self.early.drop_oldest(ctx);
                }
                self.early.push(t, dev, e.sector, e.nsectors);
            }
        }
        Ok(())
    }
}

/// Completions with no pending issue, waiting [`EARLY_COMPLETION_NS`] for one (per-CPU
/// clock skew), oldest first.
#[derive(Default)]
struct Early {
    by_key: PairMap<Vec<(u64, u64)>>,
    order: VecDeque<(u64, u64, u64, u64)>,
    len: usize,
}

impl Early {
    fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn len(&self) -> usize {
        self.len
    }

    fn push(&mut self, t: u64, dev: u64, sector: u64, nsectors: u64) {
        self.by_key
            .entry((dev, sector))
            .or_default()
            .push((t, nsectors));
        self.order.push_back((t, dev, sector, nsectors));
        self.len += 1;
    }

    /// Removes the oldest waiting completion of this range; its time.
    fn take(&mut self, dev: u64, sector: u64, nsectors: u64) -> Option<u64> {
        let list = self.by_key.get_mut(&(dev, sector))?;
        let i = list.iter().position(|&(_, n)| n == nsectors)?;
        let (t, _) = list.remove(i);
        if list.is_empty() {
            self.by_key.remove(&(dev, sector));
        }
        self.len -= 1;
        Some(t)
    }

    /// Drops (counted) the completions that waited too long by `now`.
    fn expire(&mut self, now: u64, ctx: &mut Ctx) {
        while let Some(&(t, ..)) = self.order.front() {
            if now != u64::MAX && t.saturating_add(EARLY_COMPLETION_NS) >= now {
                break;
            }
            self.drop_oldest(ctx);
        }
    }

    fn drop_oldest(&mut self, ctx: &mut Ctx) {
        let Some((t, dev, sector, nsectors)) = self.order.pop_front() else {
            return;
        };
        // Gone already when an issue took it.
        if let Some(list) = self.by_key.get_mut(&(dev, sector)) {
            if let Some(i) = list.iter().position(|&e| e == (t, nsectors)) {
                list.remove(i);
                if list.is_empty() {
                    self.by_key.remove(&(dev, sector));
                }
                self.len -= 1;
                ctx.summary.note_drop(UNMATCHED);
            }
        }
    }
}

/// An issue's (op, pairing sector, sectors): a flush has neither; a write with no data
/// that asks for a preflush or FUA is recorded as a flush; None for other zero-length
/// requests (dropped, and counted). Checks that the range fits the store.
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
    if op == Op::Flush && ev.nsectors == 0 {
        return Ok(Some((op, FLUSH_SECTOR, 0)));
    }
    if op == Op::Flush {
        // A flush with sectors: recorded as a flush (offset and length 0), paired by
        // its range.
        return Ok(Some((op, ev.sector, ev.nsectors)));
    }
    ev.sector
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
        return Ok(Some((op, ev.sector, ev.nsectors)));
    }
    if op == Op::Write && (ev.rwbs.preflush || ev.rwbs.fua) {
        ctx.summary
            .note_reclassify("preflush or FUA writes with no data: recorded as flush");
        return Ok(Some((Op::Flush, FLUSH_SECTOR, 0)));
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
