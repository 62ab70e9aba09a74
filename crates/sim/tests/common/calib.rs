//! The published figures of METHODOLOGY "Timing" measured on a simulated drive through
//! the one engine loop (`run_phase`, as `storbench run` drives a target). Shared by
//! `tests/calibration.rs` and `examples/sim_calibrate.rs` (which prints the table of
//! docs/simulator.md).
#![allow(dead_code)]

use storbench_engine::{run_phase, NoObserver, Pacing, RunOptions, Target};
use storbench_metrics::PhaseMetrics;
use storbench_sim::{open_spec, SimSsd, State};
use storbench_trace::Op;
use storbench_workload::generator::{GenSpec, Generator, Limit, Mix, Pattern};

pub const NS: u64 = 1_000_000_000;
const K128: u64 = 128 << 10;

/// One figure: what it is, the published range, the simulated value.
pub struct Figure {
    pub name: &'static str,
    pub unit: &'static str,
    pub lo: f64,
    pub hi: f64,
    pub value: f64,
}

impl Figure {
    pub fn inside(&self) -> bool {
        self.value >= self.lo && self.value <= self.hi
    }

    pub fn line(&self) -> String {
        let hi = if self.hi.is_finite() {
            format!("{:.0}", self.hi)
        } else {
            "-".into()
        };
        format!(
            "{:<44} {:>8.0} {:<6} published {:>6.0} .. {:<6} {}",
            self.name,
            self.value,
            self.unit,
            self.lo,
            hi,
            if self.inside() { "inside" } else { "OUTSIDE" }
        )
    }
}

/// `qd` I/Os in flight from a generator until it ends or `time_limit_ns` passes.
pub fn phase(ssd: &mut SimSsd, spec: GenSpec, time_limit_ns: Option<u64>) -> PhaseMetrics {
    let qd = spec.qd;
    let mut g = Generator::new(spec).expect("generator");
    let mut o = RunOptions::new(Pacing::FixedQd(qd));
    o.time_limit_ns = time_limit_ns;
    let out = run_phase(ssd, &mut g, &o, &mut NoObserver).expect("run_phase");
    assert_eq!(out.metrics.errors, 0, "I/O errors");
    out.metrics
}

pub fn spec(pattern: Pattern, op: Op, block: u64, qd: u32, span: u64, limit: Limit) -> GenSpec {
    GenSpec {
        pattern,
        mix: match op {
            Op::Read => Mix::ReadWrite { read_pct: 100 },
            Op::Write => Mix::ReadWrite { read_pct: 0 },
            Op::Trim => Mix::Trim,
            Op::Flush => unreachable!(),
        },
        block_bytes: block,
        qd,
        span_start_bytes: 0,
        span_bytes: span,
        limit,
        seed: 7,
    }
}

/// IOPS of each whole second of a phase.
pub fn per_second(m: &PhaseMetrics) -> Vec<f64> {
    m.series
        .iter()
        .filter(|s| s.window_ns == NS)
        .map(|s| s.iops())
        .collect()
}

/// Steady-state 4 KB QD32 random writes over the first `span_fraction` of the drive:
/// the state built directly (`fast_state`), then `warm_s` seconds honest, then
/// `measure_s` seconds measured. Per-second IOPS of the measured part.
pub fn steady_random_writes(
    ssd: &mut SimSsd,
    span_fraction: f64,
    warm_s: u64,
    measure_s: u64,
) -> Vec<f64> {
    ssd.fast_state(State::SteadyStateRandom {
        span_fraction,
        writes_multiple: 2.0,
        seed: 3,
    })
    .unwrap();
    let cap = ssd.config().capacity_bytes;
    let span = (cap as f64 * span_fraction) as u64 / 4096 * 4096;
    let rand = spec(Pattern::Random, Op::Write, 4096, 32, span, Limit::None);
    phase(ssd, rand.clone(), Some(warm_s * NS));
    per_second(&phase(ssd, rand, Some(measure_s * NS)))
}

/// Every figure of METHODOLOGY "Timing" for a 2013-class SATA MLC client drive, each
/// measured as the sources measured it, on `drive` (a `sim:` spec). One drive is
/// purged or put in a state (`fast_state` purges first) between measurements.
#[allow(
    clippy::too_many_lines,
    reason = "the seed article's figure table, one entry per figure"
)]
pub fn sata_2013_figures(drive: &str) -> Vec<Figure> {
    let mut f = Vec::new();
    let mut fig = |name, unit, lo, hi, value| {
        f.push(Figure {
            name,
            unit,
            lo,
            hi,
            value,
        })
    };
    let len = 4u64 << 30;
    let seq = |op| spec(Pattern::Sequential, op, K128, 32, len, Limit::Bytes(len));
    // Fresh drive: 128 KB sequential writes then reads of what was written, QD32.
    let mut ssd = open_spec(drive).unwrap();
    let cap = ssd.config().capacity_bytes;
    let clean_mb_s = phase(&mut ssd, seq(Op::Write), None).write_rate_mb_per_s;
    let r = phase(&mut ssd, seq(Op::Read), None);
    fig(
        "128 KB sequential read, QD32",
        "MB/s",
        520.0,
        560.0,
        r.read_rate_mb_per_s,
    );
    fig(
        "128 KB sequential write, QD32",
        "MB/s",
        450.0,
        520.0,
        clean_mb_s,
    );
    // 4 KB random reads of written data (every LBA written once), QD32 and QD1.
    ssd.fast_state(State::SequentialFill).unwrap();
    let rand = |op, qd| spec(Pattern::Random, op, 4096, qd, cap, Limit::None);
    let r32 = phase(&mut ssd, rand(Op::Read, 32), Some(5 * NS));
    let r1 = phase(&mut ssd, rand(Op::Read, 1), Some(2 * NS));
    fig("4 KB random read, QD32", "IOPS", 80e3, 100e3, r32.iops);
    // 4 KB random writes on a fresh drive, QD32, 10 s.
    ssd.fast_state(State::Fresh).unwrap();
    let w = phase(&mut ssd, rand(Op::Write, 32), Some(10 * NS));
    fig("4 KB random write, QD32", "IOPS", 70e3, 90e3, w.iops);
    fig(
        "4 KB random read, QD1 (written data)",
        "IOPS",
        5e3,
        10e3,
        r1.iops,
    );
    // Consistency: steady state of 4 KB QD32 random writes over the whole span.
    let full = steady_random_writes(&mut ssd, 1.0, 20, 60);
    let mean = full.iter().sum::<f64>() / full.len() as f64;
    fig(
        "consistency, full span, steady-state average",
        "IOPS",
        10e3,
        15e3,
        mean,
    );
    let (after_trim_mb_s, spare_min) = trim_then_spare(&mut ssd, &seq(Op::Write));
    fig(
        "consistency, 25% spare area, minimum second",
        "IOPS",
        30e3,
        f64::INFINITY,
        spare_min,
    );
    fig(
        "TRIM: sequential write after TRIM, % of clean",
        "%",
        90.0,
        f64::INFINITY,
        100.0 * after_trim_mb_s / clean_mb_s,
    );
    f
}

/// On a dirty drive: TRIM it all, then the clean drive's sequential write (`seq`) again
/// (MB/s); then the lowest second of a steady state over 75% of the span (25% spare
/// area).
fn trim_then_spare(ssd: &mut SimSsd, seq: &GenSpec) -> (f64, f64) {
    let cap = ssd.config().capacity_bytes;
    let trim = spec(
        Pattern::Sequential,
        Op::Trim,
        1 << 30,
        1,
        cap,
        Limit::Bytes(cap),
    );
    phase(ssd, trim, None);
    let after = phase(ssd, seq.clone(), None).write_rate_mb_per_s;
    let spare = steady_random_writes(ssd, 0.75, 20, 60);
    (after, spare.iter().cloned().fold(f64::INFINITY, f64::min))
}

/// The drive behind a counting window: every time the drive's clock crosses a whole
/// second, its counters are taken (at the first `advance` past it), so a test can
/// check what the host and the NAND did over every window of a second or more.
pub struct Watched<'a> {
    pub ssd: &'a mut SimSsd,
    next_s: u64,
    /// (drive time, counters) at each second crossed.
    pub samples: Vec<(u64, storbench_sim::SimCounters)>,
}

impl<'a> Watched<'a> {
    pub fn new(ssd: &'a mut SimSsd) -> Watched<'a> {
        use storbench_engine::Target;
        let now = ssd.now_ns();
        let c = ssd.counters();
        Watched {
            next_s: now / NS + 1,
            samples: vec![(now, c)],
            ssd,
        }
    }
}

impl storbench_engine::Target for Watched<'_> {
    fn info(&self) -> &storbench_engine::TargetInfo {
        self.ssd.info()
    }
    fn now_ns(&self) -> u64 {
        self.ssd.now_ns()
    }
    fn max_in_flight(&self) -> usize {
        self.ssd.max_in_flight()
    }
    fn buffer(&mut self, slot: u32) -> Option<&mut [u8]> {
        self.ssd.buffer(slot)
    }
    fn submit(
        &mut self,
        reqs: &[storbench_engine::IoRequest],
    ) -> Result<(), storbench_engine::TargetError> {
        self.ssd.submit(reqs)
    }
    fn advance(
        &mut self,
        min_complete: usize,
        deadline_ns: Option<u64>,
        out: &mut Vec<storbench_engine::Completion>,
    ) -> Result<(), storbench_engine::TargetError> {
        self.ssd.advance(min_complete, deadline_ns, out)?;
        let now = self.ssd.now_ns();
        if now >= self.next_s * NS {
            self.samples.push((now, self.ssd.counters()));
            self.next_s = now / NS + 1;
        }
        Ok(())
    }
}

/// One window of [`flash_windows`]: its length, host and NAND bytes written, and
/// what the dies could program in it.
pub struct Window {
    pub start_ns: u64,
    pub len_ns: u64,
    pub host_bytes: u64,
    pub nand_bytes: u64,
    pub wa: f64,
    /// Host bytes the flash bound allows: (program bandwidth x window + write buffer +
    /// two superblocks of GC work counted but not yet done)
    /// / WA of the window.
    pub bound_bytes: f64,
}

/// From each sample, the window to the first later sample at least `span_s` seconds
/// of drive time on, with the flash bound of METHODOLOGY "Timing".
pub fn flash_windows(
    ssd: &SimSsd,
    samples: &[(u64, storbench_sim::SimCounters)],
    span_s: u64,
) -> Vec<Window> {
    let cfg = ssd.config();
    let prog_bytes_per_ns = cfg.flash_program_mbps() / 1000.0;
    // NAND bytes are counted when work is queued: at a window's end at most the write
    // buffer's programs and two victims' GC work (one queued on the dies, one put on
    // their timelines by the write that needed the next) are counted and not done.
    let queued = 2 * cfg.units_per_block() as u64 * storbench_sim::UNIT_BYTES;
    let buffer = (cfg.write_buffer_units as u64 * storbench_sim::UNIT_BYTES + queued) as f64;
    let mut out = Vec::new();
    for (i, (t0, c0)) in samples.iter().enumerate() {
        let Some((t1, c1)) = samples[i + 1..].iter().find(|(t, _)| t - t0 >= span_s * NS) else {
            break;
        };
        let host = c1.host_write_bytes - c0.host_write_bytes;
        let nand = c1.nand_write_bytes - c0.nand_write_bytes;
        if host == 0 {
            continue;
        }
        let wa = nand as f64 / host as f64;
        out.push(Window {
            start_ns: *t0,
            len_ns: t1 - t0,
            host_bytes: host,
            nand_bytes: nand,
            wa,
            bound_bytes: (prog_bytes_per_ns * (t1 - t0) as f64 + buffer) / wa,
        });
    }
    out
}

/// The figures datasheets give, measured on any preset (a fresh drive for sequential
/// and random writes, a filled one for reads, a steady state for sustained random
/// writes): (name, unit, value).
pub fn datasheet_figures(drive: &str) -> Vec<(&'static str, &'static str, f64)> {
    let mut ssd = open_spec(drive).unwrap();
    let cap = ssd.config().capacity_bytes;
    let len = (4u64 << 30).min(cap / 2);
    let seq = |op| spec(Pattern::Sequential, op, K128, 32, len, Limit::Bytes(len));
    let rand = |op, qd| spec(Pattern::Random, op, 4096, qd, cap, Limit::None);
    let w = phase(&mut ssd, seq(Op::Write), None).write_rate_mb_per_s;
    let r = phase(&mut ssd, seq(Op::Read), None).read_rate_mb_per_s;
    ssd.fast_state(State::SequentialFill).unwrap();
    // QD32; 4 x QD32 on NVMe, as its datasheet's figures are taken (QD32, 4 threads).
    let qd = if ssd.max_in_flight() >= 128 { 128 } else { 32 };
    let r32 = phase(&mut ssd, rand(Op::Read, qd), Some(2 * NS)).iops;
    let r1 = phase(&mut ssd, rand(Op::Read, 1), Some(NS)).iops;
    ssd.fast_state(State::Fresh).unwrap();
    let w32 = phase(&mut ssd, rand(Op::Write, qd), Some(2 * NS)).iops;
    let steady = steady_random_writes(&mut ssd, 1.0, 10, 30);
    let wa = ssd.counters().wa;
    vec![
        ("128 KB sequential read, QD32", "MB/s", r),
        ("128 KB sequential write, QD32", "MB/s", w),
        ("4 KB random read, QD32 (NVMe: 4 x QD32)", "IOPS", r32),
        (
            "4 KB random write, QD32 (NVMe: 4 x QD32), fresh",
            "IOPS",
            w32,
        ),
        ("4 KB random read, QD1", "IOPS", r1),
        (
            "4 KB random write, QD32, steady state",
            "IOPS",
            steady.iter().sum::<f64>() / steady.len() as f64,
        ),
        ("WA of the steady state (with fill)", "", wa),
    ]
}

/// The four figures of a named drive's datasheet measured as its footnotes say (see
/// [`storbench_sim::Datasheet`]): 128 KB sequential writes to a fresh drive and reads
/// of them (1 GiB), then 4 KB random reads of a filled drive and random writes to a
/// fresh one (2 s each), all QD32, over the datasheet's span. (seq read MB/s, seq
/// write MB/s, random read IOPS, random write IOPS.)
pub fn datasheet_measure(drive: &str, d: &storbench_sim::Datasheet) -> [f64; 4] {
    let mut ssd = open_spec(drive).unwrap();
    let cap = ssd.config().capacity_bytes;
    let len = 1u64 << 30;
    let seq = |op| spec(Pattern::Sequential, op, K128, 32, len, Limit::Bytes(len));
    let w = phase(&mut ssd, seq(Op::Write), None).write_rate_mb_per_s;
    let r = phase(&mut ssd, seq(Op::Read), None).read_rate_mb_per_s;
    let span = d.rand_span_bytes.unwrap_or(cap).min(cap) / 4096 * 4096;
    let rand = |op| spec(Pattern::Random, op, 4096, 32, span, Limit::None);
    ssd.fast_state(State::SequentialFill).unwrap();
    let r32 = phase(&mut ssd, rand(Op::Read), Some(2 * NS)).iops;
    ssd.fast_state(State::Fresh).unwrap();
    let w32 = phase(&mut ssd, rand(Op::Write), Some(2 * NS)).iops;
    [r, w, r32, w32]
}

/// One row of the calibration table of docs/simulator.md: a figure a source gives,
/// the preset's, and their ratio.
pub struct Calibration {
    pub figure: &'static str,
    pub source: &'static str,
    pub drive: String,
    pub published: f64,
    pub simulated: f64,
}

impl Calibration {
    pub fn ratio(&self) -> f64 {
        self.simulated / self.published
    }

    pub fn row(&self) -> String {
        format!(
            "| {} | {} | `{}` | {:.0} | {:.0} | {:.2} |",
            self.figure,
            self.source,
            self.drive,
            self.published,
            self.simulated,
            self.ratio()
        )
    }
}

/// Seed 001's figures for the named drives it shows: the Intel SSD 730's steady state
/// (about 15K IOPS) and its lowest second with 25% spare area (30K), the SanDisk
/// Extreme II's steady state (about 10K), each the mean (or least) second of 4 KB QD32
/// random writes after a direct steady state and `warm_s` honest seconds.
pub fn seed_001_named(warm_s: u64, measure_s: u64) -> Vec<Calibration> {
    let mut rows = Vec::new();
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let i730 = "sim:intel-730-480g";
    let full = steady_random_writes(&mut open_spec(i730).unwrap(), 1.0, warm_s, measure_s);
    rows.push(Calibration {
        figure: "Intel SSD 730 480 GB, steady state, 4 KB QD32 random writes, IOPS",
        source: "seed 001 (about 15K)",
        drive: i730.into(),
        published: 15_000.0,
        simulated: mean(&full),
    });
    let spare = steady_random_writes(&mut open_spec(i730).unwrap(), 0.75, warm_s, measure_s);
    rows.push(Calibration {
        figure: "Intel SSD 730 480 GB, 25% spare area, lowest second, IOPS",
        source: "seed 001 (a minimum of 30K)",
        drive: i730.into(),
        published: 30_000.0,
        simulated: spare.iter().cloned().fold(f64::INFINITY, f64::min),
    });
    // The Extreme II's cache fills by replaying writes (slow at 240 GB): 64 GiB with
    // its 240 GB superblocks (128 pages per block).
    let x2 = "sim:sandisk-extreme-ii-240g,capacity=64g,pages_per_block=128";
    let s = steady_random_writes(&mut open_spec(x2).unwrap(), 1.0, warm_s, measure_s);
    rows.push(Calibration {
        figure: "SanDisk Extreme II, steady state, 4 KB QD32 random writes, IOPS",
        source: "seed 001 (about 10K)",
        drive: x2.into(),
        published: 10_000.0,
        simulated: mean(&s),
    });
    rows
}
