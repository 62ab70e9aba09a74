//! Merging the per-CPU event streams into one time order, and pairing each issue with
//! its completion.
//!
//! An I/O issued on CPU 0 often completes on CPU 1, and the two CPUs' buffers are read
//! separately, so events are first put in global time order by [`Merger`] (a k-way
//! merge up to a watermark the caller knows is safe). [`Pairer`] then matches a
//! completion to the oldest pending issue with the same device and sector (FIFO per key)
//! and hands out I/Os in issue order, each once its completion is known, or once it has
//! waited longer than the timeout, or when too many are pending: those go out without a
//! completion time and are counted.

use crate::block::{op_for, BlockEvent, Comm};
use std::collections::hash_map::Entry;
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use storbench_trace::Op;

/// Events of several CPUs, each queue in time order, merged up to a watermark.
/// Bound: at most `max_buffered` events; beyond that the oldest go out regardless of the
/// watermark (counted in [`Merger::forced`]).
pub struct Merger<T> {
    queues: Vec<VecDeque<(u64, T)>>,
    buffered: usize,
    max_buffered: usize,
    forced: u64,
}

impl<T> Merger<T> {
    pub fn new(cpus: usize, max_buffered: usize) -> Self {
        assert!(cpus > 0 && max_buffered > 0);
        Merger {
            queues: (0..cpus).map(|_| VecDeque::new()).collect(),
            buffered: 0,
            max_buffered,
            forced: 0,
        }
    }

    pub fn push(&mut self, cpu: usize, ts: u64, item: T, out: &mut impl FnMut(u64, T)) {
        self.queues[cpu].push_back((ts, item));
        self.buffered += 1;
        while self.buffered > self.max_buffered {
            self.forced += 1;
            self.pop_min(u64::MAX, out);
        }
    }

    /// Hands out, in time order, every event with a time at or before `watermark`.
    pub fn drain_until(&mut self, watermark: u64, out: &mut impl FnMut(u64, T)) {
        while self.pop_min(watermark, out) {}
    }

    pub fn drain_all(&mut self, out: &mut impl FnMut(u64, T)) {
        self.drain_until(u64::MAX, out);
        assert_eq!(self.buffered, 0);
    }

    fn pop_min(&mut self, watermark: u64, out: &mut impl FnMut(u64, T)) -> bool {
        let mut best: Option<(usize, u64)> = None;
        for (i, q) in self.queues.iter().enumerate() {
            if let Some(&(ts, _)) = q.front() {
                if ts <= watermark && best.is_none_or(|(_, b)| ts < b) {
                    best = Some((i, ts));
                }
            }
        }
        let Some((i, _)) = best else { return false };
        let (ts, item) = self.queues[i].pop_front().expect("queue had a front");
        self.buffered -= 1;
        out(ts, item);
        true
    }

    pub fn buffered(&self) -> usize {
        self.buffered
    }

    /// Events handed out early because the buffer was full (their order may be off).
    pub fn forced(&self) -> u64 {
        self.forced
    }
}

/// One recorded I/O, times in the trace clock (CLOCK_MONOTONIC ns).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PairedIo {
    pub issue_ns: u64,
    pub complete_ns: Option<u64>,
    pub offset_bytes: u64,
    pub len_bytes: u64,
    pub op: Op,
    /// Kernel dev_t.
    pub dev: u32,
    pub comm: Comm,
    pub pid: i32,
}

/// Counters of the pairing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PairStats {
    pub issues: u64,
    pub completes: u64,
    /// Completions without a pending issue (issued before recording started, or lost).
    pub unmatched_completes: u64,
    /// I/Os written without a completion (still in flight at the end, timed out, or
    /// pushed out by the pending bound).
    pub incomplete: u64,
    /// Completions with a non-zero error.
    pub errors: u64,
    pub requeues: u64,
    /// Issues of requests that are not read/write/trim/flush (RWBS `N`: write-zeroes,
    /// zone and driver commands; unknown strings).
    pub skipped_other: u64,
    /// Of those, requests with sectors: write-zeroes (or zone append), which write the
    /// device but have no op in the trace; and their bytes.
    pub write_zeroes: u64,
    pub write_zeroes_bytes: u64,
    /// Completions of the original request of a flush sequence (a read/write RWBS with
    /// 0 sectors): the device saw the flush requests and the data, not this one.
    pub flush_sequence_completes: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PairConfig {
    /// Bound on I/Os waiting for their completion (or for earlier ones to complete).
    pub max_pending: usize,
    /// An I/O waiting longer than this (in event time) goes out without a completion.
    pub timeout_ns: u64,
}

impl Default for PairConfig {
    fn default() -> Self {
        PairConfig {
            max_pending: 1 << 20,
            timeout_ns: 30_000_000_000,
        }
    }
}

struct Slot {
    io: PairedIo,
    /// `None`: not recorded (other op, or requeued); still holds its place in the order.
    op: Option<Op>,
    key: Key,
    done: bool,
}

/// The pairing key: device, sector, and whether the request has no sectors (so a
/// flush never takes a data request's completion, or the reverse). A flush is issued
/// with sector 0 but completes with sector `u64::MAX` (the request's "no position",
/// Linux 6.x): both map to 0.
type Key = (u32, u64, bool);

fn key(dev: u32, sector: u64, nr_sector: u32) -> Key {
    (
        dev,
        if sector == u64::MAX { 0 } else { sector },
        nr_sector == 0,
    )
}

/// Issues waiting for their completion under one key: nearly always one, so without
/// an allocation.
enum Waiting {
    One(u64),
    /// Never empty.
    Many(VecDeque<u64>),
}

impl Waiting {
    fn push(&mut self, seq: u64) {
        match self {
            Waiting::One(first) => *self = Waiting::Many(VecDeque::from([*first, seq])),
            Waiting::Many(q) => q.push_back(seq),
        }
    }
}

/// A multiply-rotate hash (FxHash) for the recorder's maps: their keys are sectors and
/// names from the kernel, not input chosen to collide, and SipHash cost a fifth of the
/// recorder's CPU time at 200K events/s.
#[derive(Clone, Copy, Default)]
pub struct FastHasher(u64);

impl FastHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(w));
        }
    }
    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }
    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }
    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }
    fn write_i32(&mut self, n: i32) {
        self.add(n as u32 as u64);
    }
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// Pairs time-ordered block events into I/Os, handed out in issue order.
pub struct Pairer {
    cfg: PairConfig,
    order: VecDeque<Slot>,
    /// Sequence number of `order[0]`.
    base: u64,
    pending: HashMap<Key, Waiting, BuildHasherDefault<FastHasher>>,
    stats: PairStats,
}

impl Pairer {
    pub fn new(cfg: PairConfig) -> Pairer {
        assert!(cfg.max_pending > 0);
        Pairer {
            cfg,
            order: VecDeque::new(),
            base: 0,
            pending: HashMap::default(),
            stats: PairStats::default(),
        }
    }

    pub fn stats(&self) -> PairStats {
        self.stats
    }

    pub fn pending(&self) -> usize {
        self.order.len()
    }

    /// Feeds one event (events must come in time order).
    pub fn push(&mut self, ts: u64, ev: BlockEvent, out: &mut impl FnMut(PairedIo)) {
        match ev {
            BlockEvent::Issue(i) => {
                self.stats.issues += 1;
                let op = i.rwbs.as_ref().and_then(|r| op_for(r, i.nr_sector));
                if op.is_none() {
                    self.stats.skipped_other += 1;
                    if i.nr_sector > 0 && i.rwbs.is_some_and(|r| r.op.is_none()) {
                        self.stats.write_zeroes += 1;
                        self.stats.write_zeroes_bytes += u64::from(i.nr_sector) * 512;
                    }
                }
                let op_or_read = op.unwrap_or(Op::Read);
                let len_bytes = if op_or_read == Op::Flush {
                    0
                } else {
                    u64::from(i.nr_sector) * 512
                };
                let key = key(i.dev, i.sector, i.nr_sector);
                let seq = self.base + self.order.len() as u64;
                self.order.push_back(Slot {
                    io: PairedIo {
                        issue_ns: ts,
                        complete_ns: None,
                        offset_bytes: i.sector.saturating_mul(512),
                        len_bytes,
                        op: op_or_read,
                        dev: i.dev,
                        comm: i.comm,
                        pid: i.pid,
                    },
                    op,
                    key,
                    done: false,
                });
                match self.pending.entry(key) {
                    Entry::Vacant(v) => {
                        v.insert(Waiting::One(seq));
                    }
                    Entry::Occupied(mut o) => o.get_mut().push(seq),
                }
                while self.order.len() > self.cfg.max_pending {
                    self.evict_head(out);
                }
            }
            BlockEvent::Complete(c) => {
                self.stats.completes += 1;
                // blk-flush ends a preflush/FUA request that it carried out as separate
                // flush and data requests with a completion of its own (0 sectors, the
                // original's RWBS without F); only the requests it issued are recorded.
                if c.nr_sector == 0
                    && matches!(c.rwbs.and_then(|r| r.op), Some(Op::Read | Op::Write))
                {
                    self.stats.flush_sequence_completes += 1;
                    return;
                }
                match self.take_pending(key(c.dev, c.sector, c.nr_sector), false) {
                    Some(idx) => {
                        let slot = &mut self.order[idx];
                        slot.io.complete_ns = Some(ts);
                        slot.done = true;
                        if c.error != 0 {
                            self.stats.errors += 1;
                        }
                        self.emit_ready(out);
                    }
                    None => self.stats.unmatched_completes += 1,
                }
            }
            BlockEvent::Requeue(c) => {
                self.stats.requeues += 1;
                // The request goes back to the queue and will be issued again: forget
                // this issue (the newest with that key).
                if let Some(idx) = self.take_pending(key(c.dev, c.sector, c.nr_sector), true) {
                    let slot = &mut self.order[idx];
                    slot.op = None;
                    slot.done = true;
                    self.emit_ready(out);
                }
            }
        }
    }

    /// Removes the oldest (or newest) pending sequence number of a key; its index in `order`.
    fn take_pending(&mut self, key: Key, newest: bool) -> Option<usize> {
        let Entry::Occupied(mut o) = self.pending.entry(key) else {
            return None;
        };
        let seq = match o.get_mut() {
            Waiting::One(seq) => {
                let seq = *seq;
                o.remove();
                seq
            }
            Waiting::Many(q) => {
                let seq = if newest { q.pop_back() } else { q.pop_front() }.expect("never empty");
                if q.is_empty() {
                    o.remove();
                }
                seq
            }
        };
        assert!(seq >= self.base, "pending seq {seq} already handed out");
        Some((seq - self.base) as usize)
    }

    fn emit_ready(&mut self, out: &mut impl FnMut(PairedIo)) {
        while self.order.front().is_some_and(|s| s.done) {
            let slot = self.order.pop_front().expect("front exists");
            self.base += 1;
            if let Some(op) = slot.op {
                out(PairedIo { op, ..slot.io });
            }
        }
    }

    /// Hands out the oldest I/O without its completion.
    fn evict_head(&mut self, out: &mut impl FnMut(PairedIo)) {
        let Some(head) = self.order.front_mut() else {
            return;
        };
        if !head.done {
            let key = head.key;
            head.done = true;
            if head.op.is_some() {
                self.stats.incomplete += 1;
            }
            let seq = self.base;
            if let Entry::Occupied(mut o) = self.pending.entry(key) {
                let empty = match o.get_mut() {
                    Waiting::One(s) => *s == seq,
                    Waiting::Many(q) => {
                        q.retain(|&s| s != seq);
                        q.is_empty()
                    }
                };
                if empty {
                    o.remove();
                }
            }
        }
        self.emit_ready(out);
    }

    /// Hands out every I/O issued before `now_ns - timeout` that is still waiting.
    pub fn expire(&mut self, now_ns: u64, out: &mut impl FnMut(PairedIo)) {
        let limit = now_ns.saturating_sub(self.cfg.timeout_ns);
        while self.order.front().is_some_and(|s| s.io.issue_ns < limit) {
            self.evict_head(out);
        }
    }

    /// Hands out everything left (at the end of recording).
    pub fn finish(&mut self, out: &mut impl FnMut(PairedIo)) {
        while !self.order.is_empty() {
            self.evict_head(out);
        }
        assert!(self.pending.is_empty(), "pending keys left after finish");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::{parse_rwbs, Complete, Issue};

    fn issue(sector: u64, nr: u32, rwbs: &str) -> BlockEvent {
        BlockEvent::Issue(Issue {
            dev: 7,
            sector,
            nr_sector: nr,
            bytes: Some(nr * 512),
            rwbs: parse_rwbs(rwbs.as_bytes()),
            comm: Comm::new(b"fio"),
            pid: 10,
        })
    }

    fn complete(sector: u64) -> BlockEvent {
        complete_n(sector, 8)
    }

    fn complete_n(sector: u64, nr_sector: u32) -> BlockEvent {
        BlockEvent::Complete(Complete {
            dev: 7,
            sector,
            nr_sector,
            error: 0,
            rwbs: None,
        })
    }

    fn run(p: &mut Pairer, evs: &[(u64, BlockEvent)]) -> Vec<PairedIo> {
        let mut v = Vec::new();
        for &(ts, ev) in evs {
            p.push(ts, ev, &mut |io| v.push(io));
        }
        v
    }

    #[test]
    fn pairs_and_hands_out_in_issue_order() {
        let mut p = Pairer::new(PairConfig::default());
        let out = run(
            &mut p,
            &[
                (100, issue(0, 8, "R")),
                (110, issue(8, 8, "W")),
                (150, complete(8)), // the second completes first: held back
                (170, complete(0)),
                (200, issue(16, 2048, "D")),
                (300, complete(16)),
            ],
        );
        assert_eq!(out.len(), 3);
        assert_eq!(
            (out[0].op, out[0].issue_ns, out[0].complete_ns),
            (Op::Read, 100, Some(170))
        );
        assert_eq!(
            (out[1].op, out[1].offset_bytes, out[1].len_bytes),
            (Op::Write, 4096, 4096)
        );
        assert_eq!(out[1].complete_ns, Some(150));
        assert_eq!((out[2].op, out[2].len_bytes), (Op::Trim, 2048 * 512));
        assert_eq!(p.pending(), 0);
        assert_eq!(p.stats().unmatched_completes, 0);
    }

    #[test]
    fn same_sector_pairs_fifo_and_flush_has_no_bytes() {
        let mut p = Pairer::new(PairConfig::default());
        let out = run(
            &mut p,
            &[
                (1, issue(0, 0, "FF")),
                (2, issue(0, 0, "FF")),
                (3, complete_n(0, 0)),
                (4, complete_n(u64::MAX, 0)),
                (5, complete(99)), // nothing pending there
            ],
        );
        assert_eq!(
            out.iter().map(|i| i.complete_ns).collect::<Vec<_>>(),
            vec![Some(3), Some(4)]
        );
        assert!(out.iter().all(|i| i.op == Op::Flush && i.len_bytes == 0));
        assert_eq!(p.stats().unmatched_completes, 1);
    }

    #[test]
    fn flush_sequences_pair_as_the_kernel_reports_them() {
        // Linux 6.18 on a loop device: the flush request issues at sector 0 and
        // completes at u64::MAX; then blk-flush completes the original request (WS, 0
        // sectors) which was never issued itself. A data write at sector 0 is pending
        // meanwhile and must not take that completion.
        let ws0 = |sector| {
            BlockEvent::Complete(Complete {
                dev: 7,
                sector,
                nr_sector: 0,
                error: 0,
                rwbs: parse_rwbs(b"WS"),
            })
        };
        let mut p = Pairer::new(PairConfig::default());
        let out = run(
            &mut p,
            &[
                (1, issue(0, 0, "FF")),
                (2, issue(0, 8, "WS")),
                (3, complete_n(u64::MAX, 0)),
                (4, ws0(0)),
                (6, complete(0)),
            ],
        );
        assert_eq!(out.len(), 2);
        assert_eq!((out[0].op, out[0].complete_ns), (Op::Flush, Some(3)));
        assert_eq!((out[1].op, out[1].complete_ns), (Op::Write, Some(6)));
        assert_eq!(p.stats().flush_sequence_completes, 1);
        assert_eq!(p.stats().unmatched_completes, 0);
    }

    #[test]
    fn other_ops_hold_order_but_are_not_written() {
        let mut p = Pairer::new(PairConfig::default());
        let out = run(
            &mut p,
            &[
                (1, issue(0, 8, "N")),
                (2, issue(8, 8, "R")),
                (3, complete(8)),
                (4, complete(0)),
            ],
        );
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].offset_bytes, 4096);
        assert_eq!(p.stats().skipped_other, 1);
        assert_eq!(
            (p.stats().write_zeroes, p.stats().write_zeroes_bytes),
            (1, 4096)
        );
        assert_eq!(p.stats().unmatched_completes, 0);
    }

    #[test]
    fn requeue_forgets_the_issue_and_the_reissue_pairs() {
        let mut p = Pairer::new(PairConfig::default());
        let out = run(
            &mut p,
            &[
                (1, issue(0, 8, "W")),
                (
                    2,
                    BlockEvent::Requeue(Complete {
                        dev: 7,
                        sector: 0,
                        nr_sector: 8,
                        error: 0,
                        rwbs: None,
                    }),
                ),
                (5, issue(0, 8, "W")),
                (9, complete(0)),
            ],
        );
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].issue_ns, out[0].complete_ns), (5, Some(9)));
        assert_eq!(p.stats().issues, 2);
        assert_eq!(p.stats().requeues, 1);
    }

    #[test]
    fn timeout_bound_and_finish_emit_incomplete() {
        let mut p = Pairer::new(PairConfig {
            max_pending: 2,
            timeout_ns: 100,
        });
        let mut out = run(
            &mut p,
            &[
                (1, issue(0, 8, "R")),
                (2, issue(8, 8, "R")),
                (3, issue(16, 8, "R")),
            ],
        );
        // The bound of 2 pushed the first out.
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].offset_bytes, out[0].complete_ns), (0, None));
        // A late completion of the evicted one is unmatched, not misattributed.
        out.extend(run(&mut p, &[(4, complete(0))]));
        assert_eq!(p.stats().unmatched_completes, 1);
        p.expire(103, &mut |io| out.push(io));
        assert_eq!(out.len(), 2, "issued at 2 < 103 - 100");
        p.finish(&mut |io| out.push(io));
        assert_eq!(out.len(), 3);
        assert_eq!(p.stats().incomplete, 3);
        assert!(out.iter().all(|i| i.complete_ns.is_none()));
    }

    #[test]
    fn merger_orders_across_cpus_up_to_watermark() {
        let mut m = Merger::new(2, 100);
        let mut got = Vec::new();
        let mut out = |ts: u64, x: char| got.push((ts, x));
        m.push(0, 10, 'a', &mut out);
        m.push(0, 30, 'c', &mut out);
        m.push(1, 20, 'b', &mut out);
        m.push(1, 40, 'd', &mut out);
        m.drain_until(30, &mut out);
        assert_eq!(got, vec![(10, 'a'), (20, 'b'), (30, 'c')]);
        assert_eq!(m.buffered(), 1);
        let mut rest = Vec::new();
        m.drain_all(&mut |ts, x| rest.push((ts, x)));
        assert_eq!(rest, vec![(40, 'd')]);
    }

    #[test]
    fn merger_bound_forces_oldest_out() {
        let mut m = Merger::new(2, 2);
        let mut got = Vec::new();
        for (cpu, ts) in [(0, 5), (1, 3), (0, 9)] {
            m.push(cpu, ts, (), &mut |ts, _| got.push(ts));
        }
        assert_eq!(got, vec![3]);
        assert_eq!(m.forced(), 1);
    }

    proptest::proptest! {
        /// Whatever the interleaving, every issued data I/O comes out exactly once, in
        /// issue order, and nothing stays pending.
        #[test]
        fn every_issue_comes_out_once(ops in proptest::collection::vec((0u64..8, proptest::bool::ANY), 1..200)) {
            let mut p = Pairer::new(PairConfig { max_pending: 16, timeout_ns: 1_000 });
            let mut out = Vec::new();
            let mut ts = 0;
            for &(sector, is_issue) in &ops {
                ts += 1;
                let ev = if is_issue { issue(sector, 8, "R") } else { complete(sector) };
                p.push(ts, ev, &mut |io| out.push(io));
            }
            p.finish(&mut |io| out.push(io));
            let issues = ops.iter().filter(|o| o.1).count();
            proptest::prop_assert_eq!(out.len(), issues);
            proptest::prop_assert!(out.windows(2).all(|w| w[0].issue_ns < w[1].issue_ns));
            let completed = out.iter().filter(|i| i.complete_ns.is_some()).count() as u64;
            let s = p.stats();
            proptest::prop_assert_eq!(completed + s.unmatched_completes, s.completes);
            proptest::prop_assert_eq!(completed + s.incomplete, s.issues);
            proptest::prop_assert!(out.iter().all(|i| i.complete_ns.is_none_or(|c| c > i.issue_ns)));
        }
    }
}
