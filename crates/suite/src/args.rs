//! The command-line options of the procedures, declared once.
//!
//! Each procedure's own options are one clap `Args` struct in its file
//! (`consistency::ConsistencyArgs`, `bench::BenchArgs`, ...), made into its
//! configuration there ([`crate::Procedure::configure`]). The CLI flattens that struct
//! under its subcommand; a sweep plan's `[[procedure]]` keys are parsed through the
//! same struct ([`parse_options`]), so a plan takes exactly the command line's names,
//! values, units and bounds, and its mistakes read as the command line's do.
//!
//! Shared here: the value parser of every quantity a flag takes (built on the one units
//! module, `storbench_core::units`), the engine options every procedure takes
//! ([`EngineArgs`]: queue depth, backend, written data), and how a command reaches its
//! target ([`TargetArgs`]: the CLI's, never a plan's, whose targets are `[[target]]`s).

use crate::phase::SuiteError;
use crate::targets::RealOpen;
use clap::builder::{PossibleValue, TypedValueParser};
use clap::ValueEnum;
use std::path::{Path, PathBuf};
use std::time::Duration;
use storbench_engine::DataKind;
use storbench_workload::generator::{Mix, Pattern, SpanSpec};
use storbench_workload::units::{self, QuantityError};

/// A flag's value that does not parse; clap shows it after the flag and the value.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ValueError {
    #[error("expected {0}")]
    Expected(&'static str),
    #[error("expected `none` or {0}")]
    ExpectedOrNone(&'static str),
    #[error("{0}")]
    Span(String),
    #[error("unknown kind; use random, zeros or compressible:RATIO")]
    UnknownData,
    #[error("`{0}` is not a number (e.g. compressible:2)")]
    NotARatio(String),
    #[error("the ratio must be at least 1")]
    RatioBelowOne,
    #[error(
        "unknown pattern; use read, write, randread, randwrite, rw, randrw[:READ_PCT] or trim"
    )]
    UnknownPattern,
    #[error("READ_PCT must be 0..100")]
    ReadPct,
    #[error("only randrw and rw take :READ_PCT")]
    ReadPctNotTaken,
    /// A value that parses but would do no work (`record --time 0`): what to give.
    #[error("{0}")]
    NoWork(&'static str),
}

fn expected(e: QuantityError) -> ValueError {
    ValueError::Expected(e.expected)
}

/// A size in bytes: `4096`, `4k`, `1.5k`, `128KiB`, `1g` (k/m/g/t = powers of 1024).
pub fn size(s: &str) -> Result<u64, ValueError> {
    units::parse_size("", s).map_err(expected)
}

/// A duration: `250us`, `500ms`, `10s`, `2min`, `1h`; a bare number is seconds.
pub fn duration(s: &str) -> Result<Duration, ValueError> {
    units::parse_duration("", s).map_err(expected)
}

/// A share of a capacity: `75%` or `0.75`.
pub fn fraction(s: &str) -> Result<f64, ValueError> {
    units::parse_fraction("", s).map_err(expected)
}

/// A region: a size (`1g`) or a percentage of the capacity (`75%`).
pub fn span(s: &str) -> Result<SpanSpec, ValueError> {
    SpanSpec::parse(s).map_err(|e| ValueError::Span(e.0))
}

/// `--max-idle` of `replay`: cut idle gaps longer than a duration, or `none`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MaxIdle(pub Option<Duration>);

/// `none` or a duration.
pub fn max_idle(s: &str) -> Result<MaxIdle, ValueError> {
    if s.trim().eq_ignore_ascii_case("none") {
        return Ok(MaxIdle(None));
    }
    units::parse_duration("", s)
        .map(|d| MaxIdle(Some(d)))
        .map_err(|e| ValueError::ExpectedOrNone(e.expected))
}

/// `--data`: random, zeros or compressible:RATIO.
pub fn data(s: &str) -> Result<DataKind, ValueError> {
    match s {
        "random" => Ok(DataKind::Random),
        "zeros" => Ok(DataKind::Zeros),
        _ => {
            let Some(r) = s.strip_prefix("compressible:") else {
                return Err(ValueError::UnknownData);
            };
            let v: f64 = r.parse().map_err(|_| ValueError::NotARatio(r.to_owned()))?;
            if !(v >= 1.0 && v.is_finite()) {
                return Err(ValueError::RatioBelowOne);
            }
            Ok(DataKind::Compressible(v))
        }
    }
}

/// The I/O patterns of `run --rw` (fio's names).
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum RwName {
    /// Sequential reads
    Read,
    /// Sequential writes
    Write,
    /// Random reads
    Randread,
    /// Random writes
    Randwrite,
    /// Sequential reads and writes, 50% reads or :READ_PCT
    #[value(alias = "readwrite")]
    Rw,
    /// Random reads and writes, 50% reads or :READ_PCT
    Randrw,
    /// Sequential TRIM (discard)
    Trim,
}

/// `run --rw`: a pattern and a read/write mix.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rw {
    pub pattern: Pattern,
    pub mix: Mix,
}

impl Rw {
    /// Parse `NAME[:READ_PCT]` (`randrw:70`).
    pub fn parse(s: &str) -> Result<Rw, ValueError> {
        let (name, pct) = match s.split_once(':') {
            Some((n, p)) => (n, Some(p)),
            None => (s, None),
        };
        let name = RwName::from_str(name, false).map_err(|_| ValueError::UnknownPattern)?;
        let read_pct = match (name, pct) {
            (RwName::Rw | RwName::Randrw, None) => 50,
            (RwName::Rw | RwName::Randrw, Some(p)) => p
                .parse::<u8>()
                .ok()
                .filter(|v| *v <= 100)
                .ok_or(ValueError::ReadPct)?,
            (_, Some(_)) => return Err(ValueError::ReadPctNotTaken),
            (RwName::Read | RwName::Randread, None) => 100,
            (_, None) => 0,
        };
        let pattern = match name {
            RwName::Randread | RwName::Randwrite | RwName::Randrw => Pattern::Random,
            _ => Pattern::Sequential,
        };
        let mix = match name {
            RwName::Trim => Mix::Trim,
            _ => Mix::ReadWrite { read_pct },
        };
        Ok(Rw { pattern, mix })
    }
}

/// clap's parser for `--rw`: lists the names (help, completions), takes `:READ_PCT`.
#[derive(Clone, Copy, Debug)]
pub struct RwParser;

impl TypedValueParser for RwParser {
    type Value = Rw;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Rw, clap::Error> {
        let text = value.to_string_lossy();
        Rw::parse(&text).map_err(|m| {
            let flag = arg.map_or("--rw".to_owned(), |a| a.to_string());
            clap::Error::raw(
                clap::error::ErrorKind::ValueValidation,
                format!("invalid value '{text}' for '{flag}': {m}\n"),
            )
            .with_cmd(cmd)
        })
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            RwName::value_variants()
                .iter()
                .filter_map(ValueEnum::to_possible_value),
        ))
    }
}

/// `replay --mode`: how I/Os are paced.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Keep as many I/Os in flight as the trace had (--qd for I/Os without completion times)
    #[value(alias = "qd")]
    QueueDepth,
    /// Issue each I/O at its trace time (divided by --speed), idle gaps cut at --max-idle
    Timed,
    /// Keep exactly --qd I/Os in flight
    FixedQd,
}

/// `--backend`: the I/O backend for real targets.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// io_uring where the kernel has it, threads otherwise
    Auto,
    /// io_uring
    #[value(name = "io_uring", alias = "uring", alias = "io-uring")]
    IoUring,
    /// io_uring with every I/O handed to the kernel's workers (IOSQE_ASYNC), for devices
    /// without non-blocking I/O such as zram
    #[value(name = "io_uring-async", alias = "io-uring-async")]
    IoUringAsync,
    /// A pool of threads doing blocking reads and writes
    Threads,
}

impl Backend {
    /// The name the engine reads (`BackendChoice::parse`).
    pub fn name(self) -> String {
        self.to_possible_value()
            .expect("no variant is skipped")
            .get_name()
            .to_owned()
    }
}

/// A duration in whole nanoseconds (what the configurations store).
pub fn ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// The procedures' default queue depth (`bench`: [`crate::bench::DEFAULT_TRACE_QD`]).
pub const DEFAULT_QD: u32 = 32;

/// How the engine drives the target: the options every procedure takes, one group so
/// an engine option is added once for all of them.
#[derive(clap::Args, Clone, Debug, PartialEq)]
pub struct EngineArgs {
    /// Queue depth: I/Os kept in flight (per job with --jobs), 1 to 4096 (run: the generator's; replay:
    /// fixed-qd's N, and the queue depth of I/Os without completion times; consistency,
    /// trim-check: the random writes'; season: the pass and restore's; bench: the
    /// replay's for I/Os without completion times) [default: 32; bench: 1]
    #[arg(long, value_name = "N")]
    pub qd: Option<u32>,
    /// I/O backend for real targets
    #[arg(long, value_enum, default_value = "auto")]
    pub backend: Backend,
    /// Written data: random (incompressible, default), zeros, compressible:RATIO
    #[arg(long, default_value = "random", value_name = "KIND", value_parser = data)]
    pub data: DataKind,
}

impl EngineArgs {
    /// `--qd`, or `default`; checked as `run` checks it.
    pub fn qd_or(&self, default: u32) -> Result<u32, SuiteError> {
        let qd = self.qd.unwrap_or(default);
        crate::units::check_qd("--qd", qd)?;
        Ok(qd)
    }

    /// How to open a real target: `target`'s way, with this backend.
    pub fn open(&self, target: &TargetChoice) -> RealOpen {
        RealOpen {
            backend: Some(self.backend.name()),
            ..target.open.clone()
        }
    }
}

/// Several submitters (`--jobs`): the option of the procedures whose phases run as
/// several jobs (run, replay, consistency, trim-check), one group so it is declared
/// and checked once, and a sweep plan takes `jobs` as the command line does.
#[derive(clap::Args, Clone, Debug, PartialEq)]
pub struct JobsArgs {
    /// Jobs run at once, each with its own ring, buffers and --qd in flight, as fio's
    /// numjobs, 1 to 256 (run, consistency, trim-check: random offsets from a seed of
    /// each job's own, run's sequential I/O over each job's slice of the region;
    /// replay: the trace's streams, its `stream` column, stream k to job k mod N, each
    /// in the trace's order)
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub jobs: u32,
}

impl JobsArgs {
    /// `--jobs`, checked: 1 to [`crate::units::MAX_JOBS`].
    pub fn jobs(&self) -> Result<u32, SuiteError> {
        crate::units::check_jobs(self.jobs).map_err(|e| SuiteError::Invalid(e.to_string()))?;
        Ok(self.jobs)
    }
}

/// How a command reaches its target: the CLI's options (a sweep's targets are its
/// `[[target]]` entries, on the simulated drive).
#[derive(clap::Args, Clone, Debug, PartialEq)]
pub struct TargetArgs {
    /// Target: `sim:PRESET[,key=value...]` (simulated SSD), a block device, a file path
    /// or `file:PATH`
    #[arg(
        long,
        short = 't',
        required_unless_present = "resume",
        conflicts_with = "resume"
    )]
    pub target: Option<String>,
    /// File targets: create or extend the file to this size (e.g. 4g)
    #[arg(long, value_name = "SIZE", value_parser = size)]
    pub size: Option<u64>,
    /// File targets: allow writing over an existing file storbench did not create
    #[arg(long)]
    pub overwrite: bool,
    /// Block devices: the exact device whose data may be destroyed (e.g. /dev/sdX)
    #[arg(long, value_name = "DEVICE")]
    pub destroy_data: Option<PathBuf>,
    /// Cap on I/O buffer memory for a trace's large or many I/Os: past it, fewer I/Os
    /// in flight (noted); an I/O larger than the cap is refused [default: 512m]
    #[arg(long, value_name = "SIZE", value_parser = size)]
    pub buffer_memory: Option<u64>,
    /// File targets: buffered I/O (no O_DIRECT)
    #[arg(long = "no-direct")]
    pub no_direct: bool,
}

/// The target a new run is configured for: its spec (a file or device path made
/// absolute) and how to open it.
#[derive(Clone, Debug, PartialEq)]
pub struct TargetChoice {
    pub spec: String,
    pub open: RealOpen,
}

impl TargetChoice {
    /// A simulated or virtual target, opened the default way (a sweep's points).
    pub fn sim(spec: &str) -> TargetChoice {
        TargetChoice {
            spec: spec.to_owned(),
            open: RealOpen::default(),
        }
    }
}

/// A path made absolute against the current directory, so `--resume` from another
/// directory opens the same file.
pub fn absolute(field: &str, p: &Path) -> Result<PathBuf, SuiteError> {
    std::path::absolute(p).map_err(|e| SuiteError::Io {
        context: format!("{field} {}: making it absolute", p.display()),
        source: e,
    })
}

/// The target spec with a file or device path made absolute (the run state stores the
/// spec and `--resume` reopens it, possibly from another directory; a relative file
/// would then be a different, new file). Simulated and test targets are kept as given.
pub fn absolute_spec(spec: &str) -> Result<String, SuiteError> {
    let (prefix, path) = match spec.strip_prefix("file:") {
        Some(p) => ("file:", p),
        None if crate::targets::is_sim_spec(spec) || spec.starts_with("test:") => {
            return Ok(spec.to_owned())
        }
        None => ("", spec),
    };
    let abs = absolute("--target", Path::new(path))?;
    let text = abs
        .to_str()
        .ok_or_else(|| SuiteError::Invalid(format!("--target {}: not UTF-8", abs.display())))?;
    Ok(format!("{prefix}{text}"))
}

impl TargetArgs {
    /// The target of a new run (`--target` is required without `--resume`).
    pub fn choice(&self) -> Result<TargetChoice, SuiteError> {
        let target = self
            .target
            .as_deref()
            .expect("clap requires --target without --resume");
        if self.buffer_memory == Some(0) {
            return Err(SuiteError::Refused {
                message: "--buffer-memory 0: no I/O fits in no memory".into(),
                hint: "give a size, e.g. --buffer-memory 1g".into(),
            });
        }
        Ok(TargetChoice {
            spec: absolute_spec(target)?,
            open: RealOpen {
                size_bytes: self.size,
                overwrite: self.overwrite,
                destroy_data: self
                    .destroy_data
                    .as_deref()
                    .map(|d| absolute("--destroy-data", d))
                    .transpose()?,
                buffer_memory_bytes: self.buffer_memory,
                buffered: self.no_direct,
                ..RealOpen::default()
            },
        })
    }
}

/// A trace that cannot be read: not Parquet, corrupt (a page checksum, a footer) or
/// holding a bad value is the user's input (exit 2); only failing to read it is an I/O
/// failure.
pub fn trace_input(e: storbench_trace::TraceError) -> SuiteError {
    let io = match &e {
        storbench_trace::TraceError::Io { source, .. } => {
            Some(std::io::Error::new(source.kind(), e.to_string()))
        }
        _ => storbench_report::io_cause(&e),
    };
    match io {
        Some(source) => SuiteError::Io {
            context: "reading the trace".into(),
            source,
        },
        None => SuiteError::Refused {
            message: e.to_string(),
            hint: "is the input a storbench Parquet trace? (storbench import makes one)".into(),
        },
    }
}

/// Options a procedure's command refuses: clap's kind of error and its message, as the
/// command line prints it on one line (without the usage lines).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct OptionsError {
    pub kind: clap::error::ErrorKind,
    pub message: String,
}

impl OptionsError {
    fn of(e: &clap::Error) -> OptionsError {
        OptionsError {
            kind: e.kind(),
            message: clap_message(e),
        }
    }
}

/// A procedure's options parsed from `argv` (without the program name) exactly as its
/// command parses them: a sweep point's options. Errors are clap's, as the command
/// line prints them (without the usage lines).
pub fn parse_options<A: clap::Args + clap::FromArgMatches>(
    name: &str,
    argv: &[String],
) -> Result<A, OptionsError> {
    let mut cmd = A::augment_args(
        clap::Command::new(name.to_owned())
            .no_binary_name(true)
            .disable_help_flag(true),
    );
    // `--resume` is the CLI's, beside the procedure's options (`bench`'s workload is
    // required without it); a plan never resumes, but the name must exist.
    if !cmd.get_arguments().any(|a| a.get_id() == "resume") {
        cmd = cmd.arg(
            clap::Arg::new("resume")
                .long("resume")
                .hide(true)
                .action(clap::ArgAction::SetTrue),
        );
    }
    let matches = cmd
        .try_get_matches_from(argv)
        .map_err(|e| OptionsError::of(&e))?;
    A::from_arg_matches(&matches).map_err(|e| OptionsError::of(&e))
}

/// A clap error's message alone, on one line: `invalid value 'x' for '--qd <N>': ...`,
/// `the following required arguments were not provided: <WORKLOAD>` (no usage lines).
fn clap_message(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .filter(|l| !l.is_empty())
        .collect();
    let joined = lines.join(" ");
    joined.strip_prefix("error: ").unwrap_or(&joined).to_owned()
}

/// The option names a procedure's `Args` takes (long names, aliases included), as a
/// plan may spell them.
pub fn option_names<A: clap::Args>() -> Vec<String> {
    names::<A>(|_| true)
}

/// The names of `A`'s switches (options that take no value, as `--quick`), aliases
/// included.
pub fn switch_names<A: clap::Args>() -> Vec<String> {
    names::<A>(|a| !a.get_action().takes_values())
}

fn names<A: clap::Args>(keep: impl Fn(&clap::Arg) -> bool) -> Vec<String> {
    let cmd = A::augment_args(clap::Command::new("x"));
    let mut out = Vec::new();
    for a in cmd.get_arguments().filter(|a| keep(a)) {
        if let Some(l) = a.get_long() {
            out.push(l.to_owned());
        }
        for alias in a.get_all_aliases().into_iter().flatten() {
            out.push(alias.to_owned());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsers_share_the_units_rules() {
        assert_eq!(size("1.5k"), Ok(1536));
        assert_eq!(duration("1min"), Ok(Duration::from_secs(60)));
        assert_eq!(duration("250us"), Ok(Duration::from_micros(250)));
        assert_eq!(fraction("75%"), Ok(0.75));
        assert_eq!(span("75%"), Ok(SpanSpec::Percent(75.0)));
        assert_eq!(span("1g"), Ok(SpanSpec::Bytes(1 << 30)));
        assert!(size("1.3k")
            .unwrap_err()
            .to_string()
            .starts_with("expected a size"));
        assert!(duration("soon")
            .unwrap_err()
            .to_string()
            .starts_with("expected a duration"));
        assert!(matches!(data("compressible:2"), Ok(DataKind::Compressible(r)) if r == 2.0));
        assert_eq!(data("compressible:0.5"), Err(ValueError::RatioBelowOne));
        assert_eq!(data("ones"), Err(ValueError::UnknownData));
    }

    #[test]
    fn rw_names_and_mixes() {
        let rw = |s| Rw::parse(s).map(|r| (r.pattern, r.mix));
        assert_eq!(
            rw("randrw:70"),
            Ok((Pattern::Random, Mix::ReadWrite { read_pct: 70 }))
        );
        assert_eq!(
            rw("read"),
            Ok((Pattern::Sequential, Mix::ReadWrite { read_pct: 100 }))
        );
        assert_eq!(
            rw("readwrite"),
            Ok((Pattern::Sequential, Mix::ReadWrite { read_pct: 50 }))
        );
        assert_eq!(rw("trim"), Ok((Pattern::Sequential, Mix::Trim)));
        assert!(rw("randread:5").is_err());
        assert!(rw("randrw:101").is_err());
        assert!(rw("bogus").is_err());
        for b in Backend::value_variants() {
            assert!(storbench_engine::BackendChoice::parse(&b.name()).is_some());
        }
    }

    #[test]
    fn options_parse_as_the_command_line_and_errors_read_like_it() {
        let a: EngineArgs = parse_options("x", &["--qd=8".into(), "--data=zeros".into()]).unwrap();
        assert_eq!((a.qd, a.data), (Some(8), DataKind::Zeros));
        let e = parse_options::<EngineArgs>("x", &["--data=ones".into()]).unwrap_err();
        assert_eq!(e.kind, clap::error::ErrorKind::ValueValidation);
        assert!(
            e.message
                .starts_with("invalid value 'ones' for '--data <KIND>'"),
            "{e}"
        );
        let e = parse_options::<EngineArgs>("x", &["--warp=3".into()]).unwrap_err();
        assert!(e.message.contains("--warp"), "{e}");
        assert!(option_names::<EngineArgs>().contains(&"backend".to_owned()));
        let switches = switch_names::<crate::consistency::ConsistencyArgs>();
        assert!(switches.contains(&"quick".to_owned()), "{switches:?}");
        assert!(!switches.contains(&"time".to_owned()), "{switches:?}");
    }
}
