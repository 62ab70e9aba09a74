//! clap value parsers for every quantity a flag takes, built on the one units module
//! (`storbench_workload::units`): a bad value is a clap error naming the flag, and every
//! command reads `1.5k`, `250us` or `1min` the same way.

use clap::builder::{PossibleValue, TypedValueParser};
use clap::ValueEnum;
use std::time::Duration;
use storbench_engine::DataKind;
use storbench_workload::generator::{Mix, Pattern, SpanSpec};
use storbench_workload::units::{self, QuantityError};

fn expected(e: QuantityError) -> String {
    format!("expected {}", e.expected)
}

/// A size in bytes: `4096`, `4k`, `1.5k`, `128KiB`, `1g` (k/m/g/t = powers of 1024).
pub fn size(s: &str) -> Result<u64, String> {
    units::parse_size("", s).map_err(expected)
}

/// A duration: `250us`, `500ms`, `10s`, `2min`, `1h`; a bare number is seconds.
pub fn duration(s: &str) -> Result<Duration, String> {
    units::parse_duration("", s).map_err(expected)
}

/// A share of a capacity: `75%` or `0.75`.
pub fn fraction(s: &str) -> Result<f64, String> {
    units::parse_fraction("", s).map_err(expected)
}

/// A region: a size (`1g`) or a percentage of the capacity (`75%`).
pub fn span(s: &str) -> Result<SpanSpec, String> {
    SpanSpec::parse(s).map_err(|e| match e {
        storbench_workload::SourceError::Invalid(m) => m,
        other => other.to_string(),
    })
}

/// `replay --max-idle`: cut idle gaps longer than a duration, or `none`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MaxIdle(pub Option<Duration>);

/// `none` or a duration.
pub fn max_idle(s: &str) -> Result<MaxIdle, String> {
    if s.trim().eq_ignore_ascii_case("none") {
        return Ok(MaxIdle(None));
    }
    units::parse_duration("", s)
        .map(|d| MaxIdle(Some(d)))
        .map_err(|e| format!("expected `none` or {}", e.expected))
}

/// `--data`: random, zeros or compressible:RATIO.
pub fn data(s: &str) -> Result<DataKind, String> {
    super::run::parse_data(s).map_err(|e| super::render(&e))
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
    pub fn parse(s: &str) -> Result<Rw, String> {
        let (name, pct) = match s.split_once(':') {
            Some((n, p)) => (n, Some(p)),
            None => (s, None),
        };
        let name = RwName::from_str(name, false).map_err(|_| {
            "unknown pattern; use read, write, randread, randwrite, rw, randrw[:READ_PCT] or trim"
                .to_owned()
        })?;
        let read_pct = match (name, pct) {
            (RwName::Rw | RwName::Randrw, None) => 50,
            (RwName::Rw | RwName::Randrw, Some(p)) => p
                .parse::<u8>()
                .ok()
                .filter(|v| *v <= 100)
                .ok_or("READ_PCT must be 0..100")?,
            (_, Some(_)) => return Err("only randrw and rw take :READ_PCT".into()),
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

/// Where a progress bar draws: stderr (hidden when it is not a terminal), or nowhere.
pub fn draw_target(quiet: bool) -> indicatif::ProgressDrawTarget {
    if quiet {
        indicatif::ProgressDrawTarget::hidden()
    } else {
        indicatif::ProgressDrawTarget::stderr()
    }
}

/// A duration in whole nanoseconds (what the configurations store).
pub fn ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
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
        assert!(size("1.3k").unwrap_err().starts_with("expected a size"));
        assert!(duration("soon")
            .unwrap_err()
            .starts_with("expected a duration"));
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
}
