//! Presets for drive classes: the 2013-class SATA MLC client drive (the calibrated
//! one) and its relatives. Named drives are in `drives.rs`.

use super::{
    drives, CellType, GcMode, Interface, NandTiming, Preset, SimConfig, SlcFull, VictimPolicy,
};
use super::{GIB, MIB, UNIT_BYTES};

/// A 2013-class SATA 6 Gb/s MLC client drive of 256 GB (Samsung 840 Pro, SanDisk
/// Extreme II, Intel SSD 730 class): 8 channels x 4 dies of 64 Gbit MLC = 256 GiB raw.
/// Sources of each figure in `docs/simulator.md` ("Presets").
pub(super) fn sata_mlc_2013(name: &str, op: f64) -> SimConfig {
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
        read_latency_ns: 33_000,
        write_latency_ns: 37_500,
        read_ahead_units: 0,
        // MQSim ssdconfig.xml: Suspend_Program_Time 100 us, Suspend_Erase_Time 700 us.
        program_suspend_ns: 100_000,
        erase_suspend_ns: 700_000,
        // Write-back buffer in controller DRAM (the rest of it holds the mapping).
        write_path_mbps: 0,
        write_buffer_units: (8 * MIB / UNIT_BYTES) as u32,
        victim: VictimPolicy::Greedy,
        gc_mode: GcMode::Victim,
        gc_share: 1.0,
        // Free superblocks: foreground GC starts a victim when fewer than 3 are free
        // and moves its data a share per host write, finishing it before the last
        // free block is reached (ftl/gc.rs, `foreground_gc`); idle-time GC works up to 5.
        // Few, as the superblocks are large: a free one is spare area holding no data.
        gc_free_blocks: 3,
        bg_gc_free_blocks: 5,
        idle_gc_delay_ns: 0,
        slc_static_bytes: 0,
        slc_dynamic_bytes: 0,
        slc_full: SlcFull::Direct,
        slc_max_io_units: 0,
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
    .into_iter()
    .chain(drives::named())
    .collect()
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
        datasheet: None,
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
        datasheet: None,
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
    config.read_latency_ns = config.read_cmd_ns;
    config.write_latency_ns = config.write_cmd_ns;
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
        datasheet: None,
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
    config.read_latency_ns = config.read_cmd_ns;
    config.write_latency_ns = config.write_cmd_ns;
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
        datasheet: None,
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
    config.read_latency_ns = config.read_cmd_ns;
    config.write_latency_ns = config.write_cmd_ns;
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
        datasheet: None,
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
    config.read_latency_ns = config.read_cmd_ns;
    config.write_latency_ns = config.write_cmd_ns;
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
        datasheet: None,
    }
}

/// The preset called `name` (or by one of its aliases).
pub fn preset(name: &str) -> Option<Preset> {
    presets()
        .into_iter()
        .find(|p| p.name == name || p.aliases.contains(&name))
}
