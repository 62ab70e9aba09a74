//! Logical to physical: the mapping table (L2P), the slot-to-LBA table (P2L), the
//! valid-slot bitmap, and a host write of one unit.

use super::{prefetch, Ftl, Placed, CLOSED, CONT, NONE};

impl Ftl {
    /// Where `lba` lives: (physical die, in SLC-mode block), or None if unmapped.
    #[inline]
    pub fn locate(&self, lba: u64) -> Option<(u32, bool)> {
        self.locate_stripe(lba).map(|(d, slc, _)| (d, slc))
    }

    /// As [`Ftl::locate`], with the stripe (one multi-plane page read) it is in.
    #[inline]
    pub fn locate_stripe(&self, lba: u64) -> Option<(u32, bool, u32)> {
        let s = self.l2p[lba as usize];
        if s == NONE {
            return None;
        }
        let b = self.block_of(s);
        Some((
            self.phys_die(s),
            self.slc_mode[b as usize],
            s / self.stripe_slots,
        ))
    }

    #[inline]
    pub(super) fn place(&mut self, lba: u32, s: u32, len: u32) {
        let b = self.block_of(s);
        self.p2l[s as usize] = lba;
        for i in 1..len {
            self.p2l[(s + i) as usize] = CONT;
        }
        self.set_valid(s, len);
        self.valid[b as usize] += len;
        if self.wp[b as usize] == self.cap[b as usize] {
            self.close(b);
        }
        self.l2p[lba as usize] = s;
        if self.spu != 1 {
            self.ulen[lba as usize] = len as u8;
        }
        self.c.nand_write_bytes += len as u64 * self.slot_bytes;
    }

    /// Drop the mapping of `lba`, if any.
    #[inline]
    pub fn invalidate(&mut self, lba: u32) {
        let s = self.l2p[lba as usize];
        if s == NONE {
            return;
        }
        let len = self.len_of(lba);
        let b = self.block_of(s);
        let bu = b as usize;
        debug_assert_eq!(self.p2l[s as usize], lba);
        self.clear_valid(s, len);
        // Closed native blocks are always in the buckets (GC never runs during this).
        let bucketed = self.bucketed() && self.state[bu] == CLOSED && !self.slc_mode[bu];
        if bucketed {
            self.bucket_unlink(b);
            self.valid[bu] -= len;
            self.bucket_link(b);
        } else {
            self.valid[bu] -= len;
        }
        self.l2p[lba as usize] = NONE;
    }

    /// Host writes one 4 KiB unit taking `slots` slots. Runs foreground GC if needed.
    pub fn write_unit(&mut self, lba: u32, slots: u32) -> Placed {
        debug_assert!((lba as u64) < self.user_units);
        self.invalidate(lba);
        self.seq += 1;
        let mut placed = None;
        if self.slc_takes_host_write() {
            let d = self.next_die;
            if self.slc_block(d) || self.fold_for_host(d) {
                let mut s = self.alloc(d, slots, true);
                if s == NONE && self.slc_block(d) {
                    s = self.alloc(d, slots, true);
                }
                if s != NONE {
                    self.next_die = if d + 1 == self.dies { 0 } else { d + 1 };
                    placed = Some((d, s, true));
                }
            }
        }
        let (d, s, slc) = match placed {
            Some(p) => {
                self.c.slc_hit_bytes += slots as u64 * self.slot_bytes;
                p
            }
            None => {
                let (d, s) = self.alloc_native_rr(slots, false);
                self.c.native_direct_bytes += slots as u64 * self.slot_bytes;
                (d, s, false)
            }
        };
        let _ = d;
        self.place(lba, s, slots);
        self.foreground_gc(slots);
        self.wear_level();
        Placed {
            die: self.phys_die(s),
            slots,
            slc,
        }
    }

    #[inline]
    pub(super) fn is_valid(&self, s: u32) -> bool {
        self.vbits[(s / 64) as usize] >> (s % 64) & 1 == 1
    }

    /// Mark slots s..s+len valid (they were not).
    #[inline]
    pub(super) fn set_valid(&mut self, s: u32, len: u32) {
        for k in s..s + len {
            let (w, m) = ((k / 64) as usize, 1u64 << (k % 64));
            debug_assert_eq!(self.vbits[w] & m, 0, "slot {k} already valid");
            self.vbits[w] |= m;
        }
    }

    /// Mark slots s..s+len invalid (they were valid).
    #[inline]
    pub(super) fn clear_valid(&mut self, s: u32, len: u32) {
        for k in s..s + len {
            let (w, m) = ((k / 64) as usize, 1u64 << (k % 64));
            debug_assert_ne!(self.vbits[w] & m, 0, "slot {k} not valid");
            self.vbits[w] &= !m;
        }
    }

    /// First valid slot in from..to.
    #[inline]
    pub(super) fn next_valid(&self, from: u32, to: u32) -> Option<u32> {
        if from >= to {
            return None;
        }
        let mut w = (from / 64) as usize;
        let mut bits = self.vbits[w] & (u64::MAX << (from % 64));
        loop {
            if bits != 0 {
                let s = w as u32 * 64 + bits.trailing_zeros();
                return (s < to).then_some(s);
            }
            w += 1;
            if w as u64 * 64 >= to as u64 {
                return None;
            }
            bits = self.vbits[w];
        }
    }

    /// Prefetch the mapping entries of the valid units in slots base..base+end (about
    /// to be relocated).
    #[inline]
    pub(super) fn prefetch_mappings(&self, base: u32, end: u32) {
        let mut from = base;
        while let Some(s) = self.next_valid(from, base + end) {
            let l = self.p2l[s as usize];
            if l < CONT {
                prefetch(&self.l2p, l as usize);
            }
            from = s + 1;
        }
    }

    /// Maps `lba` to the unit that starts at slot `s` (its continuation slots follow).
    #[inline]
    pub(super) fn map_unit(&mut self, lba: usize, s: u32) {
        let spu = self.spu;
        self.p2l[s as usize] = lba as u32;
        for i in 1..spu {
            self.p2l[(s + i) as usize] = CONT;
        }
        self.set_valid(s, spu);
        self.l2p[lba] = s;
        if spu != 1 {
            self.ulen[lba] = spu as u8;
        }
    }
}
