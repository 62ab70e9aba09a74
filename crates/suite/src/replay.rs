//! `storbench replay TRACE`: a trace on a target, as a procedure of one phase (see
//! [`crate::run`]): queue-depth, timed or fixed-QD pacing, optionally folded onto part
//! of the target. I/O failures are counted and do not stop it.

use crate::phase::{PhasePlan, PhaseRecord, Runner, SuiteError, Work};
use crate::procedure::Procedure;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use storbench_engine::{DataKind, Fidelity, Pacing, TargetInfo};
use storbench_trace::store::Columns;
use storbench_trace::{IoRecord, Op, TraceError, TraceReader};
use storbench_workload::generator::SpanSpec;

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
    /// Read the trace at `path` once.
    pub fn scan(path: &Path) -> Result<TraceSummary, TraceError> {
        let mut r = TraceReader::open_columns(path, Columns::NoNames)?;
        let meta = r.meta().clone();
        let mut batch: Vec<IoRecord> = Vec::new();
        let mut counts = [0u64; 4];
        let mut bytes = [0u64; 4];
        let mut max_len = 0u64;
        let mut first = None;
        let mut last = 0u64;
        while r.next_batch(&mut batch)? {
            for rec in &batch {
                counts[rec.op.index()] += 1;
                bytes[rec.op.index()] += rec.len_bytes;
                if rec.op.is_data() {
                    max_len = max_len.max(rec.len_bytes);
                }
                first.get_or_insert(rec.issue_ns);
                last = last.max(rec.issue_ns);
            }
        }
        Ok(TraceSummary {
            path: path.display().to_string(),
            ios: counts.iter().sum(),
            read_ios: counts[Op::Read.index()],
            write_ios: counts[Op::Write.index()],
            trim_ios: counts[Op::Trim.index()],
            flush_ios: counts[Op::Flush.index()],
            read_bytes: bytes[Op::Read.index()],
            write_bytes: bytes[Op::Write.index()],
            duration_ns: last.saturating_sub(first.unwrap_or(0)),
            max_io_bytes: max_len,
            source_format: meta.source_format,
            capacity_bytes: meta.capacity_bytes,
        })
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

    fn plans(&self, _dir: &Path, info: &TargetInfo) -> Result<Vec<PhasePlan>, SuiteError> {
        if self.time_limit_ns == Some(0) {
            return Err(SuiteError::Invalid(
                "--time 0: a replay of no time does no work; hint: give a duration, e.g. --time 10s, or leave it out to replay the whole trace".into(),
            ));
        }
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
