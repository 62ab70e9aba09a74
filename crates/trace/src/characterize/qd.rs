//! Completion-based figures: busy time (all ops, reads, writes), service times, and
//! the queue depth: time at each QD, the QD each I/O was issued at, QD1 issues.
//!
//! The QD comes from a sweep of each batch in time order: the batch's completions are
//! sorted (the standard sort) and merged with those still outstanding (kept sorted),
//! and the issues walk that list, each taking the completions at or before it first
//! (intervals are half-open: an I/O completing at t is not outstanding at t). A rise
//! of the QD to `L` opens an interval at QD >= `L` (its start subtracted in slot `L`),
//! a fall from `L` closes one (its end added), so each slot sums the time at QD >= `L`
//! wrapping and exactly; the time at exactly `L` is the difference of two slots. An
//! I/O completing at its issue counts at the QD it would have had but adds no time.
//!
//! This replaced (issue 32) a calendar of the batch's issues (each completion's gap
//! looked up instead of sorted and merged, 600 lines): against this plain sweep it won
//! 1.10-1.18x on the whole `characterize` (10 M bench trace 0.458 against 0.540 CPU-s,
//! FIFO-like 0.434 against 0.479), under the 1.5x a hand-written part must win
//! (docs/benchmarks.md, "characterize: the QD calendar against a plain sort and
//! merge").

use super::hist::LogHist;
use super::QD_BUCKET_MIN;
use crate::model::Op;

/// QDs counted one by one; the last slot counts every QD at or above it (the open
/// histogram bucket starts there).
const QD_SLOTS: usize = 66;
const QD_OPEN: usize = QD_SLOTS - 1;
const _: () = assert!(QD_BUCKET_MIN[QD_BUCKET_MIN.len() - 1] as usize == QD_OPEN);
/// The slot of [`Completions::qd_slots`] for QDs past [`QD_OPEN`]: its time is never
/// read, its issues count in [`QD_OPEN`].
const ATLEAST_DUMMY: usize = QD_OPEN + 1;

#[derive(Clone)]
pub(super) struct Completions {
    pub(super) with_completion: u64,
    pub(super) last_complete_ns: u64,
    /// Busy time of reads and of writes: the union of [issue, complete) measured as
    /// it grows. Issues come sorted, so the part of an interval not covered by earlier
    /// ones is what lies past the latest completion so far. The busy time of all ops
    /// is the sweep's time at QD >= 1.
    busy_ns: [u64; 2],
    busy_end_ns: [u64; 2],
    /// Debug builds: the busy time of all ops as the union too, and its end, to
    /// check the sweep against.
    #[cfg(debug_assertions)]
    busy_all_union: [u64; 2],
    pub(super) service_sum_ns: u128,
    /// Service times of reads and writes.
    pub(super) service: LogHist,
    /// Completion times of outstanding I/Os (after the last issue swept), sorted.
    /// Bounded by the deepest queue the trace reaches.
    outstanding: Vec<u64>,
    /// Per QD slot L: the time at QD >= L, as (sum of interval ends) - (sum of
    /// starts), wrapping (see [`Completions::sweep`]), and the I/Os whose QD right
    /// after their issue (themselves included) is L; slot [`ATLEAST_DUMMY`] takes the
    /// QDs past [`QD_OPEN`]. Side by side, so that an issue updates one place.
    qd_slots: [QdSlot; ATLEAST_DUMMY + 1],
    /// The highest QD right after an issue, among those at [`QD_OPEN`] or more (the
    /// rest is read from [`Completions::qd_slots`]); set for all by `finish`.
    pub(super) max_qd: u32,
    /// I/Os issued when no other was outstanding; set by `finish`.
    pub(super) at_qd1: u64,
    // Scratch of one batch, each bounded by its rows plus the outstanding I/Os.
    issue: Vec<u64>,
    complete: Vec<u64>,
    ops: Vec<Op>,
    /// Effective completion times of a batch's rows.
    effective: Vec<u64>,
    /// The batch's completions that add to the QD, sorted; then merged with the
    /// outstanding ones.
    batch_ends: Vec<u64>,
    merged: Vec<u64>,
    service_batch: Vec<u64>,
}

/// Input rows with a known completion; `issue` already clamped to non-decreasing.
pub(super) struct Rows<'a> {
    pub(super) issue: &'a [u64],
    /// As recorded; the service time `complete - recorded issue` is kept for a
    /// clamped issue.
    pub(super) recorded_issue: &'a [u64],
    pub(super) complete: &'a [u64],
    pub(super) ops: &'a [Op],
    /// None when every row has a completion.
    pub(super) valid: Option<&'a [bool]>,
}

impl Completions {
    pub(super) fn new() -> Self {
        Completions {
            with_completion: 0,
            last_complete_ns: 0,
            busy_ns: [0; 2],
            busy_end_ns: [0; 2],
            #[cfg(debug_assertions)]
            busy_all_union: [0; 2],
            service_sum_ns: 0,
            service: LogHist::new(),
            outstanding: Vec::new(),
            qd_slots: [QdSlot::default(); ATLEAST_DUMMY + 1],
            max_qd: 0,
            at_qd1: 0,
            issue: Vec::new(),
            complete: Vec::new(),
            ops: Vec::new(),
            effective: Vec::new(),
            batch_ends: Vec::new(),
            merged: Vec::new(),
            service_batch: Vec::new(),
        }
    }

    pub(super) fn push(&mut self, rows: Rows) {
        let n = rows.issue.len();
        assert!(rows.recorded_issue.len() == n && rows.complete.len() == n);
        assert_eq!(rows.ops.len(), n);
        let (mut issue, mut complete, mut ops) = (
            std::mem::take(&mut self.issue),
            std::mem::take(&mut self.complete),
            std::mem::take(&mut self.ops),
        );
        match rows.valid {
            None => self.push_rows(rows.issue, rows.recorded_issue, rows.complete, rows.ops),
            Some(valid) => {
                assert_eq!(valid.len(), n);
                issue.clear();
                complete.clear();
                ops.clear();
                // Effective completions (see push_rows), so recorded = clamped issue.
                for i in (0..n).filter(|&i| valid[i]) {
                    let svc = rows.complete[i].saturating_sub(rows.recorded_issue[i]);
                    issue.push(rows.issue[i]);
                    complete.push(rows.issue[i].saturating_add(svc));
                    ops.push(rows.ops[i]);
                }
                self.push_rows(&issue, &issue, &complete, &ops);
            }
        }
        (self.issue, self.complete, self.ops) = (issue, complete, ops);
    }

    /// Busy time and service times; the effective completion of each row is its
    /// (clamped) issue plus its recorded service time.
    fn push_rows(&mut self, issue: &[u64], recorded_issue: &[u64], complete: &[u64], ops: &[Op]) {
        let m = issue.len();
        assert!(recorded_issue.len() == m && complete.len() == m && ops.len() == m);
        if m == 0 {
            return;
        }
        self.with_completion += m as u64;
        let mut eff_buf = std::mem::take(&mut self.effective);
        grow(&mut eff_buf, m);
        let eff = &mut eff_buf[..m];
        // Two loops, each with few enough values live to stay in registers.
        let (svc_sum, last) =
            effective(issue, recorded_issue, complete, eff, self.last_complete_ns);
        // Busy time of reads and of writes: each row of the class adds
        // max(E, c) - max(E, s), E the latest completion of the class so far (c >= s:
        // in a gap it adds c - s, else what lies past E). A row of the other class
        // takes 0 for both times and adds E - E. The terms are summed apart (wrapping;
        // the difference is exact), so no saturating subtraction: it compiled to a
        // branch here, mispredicted on the random order of reads and writes.
        let [mut e_r, mut e_w] = self.busy_end_ns;
        let (mut ends_r, mut starts_r, mut ends_w, mut starts_w) = (0u64, 0u64, 0u64, 0u64);
        let mut svc = std::mem::take(&mut self.service_batch);
        // Slot `data` is written before it is counted: grown, never cleared.
        grow(&mut svc, m);
        let mut data = 0;
        for ((&s, &c), &op) in issue.iter().zip(eff.iter()).zip(ops) {
            debug_assert!(c >= s);
            let (is_r, is_w) = (op == Op::Read, op == Op::Write);
            let (mask_r, mask_w) = (
                0u64.wrapping_sub(u64::from(is_r)),
                0u64.wrapping_sub(u64::from(is_w)),
            );
            starts_r = starts_r.wrapping_add(e_r.max(s & mask_r));
            e_r = e_r.max(c & mask_r);
            ends_r = ends_r.wrapping_add(e_r);
            starts_w = starts_w.wrapping_add(e_w.max(s & mask_w));
            e_w = e_w.max(c & mask_w);
            ends_w = ends_w.wrapping_add(e_w);
            // Compacts the service times of reads and writes.
            svc[data] = c - s;
            data += usize::from(is_r | is_w);
        }
        let [b_r, b_w] = self.busy_ns;
        self.busy_ns = [
            b_r + ends_r.wrapping_sub(starts_r),
            b_w + ends_w.wrapping_sub(starts_w),
        ];
        self.busy_end_ns = [e_r, e_w];
        #[cfg(debug_assertions)]
        for (&s, &c) in issue.iter().zip(eff.iter()) {
            let [busy, end] = &mut self.busy_all_union;
            *busy += c.saturating_sub(s.max(*end));
            *end = (*end).max(c);
        }
        self.service.add_slice(&svc[..data]);
        self.service_batch = svc;
        self.service_sum_ns += svc_sum;
        self.last_complete_ns = last;
        self.sweep(issue, &eff_buf[..m]);
        self.effective = eff_buf;
    }

    /// The QD sweep over this batch's issues and every completion up to the last one
    /// (see the module docs).
    fn sweep(&mut self, issue: &[u64], complete: &[u64]) {
        let m = issue.len();
        assert!(m >= 1 && complete.len() == m);
        // The batch's completions that add to the QD (an I/O completing at its issue is
        // never outstanding), sorted, merged with those outstanding.
        let mut ends = std::mem::take(&mut self.batch_ends);
        ends.clear();
        ends.extend(
            issue
                .iter()
                .zip(complete)
                .filter(|(s, c)| c > s)
                .map(|(_, &c)| c),
        );
        ends.sort_unstable();
        let mut merged = std::mem::take(&mut self.merged);
        merged.clear();
        merged.reserve(self.outstanding.len() + ends.len());
        let (mut a, mut b) = (0, 0);
        let (out, new) = (&self.outstanding, &ends);
        while a < out.len() && b < new.len() {
            if out[a] <= new[b] {
                merged.push(out[a]);
                a += 1;
            } else {
                merged.push(new[b]);
                b += 1;
            }
        }
        merged.extend_from_slice(&out[a..]);
        merged.extend_from_slice(&new[b..]);
        // Walk: before issue i, the completions at or before it; a completion of a
        // later issue is after that issue, so never taken too early.
        let slots = &mut self.qd_slots;
        let mut qd = self.outstanding.len();
        let mut next = 0;
        let mut max_qd = 0;
        for (&s, &c) in issue.iter().zip(complete) {
            while next < merged.len() && merged[next] <= s {
                let slot = &mut slots[qd.min(ATLEAST_DUMMY)];
                slot.atleast_ns = slot.atleast_ns.wrapping_add(merged[next]);
                qd -= 1;
                next += 1;
            }
            let at = qd + 1;
            let slot = &mut slots[at.min(ATLEAST_DUMMY)];
            slot.issued += 1;
            if c > s {
                slot.atleast_ns = slot.atleast_ns.wrapping_sub(s);
                qd = at;
            }
            if at >= QD_OPEN {
                max_qd = max_qd.max(at);
            }
        }
        debug_assert_eq!(qd, merged.len() - next);
        self.max_qd = self.max_qd.max(u32::try_from(max_qd).unwrap_or(u32::MAX));
        self.outstanding.clear();
        self.outstanding.extend_from_slice(&merged[next..]);
        (self.batch_ends, self.merged) = (ends, merged);
    }

    /// Retires what is still outstanding; the busy time (all, reads, writes), the
    /// busy time per QD bucket and the issues per QD bucket.
    pub(super) fn finish(&mut self) -> ([u64; 3], Vec<u64>, Vec<u64>) {
        self.outstanding.sort_unstable();
        let n = self.outstanding.len();
        for (k, &c) in self.outstanding.iter().enumerate() {
            let close = (n - k).min(ATLEAST_DUMMY);
            let slot = &mut self.qd_slots[close];
            slot.atleast_ns = slot.atleast_ns.wrapping_add(c);
        }
        self.outstanding.clear();
        // Time at QD >= L, then at exactly L (the open slot: at QD_OPEN or more).
        let atleast = self.qd_slots.map(|x| x.atleast_ns);
        let mut qd_issued = self.qd_slots.map(|x| x.issued);
        qd_issued[QD_OPEN] += qd_issued[ATLEAST_DUMMY];
        let mut qd_time_ns = [0u64; QD_SLOTS];
        for qd in 1..QD_SLOTS {
            qd_time_ns[qd] = if qd == QD_OPEN {
                atleast[qd]
            } else {
                atleast[qd].wrapping_sub(atleast[qd + 1])
            };
        }
        self.at_qd1 = qd_issued[1];
        // Below the open slot, the highest QD any issue was counted at.
        let counted = (1..QD_OPEN).rev().find(|&qd| qd_issued[qd] > 0);
        self.max_qd = self.max_qd.max(counted.map_or(0, |qd| qd as u32));
        let bucket_of = |qd: usize| {
            QD_BUCKET_MIN
                .iter()
                .rposition(|&lo| lo as usize <= qd)
                .expect("qd >= 1")
        };
        let mut time = vec![0u64; QD_BUCKET_MIN.len()];
        let mut issued = vec![0u64; QD_BUCKET_MIN.len()];
        for qd in 1..QD_SLOTS {
            time[bucket_of(qd)] += qd_time_ns[qd];
            issued[bucket_of(qd)] += qd_issued[qd];
        }
        #[cfg(debug_assertions)]
        assert_eq!(
            atleast[1], self.busy_all_union[0],
            "QD sweep and interval union disagree"
        );
        let [busy_r, busy_w] = self.busy_ns;
        ([atleast[1], busy_r, busy_w], time, issued)
    }
}

/// One QD slot of [`Completions::qd_slots`].
#[derive(Clone, Copy, Default)]
struct QdSlot {
    atleast_ns: u64,
    issued: u64,
}

/// The effective completions of [`Completions::push_rows`] into `eff`, with the sum
/// of their service times and the latest of `last` and them.
#[inline(always)]
fn effective(
    issue: &[u64],
    recorded_issue: &[u64],
    complete: &[u64],
    eff: &mut [u64],
    last: u64,
) -> (u128, u64) {
    let (mut svc_sum, mut last) = (0u128, last);
    if std::ptr::eq(issue, recorded_issue) {
        // No issue was clamped: the completion, or the issue for one recorded
        // before it.
        for ((e, &s), &c) in eff.iter_mut().zip(issue).zip(complete) {
            *e = s.max(c);
            svc_sum += u128::from(*e - s);
            last = last.max(*e);
        }
    } else {
        for (((e, &s), &r), &c) in eff.iter_mut().zip(issue).zip(recorded_issue).zip(complete) {
            *e = s.saturating_add(c.saturating_sub(r));
            svc_sum += u128::from(*e - s);
            last = last.max(*e);
        }
    }
    (svc_sum, last)
}

/// Makes `v` at least `n` long, keeping what it holds.
fn grow<T: Copy + Default>(v: &mut Vec<T>, n: usize) {
    if v.len() < n {
        v.resize(n, T::default());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_qd_and_qd1_around_the_open_slot() {
        // `depth` I/Os issued 1 ns apart, all outstanding until 10 us: the QD climbs
        // to `depth`, one issue at each QD from 1. Below the open slot the maximum
        // comes from the per-slot counts, at and past it from the issues' pass.
        for depth in [1u64, 2, 64, 65, 66, 70, 200] {
            let issue: Vec<u64> = (0..depth).collect();
            let complete = vec![10_000; depth as usize];
            let ops = vec![Op::Write; depth as usize];
            let mut c = Completions::new();
            c.push(Rows {
                issue: &issue,
                recorded_issue: &issue,
                complete: &complete,
                ops: &ops,
                valid: None,
            });
            let (busy, _, issued) = c.finish();
            assert_eq!(c.max_qd as u64, depth, "depth {depth}");
            assert_eq!(c.at_qd1, 1, "depth {depth}");
            assert_eq!(busy, [10_000, 0, 10_000], "depth {depth}");
            // The open bucket (65 and up) holds the issues at QD 65 and past it.
            assert_eq!(issued[QD_BUCKET_MIN.len() - 1], depth.saturating_sub(64));
            assert_eq!(issued.iter().sum::<u64>(), depth);
        }
    }
}
