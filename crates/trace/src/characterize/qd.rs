//! Completion-based figures: busy time (all ops, reads, writes), service times, and
//! the queue depth: time at each QD, the QD each I/O was issued at, QD1 issues.
//!
//! The QD is found without walking the events one after another. The batch's issues
//! go into a calendar ([`Calendar`]: time buckets of a power of two, about one issue
//! each), where each completion ahead (the batch's and those still outstanding) looks
//! up its gap: the number of issues before it. Counted per gap and placed gap after
//! gap, the completions are in time order except within a gap, and the count up to
//! gap `i` is the number of completions before issue `i`: no sort of the completions
//! and no merge with the issues. The completions then go, in time order, through a
//! window of [`SORT_WINDOW`] that orders those sharing a gap (a min/max network; the
//! rare gap holding more is sorted first), and each issue and each completion adds to
//! the counters on its own, from its place (see [`Completions::sweep`]). Intervals are
//! half-open: an I/O completing at t is not outstanding at t, so a completion at t is
//! taken before an issue at t, and a completion at t is in the gap before an issue at
//! t.
//!
//! Measured against the sort and merge this replaced (a bucket pass and insertion, or
//! insertion alone when nearly in order, then a four-lane merge for each event's
//! place), characterize CPU-s, min of interleaved runs: 10 M-I/O bench trace (QD ~14,
//! completions far out of order) 0.68 -> 0.60 (10 runs each, load 3-4); FIFO-like
//! trace (completions about in issue order, QD ~3) 0.60 -> 0.60 (8 each). In a QD-only
//! harness (the same rows, no Parquet) the bench rows went from ~33 to ~28 ns per I/O,
//! the FIFO-like ones from ~24 to ~27 (load 5-7, noisy): the calendar does the same
//! work whatever the order, where insertion was nearly free on ordered completions.
//! Profile of the 10 M bench trace after: busy loop and issues' pass 20% of samples,
//! the window pass 7%, the gap lookups 5.5%, the calendar 2%, placing 2%.
//!
//! Measured and rejected: a min-heap of the outstanding completion times (no sort; a
//! push and a pop per I/O) took 1.68 CPU-s for the 10 M-I/O bench trace against 1.13
//! for sort and merge, best of 5: its sift loops branch unpredictably. Walking the
//! merged events with the QD carried from one to the next (four parts side by side,
//! each with its own counters) took about 30% more QD time than counting from each
//! event's place. With the calendar: an insertion sort of the placed completions (it
//! moves ~0.25 per completion) took 13-18% of the QD samples, its inner loop's exit
//! mispredicted; the window with a fall-back to a full sort when a completion came
//! out of it out of order fell back on most batches (a gap of 6 or more completions
//! is in almost every 8K batch of the bench trace), hence the large gaps sorted first.

use super::hist::LogHist;
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
    /// Completion times of outstanding I/Os (after the last issue swept), in no
    /// order. Bounded by the deepest queue the trace reaches.
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
    // Scratch of one batch, each bounded by its rows plus the outstanding I/Os.
    issue: Vec<u64>,
    complete: Vec<u64>,
    ops: Vec<Op>,
    /// Effective completion times of a batch's rows.
    effective: Vec<u64>,
    calendar: Calendar,
    /// The gap of each completion ahead (outstanding, then the batch's rows).
    gaps: Vec<u32>,
    /// Per gap, the completions up to its end (see [`Completions::sweep`]).
    gap_ends: Vec<u32>,
    /// The completions gap after gap, and each one's gap.
    placed: Vec<u64>,
    placed_gap: Vec<u32>,
    /// Per issue, adds (I/Os that become outstanding) before it.
    adds_before: Vec<u32>,
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
            effective: Vec::new(),
            calendar: Calendar::default(),
            gaps: Vec::new(),
            gap_ends: Vec::new(),
            placed: Vec::new(),
            placed_gap: Vec::new(),
            adds_before: Vec::new(),
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
    #[inline(never)]
    fn push_rows(&mut self, issue: &[u64], recorded_issue: &[u64], complete: &[u64], ops: &[Op]) {
        let m = issue.len();
        assert!(recorded_issue.len() == m && complete.len() == m && ops.len() == m);
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
        let mut eff_buf = std::mem::take(&mut self.effective);
        grow(&mut eff_buf, m);
        let eff = &mut eff_buf[..m];
        if std::ptr::eq(issue, recorded_issue) {
            // No issue was clamped: the completion, or the issue for one recorded
            // before it.
            for ((e, &s), &c) in eff.iter_mut().zip(issue).zip(complete) {
                *e = s.max(c);
            }
        } else {
            for (((e, &s), &r), &c) in eff.iter_mut().zip(issue).zip(recorded_issue).zip(complete) {
                *e = s.saturating_add(c.saturating_sub(r));
            }
        }
        let mut data = 0;
        for k in 0..m {
            let (s, c, op) = (issue[k], eff[k], ops[k]);
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
        self.sweep(issue, &eff_buf[..m]);
        self.effective = eff_buf;
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
    ///
    /// The places come from the issue calendar ([`Calendar`]): each completion's gap
    /// (the issues before it) is looked up, the completions are counted into their
    /// gaps and placed gap after gap, and only the few that share a gap are put in
    /// order among themselves. The count of completions up to each gap is the number
    /// that come before the issue closing it: no merge.
    fn sweep(&mut self, issue: &[u64], complete: &[u64]) {
        let m = issue.len();
        assert!(m >= 1 && m < u32::MAX as usize / 2);
        let cal = &mut self.calendar;
        cal.build(issue);
        // Completions still ahead: those outstanding, plus this batch's (an I/O
        // completing at its issue is never outstanding), each with its gap, and the
        // number in each gap.
        let q0 = self.outstanding.len();
        let n = q0 + m;
        assert!(n < u32::MAX as usize);
        let (mut gap_buf, mut ends) = (
            std::mem::take(&mut self.gaps),
            std::mem::take(&mut self.gap_ends),
        );
        // Every slot read below is written first: grown, never cleared.
        grow(&mut gap_buf, n);
        let gap = &mut gap_buf[..n];
        // Gaps 0..=m, then one for the rows that add nothing (completing at their
        // issue), placed last and never read.
        ends.clear();
        ends.resize(m + 2, 0);
        let (gap_out, gap_rows) = gap.split_at_mut(q0);
        for (g, &c) in gap_out.iter_mut().zip(&self.outstanding) {
            *g = cal.gap(c);
            ends[*g as usize] += 1;
        }
        key_gaps(cal, issue, complete, gap_rows, &mut ends);
        // Gap after gap: `ends[g]` becomes where gap g starts, then, as the gap is
        // filled, where it ends: the completions up to gap g, those before issue g.
        let mut sum = 0u32;
        for e in ends.iter_mut() {
            let here = *e;
            *e = sum;
            sum += here;
        }
        assert_eq!(sum as usize, n);
        let (mut placed, mut placed_gap) = (
            std::mem::take(&mut self.placed),
            std::mem::take(&mut self.placed_gap),
        );
        grow(&mut placed, n);
        grow(&mut placed_gap, n);
        let (gap_out, gap_rows) = gap.split_at(q0);
        place(
            &self.outstanding,
            gap_out,
            &mut ends,
            &mut placed,
            &mut placed_gap,
        );
        place(complete, gap_rows, &mut ends, &mut placed, &mut placed_gap);
        // Retired in this batch: the completions not after its last issue (gaps up to
        // m - 1); those of gap m stay outstanding, in no order.
        let retired = ends[m - 1] as usize;
        // Issues: the QD before issue i is q0 + (adds before i) - (completions before
        // it). `adds` keeps the running count per issue for the completions' pass.
        let mut adds = std::mem::take(&mut self.adds_before);
        grow(&mut adds, m + 1);
        let atl = &mut self.qd_atleast_ns;
        let iss = &mut self.qd_issued;
        let mut a = 0u32;
        let (mut at_qd1, mut max_qd) = (0u64, 0usize);
        let mut gap_start = 0;
        for i in 0..m {
            let (s, c) = (issue[i], complete[i]);
            let gap_end = ends[i] as usize;
            if gap_end - gap_start > SORT_WINDOW + 1 {
                placed[gap_start..gap_end].sort_unstable();
            }
            gap_start = gap_end;
            adds[i] = a;
            // Completions before issue i: those of gaps 0..=i (at or before it).
            let before = q0 + a as usize - ends[i] as usize;
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
        // after it) - k; it closes an interval at that QD. Gaps hold disjoint,
        // ascending time ranges, so only completions sharing a gap need ordering:
        // a small window does it on the way for gaps of up to SORT_WINDOW + 1 (at most
        // SORT_WINDOW out of place); the few larger gaps were sorted above.
        close_in_window(atl, &placed[..retired], &placed_gap[..retired], &adds, q0);
        self.at_qd1 += at_qd1;
        self.max_qd = self.max_qd.max(u32::try_from(max_qd).unwrap_or(u32::MAX));
        debug_assert_eq!(q0 + a as usize, ends[m] as usize);
        self.outstanding.clear();
        self.outstanding
            .extend_from_slice(&placed[retired..ends[m] as usize]);
        (self.gaps, self.gap_ends) = (gap_buf, ends);
        (self.placed, self.placed_gap, self.adds_before) = (placed, placed_gap, adds);
    }

    /// Retires what is still outstanding; the busy time (all, reads, writes), the
    /// busy time per QD bucket and the issues per QD bucket.
    pub(super) fn finish(&mut self) -> ([u64; 3], Vec<u64>, Vec<u64>) {
        self.outstanding.sort_unstable();
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

/// Completions held back by [`close_in_window`].
const SORT_WINDOW: usize = 4;

/// The completions' pass over `placed` (in gap order; in time order but for
/// completions sharing a gap): each completion closes an interval at its QD. They are
/// taken in time order through a window of [`SORT_WINDOW`] held back, smallest first
/// (a network of min/max, no branch). None may be more than the window out of place
/// (asserted).
#[inline(never)]
fn close_in_window(
    atl: &mut [[u64; ATLEAST_DUMMY + 1]; HIST_COPIES],
    placed: &[u64],
    placed_gap: &[u32],
    adds: &[u32],
    q0: usize,
) {
    let n = placed.len();
    assert_eq!(placed_gap.len(), n);
    let mut r = [u64::MAX; SORT_WINDOW];
    // Fill the window: insert, dropping the largest (a sentinel).
    for &x in &placed[..n.min(SORT_WINDOW)] {
        let mut t = x;
        for w in r.iter_mut() {
            (*w, t) = ((*w).min(t), (*w).max(t));
        }
    }
    let (mut prev, mut out_of_order) = (0u64, false);
    for k in 0..n {
        // Insert the next (or a sentinel) and take out the smallest.
        let mut t = placed.get(k + SORT_WINDOW).copied().unwrap_or(u64::MAX);
        for w in r.iter_mut().rev() {
            (*w, t) = ((*w).max(t), (*w).min(t));
        }
        let c = t;
        out_of_order |= c < prev;
        prev = c;
        let before = q0 + adds[placed_gap[k] as usize] as usize - k;
        let lane = k % HIST_COPIES;
        let close = before.min(ATLEAST_DUMMY);
        atl[lane][close] = atl[lane][close].wrapping_add(c);
    }
    assert!(
        !out_of_order,
        "a completion more than the window out of place"
    );
}

/// The gap of each row's completion into `gap`, counted per gap in `ends`; a row
/// that adds nothing (completing at its issue) goes to the last gap of `ends`.
#[inline(never)]
fn key_gaps(cal: &Calendar, issue: &[u64], complete: &[u64], gap: &mut [u32], ends: &mut [u32]) {
    let none = ends.len() as u32 - 1;
    for ((g, &s), &c) in gap.iter_mut().zip(issue).zip(complete) {
        // No branch on the data: looked up always, kept when the row adds.
        let found = cal.gap(c);
        *g = if c > s { found } else { none };
        ends[*g as usize] += 1;
    }
}

/// Places each completion at the next free slot of its gap (`ends` holds where each
/// gap starts and, after, where it ends).
#[inline(never)]
fn place(ev: &[u64], gap: &[u32], ends: &mut [u32], placed: &mut [u64], placed_gap: &mut [u32]) {
    for (&c, &g) in ev.iter().zip(gap) {
        let at = ends[g as usize] as usize;
        placed[at] = c;
        placed_gap[at] = g;
        ends[g as usize] += 1;
    }
}

/// Makes `v` at least `n` long, keeping what it holds.
fn grow<T: Copy + Default>(v: &mut Vec<T>, n: usize) {
    if v.len() < n {
        v.resize(n, T::default());
    }
}

/// Issues of a batch looked up by time: one bucket per power-of-two span of time
/// (about one issue each), and in a bucket a compare against the next few issues,
/// so that a completion finds the number of issues before it in a few steps.
#[derive(Clone, Default)]
struct Calendar {
    /// The batch's issue times, then [`CAL_WINDOW`] times at `u64::MAX`.
    issue: Vec<u64>,
    /// `first[b]`: issues in buckets before `b`, for `b` in `0..=buckets`.
    first: Vec<u32>,
    base_ns: u64,
    shift: u32,
    last_bucket: u64,
}

/// Issues a lookup compares without a branch; a bucket holding more takes a binary
/// search.
const CAL_WINDOW: usize = 4;

impl Calendar {
    /// Buckets of this batch's issues (sorted, at least one); at most 2 per issue.
    #[inline(never)]
    fn build(&mut self, issue: &[u64]) {
        let m = issue.len();
        assert!(m >= 1 && m < u32::MAX as usize);
        let (lo, hi) = (issue[0], issue[m - 1]);
        assert!(lo <= hi);
        let span = hi - lo;
        // 2^bits > m buckets at most; the shift brings the span under that.
        let bits = usize::BITS - m.leading_zeros();
        let shift = (u64::BITS - span.leading_zeros()).saturating_sub(bits);
        let buckets = (span >> shift) as usize + 1;
        assert!(buckets <= 1 << bits);
        self.first.clear();
        self.first.resize(buckets + 1, 0);
        for &s in issue {
            self.first[((s - lo) >> shift) as usize + 1] += 1;
        }
        let mut sum = 0u32;
        for f in self.first.iter_mut() {
            sum += *f;
            *f = sum;
        }
        debug_assert_eq!(sum as usize, m);
        self.issue.clear();
        self.issue.extend_from_slice(issue);
        self.issue.extend_from_slice(&[u64::MAX; CAL_WINDOW]);
        (self.base_ns, self.shift, self.last_bucket) = (lo, shift, buckets as u64 - 1);
    }

    /// The number of issues before time `c` (issued strictly before it).
    #[inline(always)]
    fn gap(&self, c: u64) -> u32 {
        let b = ((c.saturating_sub(self.base_ns) >> self.shift).min(self.last_bucket)) as usize;
        let lo = self.first[b] as usize;
        // Issues past bucket b are after c (or the padding), so they count nothing.
        let w: &[u64; CAL_WINDOW] = self.issue[lo..lo + CAL_WINDOW].try_into().expect("window");
        let mut g = lo + w.iter().map(|&s| usize::from(s < c)).sum::<usize>();
        if w[CAL_WINDOW - 1] < c {
            // The bucket may hold more issues than the window.
            let hi = self.first[b + 1] as usize;
            g = lo + self.issue[lo..hi].partition_point(|&s| s < c);
        }
        g as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calendar_gap_counts_the_issues_strictly_before() {
        let mut rng = crate::test_rng::XorShift(0xC0FF_EE11);
        let mut cal = Calendar::default();
        for (m, burst) in [
            (1usize, 0u64),
            (2, 1),
            (7, 0),
            (100, 3),
            (8192, 2),
            (8192, 9),
        ] {
            // Issue times with runs of equal times (a burst puts up to 2^burst issues
            // in one bucket, past the window) and gaps of 0 to 40 us.
            let mut t = 1u64 << 40;
            let mut issue = Vec::with_capacity(m);
            while issue.len() < m {
                t += rng.below(40_000);
                let run = 1 + rng.below(1 << burst) as usize;
                issue.extend(std::iter::repeat_n(t, run.min(m - issue.len())));
            }
            cal.build(&issue);
            let (lo, hi) = (issue[0], issue[m - 1]);
            let mut probes = vec![0, lo - 1, lo, lo + 1, hi - 1, hi, hi + 1, u64::MAX];
            probes.extend(issue.iter().step_by(3));
            probes.extend((0..2000).map(|_| lo - 1000 + rng.below(hi - lo + 2000)));
            for c in probes {
                let want = issue.partition_point(|&s| s < c) as u32;
                assert_eq!(cal.gap(c), want, "m {m} burst {burst} c {c}");
            }
        }
    }
}
