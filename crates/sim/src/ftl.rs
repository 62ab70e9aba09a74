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

use crate::config::{SimConfig, VictimPolicy, UNIT_BYTES};
use rand_xoshiro::rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

pub(crate) const NONE: u32 = u32::MAX;
/// Largest block count of the scaled-down model behind [`Ftl::direct_steady_state`].
/// Greedy's steady-state WA does not change between 548 and 2192 blocks of 256 pages
/// (measured: -2.9% vs the FIFO formula at 7% OP for both), so 512 is enough (a
/// 256 GiB drive has about 2,200 superblocks, and the direct way needs a drive of
/// twice the model's size).
const MODEL_BLOCKS: u64 = 512;
/// Largest block of the model, 4 KiB units. A drive's superblocks can be far larger
/// (32,768 units at 256 GiB); the model's blocks are then smaller, which moves greedy's
/// WA by the gap's 1/(units per block) law: 0.18% below FIFO at 4,096 units against
/// 0.02% at 32,768, and keeps the model (512 x 4,096 units) in cache.
const MODEL_BLOCK_UNITS: u32 = 4096;
/// P2L marker: continuation slot of a compressed unit that started earlier.
const CONT: u32 = u32::MAX - 1;

const FREE: u8 = 0;
const OPEN: u8 = 1;
const CLOSED: u8 = 2;
/// The victim foreground GC is moving the data out of (out of the victim structures).
const COLLECTING: u8 = 3;

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
    /// 4 KiB units host writes covered only in part (512-byte sectors), and those of
    /// them that held data, so the drive read the unit to merge it (read-modify-write).
    pub host_partial_units: u64,
    pub rmw_reads: u64,
    /// NAND page reads (host reads, read-modify-write, GC/fold reads).
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
    /// Static wear levelling: cold blocks whose data moved to a worn block, and the
    /// bytes moved (counted in nand_write_bytes, so in WA).
    pub wl_migrations: u64,
    pub wl_relocated_bytes: u64,
    pub erase_count_min: u32,
    pub erase_count_max: u32,
    pub erase_count_mean: f64,
    /// erase_count_max - erase_count_min (over all blocks).
    pub erase_count_spread: u32,
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
        d.host_partial_units -= earlier.host_partial_units;
        d.rmw_reads -= earlier.rmw_reads;
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
        d.wl_migrations -= earlier.wl_migrations;
        d.wl_relocated_bytes -= earlier.wl_relocated_bytes;
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

/// Free native blocks of a die, popped smallest key first: with wear levelling the key
/// is (erase count, block), so the least-worn block is used next; without, a falling
/// counter, so the last block freed is used next (a stack).
type FreeHeap = BinaryHeap<Reverse<(u64, u32)>>;

/// Cost-benefit candidate set per GC: lowest-valid blocks, oldest blocks, random blocks.
const CB_LOW: usize = 8;
const CB_OLD: usize = 8;
const CB_RANDOM: usize = 8;
/// Age-queue entries looked at per GC (stale entries in the middle are skipped).
const CB_OLD_SCAN: usize = 64;

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

/// A pseudo-random permutation of `0..n`: a 4-round Feistel network on the smallest
/// even number of bits that holds `n`, walking the cycle until the value falls below
/// `n` (fewer than 4 rounds of walking on average). It deals a large random mapping in
/// slot order, touching the mapping table once per unit, where shuffling an array of
/// that size would miss the cache on every swap.
struct Permutation {
    n: u64,
    half_bits: u32,
    keys: [u64; 4],
}

impl Permutation {
    fn new(n: u64, rng: &mut Xoshiro256PlusPlus) -> Permutation {
        assert!(n >= 1);
        let bits = (64 - (n.max(2) - 1).leading_zeros()).max(2);
        Permutation {
            n,
            half_bits: bits.div_ceil(2),
            keys: [
                rng.next_u64(),
                rng.next_u64(),
                rng.next_u64(),
                rng.next_u64(),
            ],
        }
    }

    #[inline]
    fn apply(&self, mut x: u64) -> u64 {
        debug_assert!(x < self.n);
        let mask = (1u64 << self.half_bits) - 1;
        loop {
            let (mut l, mut r) = (x >> self.half_bits, x & mask);
            for k in self.keys {
                // splitmix64's finalizer as the round function.
                let mut z = r ^ k;
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                z ^= z >> 31;
                (l, r) = (r, l ^ (z & mask));
            }
            x = (l << self.half_bits) | r;
            if x < self.n {
                return x;
            }
        }
    }
}

/// Fisher-Yates shuffle with the simulator's seeded generator.
fn shuffle<T>(v: &mut [T], rng: &mut Xoshiro256PlusPlus) {
    for i in (1..v.len()).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        v.swap(i, j);
    }
}

/// Index into a sorted table of `n_from` entries for rank `i` of `n_to`: the same
/// quantile (the middle of rank i's share).
#[inline]
fn quantile(i: usize, n_to: usize, n_from: usize) -> usize {
    (((i as f64 + 0.5) * n_from as f64 / n_to as f64) as usize).min(n_from - 1)
}

/// One run of the scaled-down model behind [`Ftl::direct_steady_state`].
struct ModelRun {
    ftl: Ftl,
    /// Counters of the random phase alone (past the fill).
    counters: SimCounters,
    /// Mean unwritten slots over the second half of the random phase (None if too
    /// short to sample).
    unwritten_mean: Option<f64>,
}

impl ModelRun {
    /// Fills a model of `bpd` blocks per die with `u_s` units, then writes `w_s`
    /// uniformly random units; None if it cannot fill directly.
    fn run(cfg: &SimConfig, bpd: u32, u_s: u64, w_s: u64, spu: u32, seed: u64) -> Option<Self> {
        let mut m = Ftl::with_geometry(cfg, bpd, u_s);
        if !m.direct_fill(u_s) {
            return None;
        }
        let after_fill = m.c.clone();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let (mut w_sum, mut w_n) = (0.0f64, 0u64);
        for i in 0..w_s {
            let lba = rng.next_u64() % u_s;
            m.write_unit(lba as u32, spu);
            // Sample W over the second half of the random phase (past the fill).
            if i >= w_s / 2 && i % 64 == 0 {
                w_sum += m.unwritten_slots() as f64;
                w_n += 1;
            }
        }
        let unwritten_mean = (w_n > 0).then(|| w_sum / w_n as f64);
        let counters = m.c.since(&after_fill);
        Some(ModelRun {
            ftl: m,
            counters,
            unwritten_mean,
        })
    }
}

/// What [`Ftl::direct_steady_state`] takes from its model (the model itself is
/// dropped before the big drive is laid out).
struct SteadyModel {
    /// Closed native blocks, oldest first: (close sequence number, valid slots).
    closed: Vec<(u64, u32)>,
    /// Erase counts of every block, sorted.
    erase_counts: Vec<u32>,
    /// Sequence number at the end of the run.
    seq: u64,
    /// The model's span, in units.
    span: u64,
    /// Counters of the random phase.
    counters: SimCounters,
    /// Slots of the drive's block per slot of the model's block.
    k: f64,
}

impl SteadyModel {
    fn from_run(run: ModelRun, span: u64, k: f64) -> SteadyModel {
        let m = run.ftl;
        let mut closed: Vec<(u64, u32)> = (0..m.state.len())
            .filter(|&b| m.state[b] == CLOSED && !m.slc_mode[b])
            .map(|b| (m.close_seq[b], m.valid[b]))
            .collect();
        closed.sort_unstable();
        assert!(!closed.is_empty());
        let mut erase_counts: Vec<u32> = m.erase_count.clone();
        erase_counts.sort_unstable();
        SteadyModel {
            closed,
            erase_counts,
            seq: m.seq,
            span,
            counters: run.counters,
            k,
        }
    }
}

/// Roles dealt to the drive's native blocks by [`Ftl::direct_steady_state`].
struct BlockRoles {
    /// Closed blocks by age rank, oldest first.
    closed: Vec<u32>,
    /// One open block per die, and its write pointer (slots).
    open: Vec<u32>,
    open_wp: Vec<u32>,
    /// The GC reserve, spread over the dies.
    free: Vec<u32>,
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
            ulen: if cfg.compress {
                vec![0; user_units as usize]
            } else {
                Vec::new()
            },
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
            die_bits: ((cfg.stripe_units() * spu).is_power_of_two() && pdies.is_power_of_two())
                .then(|| ((cfg.stripe_units() * spu).trailing_zeros(), pdies - 1)),
            page_shift: (cfg.units_per_page() * spu)
                .is_power_of_two()
                .then(|| (cfg.units_per_page() * spu).trailing_zeros()),
            spb_shift: spb.is_power_of_two().then(|| spb.trailing_zeros()),
            seq: 0,
            in_gc: false,
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
        for d in 0..dies {
            f.die.push(Die {
                free_native: BinaryHeap::with_capacity(native_bpd as usize),
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
    fn pop_free_native(&mut self, d: u32) -> Option<u32> {
        let Reverse((_, b)) = self.die[d as usize].free_native.pop()?;
        self.free_native_total -= 1;
        self.refresh_room(d);
        Some(b)
    }

    /// Put native block b on its die's free heap (not counted in free_native_total:
    /// callers that add a block to the pool count it).
    #[inline]
    fn push_free_native(&mut self, b: u32) {
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

    /// Count one erase of block b (erase count, histogram of native blocks, spread).
    fn count_erase(&mut self, b: u32) {
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
    fn rebuild_ec_hist(&mut self) {
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

    /// Victim policies that keep closed native blocks in the valid-count buckets.
    #[inline]
    fn bucketed(&self) -> bool {
        matches!(
            self.cfg.victim,
            VictimPolicy::Greedy | VictimPolicy::CostBenefit
        )
    }

    fn victim_insert(&mut self, b: u32) {
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
    fn victim_unpick(&mut self, b: u32) {
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
    fn victim_remove(&mut self, b: u32) {
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

    fn closed_push(&mut self, b: u32) {
        self.pos[b as usize] = self.closed.len() as u32;
        self.closed.push(b);
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

    /// Cost-benefit age queue: append, and drop stale entries once it holds more than
    /// twice the blocks (so its length stays bounded; amortized O(1) per close).
    fn age_push(&mut self, b: u32) {
        self.age.push_back((b, self.close_seq[b as usize]));
        if self.age.len() > 2 * self.state.len() + 64 {
            let mut q = std::mem::take(&mut self.age);
            q.retain(|&(x, s)| self.age_live(x, s));
            self.age = q;
        }
    }

    /// Is this age-queue entry a block still closed since that close, and a candidate?
    #[inline]
    fn age_live(&self, b: u32, seq: u64) -> bool {
        let bu = b as usize;
        self.state[bu] == CLOSED
            && !self.slc_mode[bu]
            && self.close_seq[bu] == seq
            && self.pos[bu] != NONE
    }

    #[inline]
    fn cb_score(&self, b: u32) -> f64 {
        let bu = b as usize;
        let u = self.valid[bu] as f64 / self.cap[bu] as f64;
        let age = (self.seq - self.close_seq[bu]) as f64 + 1.0;
        (1.0 - u) * age / (1.0 + u)
    }

    /// Lowest non-empty valid-count bucket from `bucket_min` up (and remember it).
    #[inline]
    fn lowest_bucket(&mut self) -> Option<u32> {
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

    fn pick_victim(&mut self) -> Option<u32> {
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
                self.refresh_room(d as u32);
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
        self.refresh_room(d);
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

    #[inline]
    fn place(&mut self, lba: u32, s: u32, len: u32) {
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

    /// Can die d take `len` slots of native data (room in its open block, or a free block)?
    #[inline]
    fn native_room(&self, d: u32, len: u32) -> bool {
        let dd = &self.die[d as usize];
        (dd.open_native != NONE
            && self.wp[dd.open_native as usize] + len <= self.cap[dd.open_native as usize])
            || !dd.free_native.is_empty()
    }

    /// First die in lo..hi with room for `len` native slots, looking only at dies whose
    /// room bit is set (a clear bit means no open and no free native block: no room).
    #[inline]
    fn find_room(&self, mut lo: u32, hi: u32, len: u32) -> Option<u32> {
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
    fn alloc_native_rr(&mut self, len: u32, gc: bool) -> (u32, u32) {
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

    /// Foreground GC after a host write of `len` slots, interleaved with host writes
    /// as controllers do: once fewer than `gc_free_blocks` blocks are free a victim is
    /// chosen, and each host write moves a share of its valid data, paced so the
    /// victim is empty before the write frontier runs down to its last free block:
    /// ceil(len x valid left / slack) slots, slack being the free space beyond the
    /// victim's valid data and one block. Host writes consume the slack, moving data
    /// does not, so the victim ends in time; with no slack it is finished at once.
    /// With `gc_free_blocks` = 2 (GC starts with one free block: no room to pace) every
    /// victim is collected at once, as the reference FTL of the theory tests does.
    fn foreground_gc(&mut self, len: u32) {
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
            let budget = if slack == 0 || t < 3 {
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
    fn next_victim(&mut self) -> Option<u32> {
        self.slc_closed_dyn
            .pop_front()
            .or_else(|| self.pick_victim())
    }

    /// One unit of GC work, done at once: fold a dynamic SLC block if any, else
    /// collect one native victim. False if nothing to collect.
    fn gc_step(&mut self, background: bool) -> bool {
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

    // ----- valid-slot bitmap -----

    #[inline]
    fn is_valid(&self, s: u32) -> bool {
        self.vbits[(s / 64) as usize] >> (s % 64) & 1 == 1
    }

    /// Mark slots s..s+len valid (they were not).
    #[inline]
    fn set_valid(&mut self, s: u32, len: u32) {
        for k in s..s + len {
            let (w, m) = ((k / 64) as usize, 1u64 << (k % 64));
            debug_assert_eq!(self.vbits[w] & m, 0, "slot {k} already valid");
            self.vbits[w] |= m;
        }
    }

    /// Mark slots s..s+len invalid (they were valid).
    #[inline]
    fn clear_valid(&mut self, s: u32, len: u32) {
        for k in s..s + len {
            let (w, m) = ((k / 64) as usize, 1u64 << (k % 64));
            debug_assert_ne!(self.vbits[w] & m, 0, "slot {k} not valid");
            self.vbits[w] &= !m;
        }
    }

    /// First valid slot in from..to.
    #[inline]
    fn next_valid(&self, from: u32, to: u32) -> Option<u32> {
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
    fn prefetch_mappings(&self, base: u32, end: u32) {
        let mut from = base;
        while let Some(s) = self.next_valid(from, base + end) {
            let l = self.p2l[s as usize];
            if l < CONT {
                prefetch(&self.l2p, l as usize);
            }
            from = s + 1;
        }
    }

    /// Relocate the valid data of block b (closed, removed from victim structures)
    /// into the native frontier, then erase it, all at once.
    fn collect(&mut self, b: u32, background: bool) {
        assert_eq!(self.gc_cur, NONE, "collect with a victim in progress");
        self.gc_begin(b);
        let done = self.gc_advance(u64::MAX, background);
        debug_assert!(done);
    }

    /// Make closed block `b` (out of the victim structures) GC's victim.
    fn gc_begin(&mut self, b: u32) {
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
    fn gc_prefetch(&mut self, end: u32, budget: u64) {
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
    fn gc_advance(&mut self, budget: u64, background: bool) -> bool {
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
    fn move_unit(
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

    fn erase(&mut self, b: u32) {
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

    // ----- static wear levelling -----

    /// Static wear levelling, at most one block per call: when the erase-count spread of
    /// native blocks exceeds `wl_threshold`, move the data of a cold closed block (erase
    /// count near the minimum) into the most-worn free block, which then rests under
    /// cold data, and erase the cold block, so that young block returns to the free pool
    /// (where dynamic levelling picks it first). The moved bytes count in WA.
    /// Cost: O(1) when not needed; a search resumes where the last one stopped, so a
    /// sweep over all blocks is spread over the migrations it finds.
    fn wear_level(&mut self) {
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
    fn migrate(&mut self, cold: u32, dest: u32) {
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

    // ----- direct preconditioning (no per-write work) -----

    /// Can the direct constructions below build this drive's state? (Not with an SLC
    /// cache: its fill and fold sequence is left to the per-write way.)
    pub fn direct_supported(&self) -> bool {
        self.cfg.slc_static_bytes == 0 && self.cfg.slc_dynamic_bytes == 0
    }

    /// Slots that hold no data: free native blocks and the unwritten rest of open
    /// native blocks.
    fn unwritten_slots(&self) -> u64 {
        let open: u64 = self
            .die
            .iter()
            .filter(|d| d.open_native != NONE)
            .map(|d| (self.cap[d.open_native as usize] - self.wp[d.open_native as usize]) as u64)
            .sum();
        self.free_native_total as u64 * self.spb as u64 + open
    }

    fn is_purged(&self) -> bool {
        self.free_native_total == (self.native_bpd * self.dies) as usize
            && self.die.iter().all(|d| d.open_native == NONE)
            && self.gc_cur == NONE
    }

    /// Sequential fill of LBAs 0..span written straight into the mapping: exactly the
    /// placement (and close order, victim structures, counters) of writing the LBAs in
    /// order through `write_unit`: unit i goes to die i mod dies, each die fills the
    /// blocks it pops from its free list in turn. O(span) with no per-write GC checks.
    /// Returns false, changing nothing, when it cannot (SLC cache; GC would run during
    /// the fill); the drive must be purged.
    pub fn direct_fill(&mut self, span: u64) -> bool {
        assert!(span <= self.user_units);
        assert!(self.is_purged(), "direct_fill needs a purged drive");
        if !self.direct_supported() {
            return false;
        }
        let dies = self.dies as u64;
        let upb = (self.spb / self.spu) as u64;
        let units_of = |d: u64| span / dies + u64::from(d < span % dies);
        let blocks_of = |d: u64| units_of(d).div_ceil(upb);
        let used: u64 = (0..dies).map(blocks_of).sum();
        if (self.native_bpd as u64 * dies).saturating_sub(used) < self.cfg.gc_free_blocks as u64 {
            return false;
        }
        // Blocks each die opens, in its pop order.
        let mut blocks: Vec<Vec<u32>> = Vec::with_capacity(dies as usize);
        for d in 0..dies {
            let n = blocks_of(d);
            let mut v = Vec::with_capacity(n as usize);
            for _ in 0..n {
                let b = self.pop_free_native(d as u32).expect("checked free blocks");
                let bu = b as usize;
                self.state[bu] = OPEN;
                self.slc_mode[bu] = false;
                self.cap[bu] = self.spb;
                v.push(b);
            }
            blocks.push(v);
        }
        let spu = self.spu;
        for lba in 0..span {
            let (d, k) = (lba % dies, lba / dies);
            let b = blocks[d as usize][(k / upb) as usize];
            let s = b * self.spb + (k % upb) as u32 * spu;
            self.map_unit(lba as usize, s);
        }
        for (d, v) in blocks.iter().enumerate() {
            let n = units_of(d as u64);
            for (j, &b) in v.iter().enumerate() {
                let units = (n - j as u64 * upb).min(upb) as u32;
                self.wp[b as usize] = units * spu;
                self.valid[b as usize] = units * spu;
            }
        }
        // Close full blocks in the order the writes would: block j of die d fills at
        // unit ((j + 1) upb - 1) dies + d.
        let seq0 = self.seq;
        let most = blocks.iter().map(Vec::len).max().unwrap_or(0);
        for j in 0..most {
            for (d, v) in blocks.iter().enumerate() {
                let Some(&b) = v.get(j) else { continue };
                if self.wp[b as usize] == self.spb {
                    self.seq = seq0 + ((j as u64 + 1) * upb - 1) * dies + d as u64 + 1;
                    self.close(b);
                } else {
                    self.die[d].open_native = b;
                }
            }
        }
        self.seq = seq0 + span;
        self.next_die = (span % dies) as u32;
        self.refresh_all_room();
        let bytes = span * UNIT_BYTES;
        self.c.nand_write_bytes += bytes;
        self.c.native_direct_bytes += bytes;
        true
    }

    /// Steady state of uniform random 4 KiB writes, built without simulating them on
    /// this drive: as after a sequential fill of LBAs 0..span and `writes` uniformly
    /// random writes inside the span.
    ///
    /// How: a scaled-down copy of the drive (the same dies, block size, victim policy,
    /// GC reserve and wear levelling, about [`MODEL_BLOCKS`] blocks, and the same
    /// effective spare factor) runs the same process through the real FTL: fill, then
    /// `writes / span` x its span random writes. Its closed blocks, taken in close order
    /// with their valid counts, are the distribution this drive's closed blocks are
    /// drawn from (by quantile in close order, so age and valid count stay paired, which
    /// FIFO and cost-benefit need); erase counts likewise. Valid pages sit at random
    /// positions of their blocks and LBAs are dealt to them by a random permutation
    /// (under uniform writes which LBA sits where is exchangeable). Counters of the
    /// random phase are the model's scaled by span / model span. The big drive's
    /// valid total is then made exact (every LBA mapped once). Returns false, changing
    /// nothing, if unsupported (SLC cache) or not worth it (a drive of fewer than twice
    /// the model's blocks: replaying its writes is as fast and exact); the drive must
    /// be purged.
    ///
    /// The steps, in the order they draw from one generator (the order is part of the
    /// result): [`Ftl::run_steady_model`], [`Ftl::deal_block_roles`],
    /// [`Ftl::closed_valid_slots`], [`Ftl::lay_out_blocks`],
    /// [`Ftl::deal_erase_counts`], then [`Ftl::close_in_age_order`] and
    /// [`Ftl::add_model_counters`].
    pub fn direct_steady_state(&mut self, span: u64, writes: u64, seed: u64) -> bool {
        assert!(span >= 1 && span <= self.user_units);
        assert!(self.is_purged(), "direct_steady_state needs a purged drive");
        if !self.direct_supported() {
            return false;
        }
        if writes == 0 {
            return self.direct_fill(span);
        }
        let Some(model) = self.run_steady_model(span, writes, seed) else {
            return false;
        };
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x5EED_CAFE_F00D_0001);
        let roles = self.deal_block_roles(&mut rng);
        let valid_of = self.closed_valid_slots(&model, &roles, span, &mut rng);
        // Lay out the blocks: valid units at random positions, LBAs dealt to them.
        for dd in self.die.iter_mut() {
            dd.free_native.clear();
        }
        self.free_native_total = 0;
        self.lay_out_blocks(&roles, &valid_of, span, &mut rng);
        self.deal_erase_counts(&model.erase_counts, &mut rng);
        for &b in &roles.free {
            self.push_free_native(b);
            self.free_native_total += 1;
        }
        let seq0 = self.seq;
        let seq_end = seq0 + span + writes;
        let scale = span as f64 / model.span as f64;
        self.close_in_age_order(&model, &roles.closed, seq0, seq_end, scale);
        self.next_die = 0;
        self.gc_next_die = 0;
        self.add_model_counters(&model.counters, span, writes, scale);
        true
    }

    /// Runs the scaled-down model of this drive through a fill of its span and random
    /// writes in the same proportion as `writes` to `span`; None if the model would be
    /// most of the drive (replaying the writes costs no more and is exact) or cannot
    /// fill directly.
    ///
    /// The model has this drive's dies, block size and GC reserve, and fewer blocks
    /// per die. Its spare factor must equal this drive's: alpha = pages holding data
    /// / span, where pages not holding data are the free blocks and the unwritten
    /// rest of the dies' open blocks. That unwritten space W depends on the dies and
    /// the reserve (with few free blocks many dies have no open block), not on the
    /// drive's size, so it is measured in the model and the model's span chosen so
    /// that (blocks x spb - W) / span match: a short calibration run (fill + at most
    /// one span of writes) from a guess, then the run that is used.
    fn run_steady_model(&self, span: u64, writes: u64, seed: u64) -> Option<SteadyModel> {
        let dies = self.dies as u64;
        let reserve = self.cfg.gc_free_blocks as u64;
        let n_big = self.native_bpd as u64 * dies;
        let bpd_s = (MODEL_BLOCKS / dies).max(reserve.div_ceil(dies) + 8);
        let n_s = bpd_s * dies;
        let spb64 = self.spb as u64;
        let mcfg = self.model_config(seed);
        let mupb = mcfg.units_per_block() as u64;
        let mspb = mupb * self.spu as u64;
        if 2 * n_s * mspb > n_big * spb64 {
            return None;
        }
        // Blocks of the drive per block of the model: the unwritten space, in blocks,
        // is the same in both.
        let k = spb64 as f64 / mspb as f64;
        let mut w_est = (reserve * mspb) as f64 + dies as f64 * mspb as f64 / 2.0;
        for attempt in 0..2 {
            let last = attempt == 1;
            let big = (n_big * spb64) as f64 - w_est * k;
            let small = (n_s * mspb) as f64 - w_est;
            let u_s = ((small * span as f64 / big).round() as u64)
                .clamp(1, (n_s - reserve - dies - 2) * mupb);
            let mut w_s = ((writes as f64 * u_s as f64 / span as f64).round() as u64).max(1);
            if !last {
                w_s = w_s.min(u_s);
            }
            let run = ModelRun::run(&mcfg, bpd_s as u32, u_s, w_s, self.spu, seed)?;
            if let Some(w) = run.unwritten_mean {
                w_est = w;
            }
            if last {
                return Some(SteadyModel::from_run(run, u_s, k));
            }
        }
        unreachable!("the second attempt returns")
    }

    /// The model's configuration: this drive's, with its own seed and blocks of at
    /// most [`MODEL_BLOCK_UNITS`] units.
    fn model_config(&self, seed: u64) -> SimConfig {
        let mut mcfg = self.cfg.clone();
        mcfg.seed = self.cfg.seed ^ seed.rotate_left(17);
        while mcfg.units_per_block() > MODEL_BLOCK_UNITS && mcfg.pages_per_block > 2 {
            mcfg.pages_per_block /= 2;
        }
        mcfg
    }

    /// Roles of this drive's blocks: per die a random permutation, the first few
    /// free (the GC reserve spread over the dies), one open, the rest closed; the
    /// closed ones shuffled into age order and each open block's write pointer drawn.
    fn deal_block_roles(&self, rng: &mut Xoshiro256PlusPlus) -> BlockRoles {
        let dies = self.dies as u64;
        let reserve = self.cfg.gc_free_blocks as u64;
        let n_big = self.native_bpd as u64 * dies;
        let mut closed: Vec<u32> = Vec::with_capacity(n_big as usize);
        let mut open: Vec<u32> = Vec::with_capacity(dies as usize);
        let mut free: Vec<u32> = Vec::with_capacity(reserve as usize);
        let mut ids: Vec<u32> = Vec::with_capacity(self.native_bpd as usize);
        for d in 0..dies {
            ids.clear();
            ids.extend((0..self.native_bpd).map(|i| d as u32 * self.bpd + i));
            shuffle(&mut ids, rng);
            let nf = (reserve / dies + u64::from(d < reserve % dies)) as usize;
            free.extend_from_slice(&ids[..nf]);
            open.push(ids[nf]);
            closed.extend_from_slice(&ids[nf + 1..]);
        }
        shuffle(&mut closed, rng); // index = age rank, oldest first
        let upb = self.spb / self.spu;
        let open_wp: Vec<u32> = open
            .iter()
            .map(|_| (rng.next_u64() % upb as u64) as u32 * self.spu)
            .collect();
        BlockRoles {
            closed,
            open,
            open_wp,
            free,
        }
    }

    /// Valid slots of each closed block (by age rank): the model's valid counts by
    /// quantile, scaled to this block size, then evened out a unit at a time so that
    /// closed and open blocks together hold exactly `span` units.
    fn closed_valid_slots(
        &self,
        model: &SteadyModel,
        roles: &BlockRoles,
        span: u64,
        rng: &mut Xoshiro256PlusPlus,
    ) -> Vec<u32> {
        let (spu, spb) = (self.spu, self.spb);
        let c_big = roles.closed.len();
        let n_model = model.closed.len();
        let mut valid_of: Vec<u32> = (0..c_big)
            .map(|i| {
                let v = model.closed[quantile(i, c_big, n_model)].1 as f64 * model.k;
                (((v / spu as f64).round() as u32) * spu).min(spb)
            })
            .collect();
        let target = span * spu as u64;
        let open_sum: u64 = roles.open_wp.iter().map(|&w| w as u64).sum();
        let want = target
            .checked_sub(open_sum)
            .expect("open blocks hold < span");
        let have: u64 = valid_of.iter().map(|&v| v as u64).sum();
        assert!(
            want <= c_big as u64 * spb as u64,
            "model gives more data than the closed blocks hold"
        );
        if have > 0 {
            let r = want as f64 / have as f64;
            for v in valid_of.iter_mut() {
                *v = ((((*v as f64 * r) / spu as f64).round() as u32) * spu).min(spb);
            }
        }
        let mut have: u64 = valid_of.iter().map(|&v| v as u64).sum();
        let mut order: Vec<u32> = (0..c_big as u32).collect();
        shuffle(&mut order, rng);
        while have != want {
            for &i in &order {
                let v = &mut valid_of[i as usize];
                if have < want && *v < spb {
                    *v += spu;
                    have += spu as u64;
                } else if have > want && *v >= spu {
                    *v -= spu;
                    have -= spu as u64;
                }
                if have == want {
                    break;
                }
            }
        }
        valid_of
    }

    /// Writes the blocks' contents: each closed block's valid units at random
    /// positions, each open block's written prefix, and the LBAs 0..span dealt to
    /// those slots by a random permutation.
    fn lay_out_blocks(
        &mut self,
        roles: &BlockRoles,
        valid_of: &[u32],
        span: u64,
        rng: &mut Xoshiro256PlusPlus,
    ) {
        let spu = self.spu;
        let upb = self.spb / spu;
        let mut slots: Vec<u32> = Vec::with_capacity(span as usize);
        let mut pos: Vec<u32> = (0..upb).collect();
        for (i, &b) in roles.closed.iter().enumerate() {
            let bu = b as usize;
            let k = (valid_of[i] / spu) as usize;
            // Partial Fisher-Yates: the first k entries of `pos` become a random k-subset.
            for j in 0..k {
                let r = j + (rng.next_u64() % (upb as usize - j) as u64) as usize;
                pos.swap(j, r);
                slots.push(b * self.spb + pos[j] * spu);
            }
            self.state[bu] = CLOSED;
            self.wp[bu] = self.spb;
            self.valid[bu] = valid_of[i];
        }
        for (d, (&b, &wp)) in roles.open.iter().zip(&roles.open_wp).enumerate() {
            let bu = b as usize;
            for j in 0..wp / spu {
                slots.push(b * self.spb + j * spu);
            }
            self.state[bu] = OPEN;
            self.wp[bu] = wp;
            self.valid[bu] = wp;
            self.die[d].open_native = b;
        }
        assert_eq!(slots.len() as u64, span);
        let perm = Permutation::new(span, rng);
        for (i, &s) in slots.iter().enumerate() {
            self.map_unit(perm.apply(i as u64) as usize, s);
        }
    }

    /// Maps `lba` to the unit that starts at slot `s` (its continuation slots follow).
    #[inline]
    fn map_unit(&mut self, lba: usize, s: u32) {
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

    /// Erase counts: the model's distribution (`sorted`), dealt to the native blocks
    /// at random.
    fn deal_erase_counts(&mut self, sorted: &[u32], rng: &mut Xoshiro256PlusPlus) {
        let mut natives: Vec<u32> = (0..self.state.len() as u32)
            .filter(|&b| !self.is_static(b))
            .collect();
        shuffle(&mut natives, rng);
        let nn = natives.len();
        for (j, &b) in natives.iter().enumerate() {
            let e = sorted[quantile(j, nn, sorted.len())];
            self.erase_count[b as usize] += e;
            self.c.nand_erases += e as u64;
        }
        self.rebuild_ec_hist();
    }

    /// Closes the blocks (oldest first) into the victim structures, with close
    /// sequence numbers from the model's ages scaled by `scale`, ending at `seq_end`.
    fn close_in_age_order(
        &mut self,
        model: &SteadyModel,
        closed: &[u32],
        seq0: u64,
        seq_end: u64,
        scale: f64,
    ) {
        let c_big = closed.len();
        for (i, &b) in closed.iter().enumerate() {
            let (cs, _) = model.closed[quantile(i, c_big, model.closed.len())];
            let age = ((model.seq - cs) as f64 * scale) as u64;
            self.close_seq[b as usize] = seq_end.saturating_sub(age).max(seq0 + 1);
            self.seq = self.close_seq[b as usize];
            self.victim_insert(b);
        }
        self.seq = seq_end;
        self.refresh_all_room();
    }

    /// Counters of the fill and the random writes: host data as written, the rest the
    /// model's random phase scaled by `scale`.
    fn add_model_counters(&mut self, md: &SimCounters, span: u64, writes: u64, scale: f64) {
        let sc = |x: u64| (x as f64 * scale).round() as u64;
        let bytes = (span + writes) * UNIT_BYTES;
        self.c.nand_write_bytes += span * UNIT_BYTES + sc(md.nand_write_bytes);
        self.c.native_direct_bytes += bytes;
        self.c.nand_page_reads += sc(md.nand_page_reads);
        self.c.gc_runs += sc(md.gc_runs);
        self.c.gc_relocated_bytes += sc(md.gc_relocated_bytes);
        self.c.wl_migrations += sc(md.wl_migrations);
        self.c.wl_relocated_bytes += sc(md.wl_relocated_bytes);
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
    fn check_mapping(&self) -> u64 {
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
    fn check_block_lists(&self) -> Vec<u8> {
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
    fn check_victim_sets(&self, in_lists: &mut [u8]) {
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
    fn check_ec_hist(&self) {
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
    fn check_block(&self, b: usize, census: &mut SlotCensus) {
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
