//! Consistency checks (O(size)): every valid slot mapped once, the block lists, the
//! victim structures and the erase-count histogram agree with the blocks.

use super::{Ftl, SlotCensus, CLOSED, COLLECTING, CONT, FREE, NONE, OPEN};
use crate::config::VictimPolicy;
use std::cmp::Reverse;

impl Ftl {
    /// Full consistency check (O(size)); panics with a description on any violation.
    pub fn check(&self) -> SlotCensus {
        let mapped_slots = self.check_mapping();
        let mut in_lists = self.check_block_lists();
        self.check_victim_sets(&mut in_lists);
        self.check_ec_hist();
        let mut census = SlotCensus {
            total: 0,
            free: 0,
            valid: 0,
            invalid: 0,
        };
        for (b, &n) in in_lists.iter().enumerate() {
            assert_eq!(n, 1, "block {b} is in {n} lists");
            self.check_block(b, &mut census);
        }
        assert_eq!(census.valid, mapped_slots, "valid slots != mapped slots");
        assert_eq!(census.free + census.valid + census.invalid, census.total);
        census
    }

    /// Every mapped LBA points at a start slot naming it, continuation slots follow,
    /// all valid and below the write pointer. Returns the slots mapped.
    pub(super) fn check_mapping(&self) -> u64 {
        let mut mapped_slots = 0u64;
        for (lba, &s) in self.l2p.iter().enumerate() {
            if s == NONE {
                continue;
            }
            assert_eq!(
                self.p2l[s as usize], lba as u32,
                "l2p/p2l disagree at lba {lba}"
            );
            let len = self.len_of(lba as u32);
            for i in 1..len {
                assert_eq!(self.p2l[(s + i) as usize], CONT, "lba {lba} continuation");
            }
            for i in 0..len {
                assert!(self.is_valid(s + i), "lba {lba}: slot {} not valid", s + i);
            }
            assert!(
                (s % self.spb) + len <= self.wp[(s / self.spb) as usize],
                "lba {lba} mapped past write pointer"
            );
            mapped_slots += len as u64;
        }
        mapped_slots
    }

    /// Free lists, open blocks, the GC victim and the closed lists hold blocks of
    /// their state; the free count and room bits agree with the dies. Returns how
    /// many of these lists name each block.
    pub(super) fn check_block_lists(&self) -> Vec<u8> {
        let mut in_lists = vec![0u8; self.state.len()];
        for d in &self.die {
            let free_native = d.free_native.iter().map(|&Reverse((_, b))| b);
            for b in free_native.chain(d.free_slc.iter().copied()) {
                in_lists[b as usize] += 1;
                assert_eq!(
                    self.state[b as usize], FREE,
                    "free list holds non-free block {b}"
                );
            }
            for &b in [d.open_native, d.open_slc].iter().filter(|&&b| b != NONE) {
                in_lists[b as usize] += 1;
                assert_eq!(self.state[b as usize], OPEN);
            }
        }
        if self.gc_cur != NONE {
            in_lists[self.gc_cur as usize] += 1;
            assert_eq!(self.state[self.gc_cur as usize], COLLECTING);
        }
        for &b in self
            .slc_closed_static
            .iter()
            .chain(self.slc_closed_dyn.iter())
            .chain(self.fifo.iter())
            .chain(self.closed.iter().filter(|_| !self.bucketed()))
        {
            in_lists[b as usize] += 1;
            assert_eq!(self.state[b as usize], CLOSED);
        }
        assert_eq!(
            self.free_native_total,
            self.die.iter().map(|d| d.free_native.len()).sum::<usize>()
        );
        for (d, dd) in self.die.iter().enumerate() {
            let bit = self.room[d / 64] >> (d % 64) & 1 == 1;
            let has = dd.open_native != NONE || !dd.free_native.is_empty();
            assert_eq!(bit, has, "room bit of die {d}");
        }
        in_lists
    }

    /// The cost-benefit closed set knows each block's position; the valid-count
    /// buckets hold closed blocks of their count (counted into `in_lists`).
    pub(super) fn check_victim_sets(&self, in_lists: &mut [u8]) {
        if self.cfg.victim == VictimPolicy::CostBenefit {
            for (i, &b) in self.closed.iter().enumerate() {
                assert_eq!(
                    self.pos[b as usize] as usize, i,
                    "closed-set position of {b}"
                );
                assert_eq!(self.state[b as usize], CLOSED);
            }
        }
        if !self.bucketed() {
            return;
        }
        let mut n = 0;
        for (v, &h) in self.buckets.iter().enumerate() {
            let mut b = h;
            while b != NONE {
                in_lists[b as usize] += 1;
                assert_eq!(self.state[b as usize], CLOSED);
                assert_eq!(
                    self.valid[b as usize] as usize, v,
                    "block {b} in wrong bucket"
                );
                b = self.next[b as usize];
                n += 1;
            }
        }
        if self.cfg.victim == VictimPolicy::CostBenefit {
            assert_eq!(n, self.closed.len(), "buckets and closed set differ");
        }
    }

    /// The erase-count histogram of native blocks, and its minimum and maximum.
    pub(super) fn check_ec_hist(&self) {
        let mut hist = vec![0u32; self.ec_hist.len()];
        for b in 0..self.state.len() as u32 {
            if !self.is_static(b) {
                hist[self.erase_count[b as usize] as usize] += 1;
            }
        }
        assert_eq!(hist, self.ec_hist, "erase-count histogram");
        assert_eq!(
            self.ec_min as usize,
            hist.iter().position(|&n| n > 0).unwrap()
        );
        assert_eq!(
            self.ec_max as usize,
            hist.iter().rposition(|&n| n > 0).unwrap()
        );
    }

    /// Block `b`'s slots: valid ones name an LBA mapped back to them, none past the
    /// write pointer is in use, the valid count matches. Adds them to `census`.
    pub(super) fn check_block(&self, b: usize, census: &mut SlotCensus) {
        let base = b * self.spb as usize;
        let cap = self.cap[b] as usize;
        let wp = self.wp[b] as usize;
        assert!(wp <= cap);
        let mut v = 0u64;
        for i in 0..wp {
            if !self.is_valid((base + i) as u32) {
                continue;
            }
            let l = self.p2l[base + i];
            assert_ne!(l, NONE, "valid slot {} without an LBA", base + i);
            v += 1;
            if l < CONT {
                assert_eq!(
                    self.l2p[l as usize],
                    (base + i) as u32,
                    "stale p2l at block {b}"
                );
            }
        }
        for i in wp..self.spb as usize {
            assert_eq!(self.p2l[base + i], NONE, "slot past wp in use, block {b}");
            assert!(
                !self.is_valid((base + i) as u32),
                "slot past wp valid, block {b}"
            );
        }
        assert_eq!(v, self.valid[b] as u64, "valid count of block {b}");
        census.total += cap as u64;
        census.valid += v;
        census.invalid += wp as u64 - v;
        census.free += (cap - wp) as u64;
    }
}
