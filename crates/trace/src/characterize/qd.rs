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
//! Profile of the 10 M bench trace then: busy loop and issues' pass 20% of samples,
//! the window pass 7%, the gap lookups 5.5%, the calendar 2%, placing 2%.
//!
//! The busy time and the counters, reworked after: (1) the busy time of all ops is
//! the sweep's time at QD >= 1 (its own union chain went; debug builds still measure
//! the union and assert the two agree). (2) The busy time of reads and of writes
//! sums max(E, c) and max(E, s) apart, E the latest completion of the class so far,
//! where `c.saturating_sub(s.max(E))` had compiled to a branch, mispredicted on the
//! random order of reads and writes (`std::hint::select_unpredictable` on it left
//! the branch in). (3) The effective completions, the service-time sum and the latest
//! completion have a loop of their own, the busy loop another, and the sweep is out
//! of line: all in one function, the busy loop kept accumulators on the stack. (4)
//! One table of QD slots, each with the time at QD >= L and the issues at L, so an
//! issue updates one 16-byte slot (a non-adding issue subtracts 0 there rather than
//! going to a dummy slot); the QD1 issues are slot 1's count and the highest QD is
//! read from the slots below the open one, tracked past it. (5) The large gaps are
//! sorted before the issues' pass, which then calls nothing. QD-only harness (these
//! rows, no Parquet; min of 5 runs of 5 each, interleaved, load 5-8): bench rows
//! ~25 -> ~22 ns per I/O, FIFO-like ~26-28 -> ~24-26. `trace_bench
//! characterize-mem` (every concern, no Parquet; best of 7, then the min of 4
//! interleaved rounds, load 5-6): 10 M bench trace 42.8 -> 39.2 ns per I/O,
//! FIFO-like 42.2 -> 38.1. Whole characterize task-clock, min of 9 interleaved runs
//! at load 5.5: 0.60 -> 0.52 s in one set, 0.53 -> 0.56 in the next (noise). Profile
//! of the 10 M bench trace after (before, same build otherwise): effective
//! completions and busy loop 7.7% of samples, window pass 6.6%, issues' pass 6.2%,
//! gap lookups 5.9%, placing 5.0%, calendar 2.0%: 33% (38%).
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
//! With the reworked counters (harness ns per I/O, bench / FIFO-like, same runs):
//! round-robin copies of the QD counters (so that neighbouring events do not wait on
//! one another's update of a slot) made no difference: 1, 2, 4, 8 copies 22.7, 23.3,
//! 23.3, 23.0 / 22.6, 22.9, 23.3, 22.9, hence one. A window of 2 or 3 (more gaps
//! sorted first) against 4: 21.9, 21.4 against 20.9 (FIFO-like within noise).
//! Issues kept as u32 past the batch's first in the calendar (half its cache, a u64
//! fallback for batches spanning 4.3 s): 23.2 against 23.5 / 25.3 against 22.8, noise.
//! Noting the large gaps in the prefix sum instead of a pass of their own: 23.9
//! against 24.0 / 23.6 against 24.8, noise. The service-time histogram fed from the
//! effective-completion loop (no compacted copy in the busy loop, no pass of its own;
//! kept/dropped rows and values past 2^53 settled after): `push_rows` plus
//! `add_slice` 13.3% of the 10 M bench trace's samples before, `push_rows` 13.3%
//! after; task-clock within noise (min of 9: 572 against 555 ms, load 1.5).
//!
//! Measured and rejected later (perf samples of the 10 M bench trace, one profile
//! each unless said; whole runs within noise, output byte-identical):
//! - Only the bucket edges' slots sorted (the histogram reads the time at QD >= L at
//!   its buckets' lower bounds only, and a gap's completions close the levels
//!   top - n + 1 ..= top in any order, so a gap needs ordering only when it holds two
//!   or more and those levels span an edge: 7% of the bench trace's gaps, 26% of a
//!   FIFO-like trace's): the window went (8.3% -> 2.6% for the plain pass) but the
//!   pass listing the gaps to sort plus the sorts took 7.5%; QD samples per 1000 of
//!   footprint and reading within noise on both traces.
//! - The gaps counted in 4 counters each (neighbouring completions often share a
//!   gap, and `ends[g] += 1` took 28% of `key_gaps`' samples on the increment's
//!   store), placed counter by counter: `key_gaps` 7.5% -> 6.2%, `place` 4.0% ->
//!   3.5%, but the prefix sum over four times the counters moved the cost into
//!   `sweep` (8.4% -> 11.0% with one add a gap on the chain): QD 38.9% against 38.9%.
//!
//! Runtime CPU dispatch was removed by issue 22: it paid only on CPUs with AVX-512
//! and never 1.5x on a whole `characterize` (docs/benchmarks.md, "trace:
//! hand-written code"); the loops are plain portable code.

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
    /// Completion times of outstanding I/Os (after the last issue swept), in no
    /// order. Bounded by the deepest queue the trace reaches.
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
        self.calendar.build(issue);
        // Completions still ahead: those outstanding, plus this batch's (an I/O
        // completing at its issue is never outstanding), each with its gap.
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
        gap_starts(
            &self.calendar,
            &self.outstanding,
            issue,
            complete,
            gap,
            &mut ends,
        );
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
        sort_crowded_gaps(&mut placed, &ends[..m]);
        let mut adds = std::mem::take(&mut self.adds_before);
        grow(&mut adds, m + 1);
        let (a, max_qd) = open_at_issues(&mut self.qd_slots, issue, complete, &ends, q0, &mut adds);
        // Completions: the QD before completion k is q0 + (adds before the first issue
        // after it) - k; it closes an interval at that QD. Gaps hold disjoint,
        // ascending time ranges, so only completions sharing a gap need ordering:
        // a small window does it on the way for gaps of up to SORT_WINDOW + 1 (at most
        // SORT_WINDOW out of place); the few larger gaps were sorted above.
        let slots = &mut self.qd_slots;
        close_in_window(slots, &placed[..retired], &placed_gap[..retired], &adds, q0);
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

/// The gap of every completion still ahead into `gap` (the outstanding ones first,
/// then this batch's rows), and where each gap starts in gap order into `ends`: gaps
/// 0..=m of the batch's m issues, then one for the rows that add nothing (completing
/// at their issue), placed last and never read.
#[inline]
fn gap_starts(
    cal: &Calendar,
    outstanding: &[u64],
    issue: &[u64],
    complete: &[u64],
    gap: &mut [u32],
    ends: &mut Vec<u32>,
) {
    let m = issue.len();
    ends.clear();
    ends.resize(m + 2, 0);
    let (gap_out, gap_rows) = gap.split_at_mut(outstanding.len());
    for (g, &c) in gap_out.iter_mut().zip(outstanding) {
        *g = cal.gap(c);
        ends[*g as usize] += 1;
    }
    key_gaps(cal, issue, complete, gap_rows, ends);
    // Gap after gap: `ends[g]` becomes where gap g starts, then, as the gap is
    // filled (`place`), where it ends: the completions up to gap g, those before
    // issue g.
    let mut sum = 0u32;
    for e in ends.iter_mut() {
        let here = *e;
        *e = sum;
        sum += here;
    }
    assert_eq!(sum as usize, gap.len());
}

/// Sorts the gaps of `placed` (ending at `gap_ends`) holding more completions than
/// [`close_in_window`]'s window orders (apart from the issues' pass, which then calls
/// nothing).
#[inline]
fn sort_crowded_gaps(placed: &mut [u64], gap_ends: &[u32]) {
    let mut gap_start = 0;
    for &gap_end in gap_ends {
        let gap_end = gap_end as usize;
        if gap_end - gap_start > SORT_WINDOW + 1 {
            placed[gap_start..gap_end].sort_unstable();
        }
        gap_start = gap_end;
    }
}

/// The issues' pass: the QD before issue i is q0 + (adds before i) - (completions
/// before it); an issue that adds opens an interval at the QD after it. `adds` gets the
/// running count of adds per issue (for the completions' pass). Returns the adds in
/// all and the highest QD at or past [`QD_OPEN`] (0: none).
#[inline]
fn open_at_issues(
    slots: &mut [QdSlot; ATLEAST_DUMMY + 1],
    issue: &[u64],
    complete: &[u64],
    ends: &[u32],
    q0: usize,
    adds: &mut [u32],
) -> (u32, usize) {
    let m = issue.len();
    let mut a = 0u32;
    let mut max_qd = 0usize;
    for i in 0..m {
        let (s, c) = (issue[i], complete[i]);
        adds[i] = a;
        // Completions before issue i: those of gaps 0..=i (at or before it).
        let before = q0 + a as usize - ends[i] as usize;
        let add = c > s;
        // The QD after it; it opens an interval there when it adds (else it
        // subtracts 0).
        let qd = before + 1;
        let slot = &mut slots[qd.min(ATLEAST_DUMMY)];
        slot.atleast_ns = slot
            .atleast_ns
            .wrapping_sub(s & 0u64.wrapping_sub(u64::from(add)));
        slot.issued += 1;
        if qd >= QD_OPEN {
            max_qd = max_qd.max(qd);
        }
        a += u32::from(add);
    }
    adds[m] = a;
    (a, max_qd)
}

/// Completions held back by [`close_in_window`].
const SORT_WINDOW: usize = 4;

/// The completions' pass over `placed` (in gap order; in time order but for
/// completions sharing a gap): each completion closes an interval at its QD. They are
/// taken in time order through a window of [`SORT_WINDOW`] held back, smallest first
/// (a network of min/max, no branch). None may be more than the window out of place
/// (asserted).
#[inline(always)]
fn close_in_window(
    slots: &mut [QdSlot; ATLEAST_DUMMY + 1],
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
        let slot = &mut slots[before.min(ATLEAST_DUMMY)];
        slot.atleast_ns = slot.atleast_ns.wrapping_add(c);
    }
    assert!(
        !out_of_order,
        "a completion more than the window out of place"
    );
}

/// The gap of each row's completion into `gap`, counted per gap in `ends`; a row
/// that adds nothing (completing at its issue) goes to the last gap of `ends`.
#[inline(always)]
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
#[inline(always)]
fn place(ev: &[u64], gap: &[u32], ends: &mut [u32], placed: &mut [u64], placed_gap: &mut [u32]) {
    for (&c, &g) in ev.iter().zip(gap) {
        let at = ends[g as usize] as usize;
        placed[at] = c;
        placed_gap[at] = g;
        ends[g as usize] += 1;
    }
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
    #[inline(always)]
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
