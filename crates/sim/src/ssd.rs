//! The simulated SSD as an engine [`Target`]: the FTL plus an event model in virtual time.
//!
//! Every die, every channel and the host link in each direction has a busy-until time.
//! An I/O is scheduled at submission: each of its 4 KiB units goes through the link,
//! the controller write buffer, a channel and a die, first come first served on each
//! resource, and it completes when its last unit does. Garbage collection triggered by
//! a write occupies its die before that write's program. Completions wait in a min-heap
//! until `advance` moves the clock past them. Background GC and SLC folding run only
//! when time passes with no host I/O outstanding (host idle).

use crate::config::{SimConfig, SimError, UNIT_BYTES};
use crate::ftl::{Ftl, SimCounters, SlotCensus};
use rand_xoshiro::rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use storbench_engine::{Completion, IoRequest, Target, TargetError, TargetInfo, TargetKind};
use storbench_trace::Op;

const EINVAL: i32 = 22;

/// A known state to put the drive in without simulating the timing of every I/O.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum State {
    /// Secure-erased: nothing mapped.
    Fresh,
    /// Purged, then every LBA written once in order (incompressible).
    SequentialFill,
    /// Purged, the first `span_fraction` of the LBAs filled in order, then
    /// `writes_multiple` x (span units) uniformly random 4 KiB writes inside that span.
    SteadyStateRandom {
        span_fraction: f64,
        writes_multiple: f64,
        seed: u64,
    },
}

/// How [`SimSsd::fast_state`] built the state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precondition {
    /// Written directly into the mapping and block tables.
    Direct,
    /// Every write run through the FTL, untimed (drives with an SLC cache).
    Replay,
}

/// The simulated SSD.
pub struct SimSsd {
    ftl: Ftl,
    info: TargetInfo,
    now_ns: u64,
    die_busy: Vec<u64>,
    ch_busy: Vec<u64>,
    link_in_busy: u64,
    link_out_busy: u64,
    /// Program-done time of the unit that last used each write-buffer entry.
    wb_ring: Vec<u64>,
    wb_idx: usize,
    last_prog_done: u64,
    /// Pending completions: (complete time, key, slot, length). All four are u64 so an
    /// entry has no padding: with a u32 slot the heap's sift read 8 bytes over a 4-byte
    /// store, store forwarding failed, and every submit waited for the store buffer to
    /// drain (which holds the FTL's cache-missing mapping stores). (time, key) is
    /// unique, so the other fields never decide the order.
    heap: BinaryHeap<Reverse<(u64, u64, u64, u64)>>,
    seq: u64,
    qd: usize,
    unit_ch_ns: u64,
    slot_bytes: u64,
}

/// Open a simulated drive from `sim:PRESET[,key=value...]`.
pub fn open_spec(spec: &str) -> Result<SimSsd, SimError> {
    let cfg = SimConfig::parse(spec)?;
    Ok(SimSsd::new(cfg, spec))
}

#[inline]
fn xfer_ns(bytes: u64, mbps: u32) -> u64 {
    // 1 MB/s = 1 byte/us.
    bytes * 1000 / mbps as u64
}

impl SimSsd {
    /// Build a drive from a validated configuration; `name` is reported in [`TargetInfo`].
    pub fn new(cfg: SimConfig, name: &str) -> SimSsd {
        cfg.validate()
            .expect("SimSsd::new needs a validated SimConfig");
        let ftl = Ftl::new(&cfg);
        let mut details = BTreeMap::new();
        details.insert("preset".into(), cfg.preset.clone());
        details.insert("op".into(), format!("{}", cfg.op));
        details.insert("cell".into(), format!("{:?}", cfg.cell).to_lowercase());
        details.insert(
            "geometry".into(),
            format!(
                "{} channels x {} dies x {} planes, {} native + {} SLC blocks/die, {} pages/block x {} B",
                cfg.channels,
                cfg.dies_per_channel,
                cfg.planes_per_die,
                ftl.native_bpd,
                ftl.bpd - ftl.native_bpd,
                cfg.pages_per_block,
                cfg.page_bytes
            ),
        );
        details.insert(
            "nand_timing_ns".into(),
            format!(
                "read {} program {} erase {}",
                cfg.timing.read_ns, cfg.timing.program_ns, cfg.timing.erase_ns
            ),
        );
        details.insert("victim".into(), cfg.victim.as_str().into());
        details.insert("queue_depth".into(), cfg.queue_depth.to_string());
        details.insert("slc_static_bytes".into(), cfg.slc_static_bytes.to_string());
        details.insert(
            "slc_dynamic_bytes".into(),
            cfg.slc_dynamic_bytes.to_string(),
        );
        details.insert("compress".into(), cfg.compress.to_string());
        details.insert("seed".into(), cfg.seed.to_string());
        let info = TargetInfo {
            kind: TargetKind::Sim,
            name: name.to_string(),
            capacity_bytes: cfg.capacity_bytes,
            logical_block_bytes: UNIT_BYTES as u32,
            rotational: Some(false),
            discard: true,
            model: Some(format!("storbench sim {}", cfg.preset)),
            backend: "virtual".into(),
            details,
        };
        let dies = cfg.dies() as usize;
        SimSsd {
            info,
            now_ns: 0,
            die_busy: vec![0; dies],
            ch_busy: vec![0; cfg.channels as usize],
            link_in_busy: 0,
            link_out_busy: 0,
            wb_ring: vec![0; cfg.write_buffer_units as usize],
            wb_idx: 0,
            last_prog_done: 0,
            heap: BinaryHeap::with_capacity(cfg.queue_depth as usize),
            seq: 0,
            qd: cfg.queue_depth as usize,
            unit_ch_ns: xfer_ns(UNIT_BYTES, cfg.channel_mbps),
            slot_bytes: UNIT_BYTES / ftl.spu as u64,
            ftl,
        }
    }

    pub fn config(&self) -> &SimConfig {
        &self.ftl.cfg
    }

    /// SMART-like counters.
    pub fn counters(&self) -> SimCounters {
        self.ftl.counters()
    }

    /// I/Os submitted and not yet reaped.
    pub fn in_flight(&self) -> usize {
        self.heap.len()
    }

    /// Secure erase (purge): all mappings dropped, every used block erased.
    /// Takes die time (one erase per used block). No I/O may be in flight.
    pub fn purge(&mut self) -> Result<(), SimError> {
        if !self.heap.is_empty() {
            return Err(SimError::Invalid(format!(
                "purge with {} I/Os in flight",
                self.heap.len()
            )));
        }
        let per_die = self.ftl.purge();
        let erase_ns = self.ftl.cfg.timing.erase_ns;
        for (d, n) in per_die.into_iter().enumerate() {
            self.die_busy[d] = self.die_busy[d].max(self.now_ns) + n * erase_ns;
        }
        self.ftl.clear_pending();
        Ok(())
    }

    /// Put the drive into a known state fast, without simulating its I/Os: the mapping
    /// table, blocks, victim structures, erase counts and counters are built directly
    /// ([`Precondition::Direct`]): a sequential fill exactly as the writes would leave
    /// it, a steady state of uniform random writes drawn from a scaled-down model
    /// drive that runs the same process (see `Ftl::direct_steady_state`). Drives the
    /// direct way cannot build (an SLC cache), and steady states of drives too small
    /// to gain from the model (under 4096 blocks), fall back to [`SimSsd::replay_state`]
    /// ([`Precondition::Replay`]). The clock does not move and no idle time passes (no
    /// background GC or SLC folding), as with back-to-back honest I/O.
    pub fn fast_state(&mut self, state: State) -> Result<Precondition, SimError> {
        let (span, writes, seed) = self.begin_state(state, "fast_state")?;
        let direct = match state {
            State::Fresh => true,
            State::SequentialFill => self.ftl.direct_fill(span),
            State::SteadyStateRandom { .. } => self.ftl.direct_steady_state(span, writes, seed),
        };
        if !direct {
            self.replay_writes(span, writes, seed);
        }
        self.end_state(state, span, writes);
        Ok(if direct {
            Precondition::Direct
        } else {
            Precondition::Replay
        })
    }

    /// The same states the per-write way: every write of the fill and of the random
    /// phase goes through the FTL (mapping, GC, wear levelling, SLC cache), but no
    /// timing, queueing or completions are simulated and the clock does not move.
    /// Slower than [`SimSsd::fast_state`]; the reference it is checked against.
    pub fn replay_state(&mut self, state: State) -> Result<(), SimError> {
        let (span, writes, seed) = self.begin_state(state, "replay_state")?;
        self.replay_writes(span, writes, seed);
        self.end_state(state, span, writes);
        Ok(())
    }

    /// Validate, purge; (span, random writes, seed) of the state.
    fn begin_state(&mut self, state: State, what: &str) -> Result<(u64, u64, u64), SimError> {
        if !self.heap.is_empty() {
            return Err(SimError::Invalid(format!(
                "{what} with {} I/Os in flight",
                self.heap.len()
            )));
        }
        let n = self.ftl.user_units();
        let r = match state {
            State::Fresh => (0, 0, 0),
            State::SequentialFill => (n, 0u64, 0u64),
            State::SteadyStateRandom {
                span_fraction,
                writes_multiple,
                seed,
            } => {
                let ok = span_fraction > 0.0
                    && span_fraction <= 1.0
                    && writes_multiple >= 0.0
                    && writes_multiple.is_finite();
                if !ok {
                    return Err(SimError::Invalid(format!(
                        "SteadyStateRandom needs 0 < span_fraction <= 1 and writes_multiple >= 0, got {span_fraction}, {writes_multiple}"
                    )));
                }
                let span = ((n as f64 * span_fraction) as u64).max(1);
                (span, (span as f64 * writes_multiple) as u64, seed)
            }
        };
        self.ftl.purge();
        Ok(r)
    }

    fn replay_writes(&mut self, span: u64, writes: u64, seed: u64) {
        let spu = self.ftl.spu;
        for lba in 0..span {
            self.ftl.write_unit(lba as u32, spu);
        }
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        for _ in 0..writes {
            let lba = rng.next_u64() % span;
            self.ftl.write_unit(lba as u32, spu);
        }
    }

    /// Host counters of the state's writes (the fill as 128 KiB writes, the random
    /// phase as 4 KiB writes); drop die work (untimed).
    fn end_state(&mut self, state: State, span: u64, writes: u64) {
        if state != State::Fresh {
            self.ftl.c.host_write_bytes += (span + writes) * UNIT_BYTES;
            self.ftl.c.host_write_ios += span.div_ceil(32) + writes;
        }
        self.ftl.clear_pending();
    }

    /// Full internal consistency check (every valid page mapped once, slot census).
    pub fn check(&self) -> SlotCensus {
        self.ftl.check()
    }

    /// Valid fraction of every closed native block, sorted ascending.
    pub fn valid_fractions(&self) -> Vec<f64> {
        self.ftl.closed_valid_fractions()
    }

    /// Free native blocks over all dies.
    pub fn free_blocks(&self) -> usize {
        self.ftl.free_native_blocks()
    }

    /// FNV-1a digest of the mapping table (LBA -> physical slot), for comparing states.
    pub fn mapping_digest(&self) -> u64 {
        self.ftl.mapping_digest()
    }

    /// Number of mapped 4 KiB units.
    pub fn mapped_units(&self) -> u64 {
        self.ftl.mapped_units()
    }

    /// Die-time cost of a program of `slots` slots.
    #[inline]
    fn prog_ns(&self, slots: u32, slc: bool) -> u64 {
        slots as u64
            * if slc {
                self.ftl.prog_slot_slc_ns
            } else {
                self.ftl.prog_slot_ns
            }
    }

    fn schedule(&mut self, r: &IoRequest) -> Result<u64, i32> {
        let t = self.now_ns;
        let cfg = &self.ftl.cfg;
        let cap = cfg.capacity_bytes;
        let channel_mbps = cfg.channel_mbps;
        let (read_ns, slc_read_ns) = (cfg.timing.read_ns, cfg.slc_timing.read_ns);
        let end = r.offset_bytes.checked_add(r.len_bytes).ok_or(-EINVAL)?;
        if end > cap {
            return Err(-EINVAL);
        }
        let command_ns = cfg.command_ns;
        let link_mbps = cfg.link_mbps;
        let channels = cfg.channels as usize;
        match r.op {
            Op::Write => {
                self.ftl.c.host_write_ios += 1;
                self.ftl.c.host_write_bytes += r.len_bytes;
                let ls = t.max(self.link_in_busy);
                let le = ls + xfer_ns(r.len_bytes, link_mbps);
                self.link_in_busy = le;
                let mut done = le;
                if r.len_bytes > 0 {
                    let first = r.offset_bytes / UNIT_BYTES;
                    let last = (end - 1) / UNIT_BYTES;
                    let slots = self.ftl.slots_for(r.data);
                    for lba in first..=last {
                        let p = self.ftl.write_unit(lba as u32, slots);
                        let d = p.die as usize;
                        let a = le.max(self.wb_ring[self.wb_idx]);
                        // GC work triggered by this write occupies its dies first.
                        while let Some(gd) = self.ftl.pending_dirty.pop() {
                            let gd = gd as usize;
                            let pend = std::mem::take(&mut self.ftl.pending_ns[gd]);
                            self.die_busy[gd] = self.die_busy[gd].max(t) + pend;
                        }
                        let ch = d % channels;
                        let xs = a.max(self.ch_busy[ch]);
                        let xe = xs + xfer_ns(p.slots as u64 * self.slot_bytes, channel_mbps);
                        self.ch_busy[ch] = xe;
                        let ps = xe.max(self.die_busy[d]);
                        let pe = ps + self.prog_ns(p.slots, p.slc);
                        self.die_busy[d] = pe;
                        self.wb_ring[self.wb_idx] = pe;
                        self.wb_idx += 1;
                        if self.wb_idx == self.wb_ring.len() {
                            self.wb_idx = 0;
                        }
                        self.last_prog_done = self.last_prog_done.max(pe);
                        done = done.max(a);
                    }
                }
                Ok(done + command_ns)
            }
            Op::Read => {
                self.ftl.c.host_read_ios += 1;
                self.ftl.c.host_read_bytes += r.len_bytes;
                let t0 = t + command_ns;
                let mut done = t0;
                if r.len_bytes > 0 {
                    let first = r.offset_bytes / UNIT_BYTES;
                    let last = (end - 1) / UNIT_BYTES;
                    for lba in first..=last {
                        if let Some((d, slc)) = self.ftl.locate(lba) {
                            let d = d as usize;
                            let read_ns = if slc { slc_read_ns } else { read_ns };
                            let rs = t0.max(self.die_busy[d]);
                            let re = rs + read_ns;
                            self.die_busy[d] = re;
                            let ch = d % channels;
                            let xs = re.max(self.ch_busy[ch]);
                            let xe = xs + self.unit_ch_ns;
                            self.ch_busy[ch] = xe;
                            done = done.max(xe);
                            self.ftl.c.nand_page_reads += 1;
                        }
                    }
                }
                let ls = done.max(self.link_out_busy);
                let le = ls + xfer_ns(r.len_bytes, link_mbps);
                self.link_out_busy = le;
                Ok(le)
            }
            Op::Trim => {
                self.ftl.c.host_trim_ios += 1;
                self.ftl.c.host_trim_bytes += r.len_bytes;
                // Only whole units are unmapped.
                let first = r.offset_bytes.div_ceil(UNIT_BYTES);
                let last = end / UNIT_BYTES;
                for lba in first..last {
                    self.ftl.trim_unit(lba as u32);
                }
                Ok(t + command_ns)
            }
            Op::Flush => {
                self.ftl.c.host_flush_ios += 1;
                Ok(t.max(self.last_prog_done) + command_ns)
            }
        }
    }

    /// Host idle from `from` to `until`: background GC and SLC folding on idle dies.
    /// Work is started while some die is free before `until`; a step may run past it
    /// (a host I/O arriving then waits, as on a real drive).
    fn idle(&mut self, from: u64, until: u64) {
        loop {
            let earliest = self
                .die_busy
                .iter()
                .map(|&b| b.max(from))
                .min()
                .unwrap_or(from);
            if earliest >= until || !self.ftl.background_step() {
                break;
            }
            while let Some(d) = self.ftl.pending_dirty.pop() {
                let d = d as usize;
                let p = std::mem::take(&mut self.ftl.pending_ns[d]);
                self.die_busy[d] = self.die_busy[d].max(from) + p;
            }
        }
    }

    fn reap_into(&mut self, out: &mut Vec<Completion>, got: &mut usize) {
        while let Some(&Reverse((tc, key, slot, len))) = self.heap.peek() {
            let slot = slot as u32;
            if tc > self.now_ns {
                break;
            }
            self.heap.pop();
            out.push(Completion {
                slot,
                complete_ns: tc,
                result: if key & 1 == 0 { Ok(len) } else { Err(-EINVAL) },
            });
            *got += 1;
        }
    }
}

impl Target for SimSsd {
    fn info(&self) -> &TargetInfo {
        &self.info
    }

    fn now_ns(&self) -> u64 {
        self.now_ns
    }

    fn max_in_flight(&self) -> usize {
        self.qd
    }

    fn buffer(&mut self, _slot: u32) -> Option<&mut [u8]> {
        None
    }

    fn submit(&mut self, reqs: &[IoRequest]) -> Result<(), TargetError> {
        if self.heap.len() + reqs.len() > self.qd {
            return Err(TargetError::Invalid(format!(
                "sim: {} I/Os in flight + {} submitted exceeds queue depth {}",
                self.heap.len(),
                reqs.len(),
                self.qd
            )));
        }
        for r in reqs {
            let (tc, ok) = match self.schedule(r) {
                Ok(tc) => (tc, true),
                Err(_) => (self.now_ns + self.ftl.cfg.command_ns, false),
            };
            debug_assert!(tc >= self.now_ns);
            self.seq += 1;
            // Sequence keeps equal-time completions in submission order; the low bit
            // records failure (the only failure is an out-of-range request).
            let key = (self.seq << 1) | u64::from(!ok);
            let len = if r.op == Op::Flush { 0 } else { r.len_bytes };
            self.heap.push(Reverse((tc, key, u64::from(r.slot), len)));
        }
        Ok(())
    }

    fn advance(
        &mut self,
        min_complete: usize,
        deadline_ns: Option<u64>,
        out: &mut Vec<Completion>,
    ) -> Result<(), TargetError> {
        let mut got = 0usize;
        loop {
            self.reap_into(out, &mut got);
            if min_complete > 0 && got >= min_complete {
                return Ok(());
            }
            let next = self.heap.peek().map(|r| r.0 .0);
            match deadline_ns {
                None => match next {
                    Some(tn) if min_complete > 0 => self.now_ns = tn,
                    _ => return Ok(()),
                },
                Some(dl) => {
                    if dl <= self.now_ns {
                        return Ok(());
                    }
                    match next {
                        Some(tn) if tn <= dl => self.now_ns = tn,
                        Some(_) => {
                            self.now_ns = dl;
                            self.reap_into(out, &mut got);
                            return Ok(());
                        }
                        None => {
                            self.idle(self.now_ns, dl);
                            self.now_ns = dl;
                            return Ok(());
                        }
                    }
                }
            }
        }
    }
}
