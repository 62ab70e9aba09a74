//! The flash translation layer: page-level mapping (4 KiB units), blocks, GC, SLC cache.
//!
//! No time here: operations that cost die time (GC, folding) add nanoseconds to
//! `pending_ns[die]`, which the timing layer charges to that die.
//!
//! Storage is flat arrays indexed by block or slot. A slot is the smallest physical
//! allocation: one 4 KiB unit, or 1 KiB when inline compression is on (a unit then
//! takes 1..=4 slots). Blocks belong to a die: each die has its own free lists and
//! open blocks (write frontiers), and writes (host and GC) are striped over the dies
//! round-robin, skipping a die with no room. Garbage collection is global: one
//! free-block threshold and one victim structure over all closed native blocks, so the
//! drive behaves as one log for the theory (METHODOLOGY section 6).

use crate::config::{SimConfig, VictimPolicy, UNIT_BYTES};
use rand_xoshiro::rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;
use std::collections::VecDeque;

pub(crate) const NONE: u32 = u32::MAX;
/// P2L marker: continuation slot of a compressed unit that started earlier.
const CONT: u32 = u32::MAX - 1;

const FREE: u8 = 0;
const OPEN: u8 = 1;
const CLOSED: u8 = 2;

/// SMART-like counters (lifetime of the simulated drive).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SimCounters {
    pub host_read_ios: u64,
    pub host_write_ios: u64,
    pub host_trim_ios: u64,
    pub host_flush_ios: u64,
    pub host_read_bytes: u64,
    pub host_write_bytes: u64,
    pub host_trim_bytes: u64,
    /// NAND page reads (host reads and GC/fold reads).
    pub nand_page_reads: u64,
    /// Bytes programmed into NAND (host data, GC relocation, SLC folding).
    pub nand_write_bytes: u64,
    /// NAND page programs (nand_write_bytes / page size).
    pub nand_programs: u64,
    pub nand_erases: u64,
    /// nand_write_bytes / host_write_bytes (0 before any write).
    pub wa: f64,
    /// Victim blocks collected by GC (foreground + background).
    pub gc_runs: u64,
    pub gc_background_runs: u64,
    pub gc_relocated_bytes: u64,
    /// Host write bytes absorbed by the SLC cache.
    pub slc_hit_bytes: u64,
    /// Host write bytes that went straight to native cells.
    pub native_direct_bytes: u64,
    /// SLC blocks folded into native cells, and the bytes moved.
    pub slc_folds: u64,
    pub slc_fold_bytes: u64,
    pub erase_count_min: u32,
    pub erase_count_max: u32,
    pub erase_count_mean: f64,
}

impl SimCounters {
    /// Counters accumulated since `earlier` (WA and erase-count spread are of `self`,
    /// except `wa`, which is recomputed over the interval).
    pub fn since(&self, earlier: &SimCounters) -> SimCounters {
        let mut d = self.clone();
        d.host_read_ios -= earlier.host_read_ios;
        d.host_write_ios -= earlier.host_write_ios;
        d.host_trim_ios -= earlier.host_trim_ios;
        d.host_flush_ios -= earlier.host_flush_ios;
        d.host_read_bytes -= earlier.host_read_bytes;
        d.host_write_bytes -= earlier.host_write_bytes;
        d.host_trim_bytes -= earlier.host_trim_bytes;
        d.nand_page_reads -= earlier.nand_page_reads;
        d.nand_write_bytes -= earlier.nand_write_bytes;
        d.nand_programs = d.nand_programs.saturating_sub(earlier.nand_programs);
        d.nand_erases -= earlier.nand_erases;
        d.gc_runs -= earlier.gc_runs;
        d.gc_background_runs -= earlier.gc_background_runs;
        d.gc_relocated_bytes -= earlier.gc_relocated_bytes;
        d.slc_hit_bytes -= earlier.slc_hit_bytes;
        d.native_direct_bytes -= earlier.native_direct_bytes;
        d.slc_folds -= earlier.slc_folds;
        d.slc_fold_bytes -= earlier.slc_fold_bytes;
        d.wa = if d.host_write_bytes == 0 {
            0.0
        } else {
            d.nand_write_bytes as f64 / d.host_write_bytes as f64
        };
        d
    }
}

/// Slot accounting from [`Ftl::check`]: free + valid + invalid = total.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotCensus {
    pub total: u64,
    pub free: u64,
    pub valid: u64,
    pub invalid: u64,
}

struct Die {
    free_native: Vec<u32>,
    free_slc: Vec<u32>,
    open_native: u32,
    open_slc: u32,
    dyn_slc_in_use: u32,
}

/// Where a host unit went (for the timing layer).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Placed {
    pub die: u32,
    pub slots: u32,
    pub slc: bool,
}

pub(crate) struct Ftl {
    pub cfg: SimConfig,
    pub dies: u32,
    /// Slots per 4 KiB unit (1, or 4 with compression).
    pub spu: u32,
    /// Slots per block (native capacity).
    pub spb: u32,
    pub slc_cap: u32,
    pub native_bpd: u32,
    pub bpd: u32,
    user_units: u64,
    l2p: Vec<u32>,
    ulen: Vec<u8>,
    p2l: Vec<u32>,
    state: Vec<u8>,
    slc_mode: Vec<bool>,
    valid: Vec<u32>,
    wp: Vec<u32>,
    cap: Vec<u32>,
    erase_count: Vec<u32>,
    close_seq: Vec<u64>,
    prev: Vec<u32>,
    next: Vec<u32>,
    pos: Vec<u32>,
    buckets: Vec<u32>,
    die: Vec<Die>,
    free_native_total: usize,
    slc_closed_static: VecDeque<u32>,
    slc_closed_dyn: VecDeque<u32>,
    fifo: VecDeque<u32>,
    closed: Vec<u32>,
    bucket_min: u32,
    next_die: u32,
    gc_next_die: u32,
    /// Dies whose pending_ns became non-zero since the timing layer last looked.
    pub pending_dirty: Vec<u32>,
    seq: u64,
    in_gc: bool,
    rng: Xoshiro256PlusPlus,
    pub pending_ns: Vec<u64>,
    pub c: SimCounters,
    slot_bytes: u64,
    // Per-slot die-time costs (ns).
    pub prog_slot_ns: u64,
    pub prog_slot_slc_ns: u64,
}

impl Ftl {
    pub fn new(cfg: &SimConfig) -> Ftl {
        let dies = cfg.dies();
        let spu = if cfg.compress { 4 } else { 1 };
        let spb = cfg.units_per_block() * spu;
        let slc_cap = (spb / cfg.cell.bits()).max(spu);
        let native_bpd = cfg.native_blocks_per_die();
        let bpd = native_bpd + cfg.slc_static_blocks_per_die();
        let nblocks = (bpd * dies) as usize;
        let user_units = cfg.user_units();
        let div = (cfg.units_per_page() * cfg.planes_per_die * spu) as u64;
        let mut f = Ftl {
            cfg: cfg.clone(),
            dies,
            spu,
            spb,
            slc_cap,
            native_bpd,
            bpd,
            user_units,
            l2p: vec![NONE; user_units as usize],
            ulen: if cfg.compress {
                vec![0; user_units as usize]
            } else {
                Vec::new()
            },
            p2l: vec![NONE; nblocks * spb as usize],
            state: vec![FREE; nblocks],
            slc_mode: vec![false; nblocks],
            valid: vec![0; nblocks],
            wp: vec![0; nblocks],
            cap: vec![spb; nblocks],
            erase_count: vec![0; nblocks],
            close_seq: vec![0; nblocks],
            prev: vec![NONE; nblocks],
            next: vec![NONE; nblocks],
            pos: vec![NONE; nblocks],
            buckets: vec![NONE; (spb + 1) as usize],
            die: Vec::with_capacity(dies as usize),
            free_native_total: 0,
            slc_closed_static: VecDeque::with_capacity(nblocks),
            slc_closed_dyn: VecDeque::with_capacity(nblocks),
            fifo: VecDeque::with_capacity(nblocks),
            closed: Vec::with_capacity(nblocks),
            bucket_min: 0,
            next_die: 0,
            gc_next_die: 0,
            pending_dirty: Vec::with_capacity(dies as usize),
            seq: 0,
            in_gc: false,
            rng: Xoshiro256PlusPlus::seed_from_u64(cfg.seed),
            pending_ns: vec![0; dies as usize],
            c: SimCounters::default(),
            slot_bytes: UNIT_BYTES / spu as u64,
            prog_slot_ns: cfg.timing.program_ns / div,
            prog_slot_slc_ns: cfg.slc_timing.program_ns / div,
        };
        for d in 0..dies {
            f.die.push(Die {
                free_native: Vec::with_capacity(native_bpd as usize),
                free_slc: Vec::with_capacity((bpd - native_bpd) as usize),
                open_native: NONE,
                open_slc: NONE,
                dyn_slc_in_use: 0,
            });
            f.reset_die_lists(d);
        }
        f.reset_global_lists();
        for b in 0..nblocks {
            f.cap[b] = if f.is_static(b as u32) { slc_cap } else { spb };
            f.slc_mode[b] = f.is_static(b as u32);
        }
        f
    }

    fn reset_die_lists(&mut self, d: u32) {
        let base = d * self.bpd;
        let dd = &mut self.die[d as usize];
        dd.free_native.clear();
        dd.free_slc.clear();
        // Pop order: lowest block first.
        for i in (0..self.native_bpd).rev() {
            dd.free_native.push(base + i);
        }
        for i in (self.native_bpd..self.bpd).rev() {
            dd.free_slc.push(base + i);
        }
        dd.open_native = NONE;
        dd.open_slc = NONE;
        dd.dyn_slc_in_use = 0;
    }

    fn reset_global_lists(&mut self) {
        self.free_native_total = self.die.iter().map(|d| d.free_native.len()).sum();
        self.slc_closed_static.clear();
        self.slc_closed_dyn.clear();
        self.fifo.clear();
        self.closed.clear();
        self.bucket_min = 0;
        for x in self.buckets.iter_mut() {
            *x = NONE;
        }
    }

    #[inline]
    fn charge(&mut self, d: u32, ns: u64) {
        if ns == 0 {
            return;
        }
        let p = &mut self.pending_ns[d as usize];
        if *p == 0 {
            self.pending_dirty.push(d);
        }
        *p += ns;
    }

    /// Drop pending die work (untimed operation).
    pub fn clear_pending(&mut self) {
        for p in self.pending_ns.iter_mut() {
            *p = 0;
        }
        self.pending_dirty.clear();
    }

    #[inline]
    fn pop_free_native(&mut self, d: u32) -> Option<u32> {
        let b = self.die[d as usize].free_native.pop()?;
        self.free_native_total -= 1;
        Some(b)
    }

    #[inline]
    fn is_static(&self, b: u32) -> bool {
        b % self.bpd >= self.native_bpd
    }

    #[inline]
    fn die_of(&self, b: u32) -> u32 {
        b / self.bpd
    }

    pub fn user_units(&self) -> u64 {
        self.user_units
    }

    /// Slots a unit of this content takes.
    #[inline]
    pub fn slots_for(&self, data: storbench_engine::DataKind) -> u32 {
        if self.spu == 1 {
            return 1;
        }
        match data {
            storbench_engine::DataKind::Random => self.spu,
            storbench_engine::DataKind::Zeros => 1,
            storbench_engine::DataKind::Compressible(r) => {
                let r = if r.is_finite() && r >= 1.0 { r } else { 1.0 };
                ((self.spu as f64 / r).ceil() as u32).clamp(1, self.spu)
            }
        }
    }

    #[inline]
    fn len_of(&self, lba: u32) -> u32 {
        if self.spu == 1 {
            1
        } else {
            self.ulen[lba as usize] as u32
        }
    }

    /// Where `lba` lives: (die, in SLC-mode block), or None if unmapped.
    #[inline]
    pub fn locate(&self, lba: u64) -> Option<(u32, bool)> {
        let s = self.l2p[lba as usize];
        if s == NONE {
            return None;
        }
        let b = s / self.spb;
        Some((self.die_of(b), self.slc_mode[b as usize]))
    }

    // ----- greedy buckets -----

    #[inline]
    fn bucket_index(&self, b: u32) -> usize {
        self.valid[b as usize] as usize
    }

    #[inline]
    fn bucket_link(&mut self, b: u32) {
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
    fn bucket_unlink(&mut self, b: u32) {
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

    // ----- victim structures (closed native blocks) -----

    fn victim_insert(&mut self, b: u32) {
        match self.cfg.victim {
            VictimPolicy::Greedy => self.bucket_link(b),
            VictimPolicy::Fifo => self.fifo.push_back(b),
            VictimPolicy::Random | VictimPolicy::CostBenefit => {
                self.pos[b as usize] = self.closed.len() as u32;
                self.closed.push(b);
            }
        }
    }

    /// Put back a victim that was picked but not collected (front of the order).
    fn victim_unpick(&mut self, b: u32) {
        match self.cfg.victim {
            VictimPolicy::Fifo => self.fifo.push_front(b),
            _ => self.victim_insert(b),
        }
    }

    fn closed_remove_at(&mut self, i: usize) -> u32 {
        let b = self.closed.swap_remove(i);
        if i < self.closed.len() {
            let moved = self.closed[i];
            self.pos[moved as usize] = i as u32;
        }
        self.pos[b as usize] = NONE;
        b
    }

    fn pick_victim(&mut self) -> Option<u32> {
        match self.cfg.victim {
            VictimPolicy::Greedy => {
                let mut v = self.bucket_min;
                while v <= self.spb {
                    let b = self.buckets[v as usize];
                    if b != NONE {
                        self.bucket_min = v;
                        self.bucket_unlink(b);
                        return Some(b);
                    }
                    v += 1;
                }
                self.bucket_min = self.spb + 1;
                None
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
                let n = self.closed.len();
                if n == 0 {
                    return None;
                }
                let mut best = 0usize;
                let mut best_score = f64::NEG_INFINITY;
                for i in 0..n {
                    let b = self.closed[i] as usize;
                    let u = self.valid[b] as f64 / self.cap[b] as f64;
                    let age = (self.seq - self.close_seq[b]) as f64 + 1.0;
                    let score = (1.0 - u) * age / (1.0 + u);
                    if score > best_score {
                        best_score = score;
                        best = i;
                    }
                }
                Some(self.closed_remove_at(best))
            }
        }
    }

    // ----- allocation -----

    fn close(&mut self, b: u32) {
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
            }
            self.victim_insert(b);
        }
    }

    /// Open a native block on die d (the free list must not be empty: GC keeps a reserve).
    fn open_native(&mut self, d: u32) -> u32 {
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
        b
    }

    /// Allocate `len` contiguous slots in the open native (or SLC) block of die d.
    #[inline]
    fn alloc(&mut self, d: u32, len: u32, slc: bool) -> u32 {
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

    /// Try to get an open SLC block on die d for a host write.
    fn slc_block(&mut self, d: u32) -> bool {
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
        let dyn_max = self.cfg.slc_dynamic_blocks_per_die();
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

    #[inline]
    fn place(&mut self, lba: u32, s: u32, len: u32) {
        let b = s / self.spb;
        self.p2l[s as usize] = lba;
        for i in 1..len {
            self.p2l[(s + i) as usize] = CONT;
        }
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
        let b = s / self.spb;
        let bu = b as usize;
        debug_assert_eq!(self.p2l[s as usize], lba);
        for i in 0..len {
            self.p2l[(s + i) as usize] = NONE;
        }
        // Closed native blocks are always in the buckets (GC never runs during this).
        let greedy_closed = self.cfg.victim == VictimPolicy::Greedy
            && self.state[bu] == CLOSED
            && !self.slc_mode[bu];
        if greedy_closed {
            self.bucket_unlink(b);
            self.valid[bu] -= len;
            self.bucket_link(b);
        } else {
            self.valid[bu] -= len;
        }
        self.l2p[lba as usize] = NONE;
    }

    /// Can die d take `len` slots of native data (room in its open block, or a free block)?
    #[inline]
    fn native_room(&self, d: u32, len: u32) -> bool {
        let dd = &self.die[d as usize];
        (dd.open_native != NONE
            && self.wp[dd.open_native as usize] + len <= self.cap[dd.open_native as usize])
            || !dd.free_native.is_empty()
    }

    /// Allocate `len` native slots on the next die (round-robin from `*next`) with room.
    fn alloc_native_rr(&mut self, len: u32, gc: bool) -> (u32, u32) {
        let start = if gc { self.gc_next_die } else { self.next_die };
        for k in 0..self.dies {
            let mut d = start + k;
            if d >= self.dies {
                d -= self.dies;
            }
            if self.native_room(d, len) {
                let nd = if d + 1 == self.dies { 0 } else { d + 1 };
                if gc {
                    self.gc_next_die = nd;
                } else {
                    self.next_die = nd;
                }
                return (d, self.alloc(d, len, false));
            }
        }
        panic!("sim FTL: no die has room for {len} slots (GC reserve exhausted)");
    }

    /// Host writes one 4 KiB unit taking `slots` slots. Runs foreground GC if needed.
    pub fn write_unit(&mut self, lba: u32, slots: u32) -> Placed {
        debug_assert!((lba as u64) < self.user_units);
        self.invalidate(lba);
        self.seq += 1;
        let mut placed = None;
        if self.cfg.slc_static_bytes + self.cfg.slc_dynamic_bytes > 0 {
            let d = self.next_die;
            if self.slc_block(d) {
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
        self.place(lba, s, slots);
        self.foreground_gc();
        Placed { die: d, slots, slc }
    }

    fn foreground_gc(&mut self) {
        if self.in_gc {
            return;
        }
        let t = self.cfg.gc_free_blocks as usize;
        while self.free_native_total < t {
            if !self.gc_step(false) {
                break;
            }
        }
    }

    /// One unit of GC work: fold a dynamic SLC block if any (it returns native space),
    /// else collect one native victim. False if nothing to collect.
    fn gc_step(&mut self, background: bool) -> bool {
        if let Some(b) = self.slc_closed_dyn.pop_front() {
            self.collect(b, background);
            return true;
        }
        match self.pick_victim() {
            Some(b) => {
                self.collect(b, background);
                true
            }
            None => false,
        }
    }

    /// One unit of background work for host idle time; false when there is none.
    /// Order: fold dynamic SLC, fold static SLC, then collect native blocks until
    /// `bg_gc_free_blocks` are free (only victims that free something).
    pub fn background_step(&mut self) -> bool {
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
    /// into the native frontier of its die, then erase it.
    fn collect(&mut self, b: u32, background: bool) {
        let bu = b as usize;
        assert_eq!(self.state[bu], CLOSED);
        let d = self.die_of(b);
        let was_slc = self.slc_mode[bu];
        let prev_gc = self.in_gc;
        self.in_gc = true;
        let base = b * self.spb;
        let end = self.wp[bu];
        let mut moved_slots = 0u64;
        let mut moved_units = 0u64;
        let mut i = 0;
        while i < end {
            let l = self.p2l[(base + i) as usize];
            if l < CONT {
                let len = self.len_of(l);
                debug_assert_eq!(self.l2p[l as usize], base + i);
                for k in 0..len {
                    self.p2l[(base + i + k) as usize] = NONE;
                }
                self.valid[bu] -= len;
                let (dd, s) = self.alloc_native_rr(len, true);
                self.place(l, s, len);
                self.charge(dd, len as u64 * self.prog_slot_ns);
                moved_slots += len as u64;
                moved_units += 1;
                i += len;
            } else {
                i += 1;
            }
        }
        assert_eq!(
            self.valid[bu], 0,
            "block {b} still has valid slots after GC"
        );
        let moved_bytes = moved_slots * self.slot_bytes;
        let upp = self.cfg.units_per_page() as u64;
        let page_reads = moved_units.div_ceil(upp);
        let t = if was_slc {
            &self.cfg.slc_timing
        } else {
            &self.cfg.timing
        };
        let ns = page_reads * t.read_ns + t.erase_ns;
        self.charge(d, ns);
        self.c.nand_page_reads += page_reads;
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
        self.erase(b);
        self.in_gc = prev_gc;
    }

    fn erase(&mut self, b: u32) {
        let bu = b as usize;
        let base = (b * self.spb) as usize;
        for s in &mut self.p2l[base..base + self.wp[bu] as usize] {
            *s = NONE;
        }
        self.wp[bu] = 0;
        self.valid[bu] = 0;
        self.state[bu] = FREE;
        self.erase_count[bu] += 1;
        self.c.nand_erases += 1;
        let d = self.die_of(b) as usize;
        if self.is_static(b) {
            self.die[d].free_slc.push(b);
        } else {
            if self.slc_mode[bu] {
                self.die[d].dyn_slc_in_use -= 1;
                self.slc_mode[bu] = false;
                self.cap[bu] = self.spb;
            }
            self.die[d].free_native.push(b);
            self.free_native_total += 1;
        }
    }

    /// TRIM one unit.
    pub fn trim_unit(&mut self, lba: u32) {
        self.invalidate(lba);
    }

    /// Secure erase: every block erased, every mapping dropped. Returns erases per die.
    pub fn purge(&mut self) -> Vec<u64> {
        let mut per_die = vec![0u64; self.dies as usize];
        for l in self.l2p.iter_mut() {
            *l = NONE;
        }
        for b in 0..self.state.len() {
            if self.state[b] != FREE || self.wp[b] != 0 {
                per_die[b / self.bpd as usize] += 1;
                self.erase_count[b] += 1;
                self.c.nand_erases += 1;
            }
            self.state[b] = FREE;
            self.wp[b] = 0;
            self.valid[b] = 0;
            self.prev[b] = NONE;
            self.next[b] = NONE;
            self.pos[b] = NONE;
            let st = self.is_static(b as u32);
            self.slc_mode[b] = st;
            self.cap[b] = if st { self.slc_cap } else { self.spb };
        }
        for s in self.p2l.iter_mut() {
            *s = NONE;
        }
        for d in 0..self.dies {
            self.reset_die_lists(d);
        }
        self.reset_global_lists();
        self.next_die = 0;
        self.gc_next_die = 0;
        per_die
    }

    pub fn counters(&self) -> SimCounters {
        let mut c = self.c.clone();
        c.nand_programs = c.nand_write_bytes.div_ceil(self.cfg.page_bytes as u64);
        c.wa = if c.host_write_bytes == 0 {
            0.0
        } else {
            c.nand_write_bytes as f64 / c.host_write_bytes as f64
        };
        let mut min = u32::MAX;
        let mut max = 0;
        let mut sum = 0u64;
        for &e in &self.erase_count {
            min = min.min(e);
            max = max.max(e);
            sum += e as u64;
        }
        c.erase_count_min = min;
        c.erase_count_max = max;
        c.erase_count_mean = sum as f64 / self.erase_count.len() as f64;
        c
    }

    /// Valid fraction of every closed native block, sorted (for state comparisons).
    pub fn closed_valid_fractions(&self) -> Vec<f64> {
        let mut v: Vec<f64> = (0..self.state.len())
            .filter(|&b| self.state[b] == CLOSED && !self.slc_mode[b])
            .map(|b| self.valid[b] as f64 / self.cap[b] as f64)
            .collect();
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v
    }

    pub fn free_native_blocks(&self) -> usize {
        debug_assert_eq!(
            self.free_native_total,
            self.die.iter().map(|d| d.free_native.len()).sum::<usize>()
        );
        self.free_native_total
    }

    pub fn mapped_units(&self) -> u64 {
        self.l2p.iter().filter(|&&s| s != NONE).count() as u64
    }

    /// Full consistency check (O(size)); panics with a description on any violation.
    pub fn check(&self) -> SlotCensus {
        let nblocks = self.state.len();
        // Every mapped LBA points at a start slot naming it, continuation slots follow.
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
            assert!(
                (s % self.spb) + len <= self.wp[(s / self.spb) as usize],
                "lba {lba} mapped past write pointer"
            );
            mapped_slots += len as u64;
        }
        // Every start slot in use is mapped exactly once (so the count matches).
        let mut census = SlotCensus {
            total: 0,
            free: 0,
            valid: 0,
            invalid: 0,
        };
        let mut in_lists = vec![0u8; nblocks];
        for d in &self.die {
            for &b in d.free_native.iter().chain(d.free_slc.iter()) {
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
        for &b in self
            .slc_closed_static
            .iter()
            .chain(self.slc_closed_dyn.iter())
            .chain(self.fifo.iter())
            .chain(self.closed.iter())
        {
            in_lists[b as usize] += 1;
            assert_eq!(self.state[b as usize], CLOSED);
        }
        assert_eq!(
            self.free_native_total,
            self.die.iter().map(|d| d.free_native.len()).sum::<usize>()
        );
        if self.cfg.victim == VictimPolicy::Greedy {
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
                }
            }
        }
        for (b, &n) in in_lists.iter().enumerate() {
            assert_eq!(n, 1, "block {b} is in {n} lists");
            let base = b * self.spb as usize;
            let cap = self.cap[b] as usize;
            let wp = self.wp[b] as usize;
            assert!(wp <= cap);
            let mut v = 0u64;
            for i in 0..wp {
                let l = self.p2l[base + i];
                if l == NONE {
                    continue;
                }
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
            }
            assert_eq!(v, self.valid[b] as u64, "valid count of block {b}");
            census.total += cap as u64;
            census.valid += v;
            census.invalid += wp as u64 - v;
            census.free += (cap - wp) as u64;
        }
        assert_eq!(census.valid, mapped_slots, "valid slots != mapped slots");
        assert_eq!(census.free + census.valid + census.invalid, census.total);
        census
    }
}
