//! Drive parameters, presets and the `sim:PRESET[,key=value...]` spec parser.
//!
//! Default NAND figures come from published simulator configurations and datasheets:
//! - MQSim (Tavakkol et al., FAST 2018), `ssdconfig.xml`: 8 channels, 8-bit ONFI NV-DDR2
//!   channel at 333 MT/s (= 333 MB/s), 4 chips/channel x 2 dies/chip, 2 planes/die,
//!   256 pages/block, 8 KiB pages, MLC page read 75 us, block erase 3.8 ms,
//!   GC threshold 5% free, 7% over-provisioning.
//! - MQSim paper Table 2 / SSDsim default `page.parameters`: MLC page program ~750 us.
//! - FEMU (Li et al., FAST 2018) `bbssd` defaults: read 40 us, program 200 us, erase 2 ms
//!   (used here for the SLC-mode region of TLC drives, which programs in ~200-300 us).
//! - TLC datasheet ranges (e.g. Micron B17A / Samsung V-NAND 64L product briefs):
//!   16 KiB pages, read ~60-90 us, program ~1-2 ms per page (one-shot), erase ~3-10 ms;
//!   ONFI 4.0 NV-DDR3 channel at 400-800 MT/s.
//! - Host links: SATA 6 Gb/s (8b/10b) = 600 MB/s raw, ~550 MB/s payload;
//!   PCIe 3.0 x4 ~3.9 GB/s raw, ~3.5 GB/s payload.

use serde::Serialize;
use std::fmt;

/// Mapping granularity of the FTL: one logical unit (4 KiB).
pub const UNIT_BYTES: u64 = 4096;

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

/// Host interface.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Interface {
    Sata,
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
}

/// Every parameter of a simulated drive. Built from a preset plus `key=value` overrides.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SimConfig {
    pub preset: String,
    /// User (LBA) capacity, bytes; a multiple of 4 KiB.
    pub capacity_bytes: u64,
    /// Factory over-provisioning: physical native capacity = user x (1 + op).
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
    /// Channel (ONFI) transfer rate, MB/s (10^6 bytes/s).
    pub channel_mbps: u32,
    pub interface: Interface,
    /// Host queue depth (NCQ 32 or an NVMe queue depth).
    pub queue_depth: u32,
    /// Host link payload rate, MB/s.
    pub link_mbps: u32,
    /// Controller overhead per command, ns.
    pub command_ns: u64,
    /// Controller write buffer, 4 KiB units (writes complete once buffered).
    pub write_buffer_units: u32,
    pub victim: VictimPolicy,
    /// Foreground GC runs while the drive has fewer free native blocks than this.
    pub gc_free_blocks: u32,
    /// Background GC (host idle) works until the drive has this many free blocks.
    pub bg_gc_free_blocks: u32,
    /// Static SLC cache size, bytes (SLC-mode blocks on top of the native blocks).
    pub slc_static_bytes: u64,
    /// Largest dynamic SLC cache, bytes (free native blocks used in SLC mode).
    pub slc_dynamic_bytes: u64,
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

/// A named starting point with a description.
#[derive(Clone, Debug, Serialize)]
pub struct Preset {
    pub name: &'static str,
    pub description: &'static str,
    pub config: SimConfig,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SimError {
    #[error("sim spec `{spec}`: must start with `sim:`\n  hint: e.g. `sim:client-7op,capacity=4g`; presets: {presets}")]
    NotSim { spec: String, presets: String },
    #[error("sim spec: unknown preset `{name}`\n  hint: valid presets: {presets}")]
    UnknownPreset { name: String, presets: String },
    #[error("sim spec: unknown key `{key}`\n  hint: valid keys: {keys}")]
    UnknownKey { key: String, keys: String },
    #[error("sim spec: bad value `{value}` for `{key}`\n  hint: {hint}")]
    BadValue {
        key: String,
        value: String,
        hint: String,
    },
    #[error(
        "sim spec: `{item}` is not key=value\n  hint: write e.g. `capacity=4g`; valid keys: {keys}"
    )]
    NotKeyValue { item: String, keys: String },
    #[error("sim config: {0}")]
    Invalid(String),
}

pub const KEYS: &[(&str, &str)] = &[
    (
        "capacity",
        "user capacity (k/m/g/t = powers of 1024), multiple of 4k",
    ),
    (
        "op",
        "factory over-provisioning, fraction (0.07) or percent (7%)",
    ),
    ("cell", "slc|mlc|tlc|qlc (sets default timings)"),
    ("read_us", "page read time, us"),
    ("program_us", "page program time, us"),
    ("erase_us", "block erase time, us"),
    ("channels", "number of channels"),
    ("dies", "dies per channel"),
    ("planes", "planes per die"),
    ("pages_per_block", "NAND pages per block"),
    ("page", "NAND page size (4k, 8k, 16k)"),
    ("channel_mbps", "channel transfer rate, MB/s"),
    ("interface", "sata|nvme"),
    ("qd", "host queue depth"),
    ("link_mbps", "host link payload rate, MB/s"),
    ("command_us", "controller overhead per command, us"),
    (
        "write_buffer",
        "controller write buffer size (bytes, e.g. 4m)",
    ),
    ("victim", VictimPolicy::NAMES),
    (
        "gc_free_blocks",
        "foreground GC threshold, free native blocks (whole drive)",
    ),
    (
        "bg_gc_free_blocks",
        "idle-time GC target, free native blocks (whole drive)",
    ),
    ("slc_static", "static SLC cache size (bytes, 0 = none)"),
    ("slc_dynamic", "largest dynamic SLC cache (bytes, 0 = none)"),
    ("compress", "true|false: inline compression"),
    (
        "wear_level",
        "true|false: dynamic + static wear levelling (default true)",
    ),
    (
        "wl_threshold",
        "erase-count spread (max - min) that starts static wear levelling",
    ),
    ("seed", "random seed (victim=random)"),
];

fn keys_list() -> String {
    KEYS.iter().map(|(k, _)| *k).collect::<Vec<_>>().join(", ")
}

fn presets_list() -> String {
    presets()
        .iter()
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join(", ")
}

const GIB: u64 = 1 << 30;
const MIB: u64 = 1 << 20;

fn base_sata_mlc(name: &str, op: f64) -> SimConfig {
    SimConfig {
        preset: name.to_string(),
        capacity_bytes: 4 * GIB,
        op,
        cell: CellType::Mlc,
        timing: CellType::Mlc.default_timing(),
        slc_timing: CellType::Slc.default_timing(),
        // MQSim ssdconfig.xml geometry: 8 channels, 4 chips x 2 dies per channel.
        channels: 8,
        dies_per_channel: 8,
        planes_per_die: 2,
        pages_per_block: 256,
        page_bytes: 8192,
        channel_mbps: 333,
        interface: Interface::Sata,
        queue_depth: 32,
        link_mbps: 550,
        command_ns: 10_000,
        write_buffer_units: 1024,
        victim: VictimPolicy::Greedy,
        gc_free_blocks: 8,
        bg_gc_free_blocks: 16,
        slc_static_bytes: 0,
        slc_dynamic_bytes: 0,
        compress: false,
        wear_leveling: true,
        // Erase-count delta of dual-pool style static wear levelling (Chang & Du, DAC
        // 2007, use thresholds of the same order); small against 3k-100k P/E ratings.
        wl_threshold: 64,
        seed: 1,
    }
}

/// The built-in presets.
pub fn presets() -> Vec<Preset> {
    let client7 = base_sata_mlc("client-7op", 0.07);
    let client12 = base_sata_mlc("client-12op", 0.12);
    let mut ent = base_sata_mlc("enterprise-28op", 0.28);
    ent.interface = Interface::Nvme;
    ent.queue_depth = 256;
    ent.link_mbps = 3500;
    ent.command_ns = 3_000;
    ent.write_buffer_units = 4096;
    ent.bg_gc_free_blocks = 32;
    let mut tlc = base_sata_mlc("tlc-slc", 0.07);
    tlc.cell = CellType::Tlc;
    tlc.timing = CellType::Tlc.default_timing();
    // A small client TLC drive (e.g. 120-250 GB class): few dies, so native TLC writes
    // are slow once the SLC cache is full.
    tlc.channels = 4;
    tlc.dies_per_channel = 2;
    tlc.planes_per_die = 2;
    tlc.pages_per_block = 256;
    tlc.page_bytes = 16384;
    tlc.channel_mbps = 533;
    tlc.slc_static_bytes = 256 * MIB;
    tlc.slc_dynamic_bytes = 1024 * MIB;
    let mut comp = base_sata_mlc("sandforce-compress", 0.07);
    comp.compress = true;
    vec![
        Preset {
            name: "client-7op",
            description: "client SATA MLC drive, 7% OP (e.g. 256 GB class), greedy GC",
            config: client7,
        },
        Preset {
            name: "client-12op",
            description: "client SATA MLC drive, ~12% OP (e.g. 240 GB class)",
            config: client12,
        },
        Preset {
            name: "enterprise-28op",
            description: "enterprise NVMe MLC drive, 28% OP, deep queue",
            config: ent,
        },
        Preset {
            name: "tlc-slc",
            description: "client SATA TLC drive with static + dynamic SLC write cache",
            config: tlc,
        },
        Preset {
            name: "sandforce-compress",
            description: "SATA MLC drive with inline compression (SandForce-like), 7% OP",
            config: comp,
        },
    ]
}

/// Parse a size with fio suffixes (k, m, g, t = powers of 1024; optional `b`/`ib`).
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim().to_ascii_lowercase();
    let s = s
        .strip_suffix("ib")
        .or_else(|| s.strip_suffix('b'))
        .unwrap_or(&s);
    let (num, mult) = match s.chars().last()? {
        'k' => (&s[..s.len() - 1], 1u64 << 10),
        'm' => (&s[..s.len() - 1], 1 << 20),
        'g' => (&s[..s.len() - 1], 1 << 30),
        't' => (&s[..s.len() - 1], 1 << 40),
        _ => (s, 1),
    };
    if let Ok(n) = num.parse::<u64>() {
        return n.checked_mul(mult);
    }
    let f: f64 = num.parse().ok()?;
    if !(f >= 0.0 && f.is_finite()) {
        return None;
    }
    Some((f * mult as f64).round() as u64)
}

fn bad(key: &str, value: &str, hint: &str) -> SimError {
    SimError::BadValue {
        key: key.to_string(),
        value: value.to_string(),
        hint: hint.to_string(),
    }
}

fn num<T: std::str::FromStr>(key: &str, value: &str) -> Result<T, SimError> {
    value
        .parse::<T>()
        .map_err(|_| bad(key, value, "expected a non-negative integer"))
}

fn boolean(key: &str, value: &str) -> Result<bool, SimError> {
    match value {
        "true" | "1" | "yes" | "on" => Ok(true),
        "false" | "0" | "no" | "off" => Ok(false),
        _ => Err(bad(key, value, "true or false")),
    }
}

fn us(key: &str, value: &str) -> Result<u64, SimError> {
    let f: f64 = value
        .parse()
        .map_err(|_| bad(key, value, "expected microseconds, e.g. 75 or 0.5"))?;
    if !(f >= 0.0 && f.is_finite()) {
        return Err(bad(key, value, "expected microseconds >= 0"));
    }
    Ok((f * 1000.0).round() as u64)
}

impl SimConfig {
    /// Parse `sim:PRESET[,key=value...]`.
    pub fn parse(spec: &str) -> Result<SimConfig, SimError> {
        let rest = spec.strip_prefix("sim:").ok_or_else(|| SimError::NotSim {
            spec: spec.to_string(),
            presets: presets_list(),
        })?;
        let mut items = rest.split(',');
        let name = items.next().unwrap_or("").trim();
        let mut ppb_set = false;
        let mut cfg = presets()
            .into_iter()
            .find(|p| p.name == name)
            .map(|p| p.config)
            .ok_or_else(|| SimError::UnknownPreset {
                name: name.to_string(),
                presets: presets_list(),
            })?;
        for item in items {
            let item = item.trim();
            if item.is_empty() {
                continue;
            }
            let (k, v) = item.split_once('=').ok_or_else(|| SimError::NotKeyValue {
                item: item.to_string(),
                keys: keys_list(),
            })?;
            ppb_set |= k.trim() == "pages_per_block";
            cfg.set(k.trim(), v.trim())?;
        }
        // A small drive with a many-die preset geometry has too few spare blocks for one
        // open block per die: use smaller blocks (as a small real drive would) unless
        // the user chose the block size.
        if !ppb_set {
            while cfg.validate().is_err() && cfg.pages_per_block > 4 {
                cfg.pages_per_block /= 2;
            }
        }
        cfg.validate()?;
        Ok(cfg)
    }

    /// Set one parameter from its spec key.
    pub fn set(&mut self, k: &str, v: &str) -> Result<(), SimError> {
        let size = |k: &str, v: &str| {
            parse_size(v).ok_or_else(|| bad(k, v, "expected a size like 512m, 4g, 16k"))
        };
        match k {
            "capacity" => self.capacity_bytes = size(k, v)?,
            "op" => {
                let (s, div) = match v.strip_suffix('%') {
                    Some(s) => (s, 100.0),
                    None => (v, 1.0),
                };
                let f: f64 = s
                    .parse()
                    .map_err(|_| bad(k, v, "expected a fraction like 0.07 or a percent like 7%"))?;
                self.op = f / div;
            }
            "cell" => {
                self.cell =
                    CellType::parse(v).ok_or_else(|| bad(k, v, "one of slc, mlc, tlc, qlc"))?;
                self.timing = self.cell.default_timing();
            }
            "read_us" => self.timing.read_ns = us(k, v)?,
            "program_us" => self.timing.program_ns = us(k, v)?,
            "erase_us" => self.timing.erase_ns = us(k, v)?,
            "channels" => self.channels = num(k, v)?,
            "dies" => self.dies_per_channel = num(k, v)?,
            "planes" => self.planes_per_die = num(k, v)?,
            "pages_per_block" => self.pages_per_block = num(k, v)?,
            "page" => {
                let b = size(k, v)?;
                self.page_bytes =
                    u32::try_from(b).map_err(|_| bad(k, v, "a page size like 4k, 8k, 16k"))?;
            }
            "channel_mbps" => self.channel_mbps = num(k, v)?,
            "interface" => {
                self.interface = Interface::parse(v).ok_or_else(|| bad(k, v, "sata or nvme"))?
            }
            "qd" => self.queue_depth = num(k, v)?,
            "link_mbps" => self.link_mbps = num(k, v)?,
            "command_us" => self.command_ns = us(k, v)?,
            "write_buffer" => {
                let b = size(k, v)?;
                self.write_buffer_units = u32::try_from(b.div_ceil(UNIT_BYTES))
                    .map_err(|_| bad(k, v, "a buffer size like 4m"))?;
            }
            "victim" => {
                self.victim =
                    VictimPolicy::parse(v).ok_or_else(|| bad(k, v, VictimPolicy::NAMES))?
            }
            "gc_free_blocks" => self.gc_free_blocks = num(k, v)?,
            "bg_gc_free_blocks" => self.bg_gc_free_blocks = num(k, v)?,
            "slc_static" => self.slc_static_bytes = size(k, v)?,
            "slc_dynamic" => self.slc_dynamic_bytes = size(k, v)?,
            "compress" => self.compress = boolean(k, v)?,
            "wear_level" => self.wear_leveling = boolean(k, v)?,
            "wl_threshold" => {
                self.wl_threshold = num(k, v)?;
                if self.wl_threshold == 0 {
                    return Err(bad(k, v, "an erase-count spread of at least 1"));
                }
            }
            "seed" => self.seed = num(k, v)?,
            _ => {
                return Err(SimError::UnknownKey {
                    key: k.to_string(),
                    keys: keys_list(),
                })
            }
        }
        Ok(())
    }

    pub fn dies(&self) -> u32 {
        self.channels * self.dies_per_channel
    }

    /// 4 KiB units per NAND page.
    pub fn units_per_page(&self) -> u32 {
        self.page_bytes / UNIT_BYTES as u32
    }

    /// 4 KiB units per (native) block.
    pub fn units_per_block(&self) -> u32 {
        self.pages_per_block * self.units_per_page()
    }

    pub fn user_units(&self) -> u64 {
        self.capacity_bytes / UNIT_BYTES
    }

    /// Native blocks per die: enough for user x (1 + op), rounded up.
    pub fn native_blocks_per_die(&self) -> u32 {
        let phys_units = (self.user_units() as f64 * (1.0 + self.op)).ceil() as u64;
        let per_die = phys_units.div_ceil(self.dies() as u64);
        per_die.div_ceil(self.units_per_block() as u64) as u32
    }

    /// Static SLC blocks per die (each holds units_per_block / bits units).
    pub fn slc_static_blocks_per_die(&self) -> u32 {
        if self.slc_static_bytes == 0 {
            return 0;
        }
        let slc_units_per_block = (self.units_per_block() / self.cell.bits()).max(1) as u64;
        let units = self.slc_static_bytes.div_ceil(UNIT_BYTES);
        units
            .div_ceil(slc_units_per_block)
            .div_ceil(self.dies() as u64) as u32
    }

    /// Largest number of dynamic SLC blocks per die.
    pub fn slc_dynamic_blocks_per_die(&self) -> u32 {
        if self.slc_dynamic_bytes == 0 {
            return 0;
        }
        let slc_units_per_block = (self.units_per_block() / self.cell.bits()).max(1) as u64;
        self.slc_dynamic_bytes
            .div_ceil(UNIT_BYTES)
            .div_ceil(slc_units_per_block)
            .div_ceil(self.dies() as u64) as u32
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
        if self.pages_per_block < 2 {
            return inv("pages_per_block must be at least 2".into());
        }
        if self.channel_mbps == 0 || self.link_mbps == 0 {
            return inv("channel_mbps and link_mbps must be positive".into());
        }
        if self.queue_depth == 0 || self.queue_depth > 65536 {
            return inv("qd must be in 1..=65536".into());
        }
        if self.write_buffer_units == 0 {
            return inv("write_buffer must be at least 4k".into());
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
        let bpd = self.native_blocks_per_die() as u64;
        let blocks = bpd * self.dies() as u64;
        let user_blocks = self.user_units().div_ceil(self.units_per_block() as u64);
        // GC needs its free-block reserve, one open block per die, and slack.
        let spare = blocks.saturating_sub(user_blocks);
        let need = self.gc_free_blocks as u64 + self.dies() as u64 + 2;
        if spare < need {
            return inv(format!(
                "only {spare} spare blocks ({blocks} blocks, {user_blocks} hold user data); \
                 GC needs at least {need} (gc_free_blocks + one open block per die + 2): \
                 raise capacity or op, or lower dies or pages_per_block"
            ));
        }
        let total = (bpd + self.slc_static_blocks_per_die() as u64)
            * self.dies() as u64
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
            "sim:{},capacity={},op={},cell={},channels={},dies={},planes={},pages_per_block={},page={},victim={},qd={}",
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
            self.queue_depth
        )
    }
}
