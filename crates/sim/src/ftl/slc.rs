//! The SLC cache: static SLC-mode blocks beside the native ones, and dynamic ones taken
//! from the native free pool while the drive has room.

use super::{Ftl, FREE, NONE, OPEN};
use crate::config::SlcFull;

impl Ftl {
    /// Try to get an open SLC block on die d for a host write.
    pub(super) fn slc_block(&mut self, d: u32) -> bool {
        let du = d as usize;
        if self.die[du].open_slc != NONE {
            return true;
        }
        if let Some(b) = self.die[du].free_slc.pop() {
            assert_eq!(self.state[b as usize], FREE);
            self.state[b as usize] = OPEN;
            self.die[du].open_slc = b;
            return true;
        }
        let dyn_max = self.cfg.slc_dynamic_blocks();
        // Dynamic SLC only while the drive has clearly more free space than GC needs.
        let margin = self.cfg.bg_gc_free_blocks as usize + 2 * self.dies as usize;
        if self.die[du].dyn_slc_in_use < dyn_max
            && self.free_native_total > margin
            && !self.die[du].free_native.is_empty()
        {
            let b = self.pop_free_native(d).unwrap();
            let bu = b as usize;
            assert_eq!(self.state[bu], FREE);
            self.state[bu] = OPEN;
            self.slc_mode[bu] = true;
            self.cap[bu] = self.slc_cap;
            self.die[du].dyn_slc_in_use += 1;
            self.die[du].open_slc = b;
            return true;
        }
        false
    }

    /// Whether closed SLC blocks wait to be folded into native cells.
    pub fn has_slc_to_fold(&self) -> bool {
        !self.slc_closed_dyn.is_empty() || !self.slc_closed_static.is_empty()
    }

    /// The units of the host write under way (`slc_max_io` keeps larger writes out of
    /// the SLC cache). Set by the timing layer before it writes them.
    pub fn set_host_io(&mut self, units: u32) {
        self.host_io_units = units;
    }

    /// Whether the host write under way goes to the SLC cache (if it has room).
    #[inline]
    pub(super) fn slc_takes_host_write(&self) -> bool {
        self.cfg.slc_static_bytes + self.cfg.slc_dynamic_bytes > 0
            && (self.cfg.slc_max_io_units == 0 || self.host_io_units <= self.cfg.slc_max_io_units)
    }

    /// `slc_full=fold`: the cache is full, so its oldest static block is folded into
    /// native cells now (foreground work the host write waits behind), and an SLC
    /// block opened on die d. False when there is nothing to fold (or a paced victim
    /// is in progress).
    pub(super) fn fold_for_host(&mut self, d: u32) -> bool {
        if self.cfg.slc_full != SlcFull::Fold || self.gc_cur != NONE || self.in_gc {
            return false;
        }
        let Some(b) = self.slc_closed_static.pop_front() else {
            return false;
        };
        self.collect(b, false);
        self.slc_block(d)
    }
}
