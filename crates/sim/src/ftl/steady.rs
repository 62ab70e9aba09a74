//! Fast preconditioning: a sequential fill written straight into the mapping, and a
//! steady state of uniform random writes drawn from a scaled-down model drive run through
//! the same FTL (`Ftl::direct_steady_state`).

use super::{Ftl, SimCounters, CLOSED, NONE, OPEN};
use crate::config::{SimConfig, UNIT_BYTES};
use rand_xoshiro::rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

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
    /// Can the direct constructions below build this drive's state? (Not with an SLC
    /// cache: its fill and fold sequence is left to the per-write way.)
    pub fn direct_supported(&self) -> bool {
        self.cfg.slc_static_bytes == 0 && self.cfg.slc_dynamic_bytes == 0
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
}
