//! Log-linear histogram for the percentile figures (inter-arrival, service time).

use super::Percentiles;

/// Log-linear histogram of u64 values: 2^SUB sub-buckets per power of two, so any
/// reported percentile is within 1/2^SUB (0.8%) of a real sample. Fixed size.
#[derive(Clone)]
pub(super) struct LogHist {
    counts: Vec<u64>,
    n: u64,
    sum: u128,
    max: u64,
}

const SUB_BITS: u32 = 7;
const SUB: u64 = 1 << SUB_BITS;

impl LogHist {
    pub(super) fn new() -> Self {
        LogHist {
            counts: vec![0; (65 * SUB) as usize],
            n: 0,
            sum: 0,
            max: 0,
        }
    }

    #[inline]
    pub(super) fn index(v: u64) -> usize {
        if v < SUB {
            return v as usize;
        }
        let msb = 63 - v.leading_zeros(); // >= SUB_BITS
        let shift = msb - SUB_BITS;
        let sub = (v >> shift) & (SUB - 1);
        ((u64::from(shift) + 1) * SUB + sub) as usize
    }

    /// The smallest value that maps to bucket `i`, plus half the bucket width.
    pub(super) fn value(i: usize) -> f64 {
        let i = i as u64;
        if i < SUB {
            return i as f64;
        }
        let shift = i / SUB - 1;
        let sub = i % SUB;
        let low = (SUB + sub) << shift;
        low as f64 + ((1u64 << shift) as f64 - 1.0) / 2.0
    }

    #[cfg(test)]
    pub(super) fn add(&mut self, v: u64) {
        self.add_slice(&[v]);
    }

    /// Adds every value of `vals`.
    #[inline(never)]
    pub(super) fn add_slice(&mut self, vals: &[u64]) {
        let mut sum = 0u128;
        let mut max = self.max;
        for &v in vals {
            self.counts[Self::index(v)] += 1;
            sum += u128::from(v);
            max = max.max(v);
        }
        self.n += vals.len() as u64;
        self.sum += sum;
        self.max = max;
    }

    /// Adds the gaps between consecutive times of `prev` followed by `times`
    /// (non-decreasing): one value per element of `times`.
    #[inline(never)]
    pub(super) fn add_gaps(&mut self, prev: u64, times: &[u64]) {
        let Some(&last) = times.last() else { return };
        debug_assert!(prev <= times[0]);
        let mut p = prev;
        let mut max = self.max;
        for &t in times {
            let gap = t - p;
            self.counts[Self::index(gap)] += 1;
            max = max.max(gap);
            p = t;
        }
        self.n += times.len() as u64;
        // The gaps telescope.
        self.sum += u128::from(last - prev);
        self.max = max;
    }

    fn quantile(&self, q: f64) -> f64 {
        assert!(self.n > 0);
        let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Self::value(i).min(self.max as f64);
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

    #[test]
    fn log_hist_is_within_bucket_error() {
        let mut h = LogHist::new();
        for v in [0u64, 1, 127, 128, 129, 1000, 123_456_789, u64::MAX] {
            h.add(v);
            let i = LogHist::index(v);
            let rep = LogHist::value(i);
            assert!(
                (rep - v as f64).abs() <= v as f64 / 128.0 + 0.5,
                "{v} -> {rep}"
            );
        }
    }
}
