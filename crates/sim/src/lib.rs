//! storbench-sim: a simulated SSD (page-mapped FTL in virtual time) that implements
//! [`storbench_core::Target`]. It never opens a file descriptor and never reads the
//! wall clock; the same seed gives the same result bit for bit.
//!
//! ```
//! use storbench_sim::open_spec;
//! let ssd = open_spec("sim:sata-mlc-2013,capacity=1g,seed=3,victim=greedy").unwrap();
//! assert_eq!(ssd.config().capacity_bytes, 1 << 30);
//! ```

mod config;
mod ftl;
mod ssd;

pub use config::{
    preset, presets, CellType, Datasheet, GcMode, Interface, NandTiming, Preset, SimConfig,
    SimError, SlcFull, VictimPolicy, KEYS, MIN_BLOCKS, OP_TOLERANCE, SECTOR_BYTES, UNIT_BYTES,
};
pub use ftl::{SimCounters, SlotCensus};
pub use ssd::{open_spec, Precondition, SimSsd, State};

/// Theory (METHODOLOGY section 6): WA of uniform random single-page writes with FIFO
/// victims at alpha = physical / user pages. Solves u = exp(-alpha (1 - u)) by
/// fixed-point iteration from below the root; WA = 1 / (1 - u).
pub fn wa_fifo_theory(alpha: f64) -> f64 {
    assert!(alpha > 1.0, "alpha must exceed 1, got {alpha}");
    // g(u) = ln u + alpha (1 - u) is concave, g(1) = 0 (the trivial root), maximal at
    // u = 1/alpha where g > 0, and -> -inf at 0: the wanted root lies in (0, 1/alpha).
    let g = |u: f64| u.ln() + alpha * (1.0 - u);
    let (mut a, mut b) = (1e-300f64, 1.0 / alpha);
    for _ in 0..2000 {
        let m = 0.5 * (a + b);
        if g(m) < 0.0 {
            a = m;
        } else {
            b = m;
        }
        if b - a < 1e-15 {
            break;
        }
    }
    1.0 / (1.0 - 0.5 * (a + b))
}

/// Theory: WA with random victim selection, alpha / (alpha - 1).
pub fn wa_random_theory(alpha: f64) -> f64 {
    assert!(alpha > 1.0);
    alpha / (alpha - 1.0)
}
