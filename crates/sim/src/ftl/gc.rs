//! Garbage collection: foreground (a victim chosen when free blocks run low, its data
//! moved a share per host write), background (host idle), and the erase that frees a
//! block.

use super::{prefetch, Ftl, CLOSED, COLLECTING, CONT, FREE, NONE};
use crate::config::GcMode;

impl Ftl {
    /// Foreground GC after a host write of `len` slots: once fewer than
    /// `gc_free_blocks` blocks are free, a victim is chosen.
    ///
    /// `gc=victim` (discrete work): each victim is collected whole, its copies and
    /// erase handed to the timing layer as one piece of work, until enough blocks are
    /// free. `gc=paced` (a fluid): each host write moves a share of the victim's valid
    /// data, paced so the victim is empty before the write frontier runs down to its
    /// last free block: ceil(len x valid left / slack) slots, slack being the free
    /// space beyond the victim's valid data and one block. Host writes consume the
    /// slack, moving data does not, so the victim ends in time; with no slack it is
    /// finished at once. With `gc_free_blocks` = 2 (GC starts with one free block: no
    /// room to pace) every victim is collected at once, as the reference FTL of the
    /// theory tests does.
    pub(super) fn foreground_gc(&mut self, len: u32) {
        if self.in_gc {
            return;
        }
        let t = self.cfg.gc_free_blocks as usize;
        loop {
            if self.gc_cur == NONE {
                if self.free_native_total >= t {
                    return;
                }
                let Some(b) = self.next_victim() else {
                    return;
                };
                self.gc_begin(b);
            }
            let v = self.valid[self.gc_cur as usize] as u64;
            let slack = self.unwritten_slots().saturating_sub(v + self.spb as u64);
            let whole = self.cfg.gc_mode == GcMode::Victim;
            let budget = if whole || slack == 0 || t < 3 {
                u64::MAX
            } else {
                (len as u64 * v).div_ceil(slack)
            };
            if !self.gc_advance(budget, false) {
                return;
            }
        }
    }

    /// The next block to collect: a dynamic SLC block to fold if any (it returns
    /// native space), else a native victim.
    pub(super) fn next_victim(&mut self) -> Option<u32> {
        self.slc_closed_dyn
            .pop_front()
            .or_else(|| self.pick_victim())
    }

    /// One unit of GC work, done at once: fold a dynamic SLC block if any, else
    /// collect one native victim. False if nothing to collect.
    pub(super) fn gc_step(&mut self, background: bool) -> bool {
        match self.next_victim() {
            Some(b) => {
                self.collect(b, background);
                true
            }
            None => false,
        }
    }

    /// One unit of background work for host idle time; false when there is none.
    /// Order: finish foreground GC's victim, fold dynamic SLC, fold static SLC, then
    /// collect native blocks until `bg_gc_free_blocks` are free (only victims that free
    /// something).
    pub fn background_step(&mut self) -> bool {
        if self.gc_cur != NONE {
            self.gc_advance(u64::MAX, true);
            return true;
        }
        if !self.slc_closed_dyn.is_empty() {
            return self.gc_step(true);
        }
        if let Some(b) = self.slc_closed_static.pop_front() {
            self.collect(b, true);
            let t = self.cfg.gc_free_blocks as usize;
            while self.free_native_total < t {
                if !self.gc_step(true) {
                    break;
                }
            }
            return true;
        }
        if self.free_native_total < self.cfg.bg_gc_free_blocks as usize {
            if let Some(b) = self.pick_victim() {
                if self.valid[b as usize] >= self.cap[b as usize] {
                    self.victim_unpick(b);
                    return false;
                }
                self.collect(b, true);
                return true;
            }
        }
        false
    }

    /// Relocate the valid data of block b (closed, removed from victim structures)
    /// into the native frontier, then erase it, all at once.
    pub(super) fn collect(&mut self, b: u32, background: bool) {
        assert_eq!(self.gc_cur, NONE, "collect with a victim in progress");
        self.gc_begin(b);
        let done = self.gc_advance(u64::MAX, background);
        debug_assert!(done);
    }

    /// Make closed block `b` (out of the victim structures) GC's victim.
    pub(super) fn gc_begin(&mut self, b: u32) {
        assert_eq!(self.state[b as usize], CLOSED);
        debug_assert_eq!(self.gc_cur, NONE);
        self.state[b as usize] = COLLECTING;
        self.gc_cur = b;
        self.gc_from = b * self.spb;
        self.gc_last_page = NONE;
        self.gc_moved = 0;
        self.gc_pf_p2l = self.gc_from;
        self.gc_pf_l2p = self.gc_from;
    }

    /// Prefetch ahead of the victim's cursor in two steps (a hint: no effect on
    /// results): the P2L lines of the next `P2L_AHEAD` slots, and the mapping entries
    /// of the valid units in the next `L2P_AHEAD` slots or `budget`, whichever is more
    /// (their P2L lines were fetched by earlier calls). Moving a victim a few units per
    /// host write, each unit's two misses would otherwise stall in turn.
    pub(super) fn gc_prefetch(&mut self, end: u32, budget: u64) {
        const P2L_AHEAD: u32 = 1024;
        const L2P_AHEAD: u32 = 64;
        let p2l_to = self.gc_from.saturating_add(P2L_AHEAD).min(end);
        let mut s = self.gc_pf_p2l.max(self.gc_from);
        while s < p2l_to {
            prefetch(&self.p2l, s as usize);
            s += 16;
        }
        self.gc_pf_p2l = s;
        let ahead = (budget.min(4096) as u32).max(L2P_AHEAD);
        let l2p_to = self.gc_from.saturating_add(ahead).min(end);
        let from = self.gc_pf_l2p.max(self.gc_from);
        if from < l2p_to {
            self.prefetch_mappings(from, l2p_to - from);
            self.gc_pf_l2p = l2p_to;
        }
    }

    /// Move at least `budget` slots of the victim's valid data (in slot order) into the
    /// native frontier; when none is left, erase it. Returns whether it was erased.
    pub(super) fn gc_advance(&mut self, budget: u64, background: bool) -> bool {
        let b = self.gc_cur;
        let bu = b as usize;
        let was_slc = self.slc_mode[bu];
        let t = if was_slc {
            self.cfg.slc_timing
        } else {
            self.cfg.timing
        };
        let prev_gc = self.in_gc;
        self.in_gc = true;
        let end = b * self.spb + self.wp[bu];
        let mut moved = 0u64;
        if budget > 0 {
            self.gc_prefetch(end, budget);
        }
        // Die time is summed per run of units on one die (a stripe: 4 units of the
        // presets) and charged when the die changes: the same totals per die, with a
        // quarter of the bookkeeping.
        let (mut src_die, mut src_ns, mut dst_die, mut dst_ns) = (NONE, 0u64, NONE, 0u64);
        while moved < budget {
            let Some(v) = self.next_valid(self.gc_from, end) else {
                break;
            };
            let page = self.page_of(v);
            let mut read_ns = 0;
            if page != self.gc_last_page {
                self.gc_last_page = page;
                self.c.nand_page_reads += 1;
                read_ns = t.read_ns;
            }
            let l = self.p2l[v as usize];
            debug_assert!(l < CONT, "valid slot {v} is not a unit start");
            let len = self.len_of(l);
            debug_assert_eq!(self.l2p[l as usize], v);
            self.clear_valid(v, len);
            self.valid[bu] -= len;
            let xfer = len as u64 * self.xfer_slot_ns;
            let d = self.phys_die(v);
            if d != src_die {
                if src_die != NONE {
                    self.charge(src_die, src_ns);
                }
                (src_die, src_ns) = (d, 0);
            }
            src_ns += read_ns + xfer;
            let (_, s) = self.alloc_native_rr(len, true);
            self.place(l, s, len);
            let d = self.phys_die(s);
            if d != dst_die {
                if dst_die != NONE {
                    self.charge(dst_die, dst_ns);
                }
                (dst_die, dst_ns) = (d, 0);
            }
            dst_ns += len as u64 * self.prog_slot_ns + xfer;
            moved += len as u64;
            self.gc_from = v + len;
        }
        if src_die != NONE {
            self.charge(src_die, src_ns);
            self.charge(dst_die, dst_ns);
        }
        self.gc_moved += moved;
        let done = self.valid[bu] == 0;
        if done {
            let moved_bytes = self.gc_moved * self.slot_bytes;
            self.charge_erase(t.erase_ns);
            if was_slc {
                self.c.slc_folds += 1;
                self.c.slc_fold_bytes += moved_bytes;
            } else {
                self.c.gc_runs += 1;
                if background {
                    self.c.gc_background_runs += 1;
                }
                self.c.gc_relocated_bytes += moved_bytes;
            }
            self.gc_cur = NONE;
            self.erase(b);
        }
        self.in_gc = prev_gc;
        done
    }

    /// Move the valid unit starting at slot `v` to the slot `dest` gives it, charging
    /// the dies: `read_ns` (its page's read, or 0 if that page was read for the unit
    /// before it) and the data's channel time on the source die, the channel time and
    /// the program on the destination die. Returns the unit's slots.
    #[inline]
    pub(super) fn move_unit(
        &mut self,
        bu: usize,
        v: u32,
        read_ns: u64,
        dest: impl FnOnce(&mut Ftl, u32) -> u32,
    ) -> u32 {
        debug_assert_eq!(bu, (v / self.spb) as usize);
        let l = self.p2l[v as usize];
        debug_assert!(l < CONT, "valid slot {v} is not a unit start");
        let len = self.len_of(l);
        debug_assert_eq!(self.l2p[l as usize], v);
        self.clear_valid(v, len);
        self.valid[bu] -= len;
        let xfer = len as u64 * self.xfer_slot_ns;
        self.charge(self.phys_die(v), read_ns + xfer);
        let s = dest(self, len);
        self.place(l, s, len);
        self.charge(self.phys_die(s), len as u64 * self.prog_slot_ns + xfer);
        len
    }

    pub(super) fn erase(&mut self, b: u32) {
        let bu = b as usize;
        let base = (b * self.spb) as usize;
        debug_assert_eq!(self.valid[bu], 0);
        debug_assert!(self
            .next_valid(base as u32, base as u32 + self.wp[bu])
            .is_none());
        for s in &mut self.p2l[base..base + self.wp[bu] as usize] {
            *s = NONE;
        }
        self.wp[bu] = 0;
        self.valid[bu] = 0;
        self.state[bu] = FREE;
        self.count_erase(b);
        let d = self.die_of(b) as usize;
        if self.is_static(b) {
            self.die[d].free_slc.push(b);
        } else {
            if self.slc_mode[bu] {
                self.die[d].dyn_slc_in_use -= 1;
                self.slc_mode[bu] = false;
                self.cap[bu] = self.spb;
            }
            self.push_free_native(b);
            self.free_native_total += 1;
        }
    }

    /// Slots that hold no data: free native blocks and the unwritten rest of open
    /// native blocks.
    pub(super) fn unwritten_slots(&self) -> u64 {
        let open: u64 = self
            .die
            .iter()
            .filter(|d| d.open_native != NONE)
            .map(|d| (self.cap[d.open_native as usize] - self.wp[d.open_native as usize]) as u64)
            .sum();
        self.free_native_total as u64 * self.spb as u64 + open
    }
}
