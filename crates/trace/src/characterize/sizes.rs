//! Counts and bytes per op, and the I/O size breakdown of reads and writes.

use super::isa::{multiversion, Isa};
use super::SIZE_BUCKETS_BYTES;
use crate::model::Op;

/// Per-op counts and bytes, and the size breakdown.
#[derive(Clone, Default)]
pub(super) struct Mix {
    pub(super) counts: [u64; 4],
    pub(super) bytes: [u64; 4],
    /// Per [`SIZE_BUCKETS_BYTES`] entry, then "other".
    pub(super) sizes: [u64; SIZE_BUCKETS_BYTES.len() + 1],
}

/// Size slots per op in the one counter table of [`Mix::push`]: the buckets, "other",
/// and one for trims and flushes (no size reported).
const SLOTS: usize = 8;
const OTHER: usize = SIZE_BUCKETS_BYTES.len();
const NOT_DATA: usize = OTHER + 1;
const _: () = assert!(NOT_DATA < SLOTS);
/// Rows whose counters [`Mix::push`] finds in one pass before it counts them.
const BLOCK: usize = 256;

impl Mix {
    /// One pass, rows taken four at a time into four copies of the counters: a
    /// counter is bumped at most once per four rows, so runs of the same op or size
    /// do not wait on each other's read-modify-write. Per row one count (op and size
    /// slot together: the op counts and the size breakdown are its sums) and one
    /// byte sum; the slot is found without a branch (1 row in 8 of the bench trace
    /// is "other": a branch on it mispredicted).
    pub(super) fn push(&mut self, ops: &[Op], len: &[u64], isa: Isa) {
        push_mix(isa, self, ops, len);
    }

    #[inline(always)]
    fn push_any(&mut self, ops: &[Op], len: &[u64], isa: Isa) {
        assert_eq!(ops.len(), len.len());
        if isa.wide_u64() {
            return self.push_wide(ops, len);
        }
        let mut counts = [[0u64; 4 * SLOTS]; 4];
        let mut bytes = [[0u64; 4]; 4];
        let (op4, ops_rest) = ops.split_at(ops.len() / 4 * 4);
        let (len4, len_rest) = len.split_at(op4.len());
        for (o, l) in op4.chunks_exact(4).zip(len4.chunks_exact(4)) {
            for k in 0..4 {
                let op = o[k].index();
                counts[k][op * SLOTS + slot(op, l[k])] += 1;
                bytes[k][op] += l[k];
            }
        }
        for (&o, &l) in ops_rest.iter().zip(len_rest) {
            let op = o.index();
            counts[0][op * SLOTS + slot(op, l)] += 1;
            bytes[0][op] += l;
        }
        self.add(&counts, &bytes);
    }

    /// [`Mix::push`] in passes that vectorise with AVX-512: the bytes per op as four
    /// masked sums, then per block of rows each row's counter (op and size slot),
    /// then the counts (four copies, as above). Perf samples of `characterize-mem`
    /// (10 M bench trace, per 1000 samples of the footprint loops, the same code in
    /// both binaries; two sets of 4 and 6 interleaved rounds, load 2.9-4.7): 290 ->
    /// 253 and 304 -> 241 against the one pass compiled for AVX-512 (itself 281 ->
    /// 263 against the portable build).
    #[inline(always)]
    fn push_wide(&mut self, ops: &[Op], len: &[u64]) {
        let mut bytes = [0u64; 4];
        for (&o, &l) in ops.iter().zip(len) {
            for (k, b) in bytes.iter_mut().enumerate() {
                *b += l & 0u64.wrapping_sub(u64::from(o.index() == k));
            }
        }
        let mut counts = [[0u64; 4 * SLOTS]; 4];
        for (o, l) in ops.chunks(BLOCK).zip(len.chunks(BLOCK)) {
            let mut at = [0u8; BLOCK];
            let at = &mut at[..o.len()];
            for ((a, &o), &l) in at.iter_mut().zip(o).zip(l) {
                let op = o.index();
                *a = (op * SLOTS + slot(op, l)) as u8;
            }
            let (at4, rest) = at.split_at(at.len() / 4 * 4);
            for a in at4.chunks_exact(4) {
                for k in 0..4 {
                    counts[k][usize::from(a[k])] += 1;
                }
            }
            for &a in rest {
                counts[0][usize::from(a)] += 1;
            }
        }
        self.add(&counts, &[bytes, [0; 4], [0; 4], [0; 4]]);
    }

    /// Adds four copies of the per-slot counts and of the bytes per op.
    fn add(&mut self, counts: &[[u64; 4 * SLOTS]; 4], bytes: &[[u64; 4]; 4]) {
        for k in 0..4 {
            for op in 0..4 {
                self.bytes[op] += bytes[k][op];
                let per_slot = &counts[k][op * SLOTS..(op + 1) * SLOTS];
                self.counts[op] += per_slot.iter().sum::<u64>();
                if op < 2 {
                    for (s, &n) in self.sizes.iter_mut().zip(per_slot) {
                        *s += n;
                    }
                }
            }
        }
    }
}

multiversion! {
    fn push_mix(mix: &mut Mix, ops: &[Op], len: &[u64]) = Mix::push_any;
}

/// The size slot of a row of op index `op`: [`size_bucket`] for reads and writes,
/// [`NOT_DATA`] for the others; selects, no branch.
#[inline(always)]
fn slot(op: usize, len: u64) -> usize {
    let size = size_bucket(len);
    let data = 0usize.wrapping_sub(usize::from(op < 2));
    (data & size) | (!data & NOT_DATA)
}

/// Index into [`SIZE_BUCKETS_BYTES`] (its length for "other"), without a search or a
/// branch.
#[inline(always)]
fn size_bucket(len: u64) -> usize {
    let pow2 = len & len.wrapping_sub(1) == 0;
    let in_range = len.wrapping_sub(4096) <= 131_072 - 4096;
    let exact = 0usize.wrapping_sub(usize::from(pow2 & in_range));
    let bucket = (len.trailing_zeros() as usize).wrapping_sub(12);
    (exact & bucket) | (!exact & OTHER)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_bucket_takes_only_the_exact_sizes() {
        for (i, &b) in SIZE_BUCKETS_BYTES.iter().enumerate() {
            assert_eq!(size_bucket(b), i, "{b}");
            for other in [b - 1, b + 1, b + 512, b * 3 / 2] {
                assert_eq!(size_bucket(other), OTHER, "{other}");
            }
        }
        for other in [0, 1, 512, 2048, 262_144, 1 << 40, u64::MAX, 3 << 12] {
            assert_eq!(size_bucket(other), OTHER, "{other}");
        }
    }

    #[test]
    fn every_isa_counts_the_same() {
        let mut rng = crate::test_rng::XorShift(0x5125);
        let lens = [0, 1, 4095, 4096, 8192, 12_288, 131_072, 262_144, 1 << 40];
        for n in [0usize, 1, 3, BLOCK - 1, BLOCK, BLOCK + 1, 5000, 8192] {
            let ops: Vec<Op> = (0..n)
                .map(|_| [Op::Read, Op::Write, Op::Trim, Op::Flush][rng.below(4) as usize])
                .collect();
            let len: Vec<u64> = (0..n)
                .map(|_| lens[rng.below(lens.len() as u64) as usize] >> rng.below(2))
                .collect();
            let mut want = Mix::default();
            want.push(&ops, &len, Isa::Portable);
            for isa in Isa::available() {
                let mut m = Mix::default();
                m.push(&ops, &len, isa);
                assert!(
                    (m.counts, m.bytes, m.sizes) == (want.counts, want.bytes, want.sizes),
                    "{isa:?} n {n}"
                );
            }
        }
    }

    #[test]
    fn counts_sizes_of_reads_and_writes_only() {
        let ops = [
            Op::Read,
            Op::Write,
            Op::Trim,
            Op::Flush,
            Op::Read,
            Op::Write,
            Op::Read,
        ];
        let len = [4096, 131_072, 4096, 0, 12_288, 8192, 4096];
        for isa in Isa::available() {
            let mut m = Mix::default();
            m.push(&ops, &len, isa);
            assert_eq!(m.counts, [3, 2, 1, 1], "{isa:?}");
            assert_eq!(m.bytes, [4096 + 12_288 + 4096, 131_072 + 8192, 4096, 0]);
            assert_eq!(m.sizes, [2, 1, 0, 0, 0, 1, 1], "{isa:?}");
        }
    }
}
