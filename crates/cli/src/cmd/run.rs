//! `storbench run`: a generator on a target, fio-style. Also holds what `run` and
//! `replay` share: opening targets, the Ctrl-C flag, progress, result files, summary.

use super::UserError;
use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use storbench_engine::{
    open_real, run_phase, BackendChoice, DataKind, EngineError, Observer, OpenOptions, Pacing,
    PhaseOutcome, RunOptions, Target, TargetError, TargetSpec,
};
use storbench_metrics::SecondSample;
use storbench_report::{IoLogWriter, PhaseResult, RunResult};
use storbench_trace::{IoRecord, TraceMeta};
use storbench_workload::generator::{
    parse_size, GenSpec, Generator, Limit, Mix, Pattern, SpanSpec,
};
use storbench_workload::Source;

/// Options shared by `run` and `replay`.
#[derive(clap::Args, Clone, Debug)]
pub struct CommonArgs {
    /// Target: a block device path, `file:PATH`, a regular file path, or `sim:PRESET,...`
    #[arg(long)]
    pub target: String,
    /// Result directory (result.json, series.parquet, ios.parquet)
    #[arg(short = 'o', long = "output")]
    pub output: PathBuf,
    /// Size of a file target (created and preallocated if missing), e.g. 1g
    #[arg(long)]
    pub size: Option<String>,
    /// Allow writing to an existing file storbench did not create
    #[arg(long)]
    pub overwrite: bool,
    /// Allow writing to this block device even though it holds data (must name the target exactly)
    #[arg(long = "destroy-data", value_name = "/dev/EXACT")]
    pub destroy_data: Option<PathBuf>,
    /// Written data: random (incompressible, default), zeros, compressible:RATIO
    #[arg(long, default_value = "random")]
    pub data: String,
    /// Seed of generators and written data
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// I/O backend for real targets: auto, io_uring, io_uring-async, threads
    #[arg(long, default_value = "auto")]
    pub backend: String,
    /// Log every I/O to DIR/ios.parquet
    #[arg(long = "log-ios")]
    pub log_ios: bool,
    /// Buffered I/O on file targets (no O_DIRECT)
    #[arg(long = "no-direct")]
    pub no_direct: bool,
}

fn user(message: impl Into<String>, hint: Option<&str>) -> anyhow::Error {
    anyhow::Error::new(UserError {
        message: message.into(),
        hint: hint.map(str::to_string),
    })
}

/// Typed errors of the engine become user errors where the user can fix them.
pub(crate) fn engine_err(e: EngineError) -> anyhow::Error {
    match e {
        EngineError::Target(t) => target_err(t),
        EngineError::Invalid(m) => user(m, None),
        EngineError::Source(s) => anyhow::Error::new(s),
    }
}

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

pub(crate) fn size_arg(flag: &str, s: &str) -> anyhow::Result<u64> {
    parse_size(s).map_err(|e| user(format!("{flag}: {e}"), Some("sizes look like 4k, 128k, 1g")))
}

/// Parse `10s`, `500ms`, `2m`, `1h`, `1.5s`, `250us`; a bare number is seconds.
pub(crate) fn parse_duration_ns(flag: &str, s: &str) -> anyhow::Result<u64> {
    let t = s.trim();
    let (num, mult) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1e6)
    } else if let Some(n) = t.strip_suffix("us") {
        (n, 1e3)
    } else if let Some(n) = t.strip_suffix("ns") {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1e9)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60e9)
    } else if let Some(n) = t.strip_suffix('h') {
        (n, 3600e9)
    } else {
        (t, 1e9)
    };
    let v: f64 = num.parse().map_err(|_| {
        user(
            format!("{flag} {s}: not a duration"),
            Some("durations look like 10s, 500ms, 2m"),
        )
    })?;
    if !(v >= 0.0 && v.is_finite()) {
        return Err(user(
            format!("{flag} {s}: must be a positive duration"),
            None,
        ));
    }
    Ok((v * mult) as u64)
}

/// Open the target of `common`. `write`: the workload writes or trims.
pub(crate) fn open_target(
    common: &CommonArgs,
    write: bool,
    max_in_flight: usize,
    buffer_bytes: usize,
) -> anyhow::Result<Box<dyn Target>> {
    let spec = TargetSpec::parse(&common.target).map_err(target_err)?;
    if let TargetSpec::Sim(s) = &spec {
        let ssd = storbench_sim::open_spec(s).map_err(|e| {
            user(
                format!("--target {s}: {e}"),
                Some("see `storbench sim` for presets"),
            )
        })?;
        return Ok(Box::new(ssd));
    }
    if let Some(t) = spec.open_test(max_in_flight) {
        return Ok(Box::new(t));
    }
    let backend = BackendChoice::parse(&common.backend).ok_or_else(|| {
        user(
            format!("--backend {}: unknown", common.backend),
            Some("use auto, io_uring, io_uring-async or threads"),
        )
    })?;
    let size_bytes = common
        .size
        .as_deref()
        .map(|s| size_arg("--size", s))
        .transpose()?;
    let o = OpenOptions {
        write,
        size_bytes,
        overwrite: common.overwrite,
        destroy_data: common.destroy_data.clone(),
        max_in_flight,
        buffer_bytes,
        backend,
        direct: !common.no_direct,
    };
    let t = open_real(&spec, &o).map_err(target_err)?;
    Ok(Box::new(t))
}

/// Progress bar (on a terminal) and ios.parquet writer.
pub(crate) struct CliObserver {
    bar: Option<ProgressBar>,
    by_time_ns: Option<u64>,
    total_ios: Option<u64>,
    ios: Option<IoLogWriter>,
    io_error: Option<anyhow::Error>,
}

impl CliObserver {
    pub(crate) fn new(
        total_ios: Option<u64>,
        time_limit_ns: Option<u64>,
        ios: Option<IoLogWriter>,
    ) -> CliObserver {
        let bar = std::io::stderr().is_terminal().then(|| {
            let (len, style) = match (time_limit_ns, total_ios) {
                (Some(t), _) => (
                    t / 1_000_000,
                    "{spinner} [{elapsed_precise}] {wide_bar} {percent}% {msg} ETA {eta}",
                ),
                (None, Some(n)) => (
                    n,
                    "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} I/Os {msg} ETA {eta}",
                ),
                (None, None) => (0, "{spinner} [{elapsed_precise}] {pos} I/Os {msg}"),
            };
            let b = if len > 0 {
                ProgressBar::new(len)
            } else {
                ProgressBar::no_length()
            };
            b.set_style(
                ProgressStyle::with_template(style)
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            b
        });
        CliObserver {
            bar,
            by_time_ns: time_limit_ns,
            total_ios,
            ios,
            io_error: None,
        }
    }

    fn finish(mut self) -> anyhow::Result<Option<u64>> {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
        if let Some(e) = self.io_error.take() {
            return Err(e);
        }
        match self.ios.take() {
            Some(w) => Ok(Some(w.finish().context("finishing ios.parquet")?)),
            None => Ok(None),
        }
    }
}

impl Observer for CliObserver {
    fn on_io(&mut self, io: &IoRecord) {
        if self.io_error.is_some() {
            return;
        }
        if let Some(w) = self.ios.as_mut() {
            let r = match io.complete_ns {
                Some(_) => w.write(io, true),
                None => w.write(
                    &IoRecord {
                        complete_ns: Some(io.issue_ns),
                        ..*io
                    },
                    false,
                ),
            };
            if let Err(e) = r {
                self.io_error = Some(anyhow::Error::new(e).context("writing ios.parquet"));
            }
        }
    }

    fn on_tick(&mut self, elapsed_ns: u64, done_ios: u64, series: &[SecondSample]) {
        if let Some(b) = &self.bar {
            match (self.by_time_ns, self.total_ios) {
                (Some(t), _) => b.set_position((elapsed_ns / 1_000_000).min(t / 1_000_000)),
                _ => b.set_position(done_ios),
            }
            if let Some(s) = series.last() {
                b.set_message(format!("{:.0} IOPS", s.iops()));
            }
        }
    }
}

/// Ctrl-C / SIGTERM set this flag (nothing else runs in the handler).
pub(crate) fn stop_flag() -> anyhow::Result<Arc<AtomicBool>> {
    let flag = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, Arc::clone(&flag))
            .context("installing the signal handler")?;
    }
    Ok(flag)
}

/// Everything a run or replay needs besides the target and source.
pub(crate) struct Job<'a> {
    pub procedure: &'a str,
    pub phase: &'a str,
    pub common: &'a CommonArgs,
    pub opts: RunOptions,
    pub options: BTreeMap<String, String>,
    pub trace: Option<serde_json::Value>,
    pub ios_meta: TraceMeta,
}

/// Run one phase and write the result files; print a summary.
pub(crate) fn execute(
    job: Job<'_>,
    target: &mut dyn Target,
    source: &mut dyn Source,
) -> anyhow::Result<()> {
    let mut opts = job.opts;
    opts.stop = Some(stop_flag()?);
    opts.log_ios = job.common.log_ios;
    let dir = &job.common.output;
    std::fs::create_dir_all(dir)
        .with_context(|| format!("creating result directory {}", dir.display()))?;
    let ios = if job.common.log_ios {
        Some(IoLogWriter::create(dir, &job.ios_meta).context("creating ios.parquet")?)
    } else {
        None
    };
    let mut obs = CliObserver::new(source.total_ios(), opts.time_limit_ns, ios);
    let outcome = run_phase(target, source, &opts, &mut obs);
    let logged = obs.finish()?;
    let outcome = outcome.map_err(engine_err)?;

    let mut r = RunResult::new(
        job.procedure,
        target.info().clone(),
        std::env::args().collect(),
    );
    r.options = job.options;
    r.trace = job.trace;
    r.complete = outcome.complete;
    r.phases.push(phase_result(job.phase, &outcome));
    if !outcome.complete {
        r.notes.push("interrupted: stopped submitting, drained in-flight I/O; results cover the part that ran".into());
    }
    if let Some(e) = &outcome.first_error {
        r.notes.push(format!(
            "{} I/Os failed; first: {e}",
            outcome.metrics.errors
        ));
    }
    storbench_report::write_result(dir, &r).context("writing result files")?;
    print_summary(&r, &outcome, dir, logged);
    Ok(())
}

pub(crate) fn phase_result(name: &str, o: &PhaseOutcome) -> PhaseResult {
    let mut info = BTreeMap::new();
    info.insert(
        "fidelity".to_string(),
        serde_json::to_value(&o.fidelity).unwrap_or_default(),
    );
    info.insert("folded_ios".into(), o.folded_ios.into());
    info.insert("aligned_ios".into(), o.aligned_ios.into());
    info.insert("submitted_ios".into(), o.submitted_ios.into());
    info.insert("backend".into(), o.backend.clone().into());
    info.insert("complete".into(), o.complete.into());
    if let Some(e) = &o.first_error {
        info.insert("first_error".into(), e.clone().into());
    }
    PhaseResult {
        name: name.to_string(),
        metrics: o.metrics.clone(),
        scores: BTreeMap::new(),
        info,
    }
}

fn print_summary(r: &RunResult, o: &PhaseOutcome, dir: &Path, logged: Option<u64>) {
    let m = &o.metrics;
    let secs = m.elapsed_ns as f64 / 1e9;
    println!(
        "{} on {} ({}, {}): {:.2} s{}",
        r.procedure,
        r.target.name,
        r.target.kind_str(),
        o.backend,
        secs,
        if o.complete {
            ""
        } else {
            "  [INTERRUPTED: results marked incomplete]"
        }
    );
    println!(
        "  I/Os: {} read, {} write, {} trim, {} flush, {} errors",
        m.read_ios, m.write_ios, m.trim_ios, m.flush_ios, m.errors
    );
    println!(
        "  IOPS {:.0}   data rate {:.1} MB/s (read {:.1}, write {:.1})   busy {:.2} s   avg QD {:.1}",
        m.iops,
        m.data_rate_mb_per_s,
        m.read_rate_mb_per_s,
        m.write_rate_mb_per_s,
        m.busy_ns as f64 / 1e9,
        m.qd.mean_over_busy
    );
    let s = &m.service;
    if s.count > 0 {
        println!(
            "  service time µs: mean {:.1}  sd {:.1}  min {:.1}  p50 {:.1}  p99 {:.1}  p99.9 {:.1}  max {:.1}",
            s.mean_us, s.stddev_us, s.min_us, s.p50_us, s.p99_us, s.p99_9_us, s.max_us
        );
    }
    let f = &o.fidelity;
    match f.mode.as_str() {
        "timed" => {
            if let (Some(p50), Some(p99)) = (f.issue_error_ns_p50, f.issue_error_ns_p99) {
                println!(
                    "  timed fidelity: issue error p50 {:.1} µs, p99 {:.1} µs, drift {:.4}%",
                    p50 as f64 / 1e3,
                    p99 as f64 / 1e3,
                    f.drift_pct.unwrap_or(0.0)
                );
            }
        }
        _ => {
            if let (Some(t), Some(rq)) = (f.trace_avg_qd, f.replayed_avg_qd) {
                println!("  queue depth: trace avg {t:.2}, replayed avg {rq:.2}");
            }
        }
    }
    if o.folded_ios > 0 || o.aligned_ios > 0 {
        println!(
            "  folded {} I/Os past the end, aligned {} unaligned I/Os",
            o.folded_ios, o.aligned_ios
        );
    }
    print!("  results: {}", dir.join("result.json").display());
    if let Some(n) = logged {
        print!(", {} ({n} I/Os)", dir.join("ios.parquet").display());
    }
    println!();
}

trait KindStr {
    fn kind_str(&self) -> &'static str;
}
impl KindStr for storbench_engine::TargetInfo {
    fn kind_str(&self) -> &'static str {
        match self.kind {
            storbench_engine::TargetKind::File => "file",
            storbench_engine::TargetKind::BlockDevice => "block device",
            storbench_engine::TargetKind::Sim => "simulated",
            storbench_engine::TargetKind::Test => "test",
        }
    }
}

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub common: CommonArgs,
    /// read|write|randread|randwrite|randrw[:READ_PCT]|trim
    #[arg(long, default_value = "randread")]
    pub rw: String,
    /// Block size
    #[arg(long, default_value = "4k")]
    pub bs: String,
    /// Queue depth
    #[arg(long, default_value_t = 32)]
    pub qd: u32,
    /// Region: bytes (1g) or percent of capacity (75%), from --offset
    #[arg(long)]
    pub span: Option<String>,
    /// Start of the region
    #[arg(long, default_value = "0")]
    pub offset: String,
    /// Run this long (10s, 2m)
    #[arg(long, conflicts_with = "bytes")]
    pub time: Option<String>,
    /// Move this many bytes (1g); without --time or --bytes, one pass over the span
    #[arg(long)]
    pub bytes: Option<String>,
}

fn parse_rw(s: &str) -> anyhow::Result<(Pattern, Mix)> {
    let hint = Some("use read, write, randread, randwrite, randrw[:READ_PCT] or trim");
    let (name, pct) = match s.split_once(':') {
        Some((n, p)) => (n, Some(p)),
        None => (s, None),
    };
    let r = match name {
        "read" => (Pattern::Sequential, Mix::ReadWrite { read_pct: 100 }),
        "write" => (Pattern::Sequential, Mix::ReadWrite { read_pct: 0 }),
        "randread" => (Pattern::Random, Mix::ReadWrite { read_pct: 100 }),
        "randwrite" => (Pattern::Random, Mix::ReadWrite { read_pct: 0 }),
        "rw" | "readwrite" | "randrw" => {
            let pat = if name == "randrw" {
                Pattern::Random
            } else {
                Pattern::Sequential
            };
            let p = match pct {
                None => 50,
                Some(p) => p
                    .parse::<u8>()
                    .ok()
                    .filter(|v| *v <= 100)
                    .ok_or_else(|| user(format!("--rw {s}: READ_PCT must be 0..100"), hint))?,
            };
            (pat, Mix::ReadWrite { read_pct: p })
        }
        "trim" => (Pattern::Sequential, Mix::Trim),
        _ => return Err(user(format!("--rw {s}: unknown pattern"), hint)),
    };
    if pct.is_some() && !matches!(name, "rw" | "readwrite" | "randrw") {
        return Err(user(
            format!("--rw {s}: only randrw and rw take :READ_PCT"),
            hint,
        ));
    }
    Ok(r)
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let (pattern, mix) = parse_rw(&args.rw)?;
    let bs = size_arg("--bs", &args.bs)?;
    if bs == 0 || bs > (64 << 20) {
        return Err(user(
            format!("--bs {}: must be between 1 byte and 64m", args.bs),
            None,
        ));
    }
    if args.qd == 0 || args.qd > 4096 {
        return Err(user(
            format!("--qd {}: must be between 1 and 4096", args.qd),
            None,
        ));
    }
    let writes = !matches!(mix, Mix::ReadWrite { read_pct: 100 });
    let time_limit_ns = args
        .time
        .as_deref()
        .map(|t| parse_duration_ns("--time", t))
        .transpose()?;
    let mut target = open_target(&args.common, writes, args.qd as usize, bs as usize)?;
    let info = target.info().clone();
    let lbs = u64::from(info.logical_block_bytes.max(1));
    if !bs.is_multiple_of(lbs) {
        return Err(user(
            format!(
                "--bs {}: not a multiple of the target's logical block size ({lbs} bytes)",
                args.bs
            ),
            None,
        ));
    }
    let offset = size_arg("--offset", &args.offset)?;
    if !offset.is_multiple_of(lbs) || offset >= info.capacity_bytes {
        return Err(user(
            format!(
                "--offset {}: must be block-aligned and inside the target",
                args.offset
            ),
            None,
        ));
    }
    let avail = info.capacity_bytes - offset;
    let span = match args.span.as_deref() {
        None => avail / bs * bs,
        Some(s) => {
            let spec = SpanSpec::parse(s).map_err(|e| user(format!("--span: {e}"), None))?;
            let spec = match spec {
                SpanSpec::Percent(p) => {
                    SpanSpec::Bytes((info.capacity_bytes as f64 * p / 100.0) as u64)
                }
                b => b,
            };
            spec.resolve(avail, bs)
                .map_err(|e| user(format!("--span {s}: {e}"), None))?
        }
    };
    let limit = match (&args.bytes, time_limit_ns) {
        (Some(b), _) => Limit::Bytes(size_arg("--bytes", b)?),
        (None, Some(_)) => Limit::None,
        (None, None) => Limit::Bytes(span),
    };
    let spec = GenSpec {
        pattern,
        mix,
        block_bytes: bs,
        qd: args.qd,
        span_start_bytes: offset,
        span_bytes: span,
        limit,
        seed: args.common.seed,
    };
    let mut generator = Generator::new(spec).map_err(|e| user(e.to_string(), None))?;
    let mut opts = RunOptions::new(Pacing::QueueDepth {
        default_qd: args.qd,
    });
    opts.data = parse_data(&args.common.data)?;
    opts.seed = args.common.seed;
    opts.time_limit_ns = time_limit_ns;
    let mut options = BTreeMap::new();
    options.insert("rw".into(), args.rw.clone());
    options.insert("bs".into(), args.bs.clone());
    options.insert("qd".into(), args.qd.to_string());
    options.insert("span_bytes".into(), span.to_string());
    options.insert("offset_bytes".into(), offset.to_string());
    options.insert("data".into(), args.common.data.clone());
    options.insert("seed".into(), args.common.seed.to_string());
    if let Some(t) = &args.time {
        options.insert("time".into(), t.clone());
    }
    if let Some(b) = &args.bytes {
        options.insert("bytes".into(), b.clone());
    }
    let job = Job {
        procedure: "run",
        phase: "run",
        common: &args.common,
        opts,
        options,
        trace: None,
        ios_meta: TraceMeta {
            capacity_bytes: Some(info.capacity_bytes),
            logical_block_bytes: Some(info.logical_block_bytes),
            ..TraceMeta::default()
        },
    };
    execute(job, target.as_mut(), &mut generator)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_rw_and_durations() {
        assert!(matches!(
            parse_rw("randrw:70").unwrap(),
            (Pattern::Random, Mix::ReadWrite { read_pct: 70 })
        ));
        assert!(matches!(
            parse_rw("read").unwrap(),
            (Pattern::Sequential, Mix::ReadWrite { read_pct: 100 })
        ));
        assert!(parse_rw("randread:5").is_err());
        assert!(parse_rw("randrw:101").is_err());
        assert!(parse_rw("bogus").is_err());
        assert_eq!(parse_duration_ns("--time", "10s").unwrap(), 10_000_000_000);
        assert_eq!(parse_duration_ns("--time", "500ms").unwrap(), 500_000_000);
        assert_eq!(parse_duration_ns("--time", "2m").unwrap(), 120_000_000_000);
        assert_eq!(parse_duration_ns("--time", "3").unwrap(), 3_000_000_000);
        assert!(parse_duration_ns("--time", "abc").is_err());
        assert!(
            matches!(parse_data("compressible:2").unwrap(), DataKind::Compressible(r) if r == 2.0)
        );
        assert!(parse_data("compressible:0.5").is_err());
    }
}
