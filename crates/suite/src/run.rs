//! `storbench run`: a fio-style generator on a target, as a procedure of one phase, so
//! that it shares the runner's signals, checkpoints, resume, progress, locking and
//! result files with every other command. I/O failures do not stop it: they are
//! counted, the first is kept, and the command fails after writing the results.

use crate::args::{self, EngineArgs, TargetChoice};
use crate::phase::{PhasePlan, PhaseRecord, Runner, SuiteError, Work};
use crate::procedure::{Configured, Procedure};
use std::path::Path;
use std::time::Duration;
use storbench_engine::TargetInfo;
pub use storbench_results::run::{RunConfig, RunSummary};
use storbench_workload::generator::{GenSpec, Generator, Limit, Mix, SpanSpec};

/// Largest block size `run` issues.
pub const MAX_BLOCK_BYTES: u64 = 64 << 20;
/// Largest queue depth `run` keeps.
pub const MAX_QD: u32 = 4096;

/// `storbench run`'s own options.
#[derive(clap::Args, Clone, Debug, PartialEq)]
pub struct RunArgs {
    #[command(flatten)]
    pub engine: EngineArgs,
    /// I/O pattern; rw and randrw take :READ_PCT (randrw:70 = 70% reads)
    #[arg(long, default_value = "randread", value_name = "PATTERN[:READ_PCT]",
        value_parser = args::RwParser)]
    pub rw: args::Rw,
    /// Block size of every I/O (4k, 128k, 1m; a multiple of the target's logical block)
    #[arg(long, default_value = "4k", value_name = "SIZE", value_parser = args::size)]
    pub bs: u64,
    /// Region: bytes (1g) or percent of capacity (75%), from --offset
    #[arg(long, value_name = "SIZE|PCT%", value_parser = args::span)]
    pub span: Option<SpanSpec>,
    /// Start of the region
    #[arg(long, default_value = "0", value_name = "SIZE", value_parser = args::size)]
    pub offset: u64,
    /// Run this long (250us, 10s, 2min, 1h; a bare number is seconds)
    #[arg(long, visible_alias = "duration", conflicts_with = "bytes", value_name = "TIME",
        value_parser = args::duration)]
    pub time: Option<Duration>,
    /// Move this many bytes (1g); without --time or --bytes, one pass over the span
    #[arg(long, value_name = "SIZE", value_parser = args::size)]
    pub bytes: Option<u64>,
    /// Seed of the random offsets and written data: the same seed, the same I/O
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Log every I/O to DIR/ios.parquet
    #[arg(long = "log-ios")]
    pub log_ios: bool,
}

/// The checks that need no target: before anything is opened.
pub fn check(cfg: &RunConfig) -> Result<(), SuiteError> {
    let refused = |message: &str, hint: &str| {
        Err(SuiteError::Refused {
            message: message.into(),
            hint: hint.into(),
        })
    };
    if cfg.time_limit_ns == Some(0) {
        return refused(
            "--time 0: a run of no time does no work",
            "give a duration, e.g. --time 10s",
        );
    }
    if cfg.limit_bytes == Some(0) {
        return refused(
            "--bytes 0: a run of no bytes does no work",
            "give a size, e.g. --bytes 1g, or leave it out for one pass over the span",
        );
    }
    Ok(())
}

/// The generator on a target described by `info`.
pub fn spec(cfg: &RunConfig, info: &TargetInfo) -> Result<GenSpec, SuiteError> {
    let bad = |m: String| Err(SuiteError::Invalid(m));
    if cfg.block_bytes == 0 || cfg.block_bytes > MAX_BLOCK_BYTES {
        return bad(format!(
            "--bs {}: must be between 1 byte and 64m",
            cfg.block_bytes
        ));
    }
    if cfg.qd == 0 || cfg.qd > MAX_QD {
        return bad(format!("--qd {}: must be between 1 and {MAX_QD}", cfg.qd));
    }
    if cfg.time_limit_ns == Some(0) {
        return bad(
            "--time 0: a run of no time does no work; hint: give a duration, e.g. --time 10s"
                .into(),
        );
    }
    if cfg.limit_bytes == Some(0) {
        return bad("--bytes 0: a run of no bytes does no work; hint: give a size, e.g. --bytes 1g, or leave it out for one pass over the span".into());
    }
    let lbs = u64::from(info.logical_block_bytes.max(1));
    if !cfg.block_bytes.is_multiple_of(lbs) {
        return bad(format!(
            "--bs {}: not a multiple of the target's logical block size ({lbs} bytes)",
            cfg.block_bytes
        ));
    }
    if !cfg.offset_bytes.is_multiple_of(lbs) || cfg.offset_bytes >= info.capacity_bytes {
        return bad(format!(
            "--offset {}: must be block-aligned and inside the target ({} bytes)",
            cfg.offset_bytes, info.capacity_bytes
        ));
    }
    let avail = info.capacity_bytes - cfg.offset_bytes;
    let span = match cfg.span {
        None => avail / cfg.block_bytes * cfg.block_bytes,
        Some(s) => {
            let s = match s {
                SpanSpec::Percent(p) => {
                    SpanSpec::Bytes((info.capacity_bytes as f64 * p / 100.0) as u64)
                }
                b => b,
            };
            s.resolve(avail, cfg.block_bytes)
                .map_err(|e| SuiteError::Invalid(format!("--span: {e}")))?
        }
    };
    let limit = match (cfg.limit_bytes, cfg.time_limit_ns) {
        (Some(b), _) => Limit::Bytes(b),
        (None, Some(_)) => Limit::None,
        (None, None) => Limit::Bytes(span),
    };
    let spec = GenSpec {
        pattern: cfg.pattern,
        mix: cfg.mix,
        block_bytes: cfg.block_bytes,
        qd: cfg.qd,
        span_start_bytes: cfg.offset_bytes,
        span_bytes: span,
        limit,
        seed: cfg.seed,
    };
    Generator::new(spec.clone()).map_err(|e| SuiteError::Invalid(e.to_string()))?;
    Ok(spec)
}

impl Procedure for RunConfig {
    const NAME: &'static str = "run";
    type Args = RunArgs;
    type Summary = RunSummary;

    fn configure(a: &RunArgs, target: &TargetChoice) -> Result<Configured<Self>, SuiteError> {
        let args::Rw { pattern, mix } = a.rw;
        let bs = a.bs;
        if bs == 0 || bs > MAX_BLOCK_BYTES {
            return Err(SuiteError::Invalid(format!(
                "--bs {}: must be between 1 byte and 64m",
                crate::units::fmt_bytes(bs)
            )));
        }
        let qd = a.engine.qd_or(args::DEFAULT_QD)?;
        let mut cfg = RunConfig::new(&target.spec);
        cfg.open = crate::targets::RealOpen {
            write: !matches!(mix, Mix::ReadWrite { read_pct: 100 }),
            max_in_flight: Some(qd as usize),
            buffer_bytes: Some(bs as usize),
            ..a.engine.open(target)
        };
        cfg.pattern = pattern;
        cfg.mix = mix;
        cfg.block_bytes = bs;
        cfg.qd = qd;
        cfg.offset_bytes = a.offset;
        cfg.span = a.span;
        cfg.time_limit_ns = a.time.map(args::ns);
        cfg.limit_bytes = a.bytes;
        cfg.seed = a.seed;
        cfg.data = a.engine.data;
        cfg.log_ios = a.log_ios;
        check(&cfg)?;
        Ok(Configured::new(cfg))
    }

    fn target_spec(&self) -> &str {
        &self.target
    }

    fn real_open(&self) -> crate::targets::RealOpen {
        self.open.clone()
    }

    fn plans(&self, _dir: &Path, info: &TargetInfo) -> Result<Vec<PhasePlan>, SuiteError> {
        let spec = spec(self, info)?;
        let mut p = PhasePlan::new("run", "fio-style generator", Work::Generate { spec });
        p.time_limit_ns = self.time_limit_ns;
        p.data = self.data;
        p.seed = self.seed;
        p.log_ios = self.log_ios;
        p.stop_on_error = false;
        Ok(vec![p])
    }

    fn summarize(
        &self,
        _dir: &Path,
        runner: &Runner<'_>,
        records: &[PhaseRecord],
    ) -> Result<RunSummary, SuiteError> {
        let spec = spec(self, runner.target.info())?;
        let m = &records[0].metrics;
        let s = RunSummary {
            offset_bytes: spec.span_start_bytes,
            span_bytes: spec.span_bytes,
            iops: m.iops,
            data_rate_mb_per_s: m.data_rate_mb_per_s,
        };
        Ok(s)
    }
}
