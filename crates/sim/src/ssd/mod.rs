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

use crate::config::{SimConfig, SimError, SECTOR_BYTES};
use crate::ftl::{Ftl, SimCounters, SlotCensus};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use storbench_core::{Completion, IoRequest, Op, Target, TargetError, TargetInfo, TargetKind};

mod buffer;
mod details;
mod die;
mod host;
mod io;
mod readahead;
mod state;

use buffer::WriteBuffer;
use readahead::ReadAhead;

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
    /// GC work queued on each die and not yet on its timeline (ns), and the earliest
    /// it can start: host programs share the die with it (`gc_share`).
    gc_backlog: Vec<u64>,
    gc_start: Vec<u64>,
    /// The backlog of each die as the pieces of work queued (oldest first).
    gc_chunks: Vec<std::collections::VecDeque<u64>>,
    /// Sum of `gc_backlog`, and whether that work is background GC (it then runs
    /// only in the dies' idle time).
    backlog_ns: u64,
    gc_background: bool,
    /// Latest end of committed work over the dies.
    busy_max: u64,
    /// Next time background GC while the host is busy is looked at.
    bg_check_ns: u64,
    /// GC's share of a die while host programs wait, as GC time per 1000 of host
    /// program time (None: GC first).
    gc_share_milli: Option<u64>,
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
    /// Budget of the controller's write path (`write_path_mbps`), taken in order.
    wpath_busy: u64,
    buffer: WriteBuffer,
    read_ahead: ReadAhead,
    /// The frontier stripe last programmed part-filled, and how full it was then
    /// (see `program_partial`).
    padded_stripe: u32,
    padded_fill: u32,
    /// When the host last had no I/O outstanding (background GC waits
    /// `idle_gc_delay` from then).
    idle_since_ns: u64,
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
            details: details::details(&cfg, &ftl),
        };
        let dies = cfg.dies() as usize;
        let share = cfg.gc_share;
        let gc_share_milli =
            (share < 0.999).then(|| (1000.0 * share / (1.0 - share)).round() as u64);
        SimSsd {
            info,
            now_ns: 0,
            die_busy: vec![0; dies],
            gc_backlog: vec![0; dies],
            gc_start: vec![0; dies],
            gc_chunks: vec![std::collections::VecDeque::with_capacity(4); dies],
            backlog_ns: 0,
            gc_background: false,
            busy_max: 0,
            bg_check_ns: 0,
            gc_share_milli,
            die_read: vec![0; dies],
            erase_end: vec![0; dies],
            ch_busy: vec![0; cfg.channels as usize],
            link_busy: [0; 2],
            core_busy: vec![0; cfg.ctrl_cores as usize],
            last_prog_done: 0,
            wpath_busy: 0,
            buffer: WriteBuffer::new(cfg.write_buffer_units),
            read_ahead: ReadAhead::new(),
            padded_stripe: u32::MAX,
            padded_fill: 0,
            idle_since_ns: 0,
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
        // Queued GC work is moot: every used superblock is erased, one block erase on
        // each die.
        self.drop_queued_work();
        let blocks: u64 = self.ftl.purge().iter().sum();
        let erase_ns = self.ftl.cfg.timing.erase_ns;
        for d in 0..self.die_busy.len() {
            self.set_busy(d, self.die_busy[d].max(self.now_ns) + blocks * erase_ns);
            self.erase_end[d] = self.die_busy[d];
        }
        self.ftl.clear_pending();
        Ok(())
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

    /// Drop queued GC work and what was read ahead (a purge or an untimed state
    /// replaces the drive's contents).
    pub(super) fn drop_queued_work(&mut self) {
        self.gc_backlog.iter_mut().for_each(|b| *b = 0);
        self.gc_chunks.iter_mut().for_each(|q| q.clear());
        self.backlog_ns = 0;
        self.gc_background = false;
        self.read_ahead = ReadAhead::new();
        self.padded_stripe = u32::MAX;
        self.padded_fill = 0;
    }

    fn reap_into(&mut self, out: &mut Vec<Completion>, got: &mut usize) {
        while let Some(&Reverse((tc, key, slot, len))) = self.heap.peek() {
            let slot = slot as u32;
            if tc > self.now_ns {
                break;
            }
            self.heap.pop();
            if self.heap.is_empty() {
                self.idle_since_ns = tc;
            }
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
