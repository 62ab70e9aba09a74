//! `storbench replay TRACE`: a trace on a target, as a procedure of one phase (see
//! [`crate::run`]): queue-depth, timed or fixed-QD pacing, optionally folded onto part
//! of the target. I/O failures are counted and do not stop it.

use crate::phase::{PhasePlan, PhaseRecord, Runner, SuiteError, Work};
use crate::procedure::Procedure;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use storbench_engine::{DataKind, Fidelity, Pacing, TargetInfo};
use storbench_trace::Op;
use storbench_workload::generator::SpanSpec;
use storbench_workload::replay::TraceScan;

/// What the replayed trace holds (result.json's `trace`), from one pass over it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TraceSummary {
    pub path: String,
    pub ios: u64,
    pub read_ios: u64,
    pub write_ios: u64,
    pub trim_ios: u64,
    pub flush_ios: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// From the first issue to the last, in trace time.
    pub duration_ns: u64,
    /// The largest read or write.
    #[serde(default)]
    pub max_io_bytes: u64,
    pub source_format: Option<String>,
    pub capacity_bytes: Option<u64>,
}

impl TraceSummary {
    /// The summary of the trace at `path` from the one pass that checked it
    /// ([`TraceScan::of`]): a replay reads its trace once before it runs, not once per
    /// figure it needs.
    pub fn from_scan(path: &Path, scan: &TraceScan) -> TraceSummary {
        let (n, b) = (&scan.ios_by_op, &scan.bytes_by_op);
        TraceSummary {
            path: path.display().to_string(),
            ios: n.iter().sum(),
            read_ios: n[Op::Read.index()],
            write_ios: n[Op::Write.index()],
            trim_ios: n[Op::Trim.index()],
            flush_ios: n[Op::Flush.index()],
            read_bytes: b[Op::Read.index()],
            write_bytes: b[Op::Write.index()],
            duration_ns: scan
                .last_issue_ns
                .saturating_sub(scan.first_issue_ns.unwrap_or(0)),
            max_io_bytes: scan.max_len_bytes,
            source_format: scan.meta.source_format.clone(),
            capacity_bytes: scan.meta.capacity_bytes,
        }
    }

    /// Whether replaying the trace writes or trims.
    pub fn writes(&self) -> bool {
        self.write_ios + self.trim_ios > 0
    }
}

/// A replay's configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplayConfig {
    pub target: String,
    #[serde(default)]
    pub open: crate::targets::RealOpen,
    pub trace: TraceSummary,
    pub pacing: Pacing,
    /// Stop after this long on the target's clock.
    pub time_limit_ns: Option<u64>,
    /// Fold the trace onto this part of the target.
    pub span: Option<SpanSpec>,
    pub seed: u64,
    pub data: DataKind,
    pub log_ios: bool,
    /// Jobs that replay the trace at once: the trace's streams shared among them
    /// (`storbench_workload::replay::JobSplit`), each job with its own ring.
    #[serde(default = "crate::phase::one_job")]
    pub jobs: u32,
    /// The scan the summary came from, when the caller made one in this process: the
    /// run's input check takes it instead of reading the trace again. Not stored.
    #[serde(skip)]
    pub scan: Option<TraceScan>,
}

impl ReplayConfig {
    pub fn path(&self) -> PathBuf {
        PathBuf::from(&self.trace.path)
    }

    fn default_qd(&self) -> u32 {
        match self.pacing {
            Pacing::QueueDepth { default_qd } => default_qd,
            Pacing::FixedQd(n) => n,
            Pacing::Timed { .. } => 1,
        }
    }
}

/// The replay's own section of result.json.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplaySummary {
    /// I/Os of the trace replayed (fewer than the trace's when a time limit ended it).
    pub ios_replayed: u64,
    pub trace_ios: u64,
    pub fold_span_bytes: Option<u64>,
    pub fidelity: Option<Fidelity>,
}

impl Procedure for ReplayConfig {
    const NAME: &'static str = "replay";

    fn target_spec(&self) -> &str {
        &self.target
    }

    fn real_open(&self) -> crate::targets::RealOpen {
        self.open.clone()
    }

    fn trace(&self) -> Option<TraceSummary> {
        Some(self.trace.clone())
    }

    fn scanned(&self) -> Vec<(PathBuf, TraceScan)> {
        self.scan.iter().map(|s| (self.path(), s.clone())).collect()
    }

    fn plans(&self, _dir: &Path, info: &TargetInfo) -> Result<Vec<PhasePlan>, SuiteError> {
        if self.time_limit_ns == Some(0) {
            return Err(SuiteError::Invalid(
                "--time 0: a replay of no time does no work; hint: give a duration, e.g. --time 10s, or leave it out to replay the whole trace".into(),
            ));
        }
        crate::units::check_jobs(self.jobs).map_err(|e| SuiteError::Invalid(e.to_string()))?;
        let mut p = PhasePlan::new(
            "replay",
            "trace replay",
            Work::Replay {
                path: self.path(),
                default_qd: self.default_qd(),
                skip_trims: false,
            },
        );
        p.pacing = Some(self.pacing);
        p.time_limit_ns = self.time_limit_ns;
        p.data = self.data;
        p.seed = self.seed;
        p.log_ios = self.log_ios;
        p.stop_on_error = false;
        p.jobs = self.jobs;
        if let Some(s) = self.span {
            let lbs = u64::from(info.logical_block_bytes.max(1));
            let span = s
                .resolve(info.capacity_bytes, lbs)
                .map_err(|e| SuiteError::Invalid(format!("--span: {e}")))?;
            p.fold_span_bytes = Some(span);
        }
        Ok(vec![p])
    }

    fn summarize(
        &self,
        dir: &Path,
        runner: &Runner<'_>,
        records: &[PhaseRecord],
    ) -> Result<serde_json::Value, SuiteError> {
        let r = &records[0];
        let plan = &self.plans(dir, runner.target.info())?[0];
        let s = ReplaySummary {
            ios_replayed: r.ios_issued,
            trace_ios: self.trace.ios,
            fold_span_bytes: plan.fold_span_bytes,
            fidelity: r.fidelity.clone(),
        };
        Ok(serde_json::to_value(s).expect("summary serializes"))
    }
}
