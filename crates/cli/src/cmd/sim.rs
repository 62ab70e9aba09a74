//! `storbench sim presets`: the simulated SSD's presets with their parameters, and the
//! keys a `sim:PRESET[,key=value...]` target spec accepts.

use super::out::outln;
use storbench_sim::{presets, Preset, SimConfig, KEYS, SECTOR_BYTES, UNIT_BYTES};

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: SimCommand,
}

#[derive(clap::Subcommand)]
pub enum SimCommand {
    /// List the presets with their parameters and the keys a sim: spec accepts
    Presets {
        /// Print as JSON on stdout
        #[arg(long)]
        json: bool,
    },
}

pub fn run(args: Args) -> anyhow::Result<()> {
    match args.command {
        SimCommand::Presets { json } => {
            // Each preset as a spec naming it builds it: geometry and OP as built.
            let ps: Vec<Preset> = presets()
                .into_iter()
                .map(|mut p| {
                    if let Ok(c) = SimConfig::parse(&format!("sim:{}", p.name)) {
                        p.config = c;
                    }
                    p
                })
                .collect();
            if json {
                outln!("{}", serde_json::to_string_pretty(&ps)?)?;
                return Ok(());
            }
            for p in &ps {
                outln!("{}  {}", p.name, p.description)?;
                if !p.aliases.is_empty() {
                    outln!("    {:<20} {}", "also called", p.aliases.join(", "))?;
                }
                for (k, v) in describe(&p.config) {
                    outln!("    {k:<20} {v}")?;
                }
                if let Some(d) = &p.datasheet {
                    outln!(
                        "    {:<20} sequential {:.0} / {:.0} MB/s, 4 KB random {:.0} / {:.0} IOPS (QD32{}); met within 5%",
                        "datasheet",
                        d.seq_read_mb_per_s,
                        d.seq_write_mb_per_s,
                        d.rand_read_iops,
                        d.rand_write_iops,
                        d.rand_span_bytes
                            .map(|b| format!(", {} GB span", b / 1_000_000_000))
                            .unwrap_or_default()
                    )?;
                }
                for (i, src) in p.sources.iter().enumerate() {
                    let k = if i == 0 { "sources" } else { "" };
                    outln!("    {k:<20} {src}")?;
                }
                outln!()?;
            }
            outln!("Use: --target sim:PRESET[,key=value...]   e.g. sim:sata-mlc-2013,capacity=256g,seed=3")?;
            outln!("Named drives (intel-..., crucial-..., samsung-..., sandisk-...) are built from their datasheets and NAND facts only, at their real capacity; the drive classes (sata-mlc-2013, ...) default to 4 GiB.")?;
            outln!("Geometry and OP are as built at the default capacity; `capacity=` sets the superblock count (and, on drives smaller than the one modelled, fewer pages per block, erased in proportionally less time).")?;
            outln!("Keys:")?;
            for (k, d) in KEYS {
                outln!("    {k:<20} {d}")?;
            }
            Ok(())
        }
    }
}

fn size(b: u64) -> String {
    const U: [(&str, u64); 4] = [
        ("t", 1 << 40),
        ("g", 1 << 30),
        ("m", 1 << 20),
        ("k", 1 << 10),
    ];
    for (s, m) in U {
        if b >= m && b.is_multiple_of(m) {
            return format!("{}{s}", b / m);
        }
    }
    b.to_string()
}

/// The parameters of a drive, one (name, value) line each: the flash, the
/// controller and host link, then the firmware's features.
fn describe(c: &SimConfig) -> Vec<(&'static str, String)> {
    let mut lines = describe_flash(c);
    lines.extend(describe_controller(c));
    lines.extend(describe_features(c));
    lines
}

/// Microseconds, from nanoseconds.
fn us(ns: u64) -> String {
    format!("{}", ns as f64 / 1000.0)
}

/// Capacity, spare area, cells, their timing and the array's geometry.
fn describe_flash(c: &SimConfig) -> Vec<(&'static str, String)> {
    let gb = |units: u64| {
        format!(
            "{:.2} GiB",
            (units * UNIT_BYTES) as f64 / (1u64 << 30) as f64
        )
    };
    vec![
        (
            "capacity",
            if c.capacity_bytes.is_multiple_of(1 << 20) {
                format!("{} (default; set with capacity=)", size(c.capacity_bytes))
            } else {
                format!(
                    "{:.1} GB, {} bytes (default; set with capacity=)",
                    c.capacity_bytes as f64 / 1e9,
                    c.capacity_bytes
                )
            },
        ),
        (
            "op",
            format!(
                "{:.1}% stated, {:.3}% built ({} of native flash)",
                c.op * 100.0,
                c.built_op() * 100.0,
                gb(c.native_blocks() * c.units_per_block() as u64)
            ),
        ),
        ("cell", format!("{:?}", c.cell).to_lowercase()),
        (
            "timing",
            format!(
                "read {} us, program {} us, erase {} us (per page / block)",
                us(c.timing.read_ns),
                us(c.timing.program_ns),
                us(c.timing.erase_ns)
            ),
        ),
        (
            "geometry",
            format!(
                "{} channels x {} dies x {} planes, {} pages/block x {}; {} superblocks of {} (a block on every plane of every die)",
                c.channels,
                c.dies_per_channel,
                c.planes_per_die,
                c.pages_per_block,
                size(c.page_bytes as u64),
                c.native_blocks(),
                size(c.units_per_block() as u64 * UNIT_BYTES)
            ),
        ),
        (
            "flash",
            format!(
                "channels {} MB/s each; dies program {:.0} MB/s",
                c.channel_mbps,
                c.flash_program_mbps()
            ),
        ),
    ]
}

/// The host interface, the controller's cores, its buffer and garbage collection.
fn describe_controller(c: &SimConfig) -> Vec<(&'static str, String)> {
    vec![
        (
            "host",
            format!(
                "{} ({}), queue depth {}, link {} MB/s, {} us link time per command",
                c.interface.as_str(),
                if c.interface.half_duplex() {
                    "half duplex"
                } else {
                    "full duplex"
                },
                c.queue_depth,
                c.link_mbps,
                us(c.link_cmd_ns)
            ),
        ),
        (
            "controller",
            format!(
                "{} cores; a core's time {} us per read, {} us per write; latency {} us per read, {} us per write",
                c.ctrl_cores,
                us(c.read_cmd_ns),
                us(c.write_cmd_ns),
                us(c.read_latency_ns.max(c.read_cmd_ns)),
                us(c.write_latency_ns.max(c.write_cmd_ns))
            ),
        ),
        (
            "read-ahead",
            if c.read_ahead_units == 0 {
                "none".to_string()
            } else {
                size(c.read_ahead_units as u64 * UNIT_BYTES)
            },
        ),
        (
            "write buffer",
            size(c.write_buffer_units as u64 * UNIT_BYTES),
        ),
        (
            "write path",
            match c.write_path_mbps {
                0 => "none (the flash sets the write rate)".to_string(),
                mbps => format!("{mbps} MB/s for host data (GC copies do not take it)"),
            },
        ),
        ("sector", format!("{SECTOR_BYTES} B (a partial 4 KiB unit costs a read-modify-write)")),
        (
            "gc",
            format!(
                "victim {}, {} once fewer than {} superblocks are free (GC's share of a die while host programs wait: {}); background GC up to {} when the dies are idle",
                c.victim.as_str(),
                match c.gc_mode {
                    storbench_sim::GcMode::Victim => "a victim at a time",
                    storbench_sim::GcMode::Paced => "paced per host write",
                },
                c.gc_free_blocks,
                c.gc_share,
                c.bg_gc_free_blocks
            ),
        ),
    ]
}

/// SLC cache, wear levelling and compression.
fn describe_features(c: &SimConfig) -> Vec<(&'static str, String)> {
    vec![
        (
            "slc cache",
            if c.slc_static_bytes + c.slc_dynamic_bytes == 0 {
                "none".to_string()
            } else {
                format!(
                    "static {}, dynamic up to {} (scaled with capacity)",
                    size(c.slc_static_bytes),
                    size(c.slc_dynamic_bytes)
                )
            },
        ),
        (
            "wear levelling",
            if c.wear_leveling {
                format!(
                    "dynamic (least-worn free block) + static (cold data moves when the erase-count spread exceeds {})",
                    c.wl_threshold
                )
            } else {
                "none".to_string()
            },
        ),
        (
            "compression",
            if c.compress {
                "inline, 1 KiB granularity"
            } else {
                "none"
            }
            .into(),
        ),
    ]
}
