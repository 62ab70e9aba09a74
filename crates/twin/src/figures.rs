//! The figures a measurement yields: one number per (phase, statistic), the same for a
//! drive measured by `storbench twin measure` and for a candidate simulated drive the
//! fit runs the plan on.

use storbench_metrics::PhaseMetrics;

/// Which statistic of a phase a figure is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stat {
    ReadMbPerS,
    WriteMbPerS,
    Iops,
    ReadMeanUs,
    ReadP99Us,
    WriteMeanUs,
    WriteP99Us,
}

/// A figure's definition.
#[derive(Clone, Copy, Debug)]
pub struct FigureDef {
    pub name: &'static str,
    pub unit: &'static str,
    pub phase: &'static str,
    pub stat: Stat,
    /// Relative noise of the figure between two runs on a real drive (its weight in
    /// the fit: residuals are log ratios over this).
    pub noise: f64,
}

const fn fig(
    name: &'static str,
    unit: &'static str,
    phase: &'static str,
    stat: Stat,
    noise: f64,
) -> FigureDef {
    FigureDef {
        name,
        unit,
        phase,
        stat,
        noise,
    }
}

/// Every figure the plan measures, in the order reports show them.
pub const FIGURES: &[FigureDef] = &[
    fig(
        "seq_write_lead_mb_per_s",
        "MB/s",
        "seq-write-lead",
        Stat::WriteMbPerS,
        0.02,
    ),
    fig(
        "seq_write_head_mb_per_s",
        "MB/s",
        "seq-write-head",
        Stat::WriteMbPerS,
        0.02,
    ),
    fig(
        "seq_write_mb_per_s",
        "MB/s",
        "seq-write",
        Stat::WriteMbPerS,
        0.02,
    ),
    fig(
        "seq_read_mb_per_s",
        "MB/s",
        "seq-read",
        Stat::ReadMbPerS,
        0.02,
    ),
    fig("rand_read_qd1_iops", "IOPS", "read-qd1", Stat::Iops, 0.02),
    fig(
        "rand_read_qd1_p99_us",
        "us",
        "read-qd1",
        Stat::ReadP99Us,
        0.05,
    ),
    fig(
        "rand_read_128k_qd1_mb_per_s",
        "MB/s",
        "read-128k-qd1",
        Stat::ReadMbPerS,
        0.02,
    ),
    fig("rand_read_qd4_iops", "IOPS", "read-qd4", Stat::Iops, 0.02),
    fig("rand_read_qd32_iops", "IOPS", "read-qd32", Stat::Iops, 0.02),
    fig(
        "rand_read_qd32_p99_us",
        "us",
        "read-qd32",
        Stat::ReadP99Us,
        0.05,
    ),
    fig("rand_write_qd1_iops", "IOPS", "write-qd1", Stat::Iops, 0.02),
    fig(
        "rand_write_qd1_p99_us",
        "us",
        "write-qd1",
        Stat::WriteP99Us,
        0.05,
    ),
    fig("rand_write_qd4_iops", "IOPS", "write-qd4", Stat::Iops, 0.02),
    fig(
        "rand_write_qd32_iops",
        "IOPS",
        "write-qd32",
        Stat::Iops,
        0.02,
    ),
    fig(
        "rand_write_qd32_p99_us",
        "us",
        "write-qd32",
        Stat::WriteP99Us,
        0.05,
    ),
    fig("mixed_read_mean_us", "us", "mixed", Stat::ReadMeanUs, 0.03),
    fig("mixed_read_p99_us", "us", "mixed", Stat::ReadP99Us, 0.05),
    fig(
        "mixed_write_mean_us",
        "us",
        "mixed",
        Stat::WriteMeanUs,
        0.03,
    ),
    fig("steady_full_iops", "IOPS", "steady-full", Stat::Iops, 0.03),
    fig(
        "steady_full_p99_us",
        "us",
        "steady-full",
        Stat::WriteP99Us,
        0.05,
    ),
    fig(
        "mixed_steady_read_mean_us",
        "us",
        "mixed-steady",
        Stat::ReadMeanUs,
        0.03,
    ),
    fig(
        "mixed_steady_read_p99_us",
        "us",
        "mixed-steady",
        Stat::ReadP99Us,
        0.05,
    ),
    fig(
        "mixed_steady_write_mean_us",
        "us",
        "mixed-steady",
        Stat::WriteMeanUs,
        0.03,
    ),
    fig("steady_half_iops", "IOPS", "steady-half", Stat::Iops, 0.03),
    fig(
        "trim_recovery_mb_per_s",
        "MB/s",
        "trim-recovery",
        Stat::WriteMbPerS,
        0.03,
    ),
];

impl FigureDef {
    /// The figure from its phase's metrics.
    pub fn of(&self, m: &PhaseMetrics) -> f64 {
        match self.stat {
            Stat::ReadMbPerS => m.read_rate_mb_per_s,
            Stat::WriteMbPerS => m.write_rate_mb_per_s,
            Stat::Iops => m.iops,
            Stat::ReadMeanUs => m.service_read.mean_us,
            Stat::ReadP99Us => m.service_read.p99_us,
            Stat::WriteMeanUs => m.service_write.mean_us,
            Stat::WriteP99Us => m.service_write.p99_us,
        }
    }
}

pub use storbench_results::twin::Figure;

/// Every figure of [`FIGURES`] whose phase `phase` finds, in that order.
pub fn figures<'a>(phase: impl Fn(&str) -> Option<&'a PhaseMetrics>) -> Vec<Figure> {
    FIGURES
        .iter()
        .filter_map(|d| {
            phase(d.phase).map(|m| Figure {
                name: d.name.into(),
                unit: d.unit.into(),
                value: d.of(m),
            })
        })
        .collect()
}

/// The definition of the figure called `name`.
pub fn def(name: &str) -> Option<&'static FigureDef> {
    FIGURES.iter().find(|d| d.name == name)
}
