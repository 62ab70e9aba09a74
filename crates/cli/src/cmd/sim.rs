//! `storbench sim presets`: the simulated SSD's presets with their parameters, and the
//! keys a `sim:PRESET[,key=value...]` target spec accepts.

use storbench_sim::{presets, SimConfig, KEYS, UNIT_BYTES};

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
            let ps = presets();
            if json {
                println!("{}", serde_json::to_string_pretty(&ps)?);
                return Ok(());
            }
            for p in &ps {
                println!("{}  {}", p.name, p.description);
                for (k, v) in describe(&p.config) {
                    println!("    {k:<20} {v}");
                }
                println!();
            }
            println!("Use: --target sim:PRESET[,key=value...]   e.g. sim:client-7op,capacity=8g,seed=3,victim=greedy");
            println!("Keys:");
            for (k, d) in KEYS {
                println!("    {k:<20} {d}");
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

fn describe(c: &SimConfig) -> Vec<(&'static str, String)> {
    let us = |ns: u64| format!("{}", ns as f64 / 1000.0);
    vec![
        (
            "capacity",
            format!("{} (default; set with capacity=)", size(c.capacity_bytes)),
        ),
        ("op", format!("{:.0}%", c.op * 100.0)),
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
                "{} channels x {} dies x {} planes, {} pages/block x {} (fewer pages/block if capacity is too small for one open block per die)",
                c.channels,
                c.dies_per_channel,
                c.planes_per_die,
                c.pages_per_block,
                size(c.page_bytes as u64)
            ),
        ),
        ("channel", format!("{} MB/s", c.channel_mbps)),
        (
            "host",
            format!(
                "{}, queue depth {}, link {} MB/s, {} us/command",
                format!("{:?}", c.interface).to_lowercase(),
                c.queue_depth,
                c.link_mbps,
                us(c.command_ns)
            ),
        ),
        (
            "write buffer",
            size(c.write_buffer_units as u64 * UNIT_BYTES),
        ),
        (
            "gc",
            format!(
                "victim {}, foreground below {} free blocks (whole drive), idle-time GC up to {}",
                c.victim.as_str(),
                c.gc_free_blocks,
                c.bg_gc_free_blocks
            ),
        ),
        (
            "slc cache",
            if c.slc_static_bytes + c.slc_dynamic_bytes == 0 {
                "none".to_string()
            } else {
                format!(
                    "static {}, dynamic up to {}",
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
