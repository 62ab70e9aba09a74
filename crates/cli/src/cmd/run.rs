//! `storbench run`: a generator on a target, fio-style. Argument parsing and printing
//! only: the run is a procedure of one phase on the suite's runner
//! (`storbench_suite::run`), as `replay` and the drive procedures are. Also holds
//! what `run` and `replay` share: target options, value parsers, the summary.

use super::drive::{absolute, absolute_spec, drive, failed_ios, print_footer, DriveArgs};
use super::out::{outln, StdoutError};
use super::values;
use super::UserError;
use std::path::{Path, PathBuf};
use std::time::Duration;
use storbench_engine::{DataKind, TargetError};
use storbench_suite::run::RunConfig;
use storbench_suite::targets::RealOpen;
use storbench_suite::{PhaseRecord, SuiteResult};
use storbench_workload::generator::{Mix, SpanSpec};
use storbench_workload::units::fmt_bytes;

/// Options shared by `run` and `replay`.
#[derive(clap::Args, Clone, Debug)]
pub struct CommonArgs {
    /// Target: a block device path, `file:PATH`, a regular file path, or `sim:PRESET,...`
    #[arg(
        long,
        short = 't',
        required_unless_present = "resume",
        conflicts_with = "resume"
    )]
    pub target: Option<String>,
    /// Result directory (result.json, series.parquet, ios.parquet)
    #[arg(
        short = 'o',
        long = "output",
        value_name = "DIR",
        required_unless_present = "resume",
        conflicts_with = "resume"
    )]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub drive: DriveArgs,
    /// Size of a file target (created and preallocated if missing), e.g. 1g
    #[arg(long, value_name = "SIZE", value_parser = values::size)]
    pub size: Option<u64>,
    /// Allow writing to an existing file storbench did not create
    #[arg(long)]
    pub overwrite: bool,
    /// Allow writing to this block device even though it holds data (must name the target exactly)
    #[arg(long = "destroy-data", value_name = "/dev/EXACT")]
    pub destroy_data: Option<PathBuf>,
    /// Written data: random (incompressible, default), zeros, compressible:RATIO
    #[arg(long, default_value = "random", value_name = "KIND", value_parser = values::data)]
    pub data: DataKind,
    /// Seed of the random offsets and written data: the same seed, the same I/O
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// I/O backend for real targets
    #[arg(long, value_enum, default_value = "auto")]
    pub backend: values::Backend,
    /// Log every I/O to DIR/ios.parquet
    #[arg(long = "log-ios")]
    pub log_ios: bool,
    /// Buffered I/O on file targets (no O_DIRECT)
    #[arg(long = "no-direct")]
    pub no_direct: bool,
    /// Cap on I/O buffer memory for a trace's large or many I/Os: past it, fewer I/Os
    /// in flight (noted); an I/O larger than the cap is refused [default: 512m]
    #[arg(long, value_name = "SIZE", value_parser = values::size)]
    pub buffer_memory: Option<u64>,
}

impl CommonArgs {
    /// The target spec (absolute path for files and devices).
    pub(crate) fn target(&self) -> anyhow::Result<String> {
        absolute_spec(
            self.target
                .as_deref()
                .expect("clap requires --target without --resume"),
        )
    }

    /// How to open a real target for a run that `writes` (or not), with `slots` I/Os
    /// in flight of at most `buffer_bytes` each.
    pub(crate) fn real_open(
        &self,
        writes: bool,
        slots: usize,
        buffer_bytes: usize,
    ) -> anyhow::Result<RealOpen> {
        Ok(RealOpen {
            size_bytes: self.size,
            overwrite: self.overwrite,
            destroy_data: self
                .destroy_data
                .as_deref()
                .map(|d| absolute("--destroy-data", d))
                .transpose()?,
            write: writes,
            max_in_flight: Some(slots),
            buffer_bytes: Some(buffer_bytes),
            backend: Some(self.backend.name()),
            buffered: self.no_direct,
            buffer_memory_bytes: Some(self.buffer_memory_bytes()?),
        })
    }

    /// `--buffer-memory` in bytes (default `DEFAULT_BUFFER_MEMORY_BYTES`).
    pub(crate) fn buffer_memory_bytes(&self) -> anyhow::Result<u64> {
        match self.buffer_memory {
            None => Ok(storbench_engine::DEFAULT_BUFFER_MEMORY_BYTES),
            Some(0) => Err(user(
                "--buffer-memory 0: no I/O fits in no memory",
                Some("give a size, e.g. --buffer-memory 1g"),
            )),
            Some(n) => Ok(n),
        }
    }
}

pub(crate) fn user(message: impl Into<String>, hint: Option<&str>) -> anyhow::Error {
    anyhow::Error::new(UserError {
        message: message.into(),
        hint: hint.map(str::to_string),
    })
}

/// Typed errors of a target become user errors where the user can fix them.
pub(crate) fn target_err(e: TargetError) -> anyhow::Error {
    match e {
        TargetError::Refused { message, hint } => user(message, Some(&hint)),
        TargetError::Invalid(m) => user(m, None),
        // A path that does not exist or may not be opened is the user's to fix.
        TargetError::Io { context, source } if source.kind() == std::io::ErrorKind::NotFound => {
            user(
                format!("{context}: {source}"),
                Some("check the path: storbench creates a target file, not its directory"),
            )
        }
        TargetError::Io { context, source }
            if source.kind() == std::io::ErrorKind::PermissionDenied =>
        {
            user(
                format!("{context}: {source}"),
                Some("block devices need root; a file target needs write permission"),
            )
        }
        other => anyhow::Error::new(other),
    }
}

pub(crate) fn parse_data(s: &str) -> anyhow::Result<DataKind> {
    match s {
        "random" => Ok(DataKind::Random),
        "zeros" => Ok(DataKind::Zeros),
        _ => {
            if let Some(r) = s.strip_prefix("compressible:") {
                let v: f64 = r.parse().map_err(|_| {
                    user(
                        format!("--data {s}: `{r}` is not a number"),
                        Some("e.g. --data compressible:2"),
                    )
                })?;
                if !(v >= 1.0 && v.is_finite()) {
                    return Err(user(
                        format!("--data {s}: the ratio must be at least 1"),
                        None,
                    ));
                }
                Ok(DataKind::Compressible(v))
            } else {
                Err(user(
                    format!("--data {s}: unknown kind"),
                    Some("use random, zeros or compressible:RATIO"),
                ))
            }
        }
    }
}

/// What `run` and `replay` print: the phase's figures, then the common footer.
pub(crate) fn print_summary(r: &SuiteResult, dir: &Path) -> Result<(), StdoutError> {
    let Some(p) = r.phases.first() else {
        return Ok(());
    };
    print_phase(r, p)?;
    let ios = dir.join(storbench_report::IOS_FILE);
    if ios.is_file() {
        outln!("every I/O: {}", ios.display())?;
    }
    print_footer(dir, r)
}

fn print_phase(r: &SuiteResult, p: &PhaseRecord) -> Result<(), StdoutError> {
    let m = &p.metrics;
    let jobs = match p.job_ios_issued.len() {
        0 | 1 => String::new(),
        n => format!(", {n} jobs"),
    };
    outln!(
        "{} on {} ({}, {}{jobs}): {:.2} s",
        r.procedure,
        r.target.name,
        kind_str(&r.target),
        r.target.backend,
        m.elapsed_ns as f64 / 1e9,
    )?;
    outln!(
        "  I/Os: {} read, {} write, {} trim, {} flush, {} errors",
        m.read_ios,
        m.write_ios,
        m.trim_ios,
        m.flush_ios,
        m.errors
    )?;
    outln!(
        "  IOPS {:.0}   data rate {:.1} MB/s (read {:.1}, write {:.1})   busy {:.2} s   avg QD {:.1}{}",
        m.iops,
        m.data_rate_mb_per_s,
        m.read_rate_mb_per_s,
        m.write_rate_mb_per_s,
        m.busy_ns as f64 / 1e9,
        m.qd.mean_over_busy,
        if jobs.is_empty() { "" } else { " per job" }
    )?;
    let s = &m.service;
    if s.count > 0 {
        outln!(
            "  service time µs: mean {:.1}  sd {:.1}  min {:.1}  p50 {:.1}  p99 {:.1}  p99.9 {:.1}  max {:.1}",
            s.mean_us, s.stddev_us, s.min_us, s.p50_us, s.p99_us, s.p99_9_us, s.max_us
        )?;
    }
    let Some(f) = &p.fidelity else {
        return Ok(());
    };
    match f.mode.as_str() {
        "timed" => {
            if let (Some(p50), Some(p99)) = (f.issue_error_p50_ns, f.issue_error_p99_ns) {
                outln!(
                    "  timed fidelity: issue error p50 {:.1} µs, p99 {:.1} µs, drift {:.4}%",
                    p50 as f64 / 1e3,
                    p99 as f64 / 1e3,
                    f.drift_pct.unwrap_or(0.0)
                )?;
            }
        }
        _ => {
            if let (Some(t), Some(rq)) = (f.trace_avg_qd, f.replayed_avg_qd) {
                outln!("  queue depth: trace avg {t:.2}, replayed avg {rq:.2}")?;
            }
        }
    }
    Ok(())
}

fn kind_str(t: &storbench_engine::TargetInfo) -> &'static str {
    match t.kind {
        storbench_engine::TargetKind::File => "file",
        storbench_engine::TargetKind::BlockDevice => "block device",
        storbench_engine::TargetKind::Sim => "simulated",
        storbench_engine::TargetKind::Test => "test",
    }
}

#[derive(clap::Args)]
#[command(after_help = super::drive::EXIT_CODES)]
pub struct Args {
    #[command(flatten)]
    pub common: CommonArgs,
    /// I/O pattern; rw and randrw take :READ_PCT (randrw:70 = 70% reads)
    #[arg(long, default_value = "randread", value_name = "PATTERN[:READ_PCT]",
        value_parser = values::RwParser)]
    pub rw: values::Rw,
    /// Block size of every I/O (4k, 128k, 1m; a multiple of the target's logical block)
    #[arg(long, default_value = "4k", value_name = "SIZE", value_parser = values::size)]
    pub bs: u64,
    /// Queue depth: I/Os kept in flight, per job (1 to 4096)
    #[arg(long, default_value_t = 32)]
    pub qd: u32,
    /// Jobs run at once, each with its own ring, buffers and --qd in flight, as fio's
    /// numjobs: random offsets from a seed of each job's own, sequential I/O over each
    /// job's slice of the region (1 to 256)
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub jobs: u32,
    /// Region: bytes (1g) or percent of capacity (75%), from --offset
    #[arg(long, value_name = "SIZE|PCT%", value_parser = values::span)]
    pub span: Option<SpanSpec>,
    /// Start of the region
    #[arg(long, default_value = "0", value_name = "SIZE", value_parser = values::size)]
    pub offset: u64,
    /// Run this long (250us, 10s, 2min, 1h; a bare number is seconds)
    #[arg(long, visible_alias = "duration", conflicts_with = "bytes", value_name = "TIME",
        value_parser = values::duration)]
    pub time: Option<Duration>,
    /// Move this many bytes (1g); without --time or --bytes, one pass over the span
    #[arg(long, value_name = "SIZE", value_parser = values::size)]
    pub bytes: Option<u64>,
}

/// The run's configuration from the command line.
fn config(args: &Args) -> anyhow::Result<RunConfig> {
    let values::Rw { pattern, mix } = args.rw;
    let bs = args.bs;
    if bs == 0 || bs > storbench_suite::run::MAX_BLOCK_BYTES {
        return Err(user(
            format!("--bs {}: must be between 1 byte and 64m", fmt_bytes(bs)),
            None,
        ));
    }
    if args.qd == 0 || args.qd > storbench_suite::run::MAX_QD {
        return Err(user(
            format!("--qd {}: must be between 1 and 4096", args.qd),
            None,
        ));
    }
    let time_limit_ns = args.time.map(values::ns);
    if time_limit_ns == Some(0) {
        return Err(user(
            "--time 0: a run of no time does no work",
            Some("give a duration, e.g. --time 10s"),
        ));
    }
    let bytes_limit = args.bytes;
    if bytes_limit == Some(0) {
        return Err(user(
            "--bytes 0: a run of no bytes does no work",
            Some("give a size, e.g. --bytes 1g, or leave it out for one pass over the span"),
        ));
    }
    storbench_suite::units::check_jobs(args.jobs).map_err(|e| user(e.to_string(), None))?;
    let span = args.span;
    let c = &args.common;
    let mut cfg = RunConfig::new(&c.target()?);
    // Slots for every job's I/Os: a simulated drive or virtual target runs the jobs
    // in one loop (a file or device gives each job buffers of its own).
    cfg.open = c.real_open(
        !matches!(mix, Mix::ReadWrite { read_pct: 100 }),
        (args.qd as usize * args.jobs as usize).min(4096),
        bs as usize,
    )?;
    cfg.jobs = args.jobs;
    cfg.pattern = pattern;
    cfg.mix = mix;
    cfg.block_bytes = bs;
    cfg.qd = args.qd;
    cfg.offset_bytes = args.offset;
    cfg.span = span;
    cfg.time_limit_ns = time_limit_ns;
    cfg.bytes_limit = bytes_limit;
    cfg.seed = c.seed;
    cfg.data = c.data;
    cfg.log_ios = c.log_ios;
    Ok(cfg)
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let c = &args.common;
    let (dir, r) = drive::<RunConfig>(
        &c.drive,
        c.output.clone(),
        c.destroy_data.as_deref(),
        || config(&args),
    )?;
    // The run's own status first: a closed stdout does not hide failed I/Os.
    let printed = print_summary(&r, &dir);
    failed_ios(&r, &dir)?;
    Ok(printed?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_data() {
        assert!(
            matches!(parse_data("compressible:2").unwrap(), DataKind::Compressible(r) if r == 2.0)
        );
        assert!(parse_data("compressible:0.5").is_err());
    }
}
