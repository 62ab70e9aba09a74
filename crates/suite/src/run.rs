//! `storbench run`: a fio-style generator on a target, as a procedure of one phase, so
//! that it shares the runner's signals, checkpoints, resume, progress, locking and
//! result files with every other command. I/O failures do not stop it: they are
//! counted, the first is kept, and the command fails after writing the results.

use crate::phase::{PhasePlan, PhaseRecord, Runner, SuiteError, Work};
use crate::procedure::Procedure;
use serde::{Deserialize, Serialize};
use std::path::Path;
use storbench_engine::{DataKind, TargetInfo};
use storbench_workload::generator::{GenSpec, Generator, Limit, Mix, Pattern, SpanSpec};

/// Largest block size `run` issues.
pub const MAX_BLOCK_BYTES: u64 = 64 << 20;
/// Largest queue depth `run` keeps.
pub const MAX_QD: u32 = 4096;

/// A run's configuration, as the user gave it (resolved against the target when the
/// phase is planned).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    pub target: String,
    #[serde(default)]
    pub open: crate::targets::RealOpen,
    pub pattern: Pattern,
    pub mix: Mix,
    pub block_bytes: u64,
    /// I/Os each job keeps in flight.
    pub qd: u32,
    /// Jobs run at once, each with its own ring and `qd` in flight (fio's numjobs);
    /// random offsets from a seed of each job's own, sequential I/O over each job's
    /// slice of the region, a byte limit divided among them.
    #[serde(default = "crate::phase::one_job")]
    pub jobs: u32,
    /// Start of the region.
    pub offset_bytes: u64,
    /// Length of the region from the offset (`None`: to the end of the target).
    pub span: Option<SpanSpec>,
    /// Run this long on the target's clock.
    pub time_limit_ns: Option<u64>,
    /// Move this many bytes; without a time or byte limit, one pass over the span.
    pub bytes_limit: Option<u64>,
    pub seed: u64,
    pub data: DataKind,
    pub log_ios: bool,
}

impl RunConfig {
    /// 4 KB random reads at QD32 over the whole target, one pass.
    pub fn new(target: &str) -> RunConfig {
        RunConfig {
            target: target.to_owned(),
            open: crate::targets::RealOpen {
                write: false,
                max_in_flight: Some(32),
                buffer_bytes: Some(4096),
                ..Default::default()
            },
            pattern: Pattern::Random,
            mix: Mix::ReadWrite { read_pct: 100 },
            block_bytes: 4096,
            qd: 32,
            jobs: 1,
            offset_bytes: 0,
            span: None,
            time_limit_ns: None,
            bytes_limit: None,
            seed: 1,
            data: DataKind::Random,
            log_ios: false,
        }
    }

    /// Whether the run writes or trims.
    pub fn writes(&self) -> bool {
        !matches!(self.mix, Mix::ReadWrite { read_pct: 100 })
    }

    /// The generator on a target described by `info`.
    pub fn spec(&self, info: &TargetInfo) -> Result<GenSpec, SuiteError> {
        let bad = |m: String| Err(SuiteError::Invalid(m));
        if self.block_bytes == 0 || self.block_bytes > MAX_BLOCK_BYTES {
            return bad(format!(
                "--bs {}: must be between 1 byte and 64m",
                self.block_bytes
            ));
        }
        if self.qd == 0 || self.qd > MAX_QD {
            return bad(format!("--qd {}: must be between 1 and {MAX_QD}", self.qd));
        }
        crate::units::check_jobs(self.jobs).map_err(|e| SuiteError::Invalid(e.to_string()))?;
        if self.time_limit_ns == Some(0) {
            return bad(
                "--time 0: a run of no time does no work; hint: give a duration, e.g. --time 10s"
                    .into(),
            );
        }
        if self.bytes_limit == Some(0) {
            return bad("--bytes 0: a run of no bytes does no work; hint: give a size, e.g. --bytes 1g, or leave it out for one pass over the span".into());
        }
        let lbs = u64::from(info.logical_block_bytes.max(1));
        if !self.block_bytes.is_multiple_of(lbs) {
            return bad(format!(
                "--bs {}: not a multiple of the target's logical block size ({lbs} bytes)",
                self.block_bytes
            ));
        }
        if !self.offset_bytes.is_multiple_of(lbs) || self.offset_bytes >= info.capacity_bytes {
            return bad(format!(
                "--offset {}: must be block-aligned and inside the target ({} bytes)",
                self.offset_bytes, info.capacity_bytes
            ));
        }
        let avail = info.capacity_bytes - self.offset_bytes;
        let span = match self.span {
            None => avail / self.block_bytes * self.block_bytes,
            Some(s) => {
                let s = match s {
                    SpanSpec::Percent(p) => {
                        SpanSpec::Bytes((info.capacity_bytes as f64 * p / 100.0) as u64)
                    }
                    b => b,
                };
                s.resolve(avail, self.block_bytes)
                    .map_err(|e| SuiteError::Invalid(format!("--span: {e}")))?
            }
        };
        let limit = match (self.bytes_limit, self.time_limit_ns) {
            (Some(b), _) => Limit::Bytes(b),
            (None, Some(_)) => Limit::None,
            (None, None) => Limit::Bytes(span),
        };
        let spec = GenSpec {
            pattern: self.pattern,
            mix: self.mix,
            block_bytes: self.block_bytes,
            qd: self.qd,
            span_start_bytes: self.offset_bytes,
            span_bytes: span,
            limit,
            seed: self.seed,
        };
        Generator::new(spec.clone()).map_err(|e| SuiteError::Invalid(e.to_string()))?;
        Ok(spec)
    }
}

/// The run's own section of result.json.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// The region the generator worked on.
    pub offset_bytes: u64,
    pub span_bytes: u64,
    pub iops: f64,
    pub data_rate_mb_per_s: f64,
}

impl Procedure for RunConfig {
    const NAME: &'static str = "run";

    fn target_spec(&self) -> &str {
        &self.target
    }

    fn real_open(&self) -> crate::targets::RealOpen {
        self.open.clone()
    }

    fn plans(&self, _dir: &Path, info: &TargetInfo) -> Result<Vec<PhasePlan>, SuiteError> {
        let spec = self.spec(info)?;
        let blocks = spec.span_bytes / spec.block_bytes;
        let mut p = PhasePlan::new("run", "fio-style generator", Work::Generate { spec });
        p.time_limit_ns = self.time_limit_ns;
        p.data = self.data;
        p.seed = self.seed;
        p.log_ios = self.log_ios;
        p.stop_on_error = false;
        p.jobs = self.jobs;
        if self.pattern == Pattern::Sequential && u64::from(self.jobs) > blocks {
            return Err(SuiteError::Invalid(format!(
                "--jobs {}: sequential jobs each take a slice of the region, and it holds only {blocks} blocks of --bs",
                self.jobs
            )));
        }
        Ok(vec![p])
    }

    fn summarize(
        &self,
        _dir: &Path,
        runner: &Runner<'_>,
        records: &[PhaseRecord],
    ) -> Result<serde_json::Value, SuiteError> {
        let spec = self.spec(runner.target.info())?;
        let m = &records[0].metrics;
        let s = RunSummary {
            offset_bytes: spec.span_start_bytes,
            span_bytes: spec.span_bytes,
            iops: m.iops,
            data_rate_mb_per_s: m.data_rate_mb_per_s,
        };
        Ok(serde_json::to_value(s).expect("summary serializes"))
    }
}
