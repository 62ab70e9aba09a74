//! Metric definitions as pure functions over hand-built sets (METHODOLOGY section 2).
//!
//! These are the reference the online [`crate::Recorder`] is tested against, and are
//! usable on their own (e.g. on a trace's recorded completions). An interval is
//! `(submit_ns, complete_ns)` with `submit_ns <= complete_ns`.

use storbench_core::Op;

fn check(intervals: &[(u64, u64)]) {
    for (i, &(s, e)) in intervals.iter().enumerate() {
        assert!(
            s <= e,
            "interval {i}: completion {e} ns before submission {s} ns"
        );
    }
}

/// Busy time: total time during which at least one interval is open (the length of
/// the union of the intervals).
pub fn busy_ns(intervals: &[(u64, u64)]) -> u64 {
    check(intervals);
    let mut v: Vec<(u64, u64)> = intervals.iter().copied().filter(|(s, e)| e > s).collect();
    v.sort_unstable();
    let mut total = 0;
    let mut cur: Option<(u64, u64)> = None;
    for (s, e) in v {
        cur = match cur {
            Some((cs, ce)) if s <= ce => Some((cs, ce.max(e))),
            Some((cs, ce)) => {
                total += ce - cs;
                Some((s, e))
            }
            None => Some((s, e)),
        };
    }
    if let Some((cs, ce)) = cur {
        total += ce - cs;
    }
    total
}

/// Busy time per op (indexed by [`Op::index`]): each counts only that op's intervals.
pub fn busy_ns_by_op(ios: &[(Op, u64, u64)]) -> [u64; 4] {
    Op::ALL.map(|op| {
        let v: Vec<(u64, u64)> = ios
            .iter()
            .filter(|(o, _, _)| *o == op)
            .map(|&(_, s, e)| (s, e))
            .collect();
        busy_ns(&v)
    })
}

/// Data rate in MB/s (MB = 10^6 bytes): `bytes / busy time`; 0 when `busy_ns == 0`.
pub fn data_rate_mb_per_s(bytes: u64, busy_ns: u64) -> f64 {
    if busy_ns == 0 {
        return 0.0;
    }
    // bytes / 1e6 / (busy_ns / 1e9) = bytes * 1e3 / busy_ns
    bytes as f64 * 1e3 / busy_ns as f64
}

/// Time-weighted queue-depth histogram: `result[q]` is the time with exactly `q`
/// intervals open, between the first submission and the last completion (`[0]` is the
/// idle time inside that span). An interval is open on `[submit, complete)`.
pub fn qd_time_ns(intervals: &[(u64, u64)]) -> Vec<u64> {
    check(intervals);
    // +1 at submit, -1 at complete; at equal times apply completions first (the order
    // does not change the integral since the span between them is 0 ns).
    let mut ev: Vec<(u64, i64)> = Vec::with_capacity(intervals.len() * 2);
    for &(s, e) in intervals {
        ev.push((s, 1));
        ev.push((e, -1));
    }
    ev.sort_unstable();
    let mut out = vec![0u64; 1];
    let mut qd: i64 = 0;
    let mut last = ev.first().map_or(0, |e| e.0);
    for (t, d) in ev {
        let q = usize::try_from(qd).expect("queue depth is never negative");
        if out.len() <= q {
            out.resize(q + 1, 0);
        }
        out[q] += t - last;
        last = t;
        qd += d;
    }
    assert_eq!(qd, 0);
    out
}

/// Nearest-rank quantile of sorted values: the smallest value with at least
/// `ceil(q * n)` values at or below it (`q = 0` gives the minimum). `None` if empty.
pub fn quantile_nearest_rank(sorted: &[u64], q: f64) -> Option<u64> {
    assert!((0.0..=1.0).contains(&q), "quantile {q} outside [0, 1]");
    debug_assert!(sorted.windows(2).all(|w| w[0] <= w[1]), "values not sorted");
    if sorted.is_empty() {
        return None;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).max(1);
    Some(sorted[rank.min(sorted.len()) - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_disjoint_overlapping_nested_touching() {
        assert_eq!(busy_ns(&[]), 0);
        // disjoint: 10 + 10
        assert_eq!(busy_ns(&[(0, 10), (20, 30)]), 20);
        // overlapping: [0, 15)
        assert_eq!(busy_ns(&[(0, 10), (5, 15)]), 15);
        // nested
        assert_eq!(busy_ns(&[(0, 100), (10, 20), (30, 40)]), 100);
        // touching intervals join, order does not matter
        assert_eq!(busy_ns(&[(10, 20), (0, 10)]), 20);
        // zero-length intervals add nothing
        assert_eq!(busy_ns(&[(5, 5), (7, 7)]), 0);
    }

    #[test]
    fn busy_per_op() {
        let ios = [
            (Op::Read, 0, 10),
            (Op::Write, 5, 20),
            (Op::Read, 8, 12),
            (Op::Trim, 30, 31),
        ];
        assert_eq!(busy_ns_by_op(&ios), [12, 15, 1, 0]);
    }

    #[test]
    fn rates() {
        // 1 MB in 1 ms = 1000 MB/s
        assert_eq!(data_rate_mb_per_s(1_000_000, 1_000_000), 1000.0);
        assert_eq!(data_rate_mb_per_s(5, 0), 0.0);
    }

    #[test]
    fn qd_histogram() {
        // [0,10) and [5,15): qd1 on [0,5) and [10,15), qd2 on [5,10); idle [15,20) then
        // one at [20,30).
        let h = qd_time_ns(&[(0, 10), (5, 15), (20, 30)]);
        assert_eq!(h, vec![5, 20, 5]);
    }

    #[test]
    fn nearest_rank() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(quantile_nearest_rank(&v, 0.5), Some(50));
        assert_eq!(quantile_nearest_rank(&v, 0.99), Some(99));
        assert_eq!(quantile_nearest_rank(&v, 0.999), Some(100));
        assert_eq!(quantile_nearest_rank(&v, 0.0), Some(1));
        assert_eq!(quantile_nearest_rank(&[], 0.5), None);
    }
}
