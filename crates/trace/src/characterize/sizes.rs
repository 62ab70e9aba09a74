//! Counts and bytes per op, and the I/O size breakdown of reads and writes.

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

impl Mix {
    /// One pass, rows taken four at a time into four copies of the counters: a
    /// counter is bumped at most once per four rows, so runs of the same op or size
    /// do not wait on each other's read-modify-write. Per row one count (op and size
    /// slot together: the op counts and the size breakdown are its sums) and one
    /// byte sum; the slot is found without a branch (1 row in 8 of the bench trace
    /// is "other": a branch on it mispredicted).
    pub(super) fn push(&mut self, ops: &[Op], len: &[u64]) {
        assert_eq!(ops.len(), len.len());
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
    fn counts_as_one_row_at_a_time() {
        let mut rng = crate::test_rng::XorShift(0x5125);
        let lens = [0, 1, 4095, 4096, 8192, 12_288, 131_072, 262_144, 1 << 40];
        for n in [0usize, 1, 3, 5, 255, 256, 257, 5000, 8192] {
            let ops: Vec<Op> = (0..n)
                .map(|_| [Op::Read, Op::Write, Op::Trim, Op::Flush][rng.below(4) as usize])
                .collect();
            let len: Vec<u64> = (0..n)
                .map(|_| lens[rng.below(lens.len() as u64) as usize] >> rng.below(2))
                .collect();
            let mut want = Mix::default();
            for (&o, &l) in ops.iter().zip(&len) {
                want.counts[o.index()] += 1;
                want.bytes[o.index()] += l;
                if o.is_data() {
                    want.sizes[size_bucket(l)] += 1;
                }
            }
            let mut m = Mix::default();
            m.push(&ops, &len);
            assert!(
                (m.counts, m.bytes, m.sizes) == (want.counts, want.bytes, want.sizes),
                "n {n}"
            );
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
        let mut m = Mix::default();
        m.push(&ops, &len);
        assert_eq!(m.counts, [3, 2, 1, 1]);
        assert_eq!(m.bytes, [4096 + 12_288 + 4096, 131_072 + 8192, 4096, 0]);
        assert_eq!(m.sizes, [2, 1, 0, 0, 0, 1, 1]);
    }
}
