//! Presets for named drives, built from their datasheets and public NAND facts only
//! (never from review measurements of these drives). Each one is a [`Sheet`]: what
//! the drive's datasheet and its NAND say, and the few constants no datasheet gives,
//! each marked as such. [`build`] turns a sheet into a configuration the same way for
//! every drive:
//!
//! - capacity: the datasheet's decimal gigabytes as IDEMA LBA1-03 sectors
//!   (97,696,368 + 1,953,504 x (GB - 50));
//! - over-provisioning: the raw NAND (dies x die size), less the share die parity
//!   takes (Intel's XOR, Crucial's RAIN: one die's worth in 16), less the native cells
//!   an SLC cache carved from it uses, over the user capacity;
//! - the controller: `cores / datasheet IOPS` of a core per command (QD32 4 KB
//!   random throughput), and where the datasheet gives a QD1 latency (Intel), that
//!   latency less the link's time as the controller's latency: QD1 and QD32 fitted
//!   apart;
//! - the host transfer rate: the datasheet's sequential read, where the flash does
//!   not set it (the SATA link and the controller's DMA together);
//! - the program time: the datasheet's sequential write over the dies' multi-plane
//!   page programs (with the channel time), where the drive's flash sets it; the
//!   NAND's own typical figure is noted beside it.

use super::presets::sata_mlc_2013;
use super::{CellType, Datasheet, GcMode, NandTiming, Preset, SimConfig, SlcFull};
use super::{MIB, UNIT_BYTES};

const GB: u64 = 1_000_000_000;
const GIB: u64 = 1 << 30;

/// User capacity of a drive sold as `gb` decimal gigabytes (IDEMA LBA1-03), bytes.
pub(crate) fn idema_bytes(gb: u64) -> u64 {
    (97_696_368 + 1_953_504 * (gb - 50)) * 512
}

/// What a datasheet and the NAND behind it say about a drive (see the module docs).
struct Sheet {
    name: &'static str,
    description: &'static str,
    sources: &'static [&'static str],
    gb: u64,
    /// NAND: cell, die size (Gbit), dies, channels, planes, page, pages per block.
    cell: CellType,
    die_gbit: u64,
    dies: u32,
    channels: u32,
    planes: u32,
    page_bytes: u32,
    pages_per_block: u32,
    timing: NandTiming,
    /// The NAND's own program time is in `timing` and the datasheet's sequential write,
    /// slower than that flash, is the controller's write path (`write_path_mbps`); else
    /// `timing`'s program time is fitted to the sequential write (it carries the write
    /// path, and GC copies pay it too).
    write_path: bool,
    /// Die parity (1/16 for XOR or RAIN across 16 dies), share of the raw NAND.
    parity: f64,
    channel_mbps: u32,
    /// Host transfer rate (link and DMA), MB/s.
    link_mbps: u32,
    cores: u32,
    /// QD1 latency of a 4 KB read and write from the datasheet (us), if it gives one.
    latency_us: Option<(f64, f64)>,
    write_buffer_bytes: u64,
    /// GC's share of a die while host programs wait (no datasheet gives it: model
    /// choice, 0.5 unless said otherwise).
    gc_share: f64,
    /// Static SLC cache: bytes, SLC-mode timing, what a write does when it is full,
    /// the largest write it takes (bytes, 0: any).
    slc: Option<(u64, NandTiming, SlcFull, u64)>,
    datasheet: Datasheet,
}

/// A sheet as a preset.
fn build(s: &Sheet) -> Preset {
    let mut c = sata_mlc_2013(s.name, 0.07);
    c.capacity_bytes = idema_bytes(s.gb);
    c.cell = s.cell;
    c.timing = s.timing;
    (c.channels, c.dies_per_channel) = (s.channels, s.dies / s.channels);
    (c.planes_per_die, c.page_bytes) = (s.planes, s.page_bytes);
    c.pages_per_block = s.pages_per_block;
    c.channel_mbps = s.channel_mbps;
    c.link_mbps = s.link_mbps;
    if s.write_path {
        c.write_path_mbps = s.datasheet.seq_write_mb_per_s.round() as u32;
    }
    c.write_buffer_units = (s.write_buffer_bytes / UNIT_BYTES) as u32;
    let raw = s.dies as u64 * s.die_gbit * GIB / 8;
    let mut native = raw as f64 * (1.0 - s.parity);
    if let Some((bytes, timing, full, max_io)) = s.slc {
        native -= (bytes * s.cell.bits() as u64) as f64;
        c.slc_static_bytes = bytes;
        c.slc_timing = timing;
        c.slc_full = full;
        c.slc_max_io_units = (max_io / UNIT_BYTES) as u32;
    }
    c.op = native / c.capacity_bytes as f64 - 1.0;
    controller(&mut c, s);
    c.read_ahead_units = (256 << 10) / UNIT_BYTES as u32;
    c.gc_mode = GcMode::Victim;
    c.gc_share = s.gc_share;
    // Background GC (idle dies) frees half the spare superblocks (model choice).
    let spare = c
        .native_blocks()
        .saturating_sub(c.user_units() / c.units_per_block() as u64);
    c.bg_gc_free_blocks = (spare / 2).max(c.gc_free_blocks as u64 + 2) as u32;
    Preset {
        name: s.name,
        aliases: &[],
        description: s.description,
        sources: s.sources,
        config: c,
        datasheet: Some(s.datasheet),
    }
}

/// The controller: a core per command for `cores / IOPS` (reads and writes apart),
/// and the datasheet's QD1 latencies less the link's part as its latencies.
fn controller(c: &mut SimConfig, s: &Sheet) {
    let d = &s.datasheet;
    c.ctrl_cores = s.cores;
    c.read_cmd_ns = (s.cores as f64 * 1e9 / d.rand_read_iops).round() as u64;
    c.write_cmd_ns = (s.cores as f64 * 1e9 / d.rand_write_iops).round() as u64;
    let link_ns = c.link_cmd_ns + UNIT_BYTES * 1000 / c.link_mbps as u64;
    (c.read_latency_ns, c.write_latency_ns) = match s.latency_us {
        Some((r, w)) => (
            ((r * 1000.0) as u64).saturating_sub(link_ns),
            ((w * 1000.0) as u64).saturating_sub(link_ns),
        ),
        None => (c.read_cmd_ns, c.write_cmd_ns),
    };
}

/// The named drives.
pub(super) fn named() -> Vec<Preset> {
    [
        intel_x25m_g2_80g(),
        intel_320_300g(),
        crucial_m500_240g(),
        samsung_840_evo_250g(),
        sandisk_ultra_ii_240g(),
        sandisk_extreme_ii_240g(),
        intel_730_480g(),
    ]
    .iter()
    .map(build)
    .collect()
}

fn ns(read_us: u64, program_us: u64, erase_us: u64) -> NandTiming {
    NandTiming {
        read_ns: read_us * 1000,
        program_ns: program_us * 1000,
        erase_ns: erase_us * 1000,
    }
}

/// Intel X25-M G2 80 GB (SSDSA2MH080G2, 2009: the drive of seed 002).
fn intel_x25m_g2_80g() -> Sheet {
    Sheet {
        name: "intel-x25m-g2-80g",
        description: "Intel X25-M G2 80 GB (2009): 10 channels of 34 nm 32 Gbit MLC, SATA 3 Gb/s",
        sources: &[
            "Intel X25-M SATA SSD 34 nm product manual (322296): 80 GB, sequential 250 / 70 MB/s, 4 KB random 35,000 / 6,600 IOPS (QD32), latency read 65 us, write 85 us, SATA 3 Gb/s",
            "Intel X25-M: 10-channel controller; 20 dies of IMFT 34 nm 32 Gbit MLC (80 GiB raw, the 7.4% beyond 80 GB is spare area)",
            "Micron 34 nm 32 Gbit MLC (MT29F32G08CBABA class): 4 KiB pages, 256 pages per block, 2 planes, read 50 us, program 900 us typ, erase 2 ms",
        ],
        gb: 80,
        cell: CellType::Mlc,
        die_gbit: 32,
        dies: 20,
        channels: 10,
        planes: 2,
        page_bytes: 4096,
        pages_per_block: 256,
        // The NAND's 900 us program (20 dies x 8 KiB with the channel time: 150 MB/s);
        // the datasheet's 70 MB/s is the controller's write path.
        timing: ns(50, 900, 2_000),
        write_path: true,
        parity: 0.0,
        // ONFI 1.0 asynchronous interface (model choice: 40 MT/s).
        channel_mbps: 40,
        link_mbps: 251,
        cores: 1,
        latency_us: Some((65.0, 85.0)),
        // The controller's SRAM buffer (the 32 MB DRAM holds the mapping): model choice.
        write_buffer_bytes: MIB,
        gc_share: 0.5,
        slc: None,
        datasheet: Datasheet {
            seq_read_mb_per_s: 250.0,
            seq_write_mb_per_s: 70.0,
            rand_read_iops: 35_000.0,
            rand_write_iops: 6_600.0,
            rand_span_bytes: Some(8 * GB),
        },
    }
}

/// Intel SSD 320 300 GB (SSDSA2CW300G3, 2011).
fn intel_320_300g() -> Sheet {
    Sheet {
        name: "intel-320-300g",
        description: "Intel SSD 320 300 GB (2011): 10 channels of 25 nm 64 Gbit MLC with die parity, SATA 3 Gb/s",
        sources: &[
            "Intel SSD 320 Series product specification (325152-001US): 300 GB, sequential 270 / 205 MB/s, 4 KB random 39,500 / 23,000 IOPS (QD32), latency read 75 us, write 90 us",
            "Intel SSD 320: 10-channel Intel controller, 25 nm Intel MLC, XOR parity across dies (a surplus array); 320 GiB raw of 64 Gbit dies",
            "Micron MT29F64G08CBAAA (25 nm 64 Gbit MLC): 8 KiB pages, 256 pages per block, 2 planes, read 75 us, program 1.3 ms typ, erase 3.8 ms",
        ],
        gb: 300,
        cell: CellType::Mlc,
        die_gbit: 64,
        dies: 40,
        channels: 10,
        planes: 2,
        page_bytes: 8192,
        pages_per_block: 256,
        // The NAND's 1.3 ms program (40 dies x 16 KiB with the channel time: 382
        // MB/s); the datasheet's 205 MB/s is the controller's write path.
        timing: ns(75, 1_300, 3_800),
        write_path: true,
        parity: 1.0 / 16.0,
        // ONFI 1.0 asynchronous interface (model choice: 40 MT/s).
        channel_mbps: 40,
        link_mbps: 271,
        cores: 1,
        latency_us: Some((75.0, 90.0)),
        // Controller SRAM buffer (model choice).
        write_buffer_bytes: MIB,
        gc_share: 0.5,
        slc: None,
        datasheet: Datasheet {
            seq_read_mb_per_s: 270.0,
            seq_write_mb_per_s: 205.0,
            rand_read_iops: 39_500.0,
            rand_write_iops: 23_000.0,
            rand_span_bytes: Some(8 * GB),
        },
    }
}

/// Crucial M500 240 GB (CT240M500SSD1, 2013).
fn crucial_m500_240g() -> Sheet {
    Sheet {
        name: "crucial-m500-240g",
        description: "Crucial M500 240 GB (2013): Marvell 88SS9187, 16 dies of 20 nm 128 Gbit MLC with RAIN",
        sources: &[
            "Crucial M500 product flyer: 240 GB, sequential 500 / 250 MB/s, 4 KB random 72,000 / 60,000 IOPS",
            "Crucial M500: Marvell 88SS9187 (8 channels), Micron 20 nm 128 Gbit MLC, RAIN parity across dies; 256 GiB raw",
            "Micron 20 nm 128 Gbit MLC: 16 KiB pages, 512 pages per block, 2 planes",
        ],
        gb: 240,
        cell: CellType::Mlc,
        die_gbit: 128,
        dies: 16,
        channels: 8,
        planes: 2,
        page_bytes: 16384,
        pages_per_block: 512,
        // Program fitted: 16 dies x 32 KiB at 250 MB/s with the channel time (20 nm
        // 128 Gbit MLC: ~1.6 ms).
        timing: ns(115, 1_900, 3_800),
        write_path: false,
        parity: 1.0 / 16.0,
        // ONFI 2.x synchronous (model choice: 166 MT/s).
        channel_mbps: 166,
        link_mbps: 510,
        cores: 2,
        latency_us: None,
        write_buffer_bytes: 4 * MIB,
        gc_share: 0.5,
        slc: None,
        datasheet: Datasheet {
            seq_read_mb_per_s: 500.0,
            seq_write_mb_per_s: 250.0,
            rand_read_iops: 72_000.0,
            rand_write_iops: 60_000.0,
            rand_span_bytes: None,
        },
    }
}

/// Samsung SSD 840 EVO 250 GB (MZ-7TE250, 2013).
fn samsung_840_evo_250g() -> Sheet {
    Sheet {
        name: "samsung-840-evo-250g",
        description: "Samsung SSD 840 EVO 250 GB (2013): MEX controller, 16 dies of 19 nm 128 Gbit TLC, 3 GB TurboWrite SLC cache",
        sources: &[
            "Samsung SSD 840 EVO data sheet: 250 GB, sequential 540 / 520 MB/s (270 MB/s past TurboWrite), 4 KB random 97,000 / 66,000 IOPS (QD32), TurboWrite buffer 3 GB",
            "Samsung TurboWrite white paper: host writes go to the SLC buffer while it has room, straight to TLC when it is full; the buffer empties in idle time",
            "Samsung MEX controller: 3 ARM cores, 8 channels; 256 GiB raw of 128 Gbit TLC",
        ],
        gb: 250,
        cell: CellType::Tlc,
        die_gbit: 128,
        dies: 16,
        channels: 8,
        planes: 2,
        page_bytes: 16384,
        pages_per_block: 256,
        // TLC program fitted: 16 dies x 32 KiB at the datasheet's 270 MB/s past TurboWrite.
        timing: ns(80, 1_940, 5_000),
        write_path: false,
        parity: 0.0,
        // Toggle 2.0 (400 Mb/s per pin).
        channel_mbps: 400,
        link_mbps: 550,
        cores: 3,
        latency_us: None,
        write_buffer_bytes: 8 * MIB,
        gc_share: 0.5,
        // SLC-mode program fitted to the datasheet's 520 MB/s in TurboWrite.
        slc: Some((3 * GB, ns(40, 925, 3_000), SlcFull::Direct, 0)),
        datasheet: Datasheet {
            seq_read_mb_per_s: 540.0,
            seq_write_mb_per_s: 520.0,
            rand_read_iops: 97_000.0,
            rand_write_iops: 66_000.0,
            rand_span_bytes: None,
        },
    }
}

/// SanDisk Ultra II 240 GB (SDSSDHII-240G, 2014).
fn sandisk_ultra_ii_240g() -> Sheet {
    Sheet {
        name: "sandisk-ultra-ii-240g",
        description: "SanDisk Ultra II 240 GB (2014): Marvell 88SS9187, 16 dies of 19 nm 128 Gbit TLC, nCache 2.0 SLC",
        sources: &[
            "SanDisk Ultra II SSD datasheet: 240 GB, sequential 550 / 500 MB/s, 4 KB random 91,000 / 83,000 IOPS",
            "SanDisk nCache 2.0: every write lands in an SLC-mode region first and is folded into TLC (model choice: the fold in the foreground when the region is full)",
            "SanDisk Ultra II: Marvell 88SS9187 (8 channels), SanDisk 19 nm TLC; 256 GiB raw",
        ],
        gb: 240,
        cell: CellType::Tlc,
        die_gbit: 128,
        dies: 16,
        channels: 8,
        planes: 2,
        page_bytes: 16384,
        pages_per_block: 256,
        // TLC program: no datasheet figure past the cache; the 840 EVO's (19 nm TLC,
        // the same page and plane count) assumed.
        timing: ns(90, 1_940, 5_000),
        write_path: false,
        parity: 0.0,
        // Toggle 2.0 (model choice: 200 MT/s).
        channel_mbps: 200,
        link_mbps: 560,
        cores: 2,
        latency_us: None,
        write_buffer_bytes: 8 * MIB,
        gc_share: 0.5,
        // nCache 2.0 size: no datasheet figure; model choice 2 GB. SLC program fitted
        // to the datasheet's 500 MB/s.
        slc: Some((2 * GB, ns(40, 883, 3_000), SlcFull::Fold, 0)),
        datasheet: Datasheet {
            seq_read_mb_per_s: 550.0,
            seq_write_mb_per_s: 500.0,
            rand_read_iops: 91_000.0,
            rand_write_iops: 83_000.0,
            rand_span_bytes: None,
        },
    }
}

/// SanDisk Extreme II 240 GB (SDSSDXP-240G, 2013).
fn sandisk_extreme_ii_240g() -> Sheet {
    Sheet {
        name: "sandisk-extreme-ii-240g",
        description: "SanDisk Extreme II 240 GB (2013): Marvell 88SS9187, 32 dies of 19 nm 64 Gbit MLC, nCache SLC for small writes",
        sources: &[
            "SanDisk Extreme II SSD datasheet: 240 GB, sequential 550 / 510 MB/s, 4 KB random 95,000 / 78,000 IOPS; 256 MB DRAM",
            "SanDisk nCache: small writes collect in an SLC-mode region of just under 1 GB and are consolidated into MLC; large writes go to MLC",
            "SanDisk Extreme II: Marvell 88SS9187 (8 channels), SanDisk 19 nm eX2 ABL MLC; 256 GiB raw",
        ],
        gb: 240,
        cell: CellType::Mlc,
        die_gbit: 64,
        dies: 32,
        channels: 8,
        planes: 2,
        page_bytes: 16384,
        pages_per_block: 256,
        // Program fitted: 32 dies x 32 KiB at 510 MB/s with the channel time (19 nm
        // MLC: ~1.3 ms typ).
        timing: ns(60, 1_907, 3_500),
        write_path: false,
        // SanDisk gives no raw capacity or spare area. Calibrated to seed 001's
        // steady state (about 10K IOPS): 7.6% of the 256 GiB held back (bad-block
        // reserve, metadata), leaving 5% spare area.
        parity: 0.076,
        // Toggle 2.0 (model choice: 200 MT/s).
        channel_mbps: 200,
        link_mbps: 560,
        cores: 2,
        latency_us: None,
        write_buffer_bytes: 8 * MIB,
        gc_share: 0.5,
        // nCache: 0.9 GB taking writes up to 16 KiB; when it is full they go to MLC and
        // it empties in idle time (model choices: the size limit, the full policy).
        slc: Some((900_000_000, ns(30, 300, 2_000), SlcFull::Direct, 16 << 10)),
        datasheet: Datasheet {
            seq_read_mb_per_s: 550.0,
            seq_write_mb_per_s: 510.0,
            rand_read_iops: 95_000.0,
            rand_write_iops: 78_000.0,
            rand_span_bytes: None,
        },
    }
}

/// Intel SSD 730 480 GB (SSDSC2BP480G4, 2014: the drive of seed 001).
fn intel_730_480g() -> Sheet {
    Sheet {
        name: "intel-730-480g",
        description: "Intel SSD 730 480 GB (2014): Intel's enterprise controller, 64 dies of 20 nm 64 Gbit MLC with die parity",
        sources: &[
            "Intel SSD 730 Series product specification: 480 GB, sequential 550 / 470 MB/s, 4 KB random 89,000 / 74,000 IOPS (QD32)",
            "Intel SSD 730: the DC S3700's controller (8 channels) at 600 MHz with a 100 MHz NAND bus, XOR parity across dies; 512 GiB raw of 64 Gbit dies",
            "IMFT 20 nm 64 Gbit MLC: 8 KiB pages, 256 pages per block, 2 planes",
            "AnandTech, Intel SSD 730 review (seed 001): about 15K IOPS in steady state, at least 30K with 25% spare area (calibration, docs/simulator.md)",
        ],
        gb: 480,
        cell: CellType::Mlc,
        die_gbit: 64,
        dies: 64,
        channels: 8,
        planes: 2,
        page_bytes: 8192,
        pages_per_block: 256,
        // Program fitted: 64 dies x 16 KiB at 470 MB/s with the channel time (20 nm
        // MLC: ~1.6 ms typ).
        timing: ns(60, 2_150, 3_500),
        write_path: false,
        parity: 1.0 / 16.0,
        // 100 MHz NAND bus, double data rate.
        channel_mbps: 200,
        link_mbps: 560,
        cores: 2,
        latency_us: None,
        // Power-loss capacitors protect a small write-back buffer (model choice).
        write_buffer_bytes: 2 * MIB,
        // Seed 001: the 730's consistency is "outstanding, S3500 level": GC
        // interleaved finely with host writes (model choice 0.9, calibrated there).
        gc_share: 0.9,
        slc: None,
        datasheet: Datasheet {
            seq_read_mb_per_s: 550.0,
            seq_write_mb_per_s: 470.0,
            rand_read_iops: 89_000.0,
            rand_write_iops: 74_000.0,
            rand_span_bytes: Some(8 * GB),
        },
    }
}
