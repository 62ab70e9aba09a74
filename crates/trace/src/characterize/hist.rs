//! Log-linear histogram for the percentile figures (inter-arrival, service time).
//!
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
/// Integers below this are exact as f64.
const F64_EXACT: u64 = 1 << 53;

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

    /// [`LogHist::index`] for `v < 2^53`, from the bits of `v` as an f64 (exact
    /// there): its exponent and the top [`SUB_BITS`] of its mantissa are the bucket,
    /// found with a conversion and a shift, where the integer way takes a bit scan
    /// and a shift by a variable (several micro-ops each) and a branch for small `v`.
    #[inline(always)]
    fn index_below_2_pow_53(v: u64) -> usize {
        debug_assert!(v < F64_EXACT);
        // (exponent + 1023) * SUB + sub-bucket, minus the same for 2^SUB_BITS
        // (exponent 7), plus the SUB buckets of the values below it.
        const BIAS: u64 = (1023 + SUB_BITS as u64) * SUB - SUB;
        let bits = (v as i64 as f64).to_bits() >> (52 - SUB_BITS);
        let log = bits.wrapping_sub(BIAS) as usize;
        if v < SUB {
            v as usize
        } else {
            log
        }
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
    pub(super) fn add_slice(&mut self, vals: &[u64]) {
        let mut sum = 0u128;
        let mut max = self.max;
        let below = vals.iter().fold(0, |a, &v| a | v) < F64_EXACT;
        for &v in vals {
            let i = if below {
                Self::index_below_2_pow_53(v)
            } else {
                Self::index(v)
            };
            self.counts[i] += 1;
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
        let below = last - prev < F64_EXACT;
        for &t in times {
            let gap = t - p;
            let i = if below {
                Self::index_below_2_pow_53(gap)
            } else {
                Self::index(gap)
            };
            self.counts[i] += 1;
            max = max.max(gap);
            p = t;
        }
        self.n += times.len() as u64;
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
    fn f64_index_equals_the_integer_index_below_2_pow_53() {
        let mut rng = crate::test_rng::XorShift(0xF64);
        let check = |v: u64| {
            assert_eq!(LogHist::index_below_2_pow_53(v), LogHist::index(v), "{v}");
        };
        // Every bucket edge (and its neighbours) of every power of two, and randoms.
        for p in 0u32..53 {
            for sub in 0..SUB {
                let edge = (1u64 << p) + (sub << p.saturating_sub(SUB_BITS));
                for v in [edge.saturating_sub(1), edge, edge + 1] {
                    if v < F64_EXACT {
                        check(v);
                    }
                }
            }
        }
        for _ in 0..100_000 {
            let v = rng.below(F64_EXACT) >> rng.below(53);
            check(v);
        }
        check(F64_EXACT - 1);
    }

    #[test]
    fn both_index_ways_fill_the_same_buckets() {
        // Above 2^53 an f64 rounds: this one up into the next bucket.
        let big = (129u64 << 46) - 1;
        assert_ne!((big as f64) as u64 >> 46, big >> 46);
        // A batch with a value at or above 2^53 takes the integer way for all.
        let vals = [0u64, 127, 128, 5000, 1 << 40, F64_EXACT - 1];
        let mut a = LogHist::new();
        a.add_slice(&vals);
        a.counts[LogHist::index(big)] += 1;
        let mut b = LogHist::new();
        b.add_slice(&[vals.as_slice(), &[big]].concat());
        assert_eq!(a.counts, b.counts);
        // Gaps spanning more than 2^53 likewise.
        let mut g = LogHist::new();
        g.add_gaps(0, &[5, 1000, 1000 + big]);
        let mut h = LogHist::new();
        h.add_slice(&[5, 995, big]);
        assert_eq!(g.counts, h.counts);
        assert_eq!((g.sum, g.max), (h.sum, h.max));
    }

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
