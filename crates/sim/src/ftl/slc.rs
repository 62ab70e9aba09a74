//! The SLC cache: static SLC-mode blocks beside the native ones, and dynamic ones taken
//! from the native free pool while the drive has room.

use super::{Ftl, FREE, NONE, OPEN};

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
}
