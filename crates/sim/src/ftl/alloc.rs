//! Allocation: free pools (least-worn first with wear levelling), open blocks, and
//! the write frontiers of host data and GC.

use super::{Ftl, CLOSED, FREE, NONE, OPEN};
use std::cmp::Reverse;

impl Ftl {
    #[inline]
    pub(super) fn pop_free_native(&mut self, d: u32) -> Option<u32> {
        let Reverse((_, b)) = self.die[d as usize].free_native.pop()?;
        self.free_native_total -= 1;
        self.refresh_room(d);
        Some(b)
    }

    /// Put native block b on its die's free heap (not counted in free_native_total:
    /// callers that add a block to the pool count it).
    #[inline]
    pub(super) fn push_free_native(&mut self, b: u32) {
        let key = if self.cfg.wear_leveling {
            ((self.erase_count[b as usize] as u64) << 32) | b as u64
        } else {
            self.free_push_seq += 1;
            u64::MAX - self.free_push_seq
        };
        let d = self.die_of(b);
        self.die[d as usize].free_native.push(Reverse((key, b)));
        self.refresh_room(d);
    }

    pub(super) fn close(&mut self, b: u32) {
        let bu = b as usize;
        debug_assert_eq!(self.state[bu], OPEN);
        self.state[bu] = CLOSED;
        self.close_seq[bu] = self.seq;
        let d = self.die_of(b) as usize;
        if self.slc_mode[bu] {
            if self.die[d].open_slc == b {
                self.die[d].open_slc = NONE;
            }
            if self.is_static(b) {
                self.slc_closed_static.push_back(b);
            } else {
                self.slc_closed_dyn.push_back(b);
            }
        } else {
            if self.die[d].open_native == b {
                self.die[d].open_native = NONE;
                self.refresh_room(d as u32);
            }
            self.victim_insert(b);
        }
    }

    /// Open a native block on die d (the free list must not be empty: GC keeps a reserve).
    pub(super) fn open_native(&mut self, d: u32) -> u32 {
        let b = self.pop_free_native(d).unwrap_or_else(|| {
            panic!(
                "sim FTL: die {d} has no free native block (GC reserve exhausted; config validation should prevent this)"
            )
        });
        let bu = b as usize;
        assert_eq!(self.state[bu], FREE);
        assert_eq!(self.wp[bu], 0);
        self.state[bu] = OPEN;
        self.slc_mode[bu] = false;
        self.cap[bu] = self.spb;
        self.die[d as usize].open_native = b;
        self.refresh_room(d);
        b
    }

    /// Allocate `len` contiguous slots in the open native (or SLC) block of die d.
    #[inline]
    pub(super) fn alloc(&mut self, d: u32, len: u32, slc: bool) -> u32 {
        loop {
            let dd = &self.die[d as usize];
            let b = if slc { dd.open_slc } else { dd.open_native };
            let b = if b == NONE {
                assert!(!slc, "SLC block must be opened by the caller");
                self.open_native(d)
            } else {
                b
            };
            let bu = b as usize;
            let wp = self.wp[bu];
            if wp + len <= self.cap[bu] {
                // A block that is now full is closed by `place`, after its valid count
                // is updated (the victim structures key on it).
                self.wp[bu] = wp + len;
                return b * self.spb + wp;
            }
            // Does not fit (compressed unit at the end of a block): pad and close.
            self.wp[bu] = self.cap[bu];
            self.close(b);
            if slc {
                return NONE;
            }
        }
    }

    /// Can die d take `len` slots of native data (room in its open block, or a free block)?
    #[inline]
    pub(super) fn native_room(&self, d: u32, len: u32) -> bool {
        let dd = &self.die[d as usize];
        (dd.open_native != NONE
            && self.wp[dd.open_native as usize] + len <= self.cap[dd.open_native as usize])
            || !dd.free_native.is_empty()
    }

    /// First die in lo..hi with room for `len` native slots, looking only at dies whose
    /// room bit is set (a clear bit means no open and no free native block: no room).
    #[inline]
    pub(super) fn find_room(&self, mut lo: u32, hi: u32, len: u32) -> Option<u32> {
        while lo < hi {
            let w = (lo / 64) as usize;
            let bits = self.room[w] & (u64::MAX << (lo % 64));
            if bits == 0 {
                lo = (w as u32 + 1) * 64;
                continue;
            }
            let d = w as u32 * 64 + bits.trailing_zeros();
            if d >= hi {
                return None;
            }
            if self.native_room(d, len) {
                return Some(d);
            }
            lo = d + 1;
        }
        None
    }

    /// Allocate `len` native slots on the next die (round-robin from `*next`) with room.
    pub(super) fn alloc_native_rr(&mut self, len: u32, gc: bool) -> (u32, u32) {
        if self.dies == 1 {
            // One allocation group (every drive the spec builds): no round robin, and
            // usually room in the open block.
            let b = self.die[0].open_native;
            if b != NONE {
                let (bu, wp) = (b as usize, self.wp[b as usize]);
                if wp + len <= self.cap[bu] {
                    self.wp[bu] = wp + len;
                    return (0, b * self.spb + wp);
                }
            }
            assert!(
                self.native_room(0, len),
                "sim FTL: no room for {len} slots (GC reserve exhausted)"
            );
            return (0, self.alloc(0, len, false));
        }
        let start = if gc { self.gc_next_die } else { self.next_die };
        let Some(d) = self
            .find_room(start, self.dies, len)
            .or_else(|| self.find_room(0, start, len))
        else {
            panic!("sim FTL: no die has room for {len} slots (GC reserve exhausted)");
        };
        let nd = if d + 1 == self.dies { 0 } else { d + 1 };
        if gc {
            self.gc_next_die = nd;
        } else {
            self.next_die = nd;
        }
        (d, self.alloc(d, len, false))
    }

    /// The slot the next native write goes to in the open native block, if one is open
    /// (the frontier; GC and host data share it).
    pub fn frontier_slot(&self) -> Option<u32> {
        let b = self.die[0].open_native;
        (b != NONE).then(|| b * self.spb + self.wp[b as usize])
    }

    /// Slots of one stripe (a multi-plane page program on one die).
    pub fn stripe_slots(&self) -> u32 {
        self.stripe_slots
    }
}
