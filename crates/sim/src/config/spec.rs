//! The `sim:PRESET[,key=value...]` spec: its keys, the parser, and its errors.

use super::{
    preset, presets, CellType, GcMode, Interface, SimConfig, SimError, SlcFull, VictimPolicy,
};
use super::{MIN_BLOCKS, OP_TOLERANCE, UNIT_BYTES};

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
        "write_path_mbps",
        "controller write path for host data, MB/s (0 = none; GC copies do not take it)",
    ),
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
        "read_latency_us",
        "controller latency of a read, us (>= read_cmd_us; a pipelined controller's QD1 cost)",
    ),
    (
        "write_latency_us",
        "controller latency of a write until its buffer admission, us (>= write_cmd_us)",
    ),
    (
        "read_ahead",
        "read-ahead for sequential reads (bytes, e.g. 128k; 0 = none)",
    ),
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
        "gc",
        "victim|paced: foreground GC a victim at a time, or paced per host write",
    ),
    (
        "gc_share",
        "share of a die's time queued GC takes while host programs wait (0-1; 1 = GC first)",
    ),
    (
        "gc_free_blocks",
        "foreground GC threshold, free native blocks (whole drive)",
    ),
    (
        "bg_gc_free_blocks",
        "idle-time GC target, free native blocks (whole drive)",
    ),
    (
        "idle_gc_delay_us",
        "host idle time before background GC starts, us",
    ),
    (
        "slc_static",
        "static SLC cache size (bytes, 0 = none; presets scale theirs with capacity)",
    ),
    ("slc_dynamic", "largest dynamic SLC cache (bytes, 0 = none)"),
    (
        "slc_full",
        "direct|fold: a write when the SLC cache is full goes to native cells, or folds an SLC block first",
    ),
    (
        "slc_max_io",
        "largest host write the SLC cache takes (bytes; 0 = any size)",
    ),
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

pub(super) fn keys_list() -> String {
    KEYS.iter().map(|(k, _)| *k).collect::<Vec<_>>().join(", ")
}

pub(super) fn presets_list() -> String {
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

fn size(key: &str, value: &str) -> Result<u64, SimError> {
    storbench_core::units::parse_size(key, value)
        .map_err(|_| bad(key, value, "expected a size like 512m, 4g, 16k"))
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
        // (key, item) as given: a key given twice, or an empty item (`,,`, a trailing
        // comma, `=4g`), is refused, not settled silently by the last one (issue 30).
        let mut set: Vec<(String, String)> = Vec::new();
        for (i, item) in items.enumerate() {
            let item = item.trim();
            let empty = |hint: &str| SimError::EmptyItem {
                spec: spec.to_string(),
                position: i + 1,
                hint: hint.to_string(),
            };
            if item.is_empty() {
                return Err(empty("remove the extra comma"));
            }
            let (k, v) = item.split_once('=').ok_or_else(|| SimError::NotKeyValue {
                item: item.to_string(),
                keys: keys_list(),
            })?;
            let k = k.trim();
            if k.is_empty() {
                return Err(empty("write the key before `=`, e.g. `capacity=4g`"));
            }
            if let Some((_, first)) = set.iter().find(|(s, _)| s == k) {
                return Err(SimError::DuplicateKey {
                    key: k.to_string(),
                    first: first.clone(),
                    second: item.to_string(),
                });
            }
            set.push((k.to_string(), item.to_string()));
            cfg.set(k, v.trim())?;
        }
        let given = |k: &str| set.iter().any(|(s, _)| s == k);
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
            // every die gets fewer dies (and runs slower than the modelled drive). One
            // whose OP the one-page superblocks cannot build within 0.5% keeps its dies
            // and the OP of whole superblocks nearest it (`op_built` in its details):
            // halving the dies for the last percent of OP made the drive's speed jump
            // by 2x between two OPs a superblock apart, a cliff no fit could cross.
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
        if self.set_flash(k, v)? || self.set_host(k, v)? || self.set_firmware(k, v)? {
            return Ok(());
        }
        Err(SimError::UnknownKey {
            key: k.to_string(),
            keys: keys_list(),
        })
    }

    /// Capacity, spare area and the NAND array. False if `k` is not one of them.
    fn set_flash(&mut self, k: &str, v: &str) -> Result<bool, SimError> {
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
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The host interface, the controller and its buffers. False if `k` is not one of them.
    fn set_host(&mut self, k: &str, v: &str) -> Result<bool, SimError> {
        match k {
            "interface" => {
                self.interface = Interface::parse(v).ok_or_else(|| bad(k, v, "sata or nvme"))?
            }
            "qd" => self.queue_depth = num(k, v)?,
            "link_mbps" => self.link_mbps = num(k, v)?,
            "write_path_mbps" => self.write_path_mbps = num(k, v)?,
            "link_cmd_us" => self.link_cmd_ns = us(k, v)?,
            "cores" => self.ctrl_cores = num(k, v)?,
            "command_us" => {
                self.read_cmd_ns = us(k, v)?;
                self.write_cmd_ns = self.read_cmd_ns;
                self.read_latency_ns = self.read_cmd_ns;
                self.write_latency_ns = self.read_cmd_ns;
            }
            "read_cmd_us" => self.read_cmd_ns = us(k, v)?,
            "read_latency_us" => self.read_latency_ns = us(k, v)?,
            "write_latency_us" => self.write_latency_ns = us(k, v)?,
            "read_ahead" => {
                let b = size(k, v)?;
                self.read_ahead_units = u32::try_from(b.div_ceil(UNIT_BYTES))
                    .map_err(|_| bad(k, v, "a read-ahead size like 128k"))?;
            }
            "suspend_program_us" => self.program_suspend_ns = us(k, v)?,
            "suspend_erase_us" => self.erase_suspend_ns = us(k, v)?,
            "write_cmd_us" => self.write_cmd_ns = us(k, v)?,
            "write_buffer" => {
                let b = size(k, v)?;
                self.write_buffer_units = u32::try_from(b.div_ceil(UNIT_BYTES))
                    .map_err(|_| bad(k, v, "a buffer size like 8m"))?;
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// GC, the SLC cache, compression, wear levelling, the seed. False if `k` is not one of them.
    fn set_firmware(&mut self, k: &str, v: &str) -> Result<bool, SimError> {
        match k {
            "gc" => self.gc_mode = GcMode::parse(v).ok_or_else(|| bad(k, v, GcMode::NAMES))?,
            "gc_share" => {
                let f: f64 = v
                    .parse()
                    .map_err(|_| bad(k, v, "a share in (0, 1], e.g. 0.5"))?;
                if !(f > 0.0 && f <= 1.0) {
                    return Err(bad(k, v, "a share in (0, 1], e.g. 0.5"));
                }
                self.gc_share = f;
            }
            "idle_gc_delay_us" => self.idle_gc_delay_ns = us(k, v)?,
            "victim" => {
                self.victim =
                    VictimPolicy::parse(v).ok_or_else(|| bad(k, v, VictimPolicy::NAMES))?
            }
            "gc_free_blocks" => self.gc_free_blocks = num(k, v)?,
            "bg_gc_free_blocks" => self.bg_gc_free_blocks = num(k, v)?,
            "slc_static" => self.slc_static_bytes = size(k, v)?,
            "slc_dynamic" => self.slc_dynamic_bytes = size(k, v)?,
            "slc_full" => {
                self.slc_full = SlcFull::parse(v).ok_or_else(|| bad(k, v, SlcFull::NAMES))?
            }
            "slc_max_io" => {
                let b = size(k, v)?;
                self.slc_max_io_units = u32::try_from(b.div_ceil(UNIT_BYTES))
                    .map_err(|_| bad(k, v, "a size like 16k"))?;
            }
            "compress" => self.compress = boolean(k, v)?,
            "wear_level" => self.wear_leveling = boolean(k, v)?,
            "wl_threshold" => {
                self.wl_threshold = num(k, v)?;
                if self.wl_threshold == 0 {
                    return Err(bad(k, v, "an erase-count spread of at least 1"));
                }
            }
            "seed" => self.seed = num(k, v)?,
            _ => return Ok(false),
        }
        Ok(true)
    }
}
