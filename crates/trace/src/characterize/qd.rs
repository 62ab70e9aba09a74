//! Completion-based figures: busy time (all ops, reads, writes), service times, and
//! the queue depth: time at each QD, the QD each I/O was issued at, QD1 issues.
//!
//! The QD is found without walking the events one after another: the batch's
//! completions (with those still outstanding from earlier batches) are sorted (by
//! insertion when nearly in order, else one bucket pass and insertion, else radix),
//! merged with the sorted issues only to learn each event's place (four parts of the
//! merge stepped side by side), and then each issue and each completion adds to the
//! counters on its own, from its place (see [`Completions::sweep`]). Intervals are
//! half-open: an I/O completing at t is not outstanding at t, so a completion at t is
//! taken before an issue at t.
//!
//! Measured and rejected: a min-heap of the outstanding completion times (no sort; a
//! push and a pop per I/O) took 1.68 CPU-s for the 10 M-I/O bench trace (QD ~14,
//! completions far out of order) against 1.13 for sort and merge, best of 5: its
//! sift loops branch unpredictably. Walking the merged events with the QD carried
//! from one to the next (four parts side by side, each with its own counters) took
//! about 30% more QD time than counting from each event's place.

use super::hist::LogHist;
use super::sort::{bucket_sort_within, insertion_sort_within, radix_sort_by_key};
use super::QD_BUCKET_MIN;
use crate::model::Op;

/// QDs counted one by one; the last slot counts every QD at or above it (the open
/// histogram bucket starts there).
const QD_SLOTS: usize = 66;
const QD_OPEN: usize = QD_SLOTS - 1;
const _: () = assert!(QD_BUCKET_MIN[QD_BUCKET_MIN.len() - 1] as usize == QD_OPEN);
/// The slot of [`Completions::qd_atleast_ns`] for QDs past [`QD_OPEN`] and for issues
/// that add nothing (never read).
const ATLEAST_DUMMY: usize = QD_OPEN + 1;
/// Copies of the per-QD counters, used round robin.
const HIST_COPIES: usize = 4;

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
    /// Time at QD >= L in slot L, as (sum of interval ends) - (sum of starts),
    /// wrapping (see [`Completions::sweep`]); slot [`ATLEAST_DUMMY`] takes what is
    /// not counted. [`HIST_COPIES`] copies, so that neighbouring events do not wait
    /// on one another's update of the same slot.
    qd_atleast_ns: [[u64; ATLEAST_DUMMY + 1]; HIST_COPIES],
    /// I/Os by the QD right after their issue (themselves included), in copies.
    qd_issued: [[u64; QD_SLOTS]; HIST_COPIES],
    pub(super) max_qd: u32,
    pub(super) at_qd1: u64,
    // Scratch of one batch.
    issue: Vec<u64>,
    complete: Vec<u64>,
    ops: Vec<Op>,
    events: Vec<u64>,
    sort_scratch: Vec<u64>,
    sort_counts: Vec<u32>,
    /// Per issue, completions before it in the merged order; per completion, issues
    /// before it; per issue, adds (I/Os that become outstanding) before it.
    issue_rank: Vec<u32>,
    completion_after: Vec<u32>,
    adds_before: Vec<u32>,
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
            qd_atleast_ns: [[0; ATLEAST_DUMMY + 1]; HIST_COPIES],
            qd_issued: [[0; QD_SLOTS]; HIST_COPIES],
            max_qd: 0,
            at_qd1: 0,
            issue: Vec::new(),
            complete: Vec::new(),
            ops: Vec::new(),
            events: Vec::new(),
            sort_scratch: Vec::new(),
            sort_counts: Vec::new(),
            issue_rank: Vec::new(),
            completion_after: Vec::new(),
            adds_before: Vec::new(),
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
            // Masks, not branches: reads and writes come in no predictable order.
            let (mask_r, mask_w) = (
                0u64.wrapping_sub(u64::from(is_r)),
                0u64.wrapping_sub(u64::from(is_w)),
            );
            b_r += c.saturating_sub(s.max(e_r)) & mask_r;
            e_r ^= (e_r ^ e_r.max(c)) & mask_r;
            b_w += c.saturating_sub(s.max(e_w)) & mask_w;
            e_w ^= (e_w ^ e_w.max(c)) & mask_w;
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
    ///
    /// No event is visited in a chain: each event's QD is found from its place in the
    /// merged order, and each adds to one counter of its own. The time spent at QD `L`
    /// or more is the sum, over the intervals where QD >= L, of (end - start): an
    /// issue that raises the QD to `L` opens one (-issue time in slot `L`), a
    /// completion that lowers it from `L` closes one (+completion time in slot `L`).
    /// The slots are summed wrapping; the true totals fit in u64, so they come out
    /// exact, and the time at exactly `L` is the difference of two slots.
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
        self.sort_completions(&mut ev);
        let m = issue.len();
        // Completions retired in this batch: those not after its last issue.
        let retired = ev.partition_point(|&c| c <= issue[m - 1]);
        let q0 = self.outstanding.len();
        let (mut rank, mut after) = (
            std::mem::take(&mut self.issue_rank),
            std::mem::take(&mut self.completion_after),
        );
        merge_ranks(issue, &ev[..retired], &mut rank, &mut after);
        // Issues: the QD before issue i is q0 + (adds before i) - (completions before
        // it). `adds` keeps the running count per issue for the completions' pass.
        let mut adds = std::mem::take(&mut self.adds_before);
        adds.clear();
        adds.resize(m + 1, 0);
        let atl = &mut self.qd_atleast_ns;
        let iss = &mut self.qd_issued;
        let mut a = 0u32;
        let (mut at_qd1, mut max_qd) = (0u64, 0usize);
        for i in 0..m {
            let (s, c) = (issue[i], complete[i]);
            adds[i] = a;
            let before = q0 + a as usize - rank[i] as usize;
            let add = c > s;
            let lane = i % HIST_COPIES;
            // Opens an interval at QD before + 1 when it adds (else the dummy slot).
            let open = if add {
                (before + 1).min(ATLEAST_DUMMY)
            } else {
                ATLEAST_DUMMY
            };
            atl[lane][open] = atl[lane][open].wrapping_sub(s);
            iss[lane][(before + 1).min(QD_OPEN)] += 1;
            at_qd1 += u64::from(before == 0);
            max_qd = max_qd.max(before + 1);
            a += u32::from(add);
        }
        adds[m] = a;
        // Completions: the QD before completion k is q0 + (adds before the first issue
        // after it) - k; it closes an interval at that QD.
        for (k, &c) in ev[..retired].iter().enumerate() {
            let before = q0 + adds[after[k] as usize] as usize - k;
            debug_assert!(before >= 1);
            let lane = k % HIST_COPIES;
            let close = before.min(ATLEAST_DUMMY);
            atl[lane][close] = atl[lane][close].wrapping_add(c);
        }
        self.at_qd1 += at_qd1;
        self.max_qd = self.max_qd.max(u32::try_from(max_qd).unwrap_or(u32::MAX));
        debug_assert_eq!(q0 + a as usize - retired, ev.len() - retired);
        self.outstanding.clear();
        self.outstanding.extend_from_slice(&ev[retired..]);
        self.events = ev;
        (self.issue_rank, self.completion_after, self.adds_before) = (rank, after, adds);
    }

    /// Sorts completion times: by insertion while that keeps working (completions
    /// about in order), else by one bucket pass plus insertion, else by radix; speed
    /// only, the same order.
    fn sort_completions(&mut self, ev: &mut Vec<u64>) {
        // A one-pass count of descents turns away batches far out of order before any
        // insertion work (the bench trace has ~0.46 per completion, a device
        // completing about in order ~0.08).
        let sorted = self.radix_batches_left == 0
            && descents(ev) <= ev.len() / 4
            && insertion_sort_within(ev, INSERTION_MOVES_PER_ITEM);
        if sorted {
            return;
        }
        self.radix_batches_left = match self.radix_batches_left {
            0 => RADIX_BATCHES_AFTER_MISS,
            n => n - 1,
        };
        if !bucket_sort_within(
            ev,
            &mut self.sort_scratch,
            &mut self.sort_counts,
            BUCKET_MOVES_PER_ITEM,
        ) {
            radix_sort_by_key(ev, &mut self.sort_scratch, &mut self.sort_counts, |&x| x);
        }
    }

    /// Retires what is still outstanding; the busy time (all, reads, writes), the
    /// busy time per QD bucket and the issues per QD bucket.
    pub(super) fn finish(&mut self) -> ([u64; 3], Vec<u64>, Vec<u64>) {
        let n = self.outstanding.len();
        for (k, &c) in self.outstanding.iter().enumerate() {
            let close = (n - k).min(ATLEAST_DUMMY);
            self.qd_atleast_ns[0][close] = self.qd_atleast_ns[0][close].wrapping_add(c);
        }
        self.outstanding.clear();
        // Time at QD >= L, then at exactly L (the open slot: at QD_OPEN or more).
        let mut atleast = [0u64; ATLEAST_DUMMY + 1];
        for copy in &self.qd_atleast_ns {
            for (t, &x) in atleast.iter_mut().zip(copy) {
                *t = t.wrapping_add(x);
            }
        }
        let mut qd_time_ns = [0u64; QD_SLOTS];
        for qd in 1..QD_SLOTS {
            qd_time_ns[qd] = if qd == QD_OPEN {
                atleast[qd]
            } else {
                atleast[qd].wrapping_sub(atleast[qd + 1])
            };
        }
        let mut qd_issued = [0u64; QD_SLOTS];
        for copy in &self.qd_issued {
            for (t, &x) in qd_issued.iter_mut().zip(copy) {
                *t += x;
            }
        }
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

/// After one bucket pass, insertion finishes the sort when it moves at most this many
/// per completion (the bench trace needs ~0.3); else radix.
const BUCKET_MOVES_PER_ITEM: usize = 4;

/// After insertion gave up, batches sorted by radix before it is tried again (bounds
/// the work wasted on traces where it never succeeds to a fraction of one batch in 9).
const RADIX_BATCHES_AFTER_MISS: u32 = 8;

/// Parts of a batch's merge worked side by side.
const MERGE_LANES: usize = 4;

/// Ranks in the merge of sorted `issue` and sorted `ev` (a completion before an issue
/// at the same time): `rank[i]` completions come before issue `i`, `after[k]` issues
/// before completion `k`. The merge is cut into [`MERGE_LANES`] parts stepped side by
/// side; each step writes both cursors' ranks unconditionally (the last write before
/// an element is taken is its rank), with no branch on the data.
fn merge_ranks(issue: &[u64], ev: &[u64], rank: &mut Vec<u32>, after: &mut Vec<u32>) {
    let (m, r) = (issue.len(), ev.len());
    assert!(m >= 1 && m + r < u32::MAX as usize);
    rank.clear();
    rank.resize(m + 1, 0);
    after.clear();
    after.resize(r + 1, 0);
    if r == 0 {
        return;
    }
    // (i, j, i_end, j_end) of each part.
    let mut lanes = [(0usize, 0usize, 0usize, 0usize); MERGE_LANES];
    let (mut i0, mut j0) = (0, 0);
    for (k, lane) in lanes.iter_mut().enumerate() {
        let (i1, j1) = merge_split(issue, ev, (m + r) * (k + 1) / MERGE_LANES);
        *lane = (i0, j0, i1, j1);
        (i0, j0) = (i1, j1);
    }
    assert_eq!((i0, j0), (m, r));
    let steps = lanes.map(|(i, j, ie, je)| (ie - i) + (je - j));
    let rank = &mut rank[..];
    let after = &mut after[..];
    let mut step = |(i, j, ie, je): &mut (usize, usize, usize, usize)| {
        let s = issue[(*i).min(m - 1)];
        let c = ev[(*j).min(r - 1)];
        let take_c = *j < *je && (*i >= *ie || c <= s);
        rank[if *i < *ie { *i } else { m }] = *j as u32;
        after[if *j < *je { *j } else { r }] = *i as u32;
        *i += usize::from(!take_c);
        *j += usize::from(take_c);
    };
    let common = steps.iter().copied().min().unwrap_or(0);
    for _ in 0..common {
        for lane in lanes.iter_mut() {
            step(lane);
        }
    }
    for (lane, &n) in lanes.iter_mut().zip(&steps) {
        for _ in common..n {
            step(lane);
        }
    }
    debug_assert!(lanes.iter().all(|&(i, j, ie, je)| i == ie && j == je));
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
