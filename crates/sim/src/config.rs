//! Drive parameters, presets and the `sim:PRESET[,key=value...]` spec parser.
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
    /// A read that finds its die programming (erasing) waits at most this long for the
    /// operation to suspend, rather than for it to end; 0: no suspend.
    pub program_suspend_ns: u64,
    pub erase_suspend_ns: u64,
    /// Controller write buffer, 4 KiB units: a write completes once its data is in
    /// the buffer, which holds what the dies still have to do (see `ssd.rs`).
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
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SimError {
    #[error("sim spec `{spec}`: must start with `sim:`\n  hint: e.g. `sim:sata-mlc-2013,capacity=4g`; presets: {presets}")]
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
        "factory over-provisioning, fraction (0.07) or percent (7%); built within 0.5%",
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
    (
        "interface",
        "sata|nvme (sata: one half-duplex link; nvme: full duplex)",
    ),
    ("qd", "host queue depth"),
    ("link_mbps", "host link payload rate, MB/s"),
    (
        "link_cmd_us",
        "host link time per command besides its data, us",
    ),
    ("cores", "controller cores (each command occupies one)"),
    (
        "command_us",
        "controller time per command, us (sets read_cmd_us and write_cmd_us)",
    ),
    ("read_cmd_us", "controller time per read (flush, TRIM), us"),
    ("write_cmd_us", "controller time per write, us"),
    (
        "write_buffer",
        "controller write buffer size (bytes, e.g. 8m)",
    ),
    (
        "suspend_program_us",
        "longest a read waits for a program to suspend, us (0: no suspend)",
    ),
    (
        "suspend_erase_us",
        "longest a read waits for an erase to suspend, us (0: no suspend)",
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
    (
        "slc_static",
        "static SLC cache size (bytes, 0 = none; presets scale theirs with capacity)",
    ),
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
        .map(|p| {
            if p.aliases.is_empty() {
                p.name.to_string()
            } else {
                format!("{} (alias {})", p.name, p.aliases.join(", "))
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

const GIB: u64 = 1 << 30;
const MIB: u64 = 1 << 20;

/// Largest relative error of the built over-provisioning against the stated one.
pub const OP_TOLERANCE: f64 = 0.005;

/// Fewest superblocks a preset builds at any capacity (it halves its blocks until it
/// has them): the GC reserve and the open block hold no data, so with few blocks they
/// would eat the spare area (2.5 of 1,024 blocks: 0.25% of the flash).
pub const MIN_BLOCKS: u64 = 1024;

/// A 2013-class SATA 6 Gb/s MLC client drive of 256 GB (Samsung 840 Pro, SanDisk
/// Extreme II, Intel SSD 730 class): 8 channels x 4 dies of 64 Gbit MLC = 256 GiB raw.
/// Sources of each figure in `docs/simulator.md` ("Presets").
fn sata_mlc_2013(name: &str, op: f64) -> SimConfig {
    SimConfig {
        preset: name.to_string(),
        capacity_bytes: 4 * GIB,
        op,
        cell: CellType::Mlc,
        // Micron MT29F64G08CBAAA (25 nm, 64 Gbit MLC): page read 75 us max, block erase
        // 3.8 ms typ (also MQSim's defaults). Program: that part's 1.3 ms typical would
        // cap 32 dies at 403 MB/s, below every 2013 drive's 128 KB sequential write
        // (450-520 MB/s, which these drives' flash sets); 1.1 ms (19-21 nm Toggle MLC
        // class) gives 477 MB/s.
        timing: NandTiming {
            read_ns: 75_000,
            program_ns: 1_100_000,
            erase_ns: 3_800_000,
        },
        slc_timing: CellType::Slc.default_timing(),
        channels: 8,
        dies_per_channel: 4,
        // MT29F64G08CBAAA: 2 planes, 8 KiB pages, 256 pages per block (MQSim: the same).
        planes_per_die: 2,
        pages_per_block: 256,
        page_bytes: 8192,
        // MQSim ssdconfig.xml: ONFI NV-DDR2 channel at 333 MT/s, 8 bits wide.
        channel_mbps: 333,
        interface: Interface::Sata,
        // SATA NCQ: 32 commands.
        queue_depth: 32,
        // SATA 6 Gb/s: 600 MB/s after 8b/10b; data FIS framing and flow control leave
        // ~560 MB/s of payload (the best drives' 128 KB reads: 540-556 MB/s).
        link_mbps: 560,
        // Register H2D, DMA Setup and Set Device Bits FISes with their handshakes.
        link_cmd_ns: 2_000,
        // Samsung MDX (840 Pro): three ARM Cortex-R4 cores. Time per command
        // calibrated to the QD32 4 KB random figures these drives' controllers set:
        // 3 / 33 us = 91K read IOPS (published 80-100K), 3 / 37.5 us = 80K write IOPS
        // (published 70-90K).
        ctrl_cores: 3,
        read_cmd_ns: 33_000,
        write_cmd_ns: 37_500,
        // MQSim ssdconfig.xml: Suspend_Program_Time 100 us, Suspend_Erase_Time 700 us.
        program_suspend_ns: 100_000,
        erase_suspend_ns: 700_000,
        // Write-back buffer in controller DRAM (the rest of it holds the mapping).
        write_buffer_units: (8 * MIB / UNIT_BYTES) as u32,
        victim: VictimPolicy::Greedy,
        // Free superblocks: foreground GC starts a victim when fewer than 3 are free
        // and moves its data a share per host write, finishing it before the last
        // free block is reached (ftl/gc.rs, `foreground_gc`); idle-time GC works up to 5.
        // Few, as the superblocks are large: a free one is spare area holding no data.
        gc_free_blocks: 3,
        bg_gc_free_blocks: 5,
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
    vec![
        sata_mlc_2013_preset(),
        sata_mlc_2013_12op_preset(),
        sata_mlc_enterprise_preset(),
        sata_tlc_slc_2013_preset(),
        sata_sandforce_2011_preset(),
        nvme_mlc_2016_preset(),
    ]
}

/// The 2013-class SATA MLC client drive, 7% OP.
fn sata_mlc_2013_preset() -> Preset {
    let config = sata_mlc_2013("sata-mlc-2013", 0.07);
    Preset {
        name: "sata-mlc-2013",
        aliases: &["client-7op"],
        description: "2013-class SATA 6 Gb/s MLC client drive, 256 GB class, 7% OP \
                      (Samsung 840 Pro, SanDisk Extreme II, Intel SSD 730), greedy GC",
        sources: &[
            "Micron MT29F64G08CBAAA datasheet (64 Gbit 25 nm MLC): 8 KiB pages, 256 pages/block, 2 planes, read 75 us, erase 3.8 ms",
            "MQSim ssdconfig.xml (Tavakkol et al., FAST 2018): 8 channels at 333 MT/s, 7% OP",
            "Samsung 840 Pro, SanDisk Extreme II, Intel SSD 730 datasheets and reviews: 128 KB seq 520-560 / 450-520 MB/s, 4 KB QD32 80-100K / 70-90K IOPS",
            "AnandTech, Intel SSD 730 review (seed 001): consistency 10-15K IOPS steady, min 30K with 25% spare area",
        ],
        config,
    }
}

/// The 2013-class SATA MLC client drive, 12% OP.
fn sata_mlc_2013_12op_preset() -> Preset {
    let config = sata_mlc_2013("sata-mlc-2013-12op", 0.12);
    Preset {
        name: "sata-mlc-2013-12op",
        aliases: &["client-12op"],
        description: "the 2013-class SATA MLC client drive with 12% OP, the spare \
                      area most client drives of 2013-2014 had",
        sources: &[
            "as sata-mlc-2013",
            "AnandTech Storage Bench 2013 comments (seed 000): the 840 Pro has 7% OP, most drives 12%",
        ],
        config,
    }
}

/// SATA enterprise MLC, 28% OP.
fn sata_mlc_enterprise_preset() -> Preset {
    // Intel DC S3700 class: SATA enterprise MLC (HET MLC, 25 nm), 28% OP, 64 dies.
    let mut config = sata_mlc_2013("sata-mlc-enterprise", 0.28);
    config.dies_per_channel = 8;
    // High-endurance MLC programs slower; 2.2 ms puts 64 dies at the datasheet's
    // 460 MB/s sequential write (800 GB model).
    config.timing.program_ns = 2_200_000;
    // 3 / 40 us = 75K QD32 4 KB random reads (datasheet: 75K).
    config.read_cmd_ns = 40_000;
    config.write_cmd_ns = 40_000;
    config.write_buffer_units = (16 * MIB / UNIT_BYTES) as u32;
    Preset {
        name: "sata-mlc-enterprise",
        aliases: &["enterprise-28op"],
        description: "SATA enterprise MLC drive, 28% OP (Intel DC S3700 class), \
                      64 dies of high-endurance MLC",
        sources: &[
            "Intel DC S3700 datasheet (800 GB): 500 / 460 MB/s sequential, 75K / 36K IOPS 4 KB random (steady state)",
            "AnandTech, Intel SSD 730 review (seed 001): the S3700's 28% OP",
            "Micron MT29F64G08CBAAA datasheet: read 75 us, erase 3.8 ms",
        ],
        config,
    }
}

/// SATA TLC client drive with a static SLC cache.
fn sata_tlc_slc_2013_preset() -> Preset {
    // Samsung 840 EVO 250 GB class: 19 nm TLC, 16 dies of 128 Gbit on 8 channels,
    // TurboWrite static SLC buffer of 3 GB per 250 GB.
    let mut config = sata_mlc_2013("sata-tlc-slc-2013", 0.07);
    config.cell = CellType::Tlc;
    config.timing = NandTiming {
        read_ns: 80_000,
        // 16 dies x 2 planes x 16 KiB per 1.94 ms = 270 MB/s: the datasheet's write
        // speed once TurboWrite's buffer is full (250 GB model).
        program_ns: 1_940_000,
        erase_ns: 5_000_000,
    };
    config.dies_per_channel = 2;
    config.page_bytes = 16384;
    config.pages_per_block = 256;
    config.channel_mbps = 400;
    // 3 cores (MEX): 3 / 31 us = 97K read IOPS, 3 / 45 us = 66K write IOPS (datasheet).
    config.read_cmd_ns = 31_000;
    config.write_cmd_ns = 45_000;
    config.slc_static_bytes = (4 * GIB) * 3 / 250 / UNIT_BYTES * UNIT_BYTES;
    config.slc_dynamic_bytes = 0;
    Preset {
        name: "sata-tlc-slc-2013",
        aliases: &["tlc-slc"],
        description: "SATA TLC client drive with a static SLC write cache of 1.2% of \
                      capacity (Samsung 840 EVO 250 GB class, TurboWrite)",
        sources: &[
            "Samsung 840 EVO datasheet (250 GB): 540 / 520 MB/s sequential (270 MB/s past TurboWrite), 97K / 66K IOPS, TurboWrite 3 GB",
            "FEMU bbssd defaults (Li et al., FAST 2018): SLC-mode read 25-40 us, program 200 us, erase 2 ms",
        ],
        config,
    }
}

/// SandForce-class SATA MLC drive with inline compression.
fn sata_sandforce_2011_preset() -> Preset {
    // SandForce SF-2281 class (Mushkin Chronos Deluxe 120 GB, seed 004): inline
    // compression, 16 dies of 64 Gbit 25 nm MLC on 8 channels, one controller core.
    let mut config = sata_mlc_2013("sata-sandforce-2011", 0.07);
    config.compress = true;
    // Compression's padding can spill one more block while a victim is relocated.
    config.gc_free_blocks = 4;
    config.dies_per_channel = 2;
    config.timing.program_ns = 1_300_000; // MT29F64G08CBAAA typical
    config.ctrl_cores = 1;
    config.read_cmd_ns = 11_500;
    config.write_cmd_ns = 12_000;
    Preset {
        name: "sata-sandforce-2011",
        aliases: &["sandforce-compress"],
        description: "SandForce SF-2281-class SATA MLC drive with inline compression, \
                      7% OP (Mushkin Chronos Deluxe 120 GB, seed 004)",
        sources: &[
            "Tom's Hardware Storage Bench v1.0 (seed 004): 142 GB host, 149 GB NAND writes of incompressible data",
            "Micron MT29F64G08CBAAA datasheet: program 1.3 ms typ, read 75 us, erase 3.8 ms",
        ],
        config,
    }
}

/// NVMe PCIe 3.0 x4 client MLC drive.
fn nvme_mlc_2016_preset() -> Preset {
    // Samsung 960 PRO 1 TB class: NVMe, PCIe 3.0 x4, 48-layer V-NAND MLC (32 dies of
    // 256 Gbit on 8 channels), five controller cores (Polaris).
    let mut config = sata_mlc_2013("nvme-mlc-2016", 0.10);
    config.interface = Interface::Nvme;
    config.queue_depth = 256;
    // PCIe 3.0 x4: 3.94 GB/s after 128b/130b, ~91% of it TLP payload (256 B max
    // payload); the datasheet's 3,500 MB/s sequential read sits just under it.
    config.link_mbps = 3_570;
    config.link_cmd_ns = 100;
    config.ctrl_cores = 5;
    // 5 / 11.4 us = 440K read IOPS, 5 / 13.9 us = 360K write IOPS (datasheet, QD32).
    config.read_cmd_ns = 11_400;
    config.write_cmd_ns = 13_900;
    config.timing = NandTiming {
        read_ns: 60_000,
        // 32 dies x 2 planes x 16 KiB per 500 us = 2.1 GB/s: the datasheet's
        // sequential write.
        program_ns: 500_000,
        erase_ns: 3_500_000,
    };
    config.page_bytes = 16384;
    config.channel_mbps = 800;
    config.write_buffer_units = (32 * MIB / UNIT_BYTES) as u32;
    Preset {
        name: "nvme-mlc-2016",
        aliases: &[],
        description: "NVMe PCIe 3.0 x4 client MLC drive, 1 TB class (Samsung 960 PRO), \
                      deep queue",
        sources: &[
            "Samsung 960 PRO datasheet (1 TB): 3,500 / 2,100 MB/s sequential, 440K / 360K IOPS 4 KB random QD32",
            "PCI Express 3.0: 8 GT/s per lane, 128b/130b",
        ],
        config,
    }
}

/// The preset called `name` (or by one of its aliases).
pub fn preset(name: &str) -> Option<Preset> {
    presets()
        .into_iter()
        .find(|p| p.name == name || p.aliases.contains(&name))
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
        let mut cfg = preset(name)
            .map(|p| p.config)
            .ok_or_else(|| SimError::UnknownPreset {
                name: name.to_string(),
                presets: presets_list(),
            })?;
        let base = cfg.clone();
        let mut set = Vec::new();
        for item in items {
            let item = item.trim();
            if item.is_empty() {
                continue;
            }
            let (k, v) = item.split_once('=').ok_or_else(|| SimError::NotKeyValue {
                item: item.to_string(),
                keys: keys_list(),
            })?;
            set.push(k.trim().to_string());
            cfg.set(k.trim(), v.trim())?;
        }
        let given = |k: &str| set.iter().any(|s| s == k);
        // A preset's SLC cache is a share of its capacity (the drives it models scale
        // theirs so); a size given in the spec is kept as given.
        if cfg.capacity_bytes != base.capacity_bytes {
            let scale = |b: u64| {
                ((b as u128 * cfg.capacity_bytes as u128 / base.capacity_bytes as u128) as u64)
                    / UNIT_BYTES
                    * UNIT_BYTES
            };
            if !given("slc_static") {
                cfg.slc_static_bytes = scale(base.slc_static_bytes);
            }
            if !given("slc_dynamic") {
                cfg.slc_dynamic_bytes = scale(base.slc_dynamic_bytes);
            }
        }
        // A drive smaller than the one a preset models has too few of its superblocks
        // (see MIN_BLOCKS), or too coarse ones to build its OP within 0.5%: it gets
        // smaller blocks (fewer pages each) unless the user chose the block size, and
        // erases them in proportionally less time, so its erase time per page, and
        // with it its speed, stays the modelled drive's.
        if !given("pages_per_block") {
            while (cfg.validate().is_err()
                || cfg.op_error() > OP_TOLERANCE
                || cfg.native_blocks() < MIN_BLOCKS)
                && cfg.pages_per_block > 1
            {
                cfg.pages_per_block /= 2;
                if !given("erase_us") {
                    cfg.timing.erase_ns /= 2;
                    cfg.slc_timing.erase_ns /= 2;
                }
            }
            // A toy drive (tens of MiB) too small even for one-page superblocks over
            // every die gets fewer dies (and runs slower than the modelled drive).
            while cfg.validate().is_err()
                && cfg.pages_per_block == 1
                && !given("dies")
                && cfg.dies_per_channel > 1
            {
                cfg.dies_per_channel /= 2;
            }
        }
        cfg.validate()?;
        Ok(cfg)
    }

    /// Set one parameter from its spec key.
    pub fn set(&mut self, k: &str, v: &str) -> Result<(), SimError> {
        let size = |k: &str, v: &str| {
            storbench_core::units::parse_size(k, v)
                .map_err(|_| bad(k, v, "expected a size like 512m, 4g, 16k"))
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
            "link_cmd_us" => self.link_cmd_ns = us(k, v)?,
            "cores" => self.ctrl_cores = num(k, v)?,
            "command_us" => {
                self.read_cmd_ns = us(k, v)?;
                self.write_cmd_ns = self.read_cmd_ns;
            }
            "read_cmd_us" => self.read_cmd_ns = us(k, v)?,
            "suspend_program_us" => self.program_suspend_ns = us(k, v)?,
            "suspend_erase_us" => self.erase_suspend_ns = us(k, v)?,
            "write_cmd_us" => self.write_cmd_ns = us(k, v)?,
            "write_buffer" => {
                let b = size(k, v)?;
                self.write_buffer_units = u32::try_from(b.div_ceil(UNIT_BYTES))
                    .map_err(|_| bad(k, v, "a buffer size like 8m"))?;
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
