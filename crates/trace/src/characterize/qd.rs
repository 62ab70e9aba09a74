//! Completion-based figures: busy time (all ops, reads, writes), service times, and
//! the queue depth: time at each QD, the QD each I/O was issued at, QD1 issues.
//!
//! The QD is swept over the events in time order: issues come sorted; the batch's
//! completions (with those still outstanding from earlier batches) are radix-sorted
//! and merged with them in a branch-free loop. Intervals are half-open: an I/O
//! completing at t is not outstanding at t, so a completion at t is taken before an
//! issue at t.

use super::hist::LogHist;
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
    #[inline(never)]
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
        sort_u64(&mut ev, &mut self.sort_scratch, &mut self.sort_counts);
        let (m, cn) = (issue.len(), ev.len());
        let mut q = self.outstanding.len();
        let mut cur = self.sweep_ns;
        let (mut i, mut j) = (0, 0);
        let (mut at_qd1, mut max_qd) = (0u64, self.max_qd as usize);
        let (time, issued) = (&mut self.qd_time_ns, &mut self.qd_issued);
        // Each step takes the next event: a completion when it is not after the
        // next issue. Issue-only figures go to a dummy slot on completion steps.
        while i < m {
            let s = issue[i];
            let c = if j < cn { ev[j] } else { u64::MAX };
            let take_c = j < cn && c <= s;
            let t = if take_c { c } else { s };
            time[q.min(QD_OPEN)] += t - cur;
            cur = t;
            let qd = q + 1;
            issued[if take_c { QD_SLOTS } else { qd.min(QD_OPEN) }] += 1;
            at_qd1 += u64::from(!take_c & (q == 0));
            max_qd = if take_c { max_qd } else { max_qd.max(qd) };
            let adds = !take_c & (complete[i] > s);
            q = q + usize::from(adds) - usize::from(take_c);
            j += usize::from(take_c);
            i += usize::from(!take_c);
        }
        debug_assert!(ev[j..].first().is_none_or(|&c| c > issue[m - 1]));
        debug_assert_eq!(q, cn - j);
        self.outstanding.clear();
        self.outstanding.extend_from_slice(&ev[j..]);
        self.events = ev;
        self.sweep_ns = cur;
        self.at_qd1 += at_qd1;
        self.max_qd = u32::try_from(max_qd).unwrap_or(u32::MAX);
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

/// Sorts ascending. LSD radix sort, 11-bit digits over the bits that vary, with four
/// lanes per pass (a quarter of the input each, with its own bucket offsets, placed
/// lane after lane within a bucket so the sort stays stable): completions come nearly
/// sorted, and with one lane a run of equal digits would wait on one counter per
/// element.
fn sort_u64(v: &mut Vec<u64>, scratch: &mut Vec<u64>, counts: &mut Vec<u32>) {
    const BITS: u32 = 11;
    const B: usize = 1 << BITS;
    const LANES: usize = 4;
    let n = v.len();
    if n < 2048 {
        v.sort_unstable();
        return;
    }
    assert!(n < u32::MAX as usize);
    let (or, and) = v.iter().fold((0u64, !0u64), |(o, a), &x| (o | x, a & x));
    let varying = or ^ and;
    if varying == 0 {
        return;
    }
    let top = 64 - varying.leading_zeros();
    let mut shift = varying.trailing_zeros();
    scratch.clear();
    scratch.resize(n, 0);
    counts.clear();
    counts.resize(LANES * B, 0);
    let q = n / LANES;
    while shift < top {
        let digit = |x: u64| ((x >> shift) as usize) & (B - 1);
        counts.fill(0);
        {
            let (c0, rest) = counts.split_at_mut(B);
            let (c1, rest) = rest.split_at_mut(B);
            let (c2, c3) = rest.split_at_mut(B);
            for i in 0..q {
                c0[digit(v[i])] += 1;
                c1[digit(v[q + i])] += 1;
                c2[digit(v[2 * q + i])] += 1;
                c3[digit(v[3 * q + i])] += 1;
            }
            for &x in &v[4 * q..] {
                c3[digit(x)] += 1;
            }
        }
        // Offsets: bucket by bucket, lane after lane.
        let mut sum = 0u32;
        for b in 0..B {
            for l in 0..LANES {
                let here = counts[l * B + b];
                counts[l * B + b] = sum;
                sum += here;
            }
        }
        {
            let (o0, rest) = counts.split_at_mut(B);
            let (o1, rest) = rest.split_at_mut(B);
            let (o2, o3) = rest.split_at_mut(B);
            let dst = &mut scratch[..];
            for i in 0..q {
                let (x0, x1, x2, x3) = (v[i], v[q + i], v[2 * q + i], v[3 * q + i]);
                let (d0, d1, d2, d3) = (digit(x0), digit(x1), digit(x2), digit(x3));
                dst[o0[d0] as usize] = x0;
                o0[d0] += 1;
                dst[o1[d1] as usize] = x1;
                o1[d1] += 1;
                dst[o2[d2] as usize] = x2;
                o2[d2] += 1;
                dst[o3[d3] as usize] = x3;
                o3[d3] += 1;
            }
            for &x in &v[4 * q..] {
                let d = digit(x);
                dst[o3[d] as usize] = x;
                o3[d] += 1;
            }
        }
        std::mem::swap(v, scratch);
        shift += BITS;
    }
    debug_assert!(v.windows(2).all(|w| w[0] <= w[1]));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_lane_radix_sort_sorts() {
        for n in [0usize, 5, 2047, 2048, 2051, 10_007] {
            let mut x: u64 = 0x2545_F491_4F6C_DD1D;
            // Nearly sorted (a time plus a random service time), with duplicates.
            let mut v: Vec<u64> = (0..n as u64)
                .map(|i| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (1 << 40) + i * 20_000 + (x % 500_000) / 1000 * 1000
                })
                .collect();
            let mut want = v.clone();
            want.sort_unstable();
            sort_u64(&mut v, &mut Vec::new(), &mut Vec::new());
            assert_eq!(v, want, "n {n}");
        }
    }
}
