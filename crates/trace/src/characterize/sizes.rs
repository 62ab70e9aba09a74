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
    /// One pass with a fixed accumulator per op and per size: no indexed stores, so
    /// no chain of read-modify-writes through memory, and no branch on the op.
    #[inline(never)]
    pub(super) fn push(&mut self, ops: &[Op], len: &[u64]) {
        assert_eq!(ops.len(), len.len());
        let mut counts = [0u64; 4];
        let mut bytes = [0u64; 4];
        let mut exact = [0u64; SIZE_BUCKETS_BYTES.len()];
        for (&op, &l) in ops.iter().zip(len) {
            for (k, (c, b)) in counts.iter_mut().zip(bytes.iter_mut()).enumerate() {
                let hit = u64::from(op as usize == k);
                *c += hit;
                *b += l & hit.wrapping_neg();
            }
            let data = u64::from(op.is_data());
            for (e, &size) in exact.iter_mut().zip(&SIZE_BUCKETS_BYTES) {
                *e += data & u64::from(l == size);
            }
        }
        let data = counts[Op::Read.index()] + counts[Op::Write.index()];
        for k in 0..4 {
            self.counts[k] += counts[k];
            self.bytes[k] += bytes[k];
        }
        for (s, e) in self.sizes.iter_mut().zip(exact) {
            *s += e;
        }
        self.sizes[SIZE_BUCKETS_BYTES.len()] += data - exact.iter().sum::<u64>();
    }
}
