//! Completion-based figures: busy time (all ops, reads, writes), service times, and
//! the queue depth: time at each QD, the QD each I/O was issued at, QD1 issues.
//!
//! The QD is swept over the events in time order: issues come sorted; the batch's
//! completions (with those still outstanding from earlier batches) are sorted (by
//! insertion when nearly in order, else by radix) and merged with them in a
//! branch-free loop, cut into parts swept side by side. Intervals are half-open: an
//! I/O completing at t is not outstanding at t, so a completion at t is taken before
//! an issue at t.
//!
//! Measured and rejected: a min-heap of the outstanding completion times (no sort; a
//! push and a pop per I/O) took 1.68 CPU-s for the 10 M-I/O bench trace (QD ~14,
//! completions far out of order) against 1.13 for sort and merge, best of 5: its
//! sift loops branch unpredictably. 2 or 8 sweep lanes were slower than 4.

use super::hist::LogHist;
use super::sort::{insertion_sort_within, radix_sort_by_key};
use super::QD_BUCKET_MIN;
use crate::model::Op;

/// QDs counted one by one; the last slot counts every QD at or above it (the open
/// histogram bucket starts there).
const QD_SLOTS: usize = 66;
const QD_OPEN: usize = QD_SLOTS - 1;
const _: () = assert!(QD_BUCKET_MIN[QD_BUCKET_MIN.len() - 1] as usize == QD_OPEN);

#[derive(Clone)]
pub(super) struct Completions {
    pub(super) with_completion: u64,
    pub(super) last_complete_ns: u64,
    /// Busy time per class (all ops, reads, writes): the union of [issue, complete)
    /// measured as it grows. Issues come sorted, so the part of an interval not
    /// covered by earlier ones is what lies past the latest completion so far.
    busy_ns: [u64; 3],
    busy_end_ns: [u64; 3],
    pub(super) service_sum_ns: u128,
    /// Service times of reads and writes.
    pub(super) service: LogHist,
    /// Completion times of outstanding I/Os, ascending: those after the last issue
    /// swept. Bounded by the deepest queue the trace reaches.
    outstanding: Vec<u64>,
    /// Time cursor of the QD sweep.
    sweep_ns: u64,
    /// Time at each QD (slot 0: idle, not reported).
    qd_time_ns: [u64; QD_SLOTS],
    /// I/Os by the QD right after their issue (themselves included).
    qd_issued: [u64; QD_SLOTS + 1],
    pub(super) max_qd: u32,
    pub(super) at_qd1: u64,
    // Scratch of one batch.
    issue: Vec<u64>,
    complete: Vec<u64>,
    ops: Vec<Op>,
    events: Vec<u64>,
    sort_scratch: Vec<u64>,
    sort_counts: Vec<u32>,
    /// Batches still to sort by radix before insertion is tried again.
    radix_batches_left: u32,
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
            busy_ns: [0; 3],
            busy_end_ns: [0; 3],
            service_sum_ns: 0,
            service: LogHist::new(),
            outstanding: Vec::new(),
            sweep_ns: 0,
            qd_time_ns: [0; QD_SLOTS],
            qd_issued: [0; QD_SLOTS + 1],
            max_qd: 0,
            at_qd1: 0,
            issue: Vec::new(),
            complete: Vec::new(),
            ops: Vec::new(),
            events: Vec::new(),
            sort_scratch: Vec::new(),
            sort_counts: Vec::new(),
            radix_batches_left: 0,
            service_batch: Vec::new(),
        }
    }

    pub(super) fn push(&mut self, rows: Rows) {
        let n = rows.issue.len();
        assert!(rows.recorded_issue.len() == n && rows.complete.len() == n);
        assert_eq!(rows.ops.len(), n);
        // Effective completion: clamped issue + recorded service time.
        let (mut issue, mut complete, mut ops) = (
            std::mem::take(&mut self.issue),
            std::mem::take(&mut self.complete),
            std::mem::take(&mut self.ops),
        );
        issue.clear();
        complete.clear();
        ops.clear();
        let eff = |i: usize| {
            let svc = rows.complete[i].saturating_sub(rows.recorded_issue[i]);
            rows.issue[i].saturating_add(svc)
        };
        let (iv, ov): (&[u64], &[Op]) = match rows.valid {
            None => {
                complete.extend((0..n).map(eff));
                (rows.issue, rows.ops)
            }
            Some(valid) => {
                assert_eq!(valid.len(), n);
                for i in (0..n).filter(|&i| valid[i]) {
                    issue.push(rows.issue[i]);
                    complete.push(eff(i));
                    ops.push(rows.ops[i]);
                }
                (&issue, &ops)
            }
        };
        self.push_rows(iv, &complete, ov);
        (self.issue, self.complete, self.ops) = (issue, complete, ops);
    }

    #[inline(never)]
    fn push_rows(&mut self, issue: &[u64], complete: &[u64], ops: &[Op]) {
        let m = issue.len();
        if m == 0 {
            return;
        }
        self.with_completion += m as u64;
        let mut svc_sum = 0u128;
        let mut last = self.last_complete_ns;
        let [mut e_all, mut e_r, mut e_w] = self.busy_end_ns;
        let [mut b_all, mut b_r, mut b_w] = self.busy_ns;
        let mut svc = std::mem::take(&mut self.service_batch);
        svc.clear();
        svc.resize(m, 0);
        let mut data = 0;
        for k in 0..m {
            let (s, c, op) = (issue[k], complete[k], ops[k]);
            svc_sum += u128::from(c - s);
            last = last.max(c);
            b_all += c.saturating_sub(s.max(e_all));
            e_all = e_all.max(c);
            let (is_r, is_w) = (op == Op::Read, op == Op::Write);
            b_r += if is_r {
                c.saturating_sub(s.max(e_r))
            } else {
                0
            };
            e_r = if is_r { e_r.max(c) } else { e_r };
            b_w += if is_w {
                c.saturating_sub(s.max(e_w))
            } else {
                0
            };
            e_w = if is_w { e_w.max(c) } else { e_w };
            // Compacts the service times of reads and writes.
            svc[data] = c - s;
            data += usize::from(is_r | is_w);
        }
        self.service.add_slice(&svc[..data]);
        self.service_batch = svc;
        self.service_sum_ns += svc_sum;
        self.last_complete_ns = last;
        self.busy_end_ns = [e_all, e_r, e_w];
        self.busy_ns = [b_all, b_r, b_w];
        self.sweep(issue, complete);
    }

    /// The QD sweep over this batch's issues and every completion up to the last one.
    fn sweep(&mut self, issue: &[u64], complete: &[u64]) {
        // Completions still ahead: those outstanding, plus this batch's (an I/O
        // completing at its issue is never outstanding).
        let mut ev = std::mem::take(&mut self.events);
        ev.clear();
        ev.extend_from_slice(&self.outstanding);
        ev.extend(
            issue
                .iter()
                .zip(complete)
                .filter(|(s, c)| c > s)
                .map(|(_, &c)| c),
        );
        // Insertion first while it keeps working (completions about in order), else
        // radix, retrying insertion after a few batches: speed only, the same order.
        // A one-pass count of descents turns away batches far out of order before any
        // insertion work (the bench trace has ~0.46 per completion, a device
        // completing about in order ~0.08).
        let sorted = self.radix_batches_left == 0
            && descents(&ev) <= ev.len() / 4
            && insertion_sort_within(&mut ev, INSERTION_MOVES_PER_ITEM);
        if !sorted {
            self.radix_batches_left = match self.radix_batches_left {
                0 => RADIX_BATCHES_AFTER_MISS,
                n => n - 1,
            };
            radix_sort_by_key(
                &mut ev,
                &mut self.sort_scratch,
                &mut self.sort_counts,
                |&x| x,
            );
        }
        let m = issue.len();
        // Completions retired in this batch: those not after its last issue.
        let retired = ev.partition_point(|&c| c <= issue[m - 1]);
        let events = m + retired;
        // The merged sequence cut into SWEEP_LANES parts swept side by side: each step
        // of one part waits on its own previous step only, so the parts overlap.
        let mut lanes: [Lane; SWEEP_LANES] = std::array::from_fn(|_| Lane::default());
        let (mut i0, mut j0) = (0, 0);
        let mut q = self.outstanding.len();
        let mut cur = self.sweep_ns;
        for (k, lane) in lanes.iter_mut().enumerate() {
            let (i1, j1) = merge_split(issue, &ev[..retired], events * (k + 1) / SWEEP_LANES);
            *lane = Lane {
                i: i0,
                j: j0,
                i_end: i1,
                j_end: j1,
                q,
                cur,
                ..Lane::default()
            };
            let added = (i0..i1).filter(|&i| complete[i] > issue[i]).count();
            q = q + added - (j1 - j0);
            if i1 > i0 {
                cur = cur.max(issue[i1 - 1]);
            }
            if j1 > j0 {
                cur = cur.max(ev[j1 - 1]);
            }
            (i0, j0) = (i1, j1);
        }
        assert_eq!((i0, j0), (m, retired));
        let steps = lanes.map(|l| (l.i_end - l.i) + (l.j_end - l.j));
        let common = steps.iter().copied().min().unwrap_or(0);
        for _ in 0..common {
            for lane in lanes.iter_mut() {
                lane.step(issue, complete, &ev);
            }
        }
        for (lane, &n) in lanes.iter_mut().zip(&steps) {
            for _ in common..n {
                lane.step(issue, complete, &ev);
            }
        }
        for lane in &lanes {
            debug_assert_eq!((lane.i, lane.j), (lane.i_end, lane.j_end));
            for (t, &x) in self.qd_time_ns.iter_mut().zip(&lane.time) {
                *t += x;
            }
            for (t, &x) in self.qd_issued.iter_mut().zip(&lane.issued) {
                *t += x;
            }
            self.at_qd1 += lane.at_qd1;
            self.max_qd = self
                .max_qd
                .max(u32::try_from(lane.max_qd).unwrap_or(u32::MAX));
        }
        debug_assert_eq!(q, ev.len() - retired);
        self.outstanding.clear();
        self.outstanding.extend_from_slice(&ev[retired..]);
        self.events = ev;
        self.sweep_ns = cur;
    }

    /// Retires what is still outstanding; the busy time (all, reads, writes), the
    /// busy time per QD bucket and the issues per QD bucket.
    pub(super) fn finish(&mut self) -> ([u64; 3], Vec<u64>, Vec<u64>) {
        let n = self.outstanding.len();
        for (k, &c) in self.outstanding.iter().enumerate() {
            self.qd_time_ns[(n - k).min(QD_OPEN)] += c - self.sweep_ns;
            self.sweep_ns = c;
        }
        self.outstanding.clear();
        let bucket_of = |qd: usize| {
            QD_BUCKET_MIN
                .iter()
                .rposition(|&lo| lo as usize <= qd)
                .expect("qd >= 1")
        };
        let mut time = vec![0u64; QD_BUCKET_MIN.len()];
        let mut issued = vec![0u64; QD_BUCKET_MIN.len()];
        for qd in 1..QD_SLOTS {
            time[bucket_of(qd)] += self.qd_time_ns[qd];
            issued[bucket_of(qd)] += self.qd_issued[qd];
        }
        (self.busy_ns, time, issued)
    }
}

/// Completions are sorted by insertion when that moves at most this many per completion
/// (the bench trace, uniform 50-500 us service times at QD ~14, needs ~3.6 and goes to
/// the radix sort; a device completing about in order needs ~0.1).
const INSERTION_MOVES_PER_ITEM: usize = 2;
/// Elements smaller than the one before them.
fn descents(v: &[u64]) -> usize {
    v.iter()
        .zip(v.iter().skip(1))
        .map(|(a, b)| usize::from(b < a))
        .sum()
}

/// After insertion gave up, batches sorted by radix before it is tried again (bounds
/// the work wasted on traces where it never succeeds to a fraction of one batch in 9).
const RADIX_BATCHES_AFTER_MISS: u32 = 8;

/// Parts of a batch's merged event sequence swept side by side.
const SWEEP_LANES: usize = 4;

/// One part of the QD sweep: issues `i..i_end` merged with completions `j..j_end`,
/// starting at QD `q` and time `cur`.
#[derive(Clone, Copy)]
struct Lane {
    i: usize,
    j: usize,
    i_end: usize,
    j_end: usize,
    q: usize,
    cur: u64,
    time: [u64; QD_SLOTS],
    /// By QD right after the issue; the last slot counts completion steps.
    issued: [u64; QD_SLOTS + 1],
    at_qd1: u64,
    max_qd: usize,
}

impl Default for Lane {
    fn default() -> Self {
        Lane {
            i: 0,
            j: 0,
            i_end: 0,
            j_end: 0,
            q: 0,
            cur: 0,
            time: [0; QD_SLOTS],
            issued: [0; QD_SLOTS + 1],
            at_qd1: 0,
            max_qd: 0,
        }
    }
}

impl Lane {
    /// Takes the next event, branch-free: a completion when it is not after the next
    /// issue (a completion at t is not outstanding at t). Issue-only figures go to a
    /// dummy slot on completion steps.
    #[inline(always)]
    fn step(&mut self, issue: &[u64], complete: &[u64], ev: &[u64]) {
        let ii = self.i.min(self.i_end.max(1) - 1);
        let s = issue[ii];
        let c = ev.get(self.j).copied().unwrap_or(u64::MAX);
        let take_c = self.j < self.j_end && (self.i >= self.i_end || c <= s);
        let t = if take_c { c } else { s };
        self.time[self.q.min(QD_OPEN)] += t - self.cur;
        self.cur = t;
        let qd = self.q + 1;
        self.issued[if take_c { QD_SLOTS } else { qd.min(QD_OPEN) }] += 1;
        self.at_qd1 += u64::from(!take_c & (self.q == 0));
        self.max_qd = if take_c {
            self.max_qd
        } else {
            self.max_qd.max(qd)
        };
        let adds = !take_c & (complete[ii] > s);
        self.q = self.q + usize::from(adds) - usize::from(take_c);
        self.j += usize::from(take_c);
        self.i += usize::from(!take_c);
    }
}

/// Where the first `d` events of the merge of sorted `issue` and `ev` end: (issues,
/// completions) taken, with a completion taken before an issue at the same time.
fn merge_split(issue: &[u64], ev: &[u64], d: usize) -> (usize, usize) {
    assert!(d <= issue.len() + ev.len());
    // Taking `i` issues is too many when the completion left for later is not after
    // the last issue taken: monotone in `i`.
    let too_many = |i: usize| i > 0 && d - i < ev.len() && ev[d - i] <= issue[i - 1];
    let (mut lo, mut hi) = (d.saturating_sub(ev.len()), d.min(issue.len()));
    // Invariant: !too_many(lo); the answer is the largest such i in [lo, hi].
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if too_many(mid) {
            hi = mid - 1;
        } else {
            lo = mid;
        }
    }
    (lo, d - lo)
}
