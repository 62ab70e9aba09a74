//! The drive procedures: `consistency`, `season`, `trim-check` and `bench`.
//! Each writes DIR/result.json, per-second series (Parquet) and fio-style logs, and can
//! be continued after an interruption (Ctrl-C or kill -9) with `--resume DIR`.

use super::drive::{absolute, absolute_spec, drive, print_footer, DriveArgs};
use super::out::outln;
use super::values;
use super::UserError;
use anyhow::Context;
use std::path::{Path, PathBuf};
use std::time::Duration;
use storbench_suite::bench::{BenchConfig, DriveState, Workload};
use storbench_suite::consistency::{ConsistencyConfig, ConsistencySummary};
use storbench_suite::season::{SeasonConfig, SeasonSummary};
use storbench_suite::trimcheck::{TrimCheckConfig, TrimTable};
use storbench_suite::{Procedure, SuiteResult};

/// Options every procedure takes.
#[derive(clap::Args, Clone, Debug)]
pub struct Common {
    /// Target: `sim:PRESET[,key=value...]` (simulated SSD), a file, or a block device
    #[arg(
        long,
        short = 't',
        required_unless_present = "resume",
        conflicts_with = "resume"
    )]
    pub target: Option<String>,
    /// Result directory (created; must not hold another run)
    #[arg(
        long = "output",
        short = 'o',
        visible_alias = "out",
        value_name = "DIR",
        conflicts_with = "resume"
    )]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub drive: DriveArgs,
    /// Short parameters that finish in seconds on a small simulated drive
    #[arg(long)]
    pub quick: bool,
    /// File targets: create or extend the file to this size (e.g. 4g)
    #[arg(long, value_name = "SIZE", value_parser = values::size)]
    pub size: Option<u64>,
    /// File targets: allow writing over an existing file storbench did not create
    #[arg(long)]
    pub overwrite: bool,
    /// Block devices: the exact device whose data may be destroyed (e.g. /dev/sdX)
    #[arg(long, value_name = "DEVICE")]
    pub destroy_data: Option<PathBuf>,
    /// Cap on I/O buffer memory for a trace's large or many I/Os: past it, fewer I/Os
    /// in flight (noted); an I/O larger than the cap is refused [default: 512m]
    #[arg(long, value_name = "SIZE", value_parser = values::size)]
    pub buffer_memory: Option<u64>,
    /// Written data: random (incompressible, default), zeros, compressible:RATIO
    #[arg(long, default_value = "random", value_name = "KIND", value_parser = values::data)]
    pub data: storbench_engine::DataKind,
}

impl Common {
    pub(crate) fn data(&self) -> anyhow::Result<storbench_engine::DataKind> {
        Ok(self.data)
    }

    pub(crate) fn real_open(&self) -> anyhow::Result<storbench_suite::targets::RealOpen> {
        Ok(storbench_suite::targets::RealOpen {
            size_bytes: self.size,
            overwrite: self.overwrite,
            destroy_data: match &self.destroy_data {
                Some(d) => Some(absolute("--destroy-data", d)?),
                None => None,
            },
            buffer_memory_bytes: self.buffer_memory,
            ..Default::default()
        })
    }
}

fn user(message: String, hint: &str) -> anyhow::Error {
    anyhow::Error::new(UserError {
        message,
        hint: if hint.is_empty() {
            None
        } else {
            Some(hint.to_owned())
        },
    })
}

fn run_proc<P: Procedure>(
    c: &Common,
    make: impl FnOnce(&str) -> anyhow::Result<P>,
) -> anyhow::Result<(PathBuf, SuiteResult)> {
    drive::<P>(&c.drive, c.out.clone(), c.destroy_data.as_deref(), || {
        let target = c
            .target
            .as_deref()
            .expect("clap requires --target without --resume");
        make(&absolute_spec(target)?)
    })
}

// ---------------------------------------------------------------- consistency

#[derive(clap::Args)]
#[command(after_help = super::drive::EXIT_CODES)]
pub struct ConsistencyArgs {
    #[command(flatten)]
    pub common: Common,
    /// Tested span, e.g. 75% (= 25% spare area)
    #[arg(long, default_value = "100%", value_name = "PCT%", value_parser = values::fraction)]
    pub span: f64,
    /// Length of the random-write phase (30s, 2min, 1h; a bare number is seconds)
    /// [default: 2000s; --quick: 30s]
    #[arg(long, visible_alias = "duration", value_name = "TIME", value_parser = values::duration)]
    pub time: Option<Duration>,
    /// Queue depth of the random writes: I/Os kept in flight (1 to 4096)
    #[arg(long, default_value_t = 32)]
    pub qd: u32,
    /// Block size of the random writes (4k, 8k, 1.5k; a multiple of the logical block)
    #[arg(long, default_value = "4k", value_name = "SIZE", value_parser = values::size)]
    pub bs: u64,
    /// Sequential fill passes before the random writes (2 = SNIA variant)
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=2))]
    pub precondition_passes: u32,
    /// SNIA steady-state round length, at least 1s [default: 60s; --quick: 3s]
    #[arg(long, value_name = "TIME", value_parser = values::duration)]
    pub round: Option<Duration>,
    /// End the random writes once SNIA steady state is reached
    #[arg(long)]
    pub stop_at_steady_state: bool,
    /// Seed of the random offsets and written data: the same seed, the same I/O
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

pub fn run_consistency(a: ConsistencyArgs) -> anyhow::Result<()> {
    let (dir, r) = run_proc::<ConsistencyConfig>(&a.common, |t| {
        let mut c = if a.common.quick {
            ConsistencyConfig::quick(t)
        } else {
            ConsistencyConfig::new(t)
        };
        c.span_fraction = a.span;
        if let Some(d) = a.time {
            c.duration_ns = values::ns(d);
        }
        if let Some(d) = a.round {
            c.round_ns = values::ns(d);
            if c.round_ns < 1_000_000_000 {
                return Err(user(format!("--round {d:?}: must be at least 1s"), ""));
            }
        }
        c.qd = a.qd;
        c.block_bytes = a.bs;
        c.precondition_passes = a.precondition_passes;
        c.stop_at_steady_state = a.stop_at_steady_state;
        c.seed = a.seed;
        c.data = a.common.data()?;
        c.open = a.common.real_open()?;
        Ok(c)
    })?;
    let s: ConsistencySummary = serde_json::from_value(r.summary.clone())?;
    let bs = r.config["block_bytes"].as_u64().unwrap_or(4096);
    outln!(
        "consistency on {} ({:.0}% span, {:.0}% spare area): {} s of {} random writes",
        r.target.name,
        s.span_percent,
        s.spare_area_percent,
        s.iops_per_s.len(),
        storbench_suite::units::fmt_bytes(bs)
    )?;
    if let Some(sc) = &s.scores {
        outln!(
            "  last {} s: average {:.0} IOPS, std dev {:.0}, min {:.0}, avg/stddev {}",
            sc.window_s,
            sc.avg,
            sc.stddev,
            sc.min,
            sc.avg_over_stddev.map_or("-".into(), |v| format!("{v:.1}"))
        )?;
    }
    match s.steady_state_at_s {
        Some(t) => outln!(
            "  SNIA steady state reached at {t} s ({} s rounds)",
            s.round_s
        ),
        None => outln!("  SNIA steady state not reached ({} s rounds)", s.round_s),
    }?;
    print_footer(&dir, &r)?;
    Ok(())
}

// ---------------------------------------------------------------- season

#[derive(clap::Args)]
#[command(after_help = super::drive::EXIT_CODES)]
pub struct SeasonArgs {
    #[command(flatten)]
    pub common: Common,
    /// Disk image to restore (default: a generated one)
    #[arg(long, value_name = "FILE")]
    pub image: Option<PathBuf>,
    /// Share of the drive a generated image covers (below 100%)
    #[arg(long, default_value = "40%", value_name = "PCT%", value_parser = values::fraction)]
    pub image_fill: f64,
    /// Seed of a generated image: the same seed, the same image
    #[arg(long, default_value_t = 2009)]
    pub seed: u64,
    /// Sequential passes (2 = SNIA variant)
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=2))]
    pub passes: u32,
}

fn season_config(
    t: &str,
    image: &Option<PathBuf>,
    fill: f64,
    seed: u64,
    passes: u32,
) -> anyhow::Result<SeasonConfig> {
    let mut c = SeasonConfig::new(t);
    c.image = match image {
        Some(p) => Some(absolute("--image", p)?),
        None => None,
    };
    c.image_fill = fill;
    if c.image_fill >= 1.0 {
        return Err(user("--image-fill must be below 100%".into(), ""));
    }
    c.image_seed = seed;
    c.passes = passes;
    Ok(c)
}

pub fn run_season(a: SeasonArgs) -> anyhow::Result<()> {
    let (dir, r) = run_proc::<SeasonConfig>(&a.common, |t| {
        let mut c = season_config(t, &a.image, a.image_fill, a.seed, a.passes)?;
        c.data = a.common.data()?;
        c.open = a.common.real_open()?;
        Ok(c)
    })?;
    let s: SeasonSummary = serde_json::from_value(r.summary.clone())?;
    outln!(
        "seasoned {}: sequential pass at {:.1} MB/s, image {} restored ({:.2} GB in {} writes, {:.1} MB/s)",
        r.target.name,
        s.seq_pass_mb_per_s,
        s.image,
        s.image_bytes_restored as f64 / 1e9,
        s.image_writes,
        s.restore_mb_per_s
    )?;
    print_footer(&dir, &r)?;
    Ok(())
}

// ---------------------------------------------------------------- trim-check

#[derive(clap::Args)]
#[command(after_help = super::drive::EXIT_CODES)]
pub struct TrimCheckArgs {
    #[command(flatten)]
    pub common: Common,
    /// Time of 4 KB random writes that dirty the drive [default: 120m; --quick: 20s]
    #[arg(long, value_name = "TIME", value_parser = values::duration)]
    pub dirty_for: Option<Duration>,
    /// Share of the span each throughput measurement writes
    #[arg(long, default_value = "25%", value_name = "PCT%", value_parser = values::fraction)]
    pub measure: f64,
    /// Tested span, e.g. 75% (= 25% spare area)
    #[arg(long, default_value = "100%", value_name = "PCT%", value_parser = values::fraction)]
    pub span: f64,
    /// Queue depth of the 4 KB random writes that dirty the drive (seed 001: 32)
    #[arg(long, default_value_t = 32)]
    pub qd: u32,
    /// Idle time after the TRIM pass, before measuring (background erase)
    #[arg(long, default_value = "10s", value_name = "TIME", value_parser = values::duration)]
    pub settle: Duration,
    /// Seed of the random writes and written data: the same seed, the same I/O
    #[arg(long, default_value_t = 3)]
    pub seed: u64,
}

pub fn run_trim_check(a: TrimCheckArgs) -> anyhow::Result<()> {
    let (dir, r) = run_proc::<TrimCheckConfig>(&a.common, |t| {
        let mut c = if a.common.quick {
            TrimCheckConfig::quick(t)
        } else {
            TrimCheckConfig::new(t)
        };
        if let Some(d) = a.dirty_for {
            c.dirty_for_ns = values::ns(d);
        }
        c.measure_fraction = a.measure;
        c.span_fraction = a.span;
        c.settle_ns = values::ns(a.settle);
        c.seed = a.seed;
        c.qd = a.qd;
        c.data = a.common.data()?;
        c.open = a.common.real_open()?;
        Ok(c)
    })?;
    let t: TrimTable = serde_json::from_value(r.summary.clone())?;
    outln!("TRIM check on {} (sequential write, MB/s):", r.target.name)?;
    outln!("  {:>12} {:>12} {:>12}", "clean", "dirty", "after TRIM")?;
    outln!(
        "  {:>12.1} {:>12.1} {:>12.1}",
        t.clean_mb_per_s,
        t.dirty_mb_per_s,
        t.after_trim_mb_per_s
    )?;
    outln!(
        "  dirty = {:.0}% of clean, after TRIM = {:.0}% of clean",
        t.dirty_pct_of_clean,
        t.after_trim_pct_of_clean
    )?;
    if let Some(n) = &t.note {
        outln!("  note: {n}")?;
    }
    print_footer(&dir, &r)?;
    Ok(())
}

// ---------------------------------------------------------------- bench

#[derive(clap::Args)]
#[command(after_help = super::drive::EXIT_CODES)]
pub struct BenchArgs {
    /// A Parquet trace, or a profile name to synthesize (heavy-2011, light-2011, ...)
    #[arg(required_unless_present = "resume")]
    pub workload: Option<String>,
    #[command(flatten)]
    pub common: Common,
    /// Season the drive first (purge, sequential pass, a generated image's restore)
    #[arg(long, conflicts_with = "state")]
    pub season: bool,
    /// Drive state before the measured replay (2009 article): fresh (purge, the trace's
    /// image), seasoned (purge, 128 KB sequential pass, the image), used (seasoned,
    /// then the trace replayed --used-passes times), as-is (no preparation)
    #[arg(long, default_value = "as-is", value_parser = ["as-is", "fresh", "seasoned", "used"])]
    pub state: String,
    /// --state used: replays of the trace before the measured one
    #[arg(long, value_name = "N", default_value_t = storbench_suite::bench::DEFAULT_USED_PASSES)]
    pub used_passes: u32,
    /// Keep the trace's idle gaps up to this long (e.g. 1s) instead of cutting them all,
    /// so the drive can collect garbage; busy time still excludes them
    #[arg(long, value_name = "TIME", value_parser = values::duration)]
    pub max_idle: Option<Duration>,
    /// Do not replay the trace's TRIMs (Tom's Hardware's bench; a note counts them)
    #[arg(long)]
    pub no_trim: bool,
    /// Image for --season (default: a generated one)
    #[arg(long, value_name = "FILE", requires = "season")]
    pub image: Option<PathBuf>,
    /// Fold the trace onto this share of the drive (e.g. 75% = 25% spare area)
    #[arg(long, default_value = "100%", value_name = "PCT%", value_parser = values::fraction)]
    pub span: f64,
    /// Scale of a synthesized profile [default: 1; --quick: 0.002]
    #[arg(long)]
    pub scale: Option<f64>,
    /// Seed of a synthesized profile: the same seed, the same trace
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

pub fn run_bench(a: BenchArgs) -> anyhow::Result<()> {
    let (dir, r) = run_proc::<BenchConfig>(&a.common, |t| {
        let w = a
            .workload
            .as_deref()
            .expect("clap requires the workload without --resume");
        let workload = if Path::new(w).is_file() {
            let path = std::fs::canonicalize(w).with_context(|| format!("resolving {w}"))?;
            // Before any phase runs: a bad trace must not surface after hours of seasoning.
            storbench_trace::TraceReader::open(&path).map_err(super::import::trace_input_error)?;
            Workload::Trace { path }
        } else if storbench_workload::synth::builtin(w).is_some() || w.ends_with(".toml") {
            Workload::Profile {
                name: w.to_owned(),
                scale: a.scale.unwrap_or(if a.common.quick { 0.002 } else { 1.0 }),
                seed: a.seed,
            }
        } else {
            return Err(user(
                format!("{w}: neither a trace file nor a known profile"),
                "`storbench profiles` lists the profiles; `storbench import` makes a trace",
            ));
        };
        let mut c = BenchConfig::new(t, workload);
        c.span_fraction = a.span;
        if a.season {
            c.season = Some(season_config(t, &a.image, 0.4, 2009, 1)?);
            c.state = DriveState::Seasoned;
        } else {
            c.state = DriveState::parse(&a.state).expect("clap checks the state");
        }
        c.used_passes = a.used_passes;
        c.max_idle_ns = a.max_idle.map(values::ns);
        c.no_trim = a.no_trim;
        c.data = a.common.data()?;
        c.open = a.common.real_open()?;
        Ok(c)
    })?;
    let s: storbench_suite::bench::BenchSummary = serde_json::from_value(r.summary.clone())?;
    outln!(
        "trace bench on {} ({} drive, {} data): {}",
        r.target.name,
        s.state,
        s.data,
        s.trace
    )?;
    outln!(
        "  data rate {:.1} MB/s (read {:.1}, write {:.1}); busy {:.2} s",
        s.data_rate_mb_per_s,
        s.read_rate_mb_per_s,
        s.write_rate_mb_per_s,
        s.busy_s
    )?;
    outln!(
        "  service time: mean {:.1} us, std dev {:.1} us, p50 {:.1}, p99 {:.1}, p99.9 {:.1} us",
        s.service.mean_us,
        s.service.stddev_us,
        s.service.p50_us,
        s.service.p99_us,
        s.service.p99_9_us
    )?;
    outln!(
        "  {} reads ({:.2} GB), {} writes ({:.2} GB)",
        s.reads,
        s.bytes_read as f64 / 1e9,
        s.writes,
        s.bytes_written as f64 / 1e9
    )?;
    if let Some(c) = &s.replay_counters {
        if let (Some(h), Some(n)) = (c.host_write_bytes, c.nand_write_bytes) {
            outln!(
                "  replay alone: host writes {:.2} GB, NAND writes {:.2} GB, WA {}",
                h as f64 / 1e9,
                n as f64 / 1e9,
                c.write_amplification
                    .map_or("-".into(), |w| format!("{w:.2}"))
            )?;
        }
    }
    print_footer(&dir, &r)?;
    Ok(())
}
