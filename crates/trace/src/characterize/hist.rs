//! The percentile figures (inter-arrival, service time) from an HDR histogram.
//!
//! `hdrhistogram` at 2 significant figures keeps 128 sub-buckets per power of two
//! (values below 256 exact), the same buckets as the log-linear histogram of our own
//! it replaced (issue 22: it did not win 1.5x on a whole `characterize`, see
//! docs/benchmarks.md, "trace: hand-written code"). Each percentile is reported as
//! the middle of its bucket, capped at the largest value, as before: every figure
//! `characterize` prints is unchanged.

use super::Percentiles;
use hdrhistogram::Histogram;

/// Values with their count, sum and largest value; any reported percentile is within
/// 1/128 (0.8%) of a real sample. Fixed size (every u64 is trackable).
#[derive(Clone)]
pub(super) struct LogHist {
    hist: Histogram<u64>,
    n: u64,
    sum: u128,
    max: u64,
}

/// 128 sub-buckets per power of two (2 * 10^2 rounded up to 256, the upper half).
const SIGNIFICANT_FIGURES: u8 = 2;

impl LogHist {
    pub(super) fn new() -> Self {
        LogHist {
            hist: Histogram::new_with_bounds(1, u64::MAX, SIGNIFICANT_FIGURES)
                .expect("valid bounds"),
            n: 0,
            sum: 0,
            max: 0,
        }
    }

    #[cfg(test)]
    pub(super) fn add(&mut self, v: u64) {
        self.add_slice(&[v]);
    }

    /// Adds every value of `vals`.
    pub(super) fn add_slice(&mut self, vals: &[u64]) {
        let mut sum = 0u128;
        let mut max = self.max;
        for &v in vals {
            // Every u64 is in range: never clamped.
            self.hist.saturating_record(v);
            sum += u128::from(v);
            max = max.max(v);
        }
        self.n += vals.len() as u64;
        self.sum += sum;
        self.max = max;
    }

    /// Adds the gaps between consecutive times of `prev` followed by `times`
    /// (non-decreasing): one value per element of `times`.
    pub(super) fn add_gaps(&mut self, prev: u64, times: &[u64]) {
        let Some(&last) = times.last() else { return };
        debug_assert!(prev <= times[0]);
        let mut p = prev;
        let mut max = self.max;
        for &t in times {
            let gap = t - p;
            self.hist.saturating_record(gap);
            max = max.max(gap);
            p = t;
        }
        self.n += times.len() as u64;
        // The gaps telescope.
        self.sum += u128::from(last - prev);
        self.max = max;
    }

    /// The middle of the bucket holding `v`: its lowest value plus half its width
    /// less one (a bucket of one value is that value).
    fn middle(&self, v: u64) -> f64 {
        let low = self.hist.lowest_equivalent(v);
        let width = self.hist.equivalent_range(v);
        low as f64 + (width as f64 - 1.0) / 2.0
    }

    /// The middle of the bucket of the sample of rank ceil(q * n), capped at the
    /// largest value.
    fn quantile(&self, q: f64) -> f64 {
        assert!(self.n > 0);
        let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut seen = 0;
        for b in self.hist.iter_recorded() {
            seen += b.count_at_value();
            if seen >= rank {
                return self.middle(b.value_iterated_to()).min(self.max as f64);
            }
        }
        self.max as f64
    }

    /// Percentiles in units of `scale` (e.g. 1000.0 turns ns into µs).
    pub(super) fn percentiles(&self, scale: f64) -> Option<Percentiles> {
        if self.n == 0 {
            return None;
        }
        Some(Percentiles {
            count: self.n,
            mean: self.sum as f64 / self.n as f64 / scale,
            p50: self.quantile(0.50) / scale,
            p90: self.quantile(0.90) / scale,
            p99: self.quantile(0.99) / scale,
            p99_9: self.quantile(0.999) / scale,
            max: self.max as f64 / scale,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The buckets of the histogram this one replaced: values below 128 exact, then
    /// 128 per power of two. Bucket index of `v`.
    fn old_index(v: u64) -> usize {
        if v < 128 {
            return v as usize;
        }
        let msb = 63 - v.leading_zeros();
        let shift = msb - 7;
        let sub = (v >> shift) & 127;
        ((u64::from(shift) + 1) * 128 + sub) as usize
    }

    /// The old histogram's figure for bucket `i`: its smallest value plus half its
    /// width less one.
    fn old_value(i: usize) -> f64 {
        let i = i as u64;
        if i < 128 {
            return i as f64;
        }
        let shift = i / 128 - 1;
        let low = (128 + i % 128) << shift;
        low as f64 + ((1u64 << shift) as f64 - 1.0) / 2.0
    }

    /// The old histogram's percentile of `vals`.
    fn old_quantile(vals: &[u64], q: f64) -> f64 {
        let mut sorted = vals.to_vec();
        sorted.sort_unstable();
        let n = sorted.len() as u64;
        let rank = ((q * n as f64).ceil() as u64).clamp(1, n);
        let max = *sorted.last().unwrap() as f64;
        old_value(old_index(sorted[rank as usize - 1])).min(max)
    }

    #[test]
    fn every_bucket_middle_is_the_old_histograms() {
        let h = LogHist::new();
        let mut edges = vec![0u64, 1, 127, 128, 255, 256, u64::MAX - 1, u64::MAX];
        for i in 128..65 * 128u64 {
            let low = u128::from(128 + i % 128) << (i / 128 - 1);
            if let Ok(low) = u64::try_from(low) {
                edges.extend([low - 1, low, low + 1]);
            }
        }
        for v in edges {
            assert_eq!(h.middle(v), old_value(old_index(v)), "{v}");
        }
    }

    #[test]
    fn percentiles_are_the_old_histograms() {
        let mut rng = crate::test_rng::XorShift(0x015A_B0CE);
        for round in 0..40 {
            let n = [1usize, 2, 7, 999, 1000, 5000][round % 6];
            let vals: Vec<u64> = (0..n)
                .map(|_| match rng.below(8) {
                    0 => u64::MAX - rng.below(1 << 20),
                    1 => rng.below(256),
                    _ => rng.next() >> rng.below(64),
                })
                .collect();
            let mut h = LogHist::new();
            h.add_slice(&vals[..n / 2]);
            // The rest as gaps after 0.
            let mut times = vals[n / 2..].to_vec();
            let mut t = 0u64;
            for x in times.iter_mut() {
                t = t.saturating_add(*x);
                *x = t;
            }
            h.add_gaps(0, &times);
            let mut all = vals[..n / 2].to_vec();
            let mut p = 0;
            for &t in &times {
                all.push(t - p);
                p = t;
            }
            let got = h.percentiles(1.0).unwrap();
            assert_eq!(got.count, n as u64);
            assert_eq!(got.max, *all.iter().max().unwrap() as f64);
            for (q, v) in [
                (0.5, got.p50),
                (0.9, got.p90),
                (0.99, got.p99),
                (0.999, got.p99_9),
            ] {
                assert_eq!(v, old_quantile(&all, q), "round {round} q {q}");
            }
        }
    }

    #[test]
    fn log_hist_is_within_bucket_error() {
        let h = LogHist::new();
        for v in [0u64, 1, 127, 128, 129, 1000, 123_456_789, u64::MAX] {
            let rep = h.middle(v);
            assert!(
                (rep - v as f64).abs() <= v as f64 / 128.0 + 0.5,
                "{v} -> {rep}"
            );
        }
    }
}
