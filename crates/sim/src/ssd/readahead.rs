//! Read-ahead for sequential reads: a read that starts where the previous read ended
//! has the drive read on, up to `read_ahead` past its end, into controller memory; a
//! later read of those units waits only for their NAND reads already under way, not
//! for new ones. Any other read ends the stream.

use std::collections::VecDeque;

/// Chunks read ahead are this many units (one 128 KiB host read's worth).
pub(super) const CHUNK_UNITS: u64 = 32;

/// The prefetched units of the current stream: chunks in LBA order, each (end LBA,
/// exclusive; when its data is in controller memory).
pub(super) struct ReadAhead {
    /// The LBA a sequential reader asks for next.
    next_lba: u64,
    /// Prefetched units are `from..until`.
    from: u64,
    until: u64,
    chunks: VecDeque<(u64, u64)>,
}

impl ReadAhead {
    pub(super) fn new() -> ReadAhead {
        ReadAhead {
            next_lba: u64::MAX,
            from: 0,
            until: 0,
            chunks: VecDeque::with_capacity(8),
        }
    }

    /// A read of units `first..=last`: whether it continues the stream. A read that
    /// does not drops what was read ahead.
    #[inline]
    pub(super) fn begin(&mut self, first: u64, last: u64) -> bool {
        let seq = first == self.next_lba;
        self.next_lba = last + 1;
        if !seq {
            self.chunks.clear();
            self.from = last + 1;
            self.until = last + 1;
        }
        seq
    }

    /// When unit `lba` is in controller memory, if it was read ahead.
    #[inline]
    pub(super) fn ready(&mut self, lba: u64) -> Option<u64> {
        if lba < self.from || lba >= self.until {
            return None;
        }
        while let Some(&(end, ready)) = self.chunks.front() {
            if lba < end {
                return Some(ready);
            }
            self.chunks.pop_front();
            self.from = end;
        }
        None
    }

    /// The next chunk to read ahead for a stream now at `next` with a window of
    /// `window` units on a drive of `units`: `start..end`, if the window is not full.
    #[inline]
    pub(super) fn want(&self, window: u64, units: u64) -> Option<(u64, u64)> {
        let start = self.until.max(self.next_lba);
        let limit = (self.next_lba + window).min(units);
        (start < limit).then(|| (start, (start + CHUNK_UNITS).min(limit)))
    }

    /// Units `start..end` are being read ahead; their data is in at `ready_ns`.
    #[inline]
    pub(super) fn add(&mut self, start: u64, end: u64, ready_ns: u64) {
        if self.chunks.is_empty() || start != self.until {
            self.chunks.clear();
            self.from = start;
        }
        self.until = end;
        self.chunks.push_back((end, ready_ns));
    }
}
