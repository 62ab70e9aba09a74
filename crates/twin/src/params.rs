//! The parameters a twin fits: `sim:` keys with bounds and the scale the fit moves them
//! on, and how a set of their values becomes a simulated drive (a `SimConfig` for the
//! fit's evaluations, a `sim:` spec for the user).

use crate::TwinError;
use serde::{Deserialize, Serialize};
use storbench_sim::{preset, SimConfig, UNIT_BYTES};

pub use storbench_results::twin::Scale;

/// One fitted parameter: a `sim:` key (or `slc_static_share`/`slc_dynamic_share`, an SLC
/// cache as a share of capacity, so it scales from the fit's small drive to the
/// measured one).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Param {
    pub key: String,
    pub unit: String,
    pub lo: f64,
    pub hi: f64,
    pub scale: Scale,
}

impl Param {
    fn new(key: &str, unit: &str, lo: f64, hi: f64, scale: Scale) -> Param {
        assert!(
            lo < hi && (scale == Scale::Linear || lo > 0.0),
            "{key}: bad bounds"
        );
        Param {
            key: key.into(),
            unit: unit.into(),
            lo,
            hi,
            scale,
        }
    }

    /// The value at `u` in [0, 1] of the scaled range.
    pub fn value(&self, u: f64) -> f64 {
        let u = u.clamp(0.0, 1.0);
        match self.scale {
            Scale::Linear => self.lo + u * (self.hi - self.lo),
            Scale::Log => (self.lo.ln() + u * (self.hi.ln() - self.lo.ln())).exp(),
        }
    }

    /// Where `v` lies in the scaled range, clamped to [0, 1].
    pub fn scaled(&self, v: f64) -> f64 {
        let u = match self.scale {
            Scale::Linear => (v - self.lo) / (self.hi - self.lo),
            Scale::Log => (v.max(self.lo).ln() - self.lo.ln()) / (self.hi.ln() - self.lo.ln()),
        };
        u.clamp(0.0, 1.0)
    }
}

/// The default parameter set: what the measurement plan is built to identify.
pub fn default_params(base: &SimConfig) -> Vec<Param> {
    use Scale::{Linear, Log};
    let mut p = vec![
        Param::new("read_us", "us", 10.0, 400.0, Log),
        Param::new("program_us", "us", 100.0, 6000.0, Log),
        Param::new("erase_us", "us", 500.0, 30000.0, Log),
        Param::new("op", "share", 0.0, 0.6, Linear),
        Param::new("channel_mbps", "MB/s", 50.0, 2000.0, Log),
        Param::new("link_mbps", "MB/s", 100.0, 8000.0, Log),
        Param::new("read_cmd_us", "us", 1.0, 300.0, Log),
        Param::new("write_cmd_us", "us", 1.0, 300.0, Log),
        Param::new("read_latency_us", "us", 1.0, 600.0, Log),
        Param::new("write_latency_us", "us", 1.0, 600.0, Log),
        Param::new("suspend_program_us", "us", 0.0, 2000.0, Linear),
        Param::new("suspend_erase_us", "us", 0.0, 5000.0, Linear),
        Param::new(
            "write_buffer",
            "bytes",
            256.0 * 1024.0,
            256.0 * 1048576.0,
            Log,
        ),
    ];
    if base.slc_static_bytes > 0 {
        p.push(Param::new("slc_static_share", "share", 0.0, 0.3, Linear));
    }
    if base.slc_dynamic_bytes > 0 {
        p.push(Param::new("slc_dynamic_share", "share", 0.0, 0.5, Linear));
    }
    p
}

/// The parameter set with `extra` added: any `sim:` key with a number value the fit
/// should also move (bounds and scale given by the caller).
pub fn param(key: &str, unit: &str, lo: f64, hi: f64, scale: Scale) -> Param {
    Param::new(key, unit, lo, hi, scale)
}

/// `key`'s value in a configuration, in the parameter's unit.
pub fn value_of(cfg: &SimConfig, key: &str, preset_pages_per_block: u32) -> Result<f64, TwinError> {
    let us = |ns: u64| ns as f64 / 1000.0;
    Ok(match key {
        "read_us" => us(cfg.timing.read_ns),
        "program_us" => us(cfg.timing.program_ns),
        // The erase time of the preset's own block size (a small drive's blocks are
        // fewer pages, erased in proportionally less time).
        "erase_us" => {
            us(cfg.timing.erase_ns) * f64::from(preset_pages_per_block)
                / f64::from(cfg.pages_per_block)
        }
        "op" => cfg.op,
        "channel_mbps" => f64::from(cfg.channel_mbps),
        "link_mbps" => f64::from(cfg.link_mbps),
        "read_cmd_us" => us(cfg.read_cmd_ns),
        "write_cmd_us" => us(cfg.write_cmd_ns),
        "read_latency_us" => us(cfg.read_latency_ns),
        "write_latency_us" => us(cfg.write_latency_ns),
        "suspend_program_us" => us(cfg.program_suspend_ns),
        "suspend_erase_us" => us(cfg.erase_suspend_ns),
        "write_buffer" => cfg.write_buffer_units as f64 * UNIT_BYTES as f64,
        "slc_static_share" => cfg.slc_static_bytes as f64 / cfg.capacity_bytes as f64,
        "slc_dynamic_share" => cfg.slc_dynamic_bytes as f64 / cfg.capacity_bytes as f64,
        "idle_gc_delay_us" => us(cfg.idle_gc_delay_ns),
        "wl_threshold" => f64::from(cfg.wl_threshold),
        "gc_share" => cfg.gc_share,
        _ => {
            return Err(TwinError::Invalid(format!(
                "parameter `{key}`: the twin cannot fit it (not a numeric sim: key it knows)"
            )))
        }
    })
}

/// A point of the fit: a preset and values for some of its parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub preset: String,
    /// (key, value) in the parameter's unit.
    pub values: Vec<(String, f64)>,
}

fn item(key: &str, v: f64, capacity_bytes: u64) -> Option<String> {
    Some(match key {
        "op" => format!("op={v:.5}"),
        "channel_mbps" | "link_mbps" => format!("{key}={}", v.round().max(1.0) as u64),
        "wl_threshold" => format!("{key}={}", v.round().max(1.0) as u64),
        "gc_share" => format!("{key}={v:.4}"),
        "write_buffer" => format!("{key}={}", units(v).max(UNIT_BYTES)),
        "slc_static_share" => format!("slc_static={}", units(v * capacity_bytes as f64)),
        "slc_dynamic_share" => format!("slc_dynamic={}", units(v * capacity_bytes as f64)),
        "erase_us" => return None,
        "suspend_program_us" | "suspend_erase_us" if v < 0.5 => format!("{key}=0"),
        _ => format!("{key}={v:.3}"),
    })
}

fn units(bytes: f64) -> u64 {
    (bytes.max(0.0) / UNIT_BYTES as f64).round() as u64 * UNIT_BYTES
}

impl Point {
    /// The `sim:` spec of this point at `capacity_bytes`; [`Point::config`] is the
    /// drive it opens, with every command.
    pub fn spec(&self, capacity_bytes: u64) -> Result<String, TwinError> {
        let base = preset(&self.preset)
            .ok_or_else(|| TwinError::Invalid(format!("unknown preset `{}`", self.preset)))?;
        let get = |k: &str| {
            self.values
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| *v)
        };
        let mut spec = format!("sim:{},capacity={capacity_bytes}", self.preset);
        for (k, v) in &self.values {
            let mut v = *v;
            // A controller's latency is at least its time per command.
            if k == "read_latency_us" {
                v = v.max(get("read_cmd_us").unwrap_or(0.0));
            }
            if k == "write_latency_us" {
                v = v.max(get("write_cmd_us").unwrap_or(0.0));
            }
            if let Some(s) = item(k, v, capacity_bytes) {
                spec.push(',');
                spec.push_str(&s);
            }
        }
        for k in ["read", "write"] {
            // Latency given without the command time, or the other way round: keep the
            // pair valid.
            let (cmd, lat) = (format!("{k}_cmd_us"), format!("{k}_latency_us"));
            if get(&cmd).is_some() && get(&lat).is_none() {
                let cfg_lat = value_of(&base.config, &lat, base.config.pages_per_block)?;
                let v = cfg_lat.max(get(&cmd).unwrap_or(0.0));
                spec.push_str(&format!(",{lat}={v:.3}"));
            }
        }
        if let Some(e) = get("erase_us") {
            // The erase time of the blocks this capacity gets (a small drive's have
            // fewer pages: see `SimConfig::parse`).
            let cfg =
                SimConfig::parse(&spec).map_err(|e| TwinError::Invalid(format!("{spec}: {e}")))?;
            let us = e * f64::from(cfg.pages_per_block) / f64::from(base.config.pages_per_block);
            spec.push_str(&format!(",erase_us={:.3}", us.max(0.001)));
        }
        Ok(spec)
    }

    /// The simulated drive of this point at `capacity_bytes`.
    pub fn config(&self, capacity_bytes: u64) -> Result<SimConfig, TwinError> {
        let spec = self.spec(capacity_bytes)?;
        SimConfig::parse(&spec).map_err(|e| TwinError::Invalid(format!("{spec}: {e}")))
    }
}
