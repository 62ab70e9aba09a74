//! Pairs issue events with completion events (ftrace block_rq_issue/complete,
//! blkparse D/C) by (device, sector, sectors), with a bounded map of pending issues.
//!
//! Messy captures, on purpose:
//! - a completion with no pending issue (the capture started while it was in flight)
//!   is dropped and counted;
//! - an issue never completed (the capture ended, or the event was lost) is kept
//!   without a completion time and counted;
//! - a partial completion (the kernel completes a request in parts: the completion
//!   covers the first sectors of a pending request) moves the pending request's key to
//!   the remaining part; the last part completes the record (original offset and length);
//! - a request requeued (blkparse `R`, ftrace `block_rq_requeue`) is no longer pending:
//!   the driver issues it again, and that issue is the record ([`Pairer::requeue`]);
//! - the same range issued again while an earlier issue of it is pending is another
//!   request (a re-read, or a capture with no completions at all): both are pending,
//!   and completions take them oldest first;
//! - a completion stamped before its issue (per-CPU clock skew) gets service time 0;
//! - merges happen before issue, so issued requests already are the merged ones.

use crate::model::IoRecord;
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

/// Hasher for the (device, sector) keys: a multiply-rotate per word (FxHash's mix).
/// Keys come from the trace being imported, so the worst case is a slow import of a
/// crafted file, never a wrong one; SipHash cost a tenth of block import time.
#[derive(Default)]
pub(crate) struct KeyHasher(u64);

impl Hasher for KeyHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    #[inline]
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    #[inline]
    fn finish(&self) -> u64 {
        // hashbrown takes its control bits from the top: fold the low bits in.
        self.0 ^ (self.0 >> 29)
    }
}

type KeyMap<V> = HashMap<(u64, u64), V, BuildHasherDefault<KeyHasher>>;

/// A map keyed by pairs of integers with [`KeyHasher`] (also `characterize`'s device
/// segments).
pub(crate) type PairMap<V> = HashMap<(u64, u64), V, BuildHasherDefault<KeyHasher>>;

/// The requests pending at one (device, sector): nearly always one, kept inline
/// (no allocation per request).
#[derive(Clone, Debug)]
enum PendList {
    One(Pending),
    Many(Vec<Pending>),
}

impl PendList {
    #[inline]
    fn as_slice(&self) -> &[Pending] {
        match self {
            PendList::One(p) => std::slice::from_ref(p),
            PendList::Many(v) => v,
        }
    }

    fn push(&mut self, p: Pending) {
        match self {
            PendList::One(a) => *self = PendList::Many(vec![*a, p]),
            PendList::Many(v) => v.push(p),
        }
    }

    /// Removes entry `i` (order of the rest kept); None when the list is now empty.
    fn remove(self, i: usize) -> (Pending, Option<PendList>) {
        match self {
            PendList::One(p) => {
                assert_eq!(i, 0);
                (p, None)
            }
            PendList::Many(mut v) => {
                let p = v.remove(i);
                let rest = match v.len() {
                    0 => None,
                    1 => Some(PendList::One(v[0])),
                    _ => Some(PendList::Many(v)),
                };
                (p, rest)
            }
        }
    }
}

/// Bound on pending issues; above it the oldest half is written out without completion.
pub const MAX_PENDING: usize = 1 << 16;

#[derive(Clone, Copy, Debug)]
struct Pending {
    nsectors: u64,
    seq: u64,
    rec: IoRecord,
}

#[derive(Default)]
pub struct Pairer {
    /// (device key, start sector) -> requests pending there (usually one).
    pending: KeyMap<PendList>,
    count: usize,
    seq: u64,
    max_pending: usize,
    /// Issues in sequence order from the oldest still pending: (issue ns, pending?).
    /// Entry i has sequence number `order_base + i`. Gives the oldest pending issue
    /// time (how far the importer may write out completed records) in O(1); bounded by
    /// [`ORDER_BOUND`] (past it the oldest entries are forgotten: their records then
    /// rely on the sink's reorder window, as every record did before).
    order: VecDeque<(u64, bool)>,
    order_base: u64,
}

/// Bound on [`Pairer`]'s issue-order queue (entries of 16 bytes).
pub const ORDER_BOUND: usize = 1 << 18;

/// What a completion matched.
#[derive(Debug, PartialEq)]
pub enum Completed {
    /// The request is complete: here is the record with `complete_ns` set.
    Done(IoRecord, CompleteNote),
    /// A part of a pending request completed; the rest is still pending.
    Partial,
    /// No pending request matches.
    Unmatched,
}

#[derive(Debug, PartialEq, Eq)]
pub enum CompleteNote {
    Normal,
    /// Completion stamped before issue; service time set to 0.
    ClockSkew,
    /// Completed in several parts.
    AfterPartial,
}

impl Pairer {
    pub fn new() -> Self {
        Self::with_max_pending(MAX_PENDING)
    }

    pub fn with_max_pending(max_pending: usize) -> Self {
        assert!(max_pending >= 2);
        Pairer {
            max_pending,
            ..Default::default()
        }
    }

    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Registers an issue. Returns the records evicted to bound memory (oldest first).
    pub fn issue(&mut self, dev: u64, sector: u64, nsectors: u64, rec: IoRecord) -> Vec<IoRecord> {
        let seq = self.seq;
        self.seq += 1;
        if self.order.is_empty() {
            self.order_base = seq;
        }
        self.order.push_back((rec.issue_ns, true));
        if self.order.len() > ORDER_BOUND {
            self.order.pop_front();
            self.order_base += 1;
        }
        let new = Pending { nsectors, seq, rec };
        match self.pending.entry((dev, sector)) {
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(PendList::One(new));
            }
            std::collections::hash_map::Entry::Occupied(mut e) => e.get_mut().push(new),
        }
        self.count += 1;
        if self.count > self.max_pending {
            self.evict_oldest_half()
        } else {
            Vec::new()
        }
    }

    /// A requeue of the request at (dev, sector, nsectors): its oldest pending issue is
    /// no longer pending (the request will be issued again). Returns that issue's
    /// record, or None when no such request is pending.
    pub fn requeue(&mut self, dev: u64, sector: u64, nsectors: u64) -> Option<IoRecord> {
        let key = (dev, sector);
        let i = self
            .pending
            .get(&key)?
            .as_slice()
            .iter()
            .enumerate()
            .filter(|(_, p)| p.nsectors == nsectors)
            .min_by_key(|(_, p)| p.seq)
            .map(|(i, _)| i)?;
        let p = self.take(key, i);
        self.count -= 1;
        self.retire(p.seq & !PARTIAL_BIT);
        Some(p.rec)
    }

    /// Marks issue `seq` no longer pending and drops retired entries at the front.
    fn retire(&mut self, seq: u64) {
        if let Some(i) = seq.checked_sub(self.order_base) {
            if let Some(e) = self.order.get_mut(i as usize) {
                e.1 = false;
            }
        }
        while let Some(&(_, false)) = self.order.front() {
            self.order.pop_front();
            self.order_base += 1;
        }
    }

    /// Issue time of the oldest request still pending (None when none is tracked):
    /// every record this pairer has yet to complete was issued at or after it, give
    /// or take clock skew between CPUs.
    pub fn oldest_pending_issue_ns(&self) -> Option<u64> {
        self.order.front().map(|&(t, _)| t)
    }

    fn evict_oldest_half(&mut self) -> Vec<IoRecord> {
        let mut seqs: Vec<u64> = self
            .pending
            .values()
            .flat_map(PendList::as_slice)
            .map(|p| p.seq & !PARTIAL_BIT)
            .collect();
        let mid = seqs.len() / 2;
        let (_, &mut cut, _) = seqs.select_nth_unstable(mid);
        let mut out = Vec::new();
        self.pending.retain(|_, list| {
            let mut keep: Vec<Pending> = Vec::new();
            for p in list.as_slice() {
                if p.seq & !PARTIAL_BIT < cut {
                    out.push((p.seq & !PARTIAL_BIT, p.rec));
                } else {
                    keep.push(*p);
                }
            }
            if keep.len() == list.as_slice().len() {
                return true;
            }
            match keep.len() {
                0 => false,
                1 => {
                    *list = PendList::One(keep[0]);
                    true
                }
                _ => {
                    *list = PendList::Many(keep);
                    true
                }
            }
        });
        self.count -= out.len();
        out.sort_unstable_by_key(|(s, _)| *s);
        for &(seq, _) in &out {
            self.retire(seq);
        }
        out.into_iter().map(|(_, r)| r).collect()
    }

    /// Matches a completion at `t_ns`.
    pub fn complete(&mut self, dev: u64, sector: u64, nsectors: u64, t_ns: u64) -> Completed {
        let key = (dev, sector);
        let Some(list) = self.pending.get(&key) else {
            return Completed::Unmatched;
        };
        // Exact match first (oldest first for equal keys, e.g. flushes at sector 0).
        let exact = list
            .as_slice()
            .iter()
            .enumerate()
            .filter(|(_, p)| p.nsectors == nsectors)
            .min_by_key(|(_, p)| p.seq)
            .map(|(i, _)| i);
        if let Some(i) = exact {
            let p = self.take(key, i);
            self.count -= 1;
            self.retire(p.seq & !PARTIAL_BIT);
            let mut rec = p.rec;
            let note = if t_ns < rec.issue_ns {
                rec.complete_ns = Some(rec.issue_ns);
                CompleteNote::ClockSkew
            } else {
                rec.complete_ns = Some(t_ns);
                if p.seq & PARTIAL_BIT != 0 {
                    CompleteNote::AfterPartial
                } else {
                    CompleteNote::Normal
                }
            };
            return Completed::Done(rec, note);
        }
        // Partial completion of a larger pending request starting here.
        let bigger = list
            .as_slice()
            .iter()
            .enumerate()
            .filter(|(_, p)| p.nsectors > nsectors && nsectors > 0)
            .min_by_key(|(_, p)| p.seq)
            .map(|(i, _)| i);
        if let Some(i) = bigger {
            let mut p = self.take(key, i);
            p.nsectors -= nsectors;
            p.seq |= PARTIAL_BIT;
            match self.pending.entry((dev, sector + nsectors)) {
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(PendList::One(p));
                }
                std::collections::hash_map::Entry::Occupied(mut e) => e.get_mut().push(p),
            }
            return Completed::Partial;
        }
        Completed::Unmatched
    }

    /// Removes entry `i` of the list at `key` (and the key when the list empties).
    fn take(&mut self, key: (u64, u64), i: usize) -> Pending {
        let list = self.pending.remove(&key).expect("key is pending");
        let (p, rest) = list.remove(i);
        if let Some(rest) = rest {
            self.pending.insert(key, rest);
        }
        p
    }

    /// Everything still pending, oldest first (the capture ended before they completed).
    pub fn drain(&mut self) -> Vec<IoRecord> {
        let mut all: Vec<(u64, IoRecord)> = self
            .pending
            .drain()
            .flat_map(|(_, l)| {
                l.as_slice()
                    .iter()
                    .map(|p| (p.seq & !PARTIAL_BIT, p.rec))
                    .collect::<Vec<_>>()
            })
            .collect();
        self.count = 0;
        self.order.clear();
        all.sort_unstable_by_key(|(s, _)| *s);
        all.into_iter().map(|(_, r)| r).collect()
    }
}

/// Marks a pending request that already had a partial completion (sequence numbers
/// never reach 2^63).
const PARTIAL_BIT: u64 = 1 << 63;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Op;

    #[test]
    fn oldest_pending_issue_follows_completions_requeues_and_evictions() {
        let mut p = Pairer::with_max_pending(4);
        let r = |t| IoRecord::new(Op::Read, 0, 4096, t);
        assert_eq!(p.oldest_pending_issue_ns(), None);
        p.issue(1, 0, 8, r(10));
        p.issue(1, 8, 8, r(20));
        p.issue(1, 16, 8, r(30));
        assert_eq!(p.oldest_pending_issue_ns(), Some(10));
        // Completing a younger one leaves the oldest.
        assert!(matches!(p.complete(1, 8, 8, 40), Completed::Done(..)));
        assert_eq!(p.oldest_pending_issue_ns(), Some(10));
        // Completing the oldest skips the already completed one.
        assert!(matches!(p.complete(1, 0, 8, 41), Completed::Done(..)));
        assert_eq!(p.oldest_pending_issue_ns(), Some(30));
        // A requeue of the pending request: the earlier issue no longer holds it back.
        assert!(p.requeue(1, 16, 8).is_some());
        p.issue(1, 16, 8, r(50));
        assert_eq!(p.oldest_pending_issue_ns(), Some(50));
        // A partial completion keeps the request pending.
        assert_eq!(p.complete(1, 16, 4, 55), Completed::Partial);
        assert_eq!(p.oldest_pending_issue_ns(), Some(50));
        // Eviction past the bound retires the evicted issues.
        for i in 0..4 {
            p.issue(2, i * 8, 8, r(60 + i));
        }
        assert_eq!(p.len(), 3, "5 pending > 4: the oldest half went out");
        assert_eq!(p.oldest_pending_issue_ns(), Some(61));
        p.drain();
        assert_eq!(p.oldest_pending_issue_ns(), None);
    }

    #[test]
    fn pairs_exact_partial_and_unmatched() {
        let mut p = Pairer::new();
        p.issue(1, 100, 16, IoRecord::new(Op::Write, 51200, 8192, 10));
        p.issue(1, 500, 8, IoRecord::new(Op::Read, 256000, 4096, 11));
        assert_eq!(p.complete(1, 999, 8, 12), Completed::Unmatched);
        assert_eq!(p.complete(1, 100, 8, 20), Completed::Partial);
        let Completed::Done(r, n) = p.complete(1, 108, 8, 30) else {
            panic!()
        };
        assert_eq!(
            (r.offset_bytes, r.len_bytes, r.complete_ns),
            (51200, 8192, Some(30))
        );
        assert_eq!(n, CompleteNote::AfterPartial);
        let Completed::Done(r, n) = p.complete(1, 500, 8, 5) else {
            panic!()
        };
        assert_eq!((r.complete_ns, n), (Some(11), CompleteNote::ClockSkew));
        assert!(p.is_empty());
    }

    #[test]
    fn eviction_bounds_memory_and_keeps_order() {
        let mut p = Pairer::with_max_pending(4);
        let mut evicted = Vec::new();
        for i in 0..10u64 {
            let ev = p.issue(1, i * 8, 8, IoRecord::new(Op::Read, i * 4096, 4096, i));
            evicted.extend(ev);
            assert!(p.len() <= 4);
        }
        let mut rest = p.drain();
        evicted.append(&mut rest);
        let t: Vec<u64> = evicted.iter().map(|r| r.issue_ns).collect();
        let mut sorted = t.clone();
        sorted.sort();
        assert_eq!(t, sorted);
        assert_eq!(t.len(), 10);
    }

    /// Issue 34: a range issued again while pending is another request (an issue-only
    /// capture's re-reads), never taken for a requeue; only a requeue event drops one.
    #[test]
    fn repeated_issues_pair_fifo_and_only_a_requeue_drops_one() {
        let mut p = Pairer::new();
        p.issue(1, 0, 0, IoRecord::new(Op::Flush, 0, 0, 1));
        p.issue(1, 0, 0, IoRecord::new(Op::Flush, 0, 0, 2));
        let Completed::Done(r, _) = p.complete(1, 0, 0, 3) else {
            panic!()
        };
        assert_eq!(r.issue_ns, 1);
        p.issue(1, 8, 8, IoRecord::new(Op::Read, 4096, 4096, 4));
        p.issue(1, 8, 8, IoRecord::new(Op::Read, 4096, 4096, 6));
        assert_eq!(p.len(), 3, "both reads pending");
        let Completed::Done(r, _) = p.complete(1, 8, 8, 7) else {
            panic!()
        };
        assert_eq!(r.issue_ns, 4, "the oldest completes first");
        assert_eq!(p.requeue(1, 8, 8).map(|r| r.issue_ns), Some(6));
        assert_eq!(p.requeue(1, 8, 8), None, "nothing left to requeue");
        assert_eq!(p.len(), 1);
    }
}
