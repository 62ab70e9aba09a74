//! What the drive reports about itself in every result (`TargetInfo::details`).

use crate::config::{SimConfig, SECTOR_BYTES, UNIT_BYTES};
use crate::ftl::Ftl;
use std::collections::BTreeMap;

/// The drive as built, for [`TargetInfo::details`] (every result carries it).
pub(super) fn details(cfg: &SimConfig, ftl: &Ftl) -> BTreeMap<String, String> {
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
    if cfg.write_path_mbps > 0 {
        put("write_path_mb_per_s", cfg.write_path_mbps.to_string());
    }
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
    firmware(cfg, &mut put);
    put("sector_bytes", SECTOR_BYTES.to_string());
    put("victim", cfg.victim.as_str().into());
    put("queue_depth", cfg.queue_depth.to_string());
    put("slc_static_bytes", cfg.slc_static_bytes.to_string());
    put("slc_dynamic_bytes", cfg.slc_dynamic_bytes.to_string());
    put("compress", cfg.compress.to_string());
    put("seed", cfg.seed.to_string());
    d
}

/// The controller, its buffers and GC.
fn firmware(cfg: &SimConfig, put: &mut impl FnMut(&str, String)) {
    put(
        "controller",
        format!(
            "{} cores, {} ns per read, {} ns per write (a core's time); latency {} ns per read, {} ns per write",
            cfg.ctrl_cores,
            cfg.read_cmd_ns,
            cfg.write_cmd_ns,
            cfg.read_latency_ns.max(cfg.read_cmd_ns),
            cfg.write_latency_ns.max(cfg.write_cmd_ns)
        ),
    );
    put(
        "read_ahead_bytes",
        (cfg.read_ahead_units as u64 * UNIT_BYTES).to_string(),
    );
    put(
        "gc",
        format!(
            "{} (share of a die while host programs wait {}), from {} free superblocks; background up to {} after {} ns idle",
            cfg.gc_mode.as_str(),
            cfg.gc_share,
            cfg.gc_free_blocks,
            cfg.bg_gc_free_blocks,
            cfg.idle_gc_delay_ns
        ),
    );
    put(
        "write_buffer_bytes",
        (cfg.write_buffer_units as u64 * UNIT_BYTES).to_string(),
    );
}
