//! Erase counts and wear levelling: dynamic (the free pool gives the least-worn block)
//! and static (cold data moves onto worn blocks).

use super::{Ftl, CLOSED, FREE, NONE, OPEN};
use std::cmp::Reverse;

impl Ftl {
    /// Count one erase of block b (erase count, histogram of native blocks, spread).
    pub(super) fn count_erase(&mut self, b: u32) {
        let bu = b as usize;
        let e = self.erase_count[bu];
        self.erase_count[bu] = e + 1;
        self.c.nand_erases += 1;
        if self.is_static(b) {
            return;
        }
        let (e, n) = (e as usize, e as usize + 1);
        debug_assert!(self.ec_hist[e] > 0);
        self.ec_hist[e] -= 1;
        if self.ec_hist.len() <= n {
            self.ec_hist.push(0);
        }
        self.ec_hist[n] += 1;
        self.ec_max = self.ec_max.max(n as u32);
        while self.ec_hist[self.ec_min as usize] == 0 {
            self.ec_min += 1;
        }
    }

    /// Rebuild the erase-count histogram of native blocks from `erase_count`.
    pub(super) fn rebuild_ec_hist(&mut self) {
        self.ec_hist.clear();
        let (mut lo, mut hi) = (u32::MAX, 0);
        for b in 0..self.state.len() as u32 {
            if self.is_static(b) {
                continue;
            }
            let e = self.erase_count[b as usize];
            if self.ec_hist.len() <= e as usize {
                self.ec_hist.resize(e as usize + 1, 0);
            }
            self.ec_hist[e as usize] += 1;
            lo = lo.min(e);
            hi = hi.max(e);
        }
        self.ec_min = lo;
        self.ec_max = hi;
    }

    /// Static wear levelling, at most one block per call: when the erase-count spread of
    /// native blocks exceeds `wl_threshold`, move the data of a cold closed block (erase
    /// count near the minimum) into the most-worn free block, which then rests under
    /// cold data, and erase the cold block, so that young block returns to the free pool
    /// (where dynamic levelling picks it first). The moved bytes count in WA.
    /// Cost: O(1) when not needed; a search resumes where the last one stopped, so a
    /// sweep over all blocks is spread over the migrations it finds.
    pub(super) fn wear_level(&mut self) {
        if !self.cfg.wear_leveling
            || self.in_gc
            || self.ec_max - self.ec_min <= self.cfg.wl_threshold
            || self.c.nand_erases < self.wl_retry_at
        {
            return;
        }
        let n = self.state.len() as u32;
        let limit = self.ec_min + self.cfg.wl_threshold / 4;
        let mut cold = NONE;
        for _ in 0..n {
            let b = self.wl_cursor;
            self.wl_cursor = if b + 1 == n { 0 } else { b + 1 };
            let bu = b as usize;
            if self.state[bu] == CLOSED
                && !self.slc_mode[bu]
                && !self.is_static(b)
                && self.erase_count[bu] <= limit
            {
                cold = b;
                break;
            }
        }
        // The most-worn free native block (free pools are small in steady state).
        let mut dest = NONE;
        let mut dest_ec = 0;
        for dd in &self.die {
            for &Reverse((_, b)) in dd.free_native.iter() {
                let e = self.erase_count[b as usize];
                if dest == NONE || e > dest_ec {
                    dest = b;
                    dest_ec = e;
                }
            }
        }
        if cold == NONE || dest == NONE || dest_ec <= self.erase_count[cold as usize] {
            // Nothing to move now: the cold blocks are open or free (they will be
            // written or picked soon). Look again after a fraction of a drive's erases.
            self.wl_retry_at = self.c.nand_erases + (n as u64 / 8).max(1);
            return;
        }
        self.migrate(cold, dest);
    }

    /// Move the valid data of closed native block `cold` into free native block `dest`
    /// (padding the rest), close `dest`, erase `cold`.
    pub(super) fn migrate(&mut self, cold: u32, dest: u32) {
        let (cu, du) = (cold as usize, dest as usize);
        assert_eq!(self.state[cu], CLOSED);
        assert_eq!(self.state[du], FREE);
        self.victim_remove(cold);
        let dd = self.die_of(dest);
        let heap = &mut self.die[dd as usize].free_native;
        let before = heap.len();
        heap.retain(|&Reverse((_, b))| b != dest);
        assert_eq!(heap.len() + 1, before);
        self.refresh_room(dd);
        self.free_native_total -= 1;
        self.state[du] = OPEN;
        self.slc_mode[du] = false;
        self.cap[du] = self.spb;
        let prev_gc = self.in_gc;
        self.in_gc = true;
        let base = cold * self.spb;
        let end = self.wp[cu];
        self.prefetch_mappings(base, end);
        let t = self.cfg.timing;
        let (mut moved_slots, mut page_reads) = (0u64, 0u64);
        let (mut from, mut last_page) = (base, NONE);
        while let Some(v) = self.next_valid(from, base + end) {
            let page = self.page_of(v);
            let read_ns = if page != last_page {
                last_page = page;
                page_reads += 1;
                t.read_ns
            } else {
                0
            };
            let len = self.move_unit(cu, v, read_ns, |f, len| {
                let s = dest * f.spb + f.wp[du];
                f.wp[du] += len;
                debug_assert!(f.wp[du] <= f.cap[du]);
                s
            });
            moved_slots += len as u64;
            from = v + len;
        }
        assert_eq!(self.valid[cu], 0);
        if self.state[du] == OPEN {
            // Not full: the rest of the block is padding.
            self.wp[du] = self.cap[du];
            self.close(dest);
        }
        self.charge_erase(t.erase_ns);
        self.c.nand_page_reads += page_reads;
        self.c.wl_migrations += 1;
        self.c.wl_relocated_bytes += moved_slots * self.slot_bytes;
        self.erase(cold);
        self.in_gc = prev_gc;
    }
}
