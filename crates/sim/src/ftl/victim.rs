//! Victim selection over the closed native blocks: greedy (valid-count buckets, O(1)
//! amortized), FIFO, random, and LFS cost-benefit over a bounded candidate set.

use super::{Ftl, CLOSED, NONE};
use crate::config::VictimPolicy;
use rand_xoshiro::rand_core::Rng;

/// Cost-benefit candidate set per GC: lowest-valid blocks, oldest blocks, random blocks.
const CB_LOW: usize = 8;
const CB_OLD: usize = 8;
const CB_RANDOM: usize = 8;
/// Age-queue entries looked at per GC (stale entries in the middle are skipped).
const CB_OLD_SCAN: usize = 64;

impl Ftl {
    #[inline]
    pub(super) fn bucket_index(&self, b: u32) -> usize {
        self.valid[b as usize] as usize
    }

    #[inline]
    pub(super) fn bucket_link(&mut self, b: u32) {
        let i = self.bucket_index(b);
        let head = self.buckets[i];
        self.prev[b as usize] = NONE;
        self.next[b as usize] = head;
        if head != NONE {
            self.prev[head as usize] = b;
        }
        self.buckets[i] = b;
        let v = self.valid[b as usize];
        if v < self.bucket_min {
            self.bucket_min = v;
        }
    }

    #[inline]
    pub(super) fn bucket_unlink(&mut self, b: u32) {
        let (p, n) = (self.prev[b as usize], self.next[b as usize]);
        if p != NONE {
            self.next[p as usize] = n;
        } else {
            let i = self.bucket_index(b);
            debug_assert_eq!(self.buckets[i], b);
            self.buckets[i] = n;
        }
        if n != NONE {
            self.prev[n as usize] = p;
        }
        self.prev[b as usize] = NONE;
        self.next[b as usize] = NONE;
    }

    /// Victim policies that keep closed native blocks in the valid-count buckets.
    #[inline]
    pub(super) fn bucketed(&self) -> bool {
        matches!(
            self.cfg.victim,
            VictimPolicy::Greedy | VictimPolicy::CostBenefit
        )
    }

    pub(super) fn victim_insert(&mut self, b: u32) {
        match self.cfg.victim {
            VictimPolicy::Greedy => self.bucket_link(b),
            VictimPolicy::Fifo => self.fifo.push_back(b),
            VictimPolicy::Random => self.closed_push(b),
            VictimPolicy::CostBenefit => {
                self.bucket_link(b);
                self.closed_push(b);
                self.age_push(b);
            }
        }
    }

    /// Put back a victim that was picked but not collected (front of the order).
    pub(super) fn victim_unpick(&mut self, b: u32) {
        match self.cfg.victim {
            VictimPolicy::Fifo => self.fifo.push_front(b),
            // Its age-queue entry was never removed (entries go only when stale).
            VictimPolicy::CostBenefit => {
                self.bucket_link(b);
                self.closed_push(b);
            }
            _ => self.victim_insert(b),
        }
    }

    /// Take closed native block b out of the victim structures (wear levelling).
    pub(super) fn victim_remove(&mut self, b: u32) {
        match self.cfg.victim {
            VictimPolicy::Greedy => self.bucket_unlink(b),
            VictimPolicy::Fifo => {
                let i = self
                    .fifo
                    .iter()
                    .position(|&x| x == b)
                    .expect("closed native block is in the FIFO");
                self.fifo.remove(i);
            }
            VictimPolicy::Random => {
                self.closed_remove_at(self.pos[b as usize] as usize);
            }
            VictimPolicy::CostBenefit => {
                self.bucket_unlink(b);
                self.closed_remove_at(self.pos[b as usize] as usize);
            }
        }
    }

    pub(super) fn closed_push(&mut self, b: u32) {
        self.pos[b as usize] = self.closed.len() as u32;
        self.closed.push(b);
    }

    pub(super) fn closed_remove_at(&mut self, i: usize) -> u32 {
        let b = self.closed.swap_remove(i);
        if i < self.closed.len() {
            let moved = self.closed[i];
            self.pos[moved as usize] = i as u32;
        }
        self.pos[b as usize] = NONE;
        b
    }

    /// Cost-benefit age queue: append, and drop stale entries once it holds more than
    /// twice the blocks (so its length stays bounded; amortized O(1) per close).
    pub(super) fn age_push(&mut self, b: u32) {
        self.age.push_back((b, self.close_seq[b as usize]));
        if self.age.len() > 2 * self.state.len() + 64 {
            let mut q = std::mem::take(&mut self.age);
            q.retain(|&(x, s)| self.age_live(x, s));
            self.age = q;
        }
    }

    /// Is this age-queue entry a block still closed since that close, and a candidate?
    #[inline]
    pub(super) fn age_live(&self, b: u32, seq: u64) -> bool {
        let bu = b as usize;
        self.state[bu] == CLOSED
            && !self.slc_mode[bu]
            && self.close_seq[bu] == seq
            && self.pos[bu] != NONE
    }

    #[inline]
    pub(super) fn cb_score(&self, b: u32) -> f64 {
        let bu = b as usize;
        let u = self.valid[bu] as f64 / self.cap[bu] as f64;
        let age = (self.seq - self.close_seq[bu]) as f64 + 1.0;
        (1.0 - u) * age / (1.0 + u)
    }

    /// Lowest non-empty valid-count bucket from `bucket_min` up (and remember it).
    #[inline]
    pub(super) fn lowest_bucket(&mut self) -> Option<u32> {
        let mut v = self.bucket_min;
        while v <= self.spb {
            if self.buckets[v as usize] != NONE {
                self.bucket_min = v;
                return Some(v);
            }
            v += 1;
        }
        self.bucket_min = self.spb + 1;
        None
    }

    pub(super) fn pick_victim(&mut self) -> Option<u32> {
        match self.cfg.victim {
            VictimPolicy::Greedy => {
                let v = self.lowest_bucket()?;
                let b = self.buckets[v as usize];
                self.bucket_unlink(b);
                Some(b)
            }
            VictimPolicy::Fifo => self.fifo.pop_front(),
            VictimPolicy::Random => {
                let n = self.closed.len();
                if n == 0 {
                    return None;
                }
                let i = (self.rng.next_u64() % n as u64) as usize;
                Some(self.closed_remove_at(i))
            }
            VictimPolicy::CostBenefit => {
                // LFS cost-benefit, max (1-u) age / (1+u), over a bounded candidate
                // set instead of every closed block: the score rises as u falls and as
                // age grows, so the best block is almost always among the lowest-valid
                // or the oldest ones; a few random ones cover the middle. O(1) per GC.
                let mut v = self.lowest_bucket()?;
                let mut best = NONE;
                let mut best_score = f64::NEG_INFINITY;
                let mut consider = |f: &Ftl, b: u32| {
                    let sc = f.cb_score(b);
                    if sc > best_score {
                        best_score = sc;
                        best = b;
                    }
                };
                let mut k = 0;
                while v <= self.spb && k < CB_LOW {
                    let mut b = self.buckets[v as usize];
                    while b != NONE && k < CB_LOW {
                        consider(self, b);
                        k += 1;
                        b = self.next[b as usize];
                    }
                    v += 1;
                }
                while let Some(&(b, sq)) = self.age.front() {
                    if self.age_live(b, sq) {
                        break;
                    }
                    self.age.pop_front();
                }
                let mut found = 0;
                for &(b, sq) in self.age.iter().take(CB_OLD_SCAN) {
                    if found == CB_OLD {
                        break;
                    }
                    if self.age_live(b, sq) {
                        consider(self, b);
                        found += 1;
                    }
                }
                let n = self.closed.len() as u64;
                for _ in 0..CB_RANDOM {
                    let b = self.closed[(self.rng.next_u64() % n) as usize];
                    consider(self, b);
                }
                debug_assert_ne!(best, NONE);
                self.bucket_unlink(best);
                self.closed_remove_at(self.pos[best as usize] as usize);
                Some(best)
            }
        }
    }
}
