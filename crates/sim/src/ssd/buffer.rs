//! The controller's write buffer: a ring of the host units it holds, in the order they
//! came in. A write completes once its data is in the buffer; a unit leaves it when
//! its program ends. The ring frees in order (a circular DRAM buffer): a new unit takes
//! the place of the unit `write_buffer` units before it, so it waits until that unit's
//! program is done. A die that falls behind (GC in its way) holds up the units behind
//! its own, as a circular buffer does.

/// The ring: each entry the time its unit's program ends (0: a free place).
pub(super) struct WriteBuffer {
    release_ns: Vec<u64>,
    pos: usize,
    /// Admission of the last write (writes come in in order).
    last_admit_ns: u64,
}

impl WriteBuffer {
    pub(super) fn new(units: u32) -> WriteBuffer {
        assert!(units > 0, "write buffer of at least one unit");
        WriteBuffer {
            release_ns: vec![0; units as usize],
            pos: 0,
            last_admit_ns: 0,
        }
    }

    /// When a write of `units` units whose command is done at `ready_ns` is taken in:
    /// after the writes before it, and once the units whose places it takes are
    /// programmed (a write larger than the buffer waits for all of it).
    #[inline]
    pub(super) fn admit(&mut self, ready_ns: u64, units: u64) -> u64 {
        let n = self.release_ns.len();
        let mut a = ready_ns.max(self.last_admit_ns);
        let take = (units as usize).min(n);
        let mut i = self.pos;
        for _ in 0..take {
            a = a.max(self.release_ns[i]);
            i += 1;
            if i == n {
                i = 0;
            }
        }
        self.last_admit_ns = a;
        a
    }

    /// A unit of the write just admitted goes to the dies; its program ends at `end_ns`.
    #[inline]
    pub(super) fn push(&mut self, end_ns: u64) {
        self.release_ns[self.pos] = end_ns;
        self.pos += 1;
        if self.pos == self.release_ns.len() {
            self.pos = 0;
        }
    }
}
