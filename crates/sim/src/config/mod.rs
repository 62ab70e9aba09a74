//! Drive parameters: the configuration, its geometry and its checks. Presets are in
//! `presets.rs` (drive classes) and `drives.rs` (named drives, from their datasheets),
//! the `sim:PRESET[,key=value...]` spec parser in `spec.rs`.
//!
//! Every constant of a preset has its source beside it and in `docs/simulator.md`
//! (datasheets, MQSim's configuration, the published figures of the drives a preset
//! models). Where no datasheet gives a figure (controller time per command), the
//! constant is calibrated to the drive's published figure that it alone sets (QD32
//! 4 KB random IOPS are controller-bound on these drives), and the docs say so.
//!
//! Geometry: a preset fixes the modelled drive's parallelism (channels, dies, planes,
//! page and block size) at every capacity; `capacity` sets the blocks per die. So a
//! small simulated drive runs as fast as the drive it models (only its size, and with
//! it how long a fresh drive takes to fill, changes). The number of native blocks is
//! rounded to the nearest whole block over the whole drive (dies differ by at most one
//! block), so the built over-provisioning is the stated one within 0.5% of it; when the
//! capacity is too small for that, the preset's blocks are halved until it is.

use serde::Serialize;
use std::fmt;

mod drives;
mod presets;
mod spec;

pub use presets::{preset, presets};
pub use spec::KEYS;

/// Mapping granularity of the FTL: one logical unit (4 KiB).
pub const UNIT_BYTES: u64 = 4096;

/// Logical sector the simulated drive reports and accepts I/O in (512 B, as the 512e
/// drives of the articles): a write that covers part of a 4 KiB unit costs a
/// read-modify-write of the unit.
pub const SECTOR_BYTES: u64 = 512;

/// Kind of NAND cell; sets bits per cell (SLC-mode capacity of a block) and timings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CellType {
    Slc,
    Mlc,
    Tlc,
    Qlc,
}

impl CellType {
    pub fn bits(self) -> u32 {
        match self {
            CellType::Slc => 1,
            CellType::Mlc => 2,
            CellType::Tlc => 3,
            CellType::Qlc => 4,
        }
    }

    /// Default per-page timings (ns) for this cell type (sources in the module docs).
    pub fn default_timing(self) -> NandTiming {
        match self {
            // SLC: FEMU bbssd-like figures.
            CellType::Slc => NandTiming {
                read_ns: 25_000,
                program_ns: 200_000,
                erase_ns: 2_000_000,
            },
            // MLC: MQSim read/erase, SSDsim/MQSim-paper program.
            CellType::Mlc => NandTiming {
                read_ns: 75_000,
                program_ns: 750_000,
                erase_ns: 3_800_000,
            },
            // TLC: datasheet middle of range.
            CellType::Tlc => NandTiming {
                read_ns: 70_000,
                program_ns: 1_500_000,
                erase_ns: 5_000_000,
            },
            // QLC: datasheet (e.g. Intel 660p-class NAND) ranges.
            CellType::Qlc => NandTiming {
                read_ns: 120_000,
                program_ns: 3_000_000,
                erase_ns: 10_000_000,
            },
        }
    }

    fn parse(s: &str) -> Option<CellType> {
        Some(match s {
            "slc" => CellType::Slc,
            "mlc" => CellType::Mlc,
            "tlc" => CellType::Tlc,
            "qlc" => CellType::Qlc,
            _ => return None,
        })
    }
}

/// Time of one NAND operation on one die (ns). Program and read are per physical page
/// (all planes in parallel, multi-plane), erase per block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct NandTiming {
    pub read_ns: u64,
    pub program_ns: u64,
    pub erase_ns: u64,
}

/// Garbage-collection victim selection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum VictimPolicy {
    /// Fewest valid pages (bucketed, O(1) amortized).
    Greedy,
    /// Oldest closed block first.
    Fifo,
    /// Uniformly random closed block.
    Random,
    /// Rosenblum/Ousterhout LFS cost-benefit: max (1-u)*age/(1+u) over a bounded
    /// candidate set (lowest-valid, oldest and random closed blocks): O(1) per GC.
    CostBenefit,
}

impl VictimPolicy {
    pub const NAMES: &'static str = "greedy, fifo, random, cost-benefit";
    fn parse(s: &str) -> Option<VictimPolicy> {
        Some(match s {
            "greedy" => VictimPolicy::Greedy,
            "fifo" => VictimPolicy::Fifo,
            "random" => VictimPolicy::Random,
            "cost-benefit" | "cb" => VictimPolicy::CostBenefit,
            _ => return None,
        })
    }
    pub fn as_str(self) -> &'static str {
        match self {
            VictimPolicy::Greedy => "greedy",
            VictimPolicy::Fifo => "fifo",
            VictimPolicy::Random => "random",
            VictimPolicy::CostBenefit => "cost-benefit",
        }
    }
}

/// How foreground GC does its work.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum GcMode {
    /// A victim at a time: once fewer than `gc_free_blocks` blocks are free, a victim's
    /// copies and erase are queued on the dies as one piece of work; host programs
    /// share the dies with it (`gc_share`), and a write that needs the next victim
    /// waits until the previous one is done.
    Victim,
    /// Paced per host write: each host write moves a share of the victim's data, so
    /// the victim ends as the frontier reaches its last free block (a fluid).
    Paced,
}

impl GcMode {
    pub const NAMES: &'static str = "victim, paced";
    fn parse(s: &str) -> Option<GcMode> {
        Some(match s {
            "victim" => GcMode::Victim,
            "paced" => GcMode::Paced,
            _ => return None,
        })
    }
    pub fn as_str(self) -> &'static str {
        match self {
            GcMode::Victim => "victim",
            GcMode::Paced => "paced",
        }
    }
}

/// What a host write does when the SLC cache is full.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SlcFull {
    /// Straight to native cells (Samsung TurboWrite: the cache empties in idle time).
    Direct,
    /// The oldest SLC block is folded into native cells first, in the foreground, and
    /// the write goes to the cache (every write passes through SLC).
    Fold,
}

impl SlcFull {
    pub const NAMES: &'static str = "direct, fold";
    fn parse(s: &str) -> Option<SlcFull> {
        Some(match s {
            "direct" => SlcFull::Direct,
            "fold" => SlcFull::Fold,
            _ => return None,
        })
    }
    pub fn as_str(self) -> &'static str {
        match self {
            SlcFull::Direct => "direct",
            SlcFull::Fold => "fold",
        }
    }
}

/// Host interface.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Interface {
    /// SATA 6 Gb/s: one half-duplex link (commands, read data and write data share it).
    Sata,
    /// NVMe over PCIe: a full-duplex link (write data and read data travel apart).
    Nvme,
}

impl Interface {
    fn parse(s: &str) -> Option<Interface> {
        Some(match s {
            "sata" => Interface::Sata,
            "nvme" => Interface::Nvme,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Interface::Sata => "sata",
            Interface::Nvme => "nvme",
        }
    }

    /// Reads and writes share one link (SATA is half duplex).
    pub fn half_duplex(self) -> bool {
        self == Interface::Sata
    }
}

/// Every parameter of a simulated drive. Built from a preset plus `key=value` overrides.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SimConfig {
    /// The preset's name (an alias given in the spec is resolved to it).
    pub preset: String,
    /// User (LBA) capacity, bytes; a multiple of 4 KiB.
    pub capacity_bytes: u64,
    /// Factory over-provisioning as stated: physical native capacity = user x (1 + op).
    /// The drive is built to it within 0.5% ([`SimConfig::built_op`]).
    pub op: f64,
    pub cell: CellType,
    pub timing: NandTiming,
    /// Timing of the SLC-mode region (static and dynamic SLC cache).
    pub slc_timing: NandTiming,
    pub channels: u32,
    pub dies_per_channel: u32,
    pub planes_per_die: u32,
    /// NAND pages per block (physical pages of `page_bytes`).
    pub pages_per_block: u32,
    pub page_bytes: u32,
    /// Channel (ONFI / Toggle) transfer rate, MB/s (10^6 bytes/s).
    pub channel_mbps: u32,
    pub interface: Interface,
    /// Host queue depth (NCQ 32, or an NVMe queue depth).
    pub queue_depth: u32,
    /// Host link payload rate, MB/s (after line coding and framing).
    pub link_mbps: u32,
    /// Link time of one command besides its data (SATA: the command, DMA setup and
    /// status FISes; NVMe: command fetch and completion entry), ns.
    pub link_cmd_ns: u64,
    /// Controller cores; each command occupies one core for its command time.
    pub ctrl_cores: u32,
    /// Controller time of a read (and of a flush, a TRIM), ns.
    pub read_cmd_ns: u64,
    /// Controller time of a write, ns.
    pub write_cmd_ns: u64,
    /// Controller latency of a read (and of a flush, a TRIM), ns: from the start of
    /// its controller time to when its NAND reads are issued. A pipelined controller
    /// holds a core for `read_cmd_ns` (throughput: cores / that) but takes longer than
    /// that to finish a command (latency at QD1); never less than `read_cmd_ns`.
    pub read_latency_ns: u64,
    /// Controller latency of a write, ns: from the start of its controller time to its
    /// admission into the write buffer; never less than `write_cmd_ns`.
    pub write_latency_ns: u64,
    /// Read-ahead for sequential reads, 4 KiB units (0: none): a read that starts where
    /// the previous one ended has the drive read this far ahead of it.
    pub read_ahead_units: u32,
    /// A read that finds its die programming (erasing) waits at most this long for the
    /// operation to suspend, rather than for it to end; 0: no suspend.
    pub program_suspend_ns: u64,
    pub erase_suspend_ns: u64,
    /// The controller's write path for host data, MB/s (0: none, the flash alone sets
    /// the pace): each 4 KiB unit of a host write passes it, in order, between the
    /// write buffer and its program. A drive whose datasheet writes slower than its
    /// NAND could program has this limit in its controller (per-unit firmware work,
    /// write combining), not in its NAND: GC copies move die to die (copyback or the
    /// copy path) and do not take it.
    pub write_path_mbps: u32,
    /// Controller write buffer, 4 KiB units: a write completes once its data is in
    /// the buffer, which holds what the dies still have to do (see `ssd.rs`).
    pub write_buffer_units: u32,
    pub victim: VictimPolicy,
    /// How foreground GC work is done: a victim at a time, or paced per host write.
    pub gc_mode: GcMode,
    /// Share of a die's time that queued GC work takes while host programs wait for
    /// the die (1: GC first, then the host; 0.5: one for one).
    pub gc_share: f64,
    /// Foreground GC runs while the drive has fewer free native blocks than this.
    pub gc_free_blocks: u32,
    /// Background GC (host idle) works until the drive has this many free blocks.
    pub bg_gc_free_blocks: u32,
    /// Host idle time before background GC starts, ns.
    pub idle_gc_delay_ns: u64,
    /// Static SLC cache size, bytes (SLC-mode blocks on top of the native blocks).
    pub slc_static_bytes: u64,
    /// Largest dynamic SLC cache, bytes (free native blocks used in SLC mode).
    pub slc_dynamic_bytes: u64,
    /// What a host write the SLC cache would take does when the cache has no free
    /// block: go to native cells, or fold the oldest SLC block first.
    pub slc_full: SlcFull,
    /// Largest host write (4 KiB units) that goes to the SLC cache; 0: any.
    pub slc_max_io_units: u32,
    /// Inline compression (SandForce-like), 1 KiB granularity.
    pub compress: bool,
    /// Wear levelling: dynamic (a new block is the free block with the fewest erases)
    /// and static (when the erase-count spread of native blocks exceeds
    /// `wl_threshold`, the data of a cold block moves to the most-worn free block).
    pub wear_leveling: bool,
    /// Erase-count spread (max - min over native blocks) that starts static wear levelling.
    pub wl_threshold: u32,
    pub seed: u64,
}

/// A named drive model with what it models and where its figures come from.
#[derive(Clone, Debug, Serialize)]
pub struct Preset {
    pub name: &'static str,
    /// Older names that still select this preset.
    pub aliases: &'static [&'static str],
    pub description: &'static str,
    /// Datasheets, papers and configurations the constants come from.
    pub sources: &'static [&'static str],
    pub config: SimConfig,
    /// The figures the drive's own datasheet gives (named drives), which the preset
    /// meets within 5% (`tests/datasheets.rs`).
    pub datasheet: Option<Datasheet>,
}

/// A datasheet's performance figures, and how they are measured: 128 KB sequential
/// reads of written data and writes to a fresh drive, 4 KB random reads of written
/// data and writes to a fresh drive, all at QD32 (the footnotes of these datasheets).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Datasheet {
    pub seq_read_mb_per_s: f64,
    pub seq_write_mb_per_s: f64,
    pub rand_read_iops: f64,
    pub rand_write_iops: f64,
    /// The span random I/O covers, bytes (Intel: 8 GB); None: the whole drive.
    pub rand_span_bytes: Option<u64>,
}

/// A `sim:` spec or configuration that cannot build a drive. The message names the
/// spec item; [`SimError::hint`] says what to write instead (the caller shows it).
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SimError {
    #[error("sim spec `{spec}`: must start with `sim:`")]
    NotSim { spec: String, presets: String },
    #[error("sim spec: unknown preset `{name}`")]
    UnknownPreset { name: String, presets: String },
    #[error("sim spec: unknown key `{key}`")]
    UnknownKey { key: String, keys: String },
    #[error("sim spec: bad value `{value}` for `{key}`")]
    BadValue {
        key: String,
        value: String,
        hint: String,
    },
    #[error("sim spec: `{item}` is not key=value")]
    NotKeyValue { item: String, keys: String },
    #[error("sim spec: `{key}` is given twice (`{first}`, then `{second}`)")]
    DuplicateKey {
        key: String,
        first: String,
        second: String,
    },
    #[error("sim spec `{spec}`: item {position} is empty")]
    EmptyItem {
        spec: String,
        /// 1-based, the preset being item 0.
        position: usize,
        hint: String,
    },
    #[error("sim config: {0}")]
    Invalid(String),
}

impl SimError {
    /// What to write instead, when there is something to say.
    pub fn hint(&self) -> Option<String> {
        match self {
            SimError::NotSim { presets, .. } => Some(format!(
                "e.g. `sim:sata-mlc-2013,capacity=4g`; presets: {presets}"
            )),
            SimError::UnknownPreset { presets, .. } => Some(format!("valid presets: {presets}")),
            SimError::UnknownKey { keys, .. } => Some(format!("valid keys: {keys}")),
            SimError::BadValue { hint, .. } | SimError::EmptyItem { hint, .. } => {
                Some(hint.clone())
            }
            SimError::NotKeyValue { keys, .. } => {
                Some(format!("write e.g. `capacity=4g`; valid keys: {keys}"))
            }
            SimError::DuplicateKey { .. } => Some("give each key once".into()),
            SimError::Invalid(_) => None,
        }
    }
}

pub(crate) const GIB: u64 = 1 << 30;
pub(crate) const MIB: u64 = 1 << 20;

/// Largest relative error of the built over-provisioning against the stated one.
pub const OP_TOLERANCE: f64 = 0.005;

/// Fewest superblocks a preset builds at any capacity (it halves its blocks until it
/// has them): the GC reserve and the open block hold no data, so with few blocks they
/// would eat the spare area (2.5 of 1,024 blocks: 0.25% of the flash).
pub const MIN_BLOCKS: u64 = 1024;

impl SimConfig {
    pub fn dies(&self) -> u32 {
        self.channels * self.dies_per_channel
    }

    /// 4 KiB units per NAND page.
    pub fn units_per_page(&self) -> u32 {
        self.page_bytes / UNIT_BYTES as u32
    }

    /// 4 KiB units of one stripe: a multi-plane page program on one die.
    pub fn stripe_units(&self) -> u32 {
        self.units_per_page() * self.planes_per_die
    }

    /// 4 KiB units per block of the FTL: a superblock, one NAND block of
    /// `pages_per_block` pages on every plane of every die.
    pub fn units_per_block(&self) -> u32 {
        self.pages_per_block * self.stripe_units() * self.dies()
    }

    pub fn user_units(&self) -> u64 {
        self.capacity_bytes / UNIT_BYTES
    }

    /// Native (super)blocks of the drive: user x (1 + op), rounded to the nearest.
    pub fn native_blocks(&self) -> u64 {
        let phys_units = self.user_units() as f64 * (1.0 + self.op);
        (phys_units / self.units_per_block() as f64).round() as u64
    }

    /// Over-provisioning as built: native capacity / user capacity - 1.
    pub fn built_op(&self) -> f64 {
        (self.native_blocks() * self.units_per_block() as u64) as f64 / self.user_units() as f64
            - 1.0
    }

    /// |built OP / stated OP - 1|.
    pub fn op_error(&self) -> f64 {
        (self.built_op() / self.op - 1.0).abs()
    }

    /// Static SLC (super)blocks (each holds units_per_block / bits units).
    pub fn slc_static_blocks(&self) -> u32 {
        let slc_units_per_block = (self.units_per_block() / self.cell.bits()).max(1) as u64;
        self.slc_static_bytes
            .div_ceil(UNIT_BYTES)
            .div_ceil(slc_units_per_block) as u32
    }

    /// Largest number of dynamic SLC (super)blocks.
    pub fn slc_dynamic_blocks(&self) -> u32 {
        let slc_units_per_block = (self.units_per_block() / self.cell.bits()).max(1) as u64;
        self.slc_dynamic_bytes
            .div_ceil(UNIT_BYTES)
            .div_ceil(slc_units_per_block) as u32
    }

    /// Die time of one native program, per 4 KiB unit (a multi-plane page program
    /// writes units_per_page x planes units).
    pub fn program_unit_ns(&self) -> u64 {
        self.timing.program_ns / (self.units_per_page() * self.planes_per_die) as u64
    }

    /// What the dies can program, MB/s (10^6 bytes/s): every die programming native
    /// pages on all its planes back to back. Host writes never run faster over any
    /// window of a second or more than this divided by the window's WA (plus what the
    /// write buffer holds at its end).
    pub fn flash_program_mbps(&self) -> f64 {
        self.dies() as f64 * (self.page_bytes as u64 * self.planes_per_die as u64) as f64
            / self.timing.program_ns as f64
            * 1000.0
    }

    pub fn validate(&self) -> Result<(), SimError> {
        let inv = |m: String| Err(SimError::Invalid(m));
        if self.capacity_bytes == 0 || !self.capacity_bytes.is_multiple_of(UNIT_BYTES) {
            return inv(format!(
                "capacity {} is not a positive multiple of 4 KiB",
                self.capacity_bytes
            ));
        }
        if self.user_units() >= u32::MAX as u64 / 2 {
            return inv("capacity too large (limit 8 TiB per simulated drive)".into());
        }
        if !(self.op > 0.0 && self.op <= 4.0) {
            return inv(format!("op {} must be in (0, 4]", self.op));
        }
        if self.page_bytes == 0 || !(self.page_bytes as u64).is_multiple_of(UNIT_BYTES) {
            return inv(format!(
                "page size {} must be a multiple of 4 KiB",
                self.page_bytes
            ));
        }
        if self.channels == 0 || self.dies_per_channel == 0 || self.planes_per_die == 0 {
            return inv("channels, dies and planes must be at least 1".into());
        }
        if self.pages_per_block == 0 {
            return inv("pages_per_block must be at least 1".into());
        }
        if self.channel_mbps == 0 || self.link_mbps == 0 {
            return inv("channel_mbps and link_mbps must be positive".into());
        }
        if self.queue_depth == 0 || self.queue_depth > 65536 {
            return inv("qd must be in 1..=65536".into());
        }
        if self.ctrl_cores == 0 || self.ctrl_cores > 64 {
            return inv("cores must be in 1..=64".into());
        }
        if self.write_buffer_units == 0 {
            return inv("write_buffer must be at least 4k".into());
        }
        if self.timing.program_ns == 0 {
            return inv("program_us must be positive".into());
        }
        // A victim may be wholly valid (FIFO, random): relocating it can take one whole
        // new block while the old one is not yet erased, so one free block must remain
        // when GC starts (two with compression, whose padding can spill one more).
        let min_reserve = 2 + u32::from(self.compress);
        if self.gc_free_blocks < min_reserve {
            return inv(format!(
                "gc_free_blocks must be at least {min_reserve}{}",
                if self.compress {
                    " with compression"
                } else {
                    ""
                }
            ));
        }
        if self.bg_gc_free_blocks < self.gc_free_blocks {
            return inv("bg_gc_free_blocks must be >= gc_free_blocks".into());
        }
        let blocks = self.native_blocks();
        let user_blocks = self.user_units().div_ceil(self.units_per_block() as u64);
        // GC needs its free-block reserve, the open block, and slack.
        let spare = blocks.saturating_sub(user_blocks);
        let need = self.gc_free_blocks as u64 + 3;
        if spare < need {
            return inv(format!(
                "only {spare} spare blocks ({blocks} superblocks of {} KiB, {user_blocks} hold user data); \
                 GC needs at least {need} (gc_free_blocks + the open block + 2): \
                 raise capacity or op, or lower dies, planes or pages_per_block",
                self.units_per_block() as u64 * UNIT_BYTES / 1024
            ));
        }
        let total = (blocks + self.slc_static_blocks() as u64)
            * self.units_per_block() as u64
            * if self.compress { 4 } else { 1 };
        if total >= u32::MAX as u64 - 2 {
            return inv("too many physical slots for 32-bit addressing".into());
        }
        Ok(())
    }
}

impl fmt::Display for SimConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "sim:{},capacity={},op={},cell={},channels={},dies={},planes={},pages_per_block={},page={},victim={},interface={},qd={}",
            self.preset,
            self.capacity_bytes,
            self.op,
            format!("{:?}", self.cell).to_lowercase(),
            self.channels,
            self.dies_per_channel,
            self.planes_per_die,
            self.pages_per_block,
            self.page_bytes,
            self.victim.as_str(),
            self.interface.as_str(),
            self.queue_depth
        )
    }
}
