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

impl Mix {
    /// One pass, rows taken four at a time into four copies of the counters: a
    /// counter is bumped at most once per four rows, so runs of the same op or size
    /// do not wait on each other's read-modify-write, and there is no branch.
    #[inline(never)]
    pub(super) fn push(&mut self, ops: &[Op], len: &[u64]) {
        assert_eq!(ops.len(), len.len());
        const OTHER: usize = SIZE_BUCKETS_BYTES.len();
        // Size slot per row; trims and flushes go to a slot not reported.
        let slot = |op: Op, l: u64| {
            if op.is_data() {
                size_bucket(l)
            } else {
                OTHER + 1
            }
        };
        let mut counts = [[0u64; 4]; 4];
        let mut bytes = [[0u64; 4]; 4];
        let mut sizes = [[0u64; OTHER + 2]; 4];
        let (op4, ops_rest) = ops.split_at(ops.len() / 4 * 4);
        let (len4, len_rest) = len.split_at(op4.len());
        for (o, l) in op4.chunks_exact(4).zip(len4.chunks_exact(4)) {
            for k in 0..4 {
                counts[k][o[k].index()] += 1;
                bytes[k][o[k].index()] += l[k];
                sizes[k][slot(o[k], l[k])] += 1;
            }
        }
        for (&o, &l) in ops_rest.iter().zip(len_rest) {
            counts[0][o.index()] += 1;
            bytes[0][o.index()] += l;
            sizes[0][slot(o, l)] += 1;
        }
        for k in 0..4 {
            for op in 0..4 {
                self.counts[op] += counts[k][op];
                self.bytes[op] += bytes[k][op];
            }
            for (s, &n) in self.sizes.iter_mut().zip(&sizes[k]) {
                *s += n;
            }
        }
    }
}

/// Index into [`SIZE_BUCKETS_BYTES`] (its length for "other"), without a search.
#[inline]
fn size_bucket(len: u64) -> usize {
    if len.is_power_of_two() && (4096..=131_072).contains(&len) {
        (len.trailing_zeros() - 12) as usize
    } else {
        SIZE_BUCKETS_BYTES.len()
    }
}
