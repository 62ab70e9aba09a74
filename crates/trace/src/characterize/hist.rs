//! Log-linear histogram for the percentile figures (inter-arrival, service time).
//!
//! With AVX-512 (`Isa::wide_u64`) a batch is counted in passes: sum (high and low 32
//! bits apart, no carry) and maximum in one, then per block of [`BLOCK`] the bucket
//! indices (the u64 to f64 conversion is one instruction for 8 lanes there), then the
//! increments. Measured (perf samples of `trace_bench characterize-mem` on the 10 M
//! bench trace, 4 interleaved rounds of 3 runs, per 1000 samples of the footprint
//! loops, the same code in every binary, as a yardstick against the host's noise;
//! load 3.1-3.6): `add_slice` 267 -> 130, `add_gaps` 246 -> 169. The same passes in
//! the portable build (SSE2: no 64-bit max or compare, a scalar conversion) took 329
//! and 363 against 256 and 235 for the one loop, so the portable build keeps it; so
//! did AVX2 without AVX-512 (219 and 238: no gain). A conversion that vectorises
//! without AVX-512 (`(2^52 + v) - 2^52` from the bits) in the one loop: 273 and 261
//! against 263 and 238 (noise at best), dropped.

use super::isa::{multiversion, Isa};
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
/// Values whose buckets are found in one pass before they are counted in another.
const BLOCK: usize = 256;

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

    /// Counts `vals` or, with `gaps_after = Some(prev)`, the gaps between
    /// consecutive values of `prev` followed by `vals` (each value counted below
    /// 2^53), a block at a time: their buckets in one pass (no dependence between
    /// values: it vectorises, the conversion to f64 native with AVX-512), then one
    /// increment each.
    #[inline(always)]
    fn count_below_2_pow_53(&mut self, vals: &[u64], gaps_after: Option<u64>) {
        let counts = &mut self.counts[..(65 * SUB) as usize];
        let mut prev = gaps_after.unwrap_or(0);
        for block in vals.chunks(BLOCK) {
            let mut idx = [0u16; BLOCK];
            let idx = &mut idx[..block.len()];
            if gaps_after.is_some() {
                idx[0] = Self::index_below_2_pow_53(block[0] - prev) as u16;
                for (x, w) in idx[1..].iter_mut().zip(block.windows(2)) {
                    *x = Self::index_below_2_pow_53(w[1] - w[0]) as u16;
                }
                prev = block[block.len() - 1];
            } else {
                for (x, &v) in idx.iter_mut().zip(block) {
                    *x = Self::index_below_2_pow_53(v) as u16;
                }
            }
            for &x in idx.iter() {
                counts[usize::from(x)] += 1;
            }
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
        self.add_slice(&[v], Isa::Portable);
    }

    /// Adds every value of `vals`.
    pub(super) fn add_slice(&mut self, vals: &[u64], isa: Isa) {
        add_slice_to(isa, self, vals);
    }

    #[inline(always)]
    fn add_slice_any(&mut self, vals: &[u64], isa: Isa) {
        if !isa.wide_u64() {
            return self.add_slice_scalar(vals);
        }
        let n = vals.len();
        assert!(n < 1 << 32);
        // The sum as its high and low 32 bits apart (each fits a u64 for fewer than
        // 2^32 values), and the maximum: no carry, so it vectorises.
        let (mut hi, mut lo, mut max) = (0u64, 0u64, self.max);
        for &v in vals {
            hi += v >> 32;
            lo += v & 0xFFFF_FFFF;
            max = max.max(v);
        }
        // Values below 2^53 (any time under 104 days in ns) take the f64 index; a
        // batch holding a larger one takes the integer way.
        if max < F64_EXACT {
            self.count_below_2_pow_53(vals, None);
        } else {
            for &v in vals {
                self.counts[Self::index(v)] += 1;
            }
        }
        self.n += n as u64;
        self.sum += (u128::from(hi) << 32) + u128::from(lo);
        self.max = max;
    }

    /// Adds the gaps between consecutive times of `prev` followed by `times`
    /// (non-decreasing): one value per element of `times`.
    pub(super) fn add_gaps(&mut self, prev: u64, times: &[u64], isa: Isa) {
        add_gaps_to(isa, self, prev, times);
    }

    #[inline(always)]
    fn add_gaps_any(&mut self, prev: u64, times: &[u64], isa: Isa) {
        if !isa.wide_u64() {
            return self.add_gaps_scalar(prev, times);
        }
        let Some(&last) = times.last() else { return };
        debug_assert!(prev <= times[0]);
        // Every gap is at most last - prev: below 2^53, the f64 index.
        if last - prev < F64_EXACT {
            self.count_below_2_pow_53(times, Some(prev));
        } else {
            let mut p = prev;
            for &t in times {
                self.counts[Self::index(t - p)] += 1;
                p = t;
            }
        }
        let mut max = self.max.max(times[0] - prev);
        for w in times.windows(2) {
            max = max.max(w[1] - w[0]);
        }
        self.n += times.len() as u64;
        // The gaps telescope.
        self.sum += u128::from(last - prev);
        self.max = max;
    }

    /// [`LogHist::add_slice`] one value at a time, for the portable build: its
    /// 64-bit max and compares take several instructions per lane, and the split
    /// passes of the wide way cost more than they save (see the module notes).
    #[inline(always)]
    fn add_slice_scalar(&mut self, vals: &[u64]) {
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

    /// [`LogHist::add_gaps`] one gap at a time, for the portable build.
    #[inline(always)]
    fn add_gaps_scalar(&mut self, prev: u64, times: &[u64]) {
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

multiversion! {
    fn add_slice_to(h: &mut LogHist, vals: &[u64]) = LogHist::add_slice_any;
}
multiversion! {
    fn add_gaps_to(h: &mut LogHist, prev: u64, times: &[u64]) = LogHist::add_gaps_any;
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
        a.add_slice(&vals, Isa::Portable);
        a.counts[LogHist::index(big)] += 1;
        let mut b = LogHist::new();
        b.add_slice(&[vals.as_slice(), &[big]].concat(), Isa::Portable);
        assert_eq!(a.counts, b.counts);
        // Gaps spanning more than 2^53 likewise.
        let mut g = LogHist::new();
        g.add_gaps(0, &[5, 1000, 1000 + big], Isa::Portable);
        let mut h = LogHist::new();
        h.add_slice(&[5, 995, big], Isa::Portable);
        assert_eq!(g.counts, h.counts);
        assert_eq!((g.sum, g.max), (h.sum, h.max));
    }

    #[test]
    fn every_isa_fills_the_same_histogram() {
        let mut rng = crate::test_rng::XorShift(0x015A_B0CE);
        // The lowest value of every bucket and its neighbours, 2^53 and around it,
        // u64::MAX.
        let mut edges = vec![0u64, 1, SUB - 1, SUB, F64_EXACT - 1, F64_EXACT, u64::MAX];
        for i in SUB..65 * SUB {
            let low = u128::from(SUB + i % SUB) << (i / SUB - 1);
            if let Ok(low) = u64::try_from(low) {
                assert_eq!(LogHist::index(low), i as usize);
                edges.extend([low - 1, low, low + 1]);
            }
        }
        let isas = Isa::available();
        for round in 0..64 {
            // Lengths around the block and the chunk; values below 2^53 or with some
            // above (the integer way); the gaps from a start before the sorted values.
            let n = [0, 1, 7, BLOCK - 1, BLOCK, BLOCK + 1, 1000, 8192][round % 8];
            let big = round % 3 == 0;
            let mut vals: Vec<u64> = (0..n)
                .map(|_| match rng.below(4) {
                    0 => edges[rng.below(edges.len() as u64) as usize],
                    _ if big => rng.next(),
                    _ => rng.below(F64_EXACT) >> rng.below(53),
                })
                .filter(|&v| big || v < F64_EXACT)
                .collect();
            let unsorted = vals.clone();
            vals.sort_unstable();
            let before = [0, 1, 1000, u64::MAX][round / 8 % 4];
            let prev = vals.first().map_or(0, |&v| v - v.min(before));
            let hists: Vec<LogHist> = isas
                .iter()
                .map(|&isa| {
                    let mut h = LogHist::new();
                    h.add_slice(&unsorted, isa);
                    h.add_gaps(prev, &vals, isa);
                    h
                })
                .collect();
            let p = &hists[0];
            for (isa, h) in isas.iter().zip(&hists) {
                assert!(
                    h.counts == p.counts && (h.n, h.sum, h.max) == (p.n, p.sum, p.max),
                    "{isa:?} against portable, round {round}"
                );
            }
            assert_eq!(p.n as usize, 2 * vals.len());
        }
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
