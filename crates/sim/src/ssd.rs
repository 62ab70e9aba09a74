//! The simulated SSD as an engine [`Target`]: the FTL plus a timing model in virtual
//! time. The whole model, with every constant's source, is in `docs/simulator.md`.
//!
//! Every resource has a busy-until time: the host link (one for SATA, one per direction
//! for NVMe), the controller's cores, every channel and every die. An I/O is scheduled
//! when it is submitted, and completes when its last step does:
//! - Host interface: the command and its data take their time on the link (a budget
//!   taken in submission order, so a command never waits for a gap another command's
//!   future data left), and the command takes its controller time on the first free
//!   core. So QD32 4 KB IOPS come out of the link and the controller.
//! - Writes complete once their data is in the write buffer. The buffer holds what the
//!   dies still have to do: a write's data is taken in only when the dies' committed
//!   work (host programs, and the garbage collection the writes before it caused),
//!   averaged over the dies, is within `write_buffer / dies` unit programs of now. GC
//!   triggered by a write is queued on its dies before that write's programs, so when
//!   GC falls behind the buffer fills and host writes wait for it: over any window,
//!   host bytes <= (program bandwidth x window + buffer) / WA of the window.
//! - Reads go ahead of write-side work (host programs, GC) on their die: a read waits
//!   only for the operation in progress (an erase it falls in, else what is left of a
//!   page program) or, where the preset has it, for that operation to suspend; then
//!   runs; the queued work moves back by the read's time. Reads on one die are first
//!   come first served.
//! - A read of an unmapped LBA costs its command on the link and the controller and
//!   the link transfer of its data, and no NAND time.
//! - I/O is in 512-byte sectors; a write that covers part of a 4 KiB unit holding data
//!   reads the unit first (read-modify-write), on the die that holds it.
//!
//! Completions wait in a min-heap until `advance` moves the clock past them.
//! Background GC and SLC folding run only when time passes with no host I/O
//! outstanding (host idle).

use crate::config::{SimConfig, SimError, SECTOR_BYTES, UNIT_BYTES};
use crate::ftl::{Ftl, SimCounters, SlotCensus};
use rand_xoshiro::rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use storbench_core::{Completion, IoRequest, Op, Target, TargetError, TargetInfo, TargetKind};

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
    /// End of the write-side work (host programs, GC, and reads put ahead of it)
    /// committed to each die.
    die_busy: Vec<u64>,
    /// End of the last read on each die.
    die_read: Vec<u64>,
    /// End of the last erase queued on each die (a read cannot pass an erase).
    erase_end: Vec<u64>,
    ch_busy: Vec<u64>,
    /// Link budget: [to the drive, to the host]; a half-duplex link uses [0] for both.
    link_busy: [u64; 2],
    /// Busy-until of each controller core.
    core_busy: Vec<u64>,
    last_prog_done: u64,
    /// Committed die work, averaged over the dies, that the write buffer can hold (ns).
    buffer_ns: u64,
    /// Sum of `die_busy`, and a lower bound of its minimum (see `admit`).
    busy_sum: u64,
    busy_min: u64,
    /// Pending completions: (complete time, key, slot, length). All four are u64 so an
    /// entry has no padding: with a u32 slot the heap's sift read 8 bytes over a 4-byte
    /// store, store forwarding failed, and every submit waited for the store buffer to
    /// drain (which holds the FTL's cache-missing mapping stores). (time, key) is
    /// unique, so the other fields never decide the order.
    heap: BinaryHeap<Reverse<(u64, u64, u64, u64)>>,
    seq: u64,
    qd: usize,
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

/// The drive as built, for [`TargetInfo::details`] (every result carries it).
fn details(cfg: &SimConfig, ftl: &Ftl) -> BTreeMap<String, String> {
    let mut d = BTreeMap::new();
    let mut put = |k: &str, v: String| {
        d.insert(k.to_string(), v);
    };
    put("preset", cfg.preset.clone());
    put("op", format!("{}", cfg.op));
    put("op_built", format!("{:.6}", cfg.built_op()));
    put("cell", format!("{:?}", cfg.cell).to_lowercase());
    put(
        "geometry",
        format!(
            "{} channels x {} dies x {} planes, {} B pages, {} pages/block; {} native superblocks \
             of {} KiB (a block on every plane of every die) + {} SLC superblocks",
            cfg.channels,
            cfg.dies_per_channel,
            cfg.planes_per_die,
            cfg.page_bytes,
            cfg.pages_per_block,
            ftl.native_bpd,
            cfg.units_per_block() as u64 * UNIT_BYTES / 1024,
            ftl.bpd - ftl.native_bpd,
        ),
    );
    put(
        "nand_timing_ns",
        format!(
            "read {} program {} erase {}",
            cfg.timing.read_ns, cfg.timing.program_ns, cfg.timing.erase_ns
        ),
    );
    put("channel_mbps", cfg.channel_mbps.to_string());
    put(
        "flash_program_mb_per_s",
        format!("{:.1}", cfg.flash_program_mbps()),
    );
    put(
        "host_interface",
        format!(
            "{}, queue depth {}, link {} MB/s ({}), {} ns link time per command",
            cfg.interface.as_str(),
            cfg.queue_depth,
            cfg.link_mbps,
            if cfg.interface.half_duplex() {
                "half duplex"
            } else {
                "full duplex"
            },
            cfg.link_cmd_ns
        ),
    );
    put(
        "controller",
        format!(
            "{} cores, {} ns per read, {} ns per write",
            cfg.ctrl_cores, cfg.read_cmd_ns, cfg.write_cmd_ns
        ),
    );
    put(
        "write_buffer_bytes",
        (cfg.write_buffer_units as u64 * UNIT_BYTES).to_string(),
    );
    put("sector_bytes", SECTOR_BYTES.to_string());
    put("victim", cfg.victim.as_str().into());
    put("queue_depth", cfg.queue_depth.to_string());
    put("slc_static_bytes", cfg.slc_static_bytes.to_string());
    put("slc_dynamic_bytes", cfg.slc_dynamic_bytes.to_string());
    put("compress", cfg.compress.to_string());
    put("seed", cfg.seed.to_string());
    d
}

impl SimSsd {
    /// Build a drive from a validated configuration; `name` is reported in [`TargetInfo`].
    pub fn new(cfg: SimConfig, name: &str) -> SimSsd {
        cfg.validate()
            .expect("SimSsd::new needs a validated SimConfig");
        let ftl = Ftl::new(&cfg);
        let info = TargetInfo {
            kind: TargetKind::Sim,
            name: name.to_string(),
            capacity_bytes: cfg.capacity_bytes,
            logical_block_bytes: SECTOR_BYTES as u32,
            rotational: Some(false),
            discard: true,
            model: Some(format!("storbench sim {}", cfg.preset)),
            backend: "virtual".into(),
            details: details(&cfg, &ftl),
        };
        let dies = cfg.dies() as usize;
        let buffer_ns = cfg.write_buffer_units as u64 * cfg.program_unit_ns() / dies as u64;
        SimSsd {
            info,
            now_ns: 0,
            die_busy: vec![0; dies],
            die_read: vec![0; dies],
            erase_end: vec![0; dies],
            ch_busy: vec![0; cfg.channels as usize],
            link_busy: [0; 2],
            core_busy: vec![0; cfg.ctrl_cores as usize],
            last_prog_done: 0,
            buffer_ns,
            busy_sum: 0,
            busy_min: 0,
            heap: BinaryHeap::with_capacity(cfg.queue_depth as usize),
            seq: 0,
            qd: cfg.queue_depth as usize,
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
        // Every used superblock is erased: one block erase on each die.
        let blocks: u64 = self.ftl.purge().iter().sum();
        let erase_ns = self.ftl.cfg.timing.erase_ns;
        for d in 0..self.die_busy.len() {
            self.set_busy(d, self.die_busy[d].max(self.now_ns) + blocks * erase_ns);
            self.erase_end[d] = self.die_busy[d];
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

    /// Take the link time of a command at `t` moving `bytes` of data to the drive
    /// (`to_host` false) or to the host. The link is a budget taken in submission
    /// order: each command adds its time after the budget taken so far, and cannot
    /// complete before that end. Returns (when the command reaches the controller, end
    /// of its link budget). SATA: one half-duplex link, and the command FIS itself
    /// waits for it. NVMe: a link per direction; commands are fetched at once.
    #[inline]
    fn link(&mut self, t: u64, bytes: u64, to_host: bool) -> (u64, u64) {
        let cfg = &self.ftl.cfg;
        let half = cfg.interface.half_duplex();
        let i = usize::from(to_host && !half);
        let ls = t.max(self.link_busy[i]);
        let end = ls + cfg.link_cmd_ns + xfer_ns(bytes, cfg.link_mbps);
        self.link_busy[i] = end;
        let arrive = if half { ls } else { t } + cfg.link_cmd_ns;
        (arrive, end)
    }

    /// `cost_ns` of controller work from `t` on the first free core; returns its end.
    #[inline]
    fn controller(&mut self, t: u64, cost_ns: u64) -> u64 {
        let mut k = 0;
        for i in 1..self.core_busy.len() {
            if self.core_busy[i] < self.core_busy[k] {
                k = i;
            }
        }
        let end = t.max(self.core_busy[k]) + cost_ns;
        self.core_busy[k] = end;
        end
    }

    /// Die `d` has committed work until `t` (never earlier than before).
    #[inline]
    fn set_busy(&mut self, d: usize, t: u64) {
        debug_assert!(t >= self.die_busy[d]);
        self.busy_sum += t - self.die_busy[d];
        self.die_busy[d] = t;
    }

    /// When a write whose command the controller finished at `ce` has its data taken
    /// into the write buffer: once the committed work of the dies (each die's from
    /// `ce` on), averaged over them, ends within `buffer_ns` of that time.
    #[inline]
    fn admit(&mut self, ce: u64) -> u64 {
        debug_assert_eq!(self.busy_sum, self.die_busy.iter().sum::<u64>());
        // Busy-until times only grow: while their last known minimum is past `ce`,
        // every die is, and the sum needs no clamping (a steady write load).
        let sum = if self.busy_min >= ce {
            self.busy_sum
        } else {
            self.busy_min = self.die_busy.iter().copied().min().unwrap_or(0);
            self.die_busy.iter().map(|&b| b.max(ce)).sum()
        };
        let mean = sum / self.die_busy.len() as u64;
        ce.max(mean.saturating_sub(self.buffer_ns))
    }

    /// Queue the FTL's pending die work (GC, folding, wear levelling) after what each
    /// die has committed, from `from` at the earliest.
    #[inline]
    fn apply_pending(&mut self, from: u64) {
        while let Some(d) = self.ftl.pending_dirty.pop() {
            let d = d as usize;
            let pend = std::mem::take(&mut self.ftl.pending_ns[d]);
            let end = self.die_busy[d].max(from) + pend;
            self.set_busy(d, end);
            if std::mem::take(&mut self.ftl.pending_erase[d]) {
                self.erase_end[d] = end;
            }
        }
    }

    /// When die `d` starts a read that reaches it at `t`, and the time that suspending
    /// the operation in progress adds to the die's write-side work. Reads go first:
    /// after the reads queued before it, else after the operation in progress (the
    /// erase `t` falls in, or what is left of a page program: write-side work is taken
    /// as page programs back to back, ending when the die's committed work ends), or,
    /// if that would take longer than suspending it, after the suspend latency (the
    /// suspended operation then resumes after the read and takes that much longer).
    #[inline]
    fn read_start(&self, d: usize, t: u64) -> (u64, u64) {
        if self.die_read[d] > t {
            return (self.die_read[d], 0);
        }
        let busy = self.die_busy[d];
        if busy <= t {
            return (t, 0);
        }
        let cfg = &self.ftl.cfg;
        let ee = self.erase_end[d];
        let (left, suspend) = if ee > t && ee.saturating_sub(cfg.timing.erase_ns) <= t {
            (ee - t, cfg.erase_suspend_ns)
        } else {
            ((busy - t) % cfg.timing.program_ns, cfg.program_suspend_ns)
        };
        if suspend > 0 && left > suspend {
            (t + suspend, suspend)
        } else {
            (t + left, 0)
        }
    }

    /// Read one unit on die `d`, reaching it at `t`, and move `bytes` of it over the
    /// channel; returns when the data is off the channel. The channel, like the link,
    /// is a budget taken in order (it is never the bottleneck of these drives).
    #[inline]
    fn read_unit(&mut self, d: usize, t: u64, read_ns: u64, bytes: u64) -> u64 {
        let (s, suspend_ns) = self.read_start(d, t);
        let e = s + read_ns;
        if s < self.die_busy[d] {
            // Ahead of queued write-side work, which moves back by the read's time
            // (and the suspend's, if it interrupted an operation).
            let shift = read_ns + suspend_ns;
            self.set_busy(d, self.die_busy[d] + shift);
            if self.erase_end[d] > s {
                self.erase_end[d] += shift;
            }
        } else {
            self.set_busy(d, e);
        }
        self.die_read[d] = e;
        let cfg = &self.ftl.cfg;
        let x = xfer_ns(bytes, cfg.channel_mbps);
        let ch = d % cfg.channels as usize;
        let cb = t.max(self.ch_busy[ch]) + x;
        self.ch_busy[ch] = cb;
        self.ftl.c.nand_page_reads += 1;
        cb.max(e + x)
    }

    /// Move `bytes` more of the page die `d` has just read (for a read that reached
    /// it at `t`) over the channel; returns when they are off it.
    #[inline]
    fn channel_only(&mut self, d: usize, t: u64, bytes: u64) -> u64 {
        let cfg = &self.ftl.cfg;
        let x = xfer_ns(bytes, cfg.channel_mbps);
        let ch = d % cfg.channels as usize;
        let cb = t.max(self.ch_busy[ch]) + x;
        self.ch_busy[ch] = cb;
        cb.max(self.die_read[d] + x)
    }

    fn schedule(&mut self, r: &IoRequest) -> Result<u64, i32> {
        let t = self.now_ns;
        let cfg = &self.ftl.cfg;
        let end = r.offset_bytes.checked_add(r.len_bytes).ok_or(-EINVAL)?;
        if end > cfg.capacity_bytes
            || !r.offset_bytes.is_multiple_of(SECTOR_BYTES)
            || !r.len_bytes.is_multiple_of(SECTOR_BYTES)
        {
            return Err(-EINVAL);
        }
        let (read_cmd_ns, write_cmd_ns) = (cfg.read_cmd_ns, cfg.write_cmd_ns);
        match r.op {
            Op::Write => {
                self.ftl.c.host_write_ios += 1;
                self.ftl.c.host_write_bytes += r.len_bytes;
                let (arrive, link_end) = self.link(t, r.len_bytes, false);
                let ce = self.controller(arrive, write_cmd_ns);
                let a = self.admit(ce);
                let data_in = a + xfer_ns(r.len_bytes, self.ftl.cfg.link_mbps);
                if r.len_bytes > 0 {
                    let first = r.offset_bytes / UNIT_BYTES;
                    let last = (end - 1) / UNIT_BYTES;
                    let slots = self.ftl.slots_for(r.data);
                    for lba in first..=last {
                        let partial =
                            r.offset_bytes > lba * UNIT_BYTES || end < (lba + 1) * UNIT_BYTES;
                        let ready = if partial {
                            self.read_modify(lba, a, data_in)
                        } else {
                            data_in
                        };
                        let p = self.ftl.write_unit(lba as u32, slots);
                        // GC work this write triggered goes on its dies first.
                        self.apply_pending(a);
                        let d = p.die as usize;
                        let x = p.slots as u64 * self.ftl.xfer_slot_ns;
                        let pe = ready.max(self.die_busy[d]) + x + self.prog_ns(p.slots, p.slc);
                        self.set_busy(d, pe);
                        self.last_prog_done = self.last_prog_done.max(pe);
                    }
                }
                Ok(data_in.max(link_end))
            }
            Op::Read => {
                self.ftl.c.host_read_ios += 1;
                self.ftl.c.host_read_bytes += r.len_bytes;
                let (arrive, link_end) = self.link(t, r.len_bytes, true);
                let ce = self.controller(arrive, read_cmd_ns);
                let mut done = ce;
                if r.len_bytes > 0 {
                    let cfg = &self.ftl.cfg;
                    let (read_ns, slc_read_ns) = (cfg.timing.read_ns, cfg.slc_timing.read_ns);
                    let first = r.offset_bytes / UNIT_BYTES;
                    let last = (end - 1) / UNIT_BYTES;
                    // Units of one stripe (written together) are read by one
                    // multi-plane page read; each moves its own bytes on the channel.
                    let mut last_stripe = u32::MAX;
                    for lba in first..=last {
                        if let Some((d, slc, stripe)) = self.ftl.locate_stripe(lba) {
                            let lo = r.offset_bytes.max(lba * UNIT_BYTES);
                            let hi = end.min((lba + 1) * UNIT_BYTES);
                            let x = if stripe == last_stripe {
                                self.channel_only(d as usize, ce, hi - lo)
                            } else {
                                let rn = if slc { slc_read_ns } else { read_ns };
                                self.read_unit(d as usize, ce, rn, hi - lo)
                            };
                            last_stripe = stripe;
                            done = done.max(x);
                        }
                    }
                }
                Ok(link_end.max(done + xfer_ns(r.len_bytes, self.ftl.cfg.link_mbps)))
            }
            Op::Trim => {
                self.ftl.c.host_trim_ios += 1;
                self.ftl.c.host_trim_bytes += r.len_bytes;
                let (arrive, link_end) = self.link(t, 0, false);
                let ce = self.controller(arrive, read_cmd_ns);
                // Only whole units are unmapped.
                let first = r.offset_bytes.div_ceil(UNIT_BYTES);
                let last = end / UNIT_BYTES;
                for lba in first..last {
                    self.ftl.trim_unit(lba as u32);
                }
                Ok(ce.max(link_end))
            }
            Op::Flush => {
                self.ftl.c.host_flush_ios += 1;
                let (arrive, link_end) = self.link(t, 0, false);
                let ce = self.controller(arrive, read_cmd_ns);
                Ok(ce.max(link_end).max(self.last_prog_done))
            }
        }
    }

    /// A write covers part of unit `lba`: if the unit holds data, its old content is
    /// read first (write-side work on the die that holds it, from the write's
    /// admission `a`). Returns when the merged unit is ready to program.
    fn read_modify(&mut self, lba: u64, a: u64, data_in: u64) -> u64 {
        self.ftl.c.host_partial_units += 1;
        let Some((d, slc)) = self.ftl.locate(lba) else {
            return data_in;
        };
        let cfg = &self.ftl.cfg;
        let rn = if slc {
            cfg.slc_timing.read_ns
        } else {
            cfg.timing.read_ns
        };
        let d = d as usize;
        let e = self.die_busy[d].max(a) + rn + self.ftl.xfer_slot_ns * self.ftl.spu as u64;
        self.set_busy(d, e);
        self.ftl.c.nand_page_reads += 1;
        self.ftl.c.rmw_reads += 1;
        data_in.max(e)
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
            self.apply_pending(from);
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
                Err(_) => (self.now_ns + self.ftl.cfg.read_cmd_ns, false),
            };
            debug_assert!(tc >= self.now_ns);
            self.seq += 1;
            // Sequence keeps equal-time completions in submission order; the low bit
            // records failure (out of range, or not in whole 512-byte sectors).
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
