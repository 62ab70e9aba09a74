//! The flash translation layer: page-level mapping (4 KiB units), blocks, GC, SLC cache.
//!
//! No time here: operations that cost die time (GC, folding) add nanoseconds to
//! `pending_ns[die]`, which the timing layer charges to that die.
//!
//! Storage is flat arrays indexed by block or slot. A slot is the smallest physical
//! allocation: one 4 KiB unit, or 1 KiB when inline compression is on (a unit then
//! takes 1..=4 slots). A block of the FTL is a superblock, as controllers build them:
//! one NAND block on every plane of every die, written stripe by stripe (a stripe is
//! one multi-plane page program on one die: units_per_page x planes units), the stripes
//! going round the dies in turn. So every write frontier (host and GC) keeps all dies
//! busy, a victim's valid data is read from all dies, and erasing a block erases one
//! block on every die ([`Ftl::phys_die`] maps a slot to its die). Garbage collection is
//! global: one free-block threshold and one victim structure over all closed native
//! blocks, so the drive behaves as one log for the theory (METHODOLOGY section 6).
//!
//! The allocation code keeps its general form of several allocation groups ("dies" of
//! the FTL: free lists and open blocks each, writes round-robin over them); a drive
//! builds one group, whose blocks span every physical die.
//!
//! The parts, one file each: `mapping.rs` (logical to physical, the valid-slot bitmap,
//! a host write), `alloc.rs` (free pools, open blocks, write frontiers), `victim.rs`
//! (victim selection policies), `gc.rs` (foreground and background garbage collection,
//! erase), `slc.rs` (the SLC cache), `wear.rs` (erase counts, static wear levelling),
//! `steady.rs` (fast preconditioning: direct fill and steady state), `check.rs`
//! (consistency checks), `counters.rs` (SMART-like counters).

mod alloc;
mod check;
mod counters;
mod gc;
mod mapping;
mod slc;
mod steady;
mod victim;
mod wear;

pub use counters::{SimCounters, SlotCensus};

use crate::config::{SimConfig, UNIT_BYTES};
use rand_xoshiro::rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

pub(crate) const NONE: u32 = u32::MAX;
/// P2L marker: continuation slot of a compressed unit that started earlier.
const CONT: u32 = u32::MAX - 1;

const FREE: u8 = 0;
const OPEN: u8 = 1;
const CLOSED: u8 = 2;
/// The victim foreground GC is moving the data out of (out of the victim structures).
const COLLECTING: u8 = 3;

/// Free native blocks of a die, popped smallest key first: with wear levelling the key
/// is (erase count, block), so the least-worn block is used next; without, a falling
/// counter, so the last block freed is used next (a stack).
type FreeHeap = BinaryHeap<Reverse<(u64, u32)>>;

struct Die {
    free_native: FreeHeap,
    free_slc: Vec<u32>,
    open_native: u32,
    open_slc: u32,
    dyn_slc_in_use: u32,
}

/// Where a host unit went (for the timing layer).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Placed {
    /// Physical die.
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
    /// Slot -> LBA of the unit starting there, CONT for its other slots. Written when a
    /// unit is placed (sequentially, at a write frontier) and read by GC (sequentially);
    /// an invalidated slot keeps its old entry: whether a slot holds valid data is
    /// `vbits`, which is small enough to stay in cache, so a host overwrite does not
    /// touch a random line of this large table.
    p2l: Vec<u32>,
    /// Valid-slot bitmap: bit s set iff slot s holds (part of) a mapped unit.
    vbits: Vec<u64>,
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
    /// Cost-benefit: (block, close_seq) in close order; stale entries dropped lazily.
    age: VecDeque<(u32, u64)>,
    bucket_min: u32,
    /// Counter behind the stack order of free lists without wear levelling.
    free_push_seq: u64,
    /// Native blocks per erase count, and the least / most erased native block's count.
    ec_hist: Vec<u32>,
    ec_min: u32,
    ec_max: u32,
    /// Static wear levelling: scan position for cold blocks, and the erase count
    /// before which no new search is made after one found nothing to move.
    wl_cursor: u32,
    wl_retry_at: u64,
    next_die: u32,
    gc_next_die: u32,
    /// Bit d: die d has an open native block or a free native block. A die without
    /// either has no room for native data, so the round-robin allocation skips it
    /// without looking (most dies are in that state when few blocks are free).
    room: Vec<u64>,
    /// Physical dies whose pending_ns became non-zero since the timing layer last looked.
    pub pending_dirty: Vec<u32>,
    /// Physical die d's pending work ends with an erase (reads cannot pass it).
    pub pending_erase: Vec<bool>,
    /// Physical dies, and slots of one stripe (one multi-plane page program).
    pub pdies: u32,
    stripe_slots: u32,
    /// (log2 stripe_slots, pdies - 1) when both are powers of two: `phys_die` is then
    /// a shift and a mask (it runs twice per relocated unit; two divisions cost 45% of
    /// a steady-state random write).
    die_bits: Option<(u32, u32)>,
    /// log2 of the slots of one NAND page, when a power of two (else None: divide).
    page_shift: Option<u32>,
    /// log2 of `spb`, when a power of two (else None: divide).
    spb_shift: Option<u32>,
    seq: u64,
    in_gc: bool,
    /// Units of the host write under way (see `set_host_io`).
    host_io_units: u32,
    /// Foreground GC's victim in progress (NONE: none), the next slot to look at, the
    /// NAND page last read from it, and the slots moved so far.
    gc_cur: u32,
    gc_from: u32,
    gc_last_page: u32,
    gc_moved: u64,
    /// Slots of the victim whose P2L line / mapping entry has been prefetched.
    gc_pf_p2l: u32,
    gc_pf_l2p: u32,
    rng: Xoshiro256PlusPlus,
    pub pending_ns: Vec<u64>,
    pub c: SimCounters,
    slot_bytes: u64,
    // Per-slot die-time costs (ns).
    pub prog_slot_ns: u64,
    pub prog_slot_slc_ns: u64,
    /// Channel time of one slot's data: GC moves data out of and into the dies over
    /// their channel (for ECC), charged as die time with the read and the program.
    pub xfer_slot_ns: u64,
}

/// Ask the CPU to bring the cache line of `v[i]` closer (a hint: no effect on
/// results). GC relocates a victim's units in slot order, and each one rewrites the
/// mapping entry of a random LBA; fetching those entries ahead lets the misses overlap
/// instead of stalling one relocation after another.
#[inline(always)]
fn prefetch<T>(v: &[T], i: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(x) = v.get(i) {
        // SAFETY: PREFETCHT0 is an SSE instruction (part of the x86_64 baseline) that
        // never faults and never changes memory; the address is that of a live element.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                (x as *const T).cast(),
            )
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (v, i);
}

impl Ftl {
    pub fn new(cfg: &SimConfig) -> Ftl {
        Ftl::with_geometry(cfg, cfg.native_blocks() as u32, cfg.user_units())
    }

    /// An FTL with `native_bpd` native blocks per die and `user_units` LBAs (the
    /// scaled-down model behind [`Ftl::direct_steady_state`] sets both itself).
    fn with_geometry(cfg: &SimConfig, native_bpd: u32, user_units: u64) -> Ftl {
        // One allocation group: its blocks are superblocks over every physical die.
        let dies = 1;
        let pdies = cfg.dies();
        let spu = if cfg.compress { 4 } else { 1 };
        let spb = cfg.units_per_block() * spu;
        let slc_cap = (spb / cfg.cell.bits()).max(spu);
        let bpd = native_bpd + cfg.slc_static_blocks();
        let nblocks = (bpd * dies) as usize;
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
            // Lengths of compressed units (none without compression).
            ulen: vec![0; if cfg.compress { user_units as usize } else { 0 }],
            p2l: vec![NONE; nblocks * spb as usize],
            vbits: vec![0; (nblocks * spb as usize).div_ceil(64)],
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
            age: VecDeque::new(),
            bucket_min: 0,
            free_push_seq: 0,
            ec_hist: vec![native_bpd * dies],
            ec_min: 0,
            ec_max: 0,
            wl_cursor: 0,
            wl_retry_at: 0,
            next_die: 0,
            gc_next_die: 0,
            room: vec![0; dies.div_ceil(64) as usize],
            pending_dirty: Vec::with_capacity(pdies as usize),
            pending_erase: vec![false; pdies as usize],
            pdies,
            stripe_slots: cfg.stripe_units() * spu,
            die_bits: pow2_shift(cfg.stripe_units() * spu)
                .filter(|_| pdies.is_power_of_two())
                .map(|s| (s, pdies - 1)),
            page_shift: pow2_shift(cfg.units_per_page() * spu),
            spb_shift: pow2_shift(spb),
            seq: 0,
            in_gc: false,
            host_io_units: 1,
            gc_cur: NONE,
            gc_from: 0,
            gc_last_page: NONE,
            gc_moved: 0,
            gc_pf_p2l: 0,
            gc_pf_l2p: 0,
            rng: Xoshiro256PlusPlus::seed_from_u64(cfg.seed),
            pending_ns: vec![0; pdies as usize],
            c: SimCounters::default(),
            slot_bytes: UNIT_BYTES / spu as u64,
            prog_slot_ns: cfg.timing.program_ns / div,
            prog_slot_slc_ns: cfg.slc_timing.program_ns / div,
            xfer_slot_ns: UNIT_BYTES * 1000 / spu as u64 / cfg.channel_mbps as u64,
        };
        f.init_blocks();
        f
    }

    /// The dies' free and open blocks, the global lists, and each block's capacity
    /// and cell mode (static SLC blocks hold `slc_cap` slots).
    fn init_blocks(&mut self) {
        for d in 0..self.dies {
            self.die.push(Die {
                free_native: BinaryHeap::with_capacity(self.native_bpd as usize),
                free_slc: Vec::with_capacity((self.bpd - self.native_bpd) as usize),
                open_native: NONE,
                open_slc: NONE,
                dyn_slc_in_use: 0,
            });
            self.reset_die_lists(d);
        }
        self.reset_global_lists();
        for b in 0..self.state.len() {
            let slc = self.is_static(b as u32);
            self.cap[b] = if slc { self.slc_cap } else { self.spb };
            self.slc_mode[b] = slc;
        }
    }

    fn reset_die_lists(&mut self, d: u32) {
        let base = d * self.bpd;
        self.die[d as usize].free_native.clear();
        // Pop order: lowest block first (among equally worn ones with wear levelling).
        for i in (0..self.native_bpd).rev() {
            self.push_free_native(base + i);
        }
        let dd = &mut self.die[d as usize];
        dd.free_slc.clear();
        for i in (self.native_bpd..self.bpd).rev() {
            dd.free_slc.push(base + i);
        }
        dd.open_native = NONE;
        dd.open_slc = NONE;
        dd.dyn_slc_in_use = 0;
        self.refresh_room(d);
    }

    /// Recompute the room bit of die d (after its open native block or free pool changed).
    #[inline]
    fn refresh_room(&mut self, d: u32) {
        let dd = &self.die[d as usize];
        let has = dd.open_native != NONE || !dd.free_native.is_empty();
        let (w, m) = ((d / 64) as usize, 1u64 << (d % 64));
        if has {
            self.room[w] |= m;
        } else {
            self.room[w] &= !m;
        }
    }

    fn refresh_all_room(&mut self) {
        for d in 0..self.dies {
            self.refresh_room(d);
        }
    }

    fn reset_global_lists(&mut self) {
        self.free_native_total = self.die.iter().map(|d| d.free_native.len()).sum();
        self.slc_closed_static.clear();
        self.slc_closed_dyn.clear();
        self.fifo.clear();
        self.closed.clear();
        self.age.clear();
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

    /// Charge an erase of a block to every physical die (a superblock has a block on
    /// each), after each die's other pending work.
    fn charge_erase(&mut self, ns: u64) {
        for d in 0..self.pdies {
            self.charge(d, ns);
            self.pending_erase[d as usize] = true;
        }
    }

    /// Drop pending die work (untimed operation).
    pub fn clear_pending(&mut self) {
        for p in self.pending_ns.iter_mut() {
            *p = 0;
        }
        for e in self.pending_erase.iter_mut() {
            *e = false;
        }
        self.pending_dirty.clear();
    }

    /// The physical die slot `s` is on: its block's stripes go round the dies. (A
    /// block is a whole number of rounds, so the stripe's index in the drive decides.)
    #[inline]
    pub fn phys_die(&self, s: u32) -> u32 {
        match self.die_bits {
            Some((shift, mask)) => (s >> shift) & mask,
            None => (s / self.stripe_slots) % self.pdies,
        }
    }

    /// The block slot `s` is in (a shift for the usual power-of-two block: this runs
    /// for every unit written or invalidated).
    #[inline]
    fn block_of(&self, s: u32) -> u32 {
        match self.spb_shift {
            Some(shift) => s >> shift,
            None => s / self.spb,
        }
    }

    /// Index of the NAND page slot `s` is in (pages of one block are consecutive).
    #[inline]
    fn page_of(&self, s: u32) -> u32 {
        match self.page_shift {
            Some(shift) => s >> shift,
            None => s / (self.cfg.units_per_page() * self.spu),
        }
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
    pub fn slots_for(&self, data: storbench_core::DataKind) -> u32 {
        if self.spu == 1 {
            return 1;
        }
        match data {
            storbench_core::DataKind::Random => self.spu,
            storbench_core::DataKind::Zeros => 1,
            storbench_core::DataKind::Compressible(r) => {
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
                self.count_erase(b as u32);
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
        for w in self.vbits.iter_mut() {
            *w = 0;
        }
        for d in 0..self.dies {
            self.reset_die_lists(d);
        }
        self.reset_global_lists();
        self.next_die = 0;
        self.gc_next_die = 0;
        self.gc_cur = NONE;
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
        c.erase_count_spread = max - min;
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

    pub fn mapping_digest(&self) -> u64 {
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        for &s in &self.l2p {
            h = (h ^ s as u64).wrapping_mul(0x100_0000_01b3);
        }
        h
    }

    pub fn mapped_units(&self) -> u64 {
        self.l2p.iter().filter(|&&s| s != NONE).count() as u64
    }
}

/// log2 of `n` if it is a power of two (a shift replaces a division).
fn pow2_shift(n: u32) -> Option<u32> {
    n.is_power_of_two().then(|| n.trailing_zeros())
}
