//! `storbench replay TRACE`: a trace on a target, as a procedure of one phase (see
//! [`crate::run`]): queue-depth, timed or fixed-QD pacing, optionally folded onto part
//! of the target. I/O failures are counted and do not stop it.

use crate::args::{self, EngineArgs, TargetChoice};
use crate::phase::{PhasePlan, PhaseRecord, Runner, SuiteError, Work};
use crate::procedure::{Configured, Procedure};
use std::path::{Path, PathBuf};
use std::time::Duration;
use storbench_engine::{BufferPlan, Pacing, TargetInfo};
pub use storbench_results::replay::{ReplayConfig, ReplaySummary};
pub use storbench_results::trace::TraceSummary;
use storbench_trace::Op;
use storbench_workload::generator::SpanSpec;
use storbench_workload::replay::TraceScan;

/// `storbench replay`'s own options.
#[derive(clap::Args, Clone, Debug, PartialEq)]
pub struct ReplayArgs {
    /// The trace (Parquet, as written by import, record or synth)
    #[arg(required_unless_present = "resume")]
    pub trace: Option<PathBuf>,
    #[command(flatten)]
    pub engine: EngineArgs,
    /// How I/Os are paced
    #[arg(long, value_enum, default_value = "queue-depth")]
    pub mode: args::Mode,
    /// timed: replay speed factor (2 = twice as fast)
    #[arg(long, default_value_t = 1.0)]
    pub speed: f64,
    /// timed: cut idle gaps longer than this (250ms, 1s, 2min), or `none`
    #[arg(long = "max-idle", default_value = "1s", value_name = "TIME|none",
        value_parser = args::max_idle)]
    pub max_idle: args::MaxIdle,
    /// Stop after this long (250us, 10s, 2min, 1h; a bare number is seconds)
    #[arg(long, visible_alias = "duration", value_name = "TIME", value_parser = args::duration)]
    pub time: Option<Duration>,
    /// Fold the trace onto the first BYTES (or PERCENT%) of the target
    #[arg(long, value_name = "SIZE|PCT%", value_parser = args::span)]
    pub span: Option<SpanSpec>,
    /// Seed of the written data: the same seed, the same data
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Log every I/O to DIR/ios.parquet
    #[arg(long = "log-ios")]
    pub log_ios: bool,
}

/// The summary of the trace at `path` from the one pass that checked it
/// ([`TraceScan::of`]): a replay reads its trace once before it runs, not once per
/// figure it needs.
pub fn trace_summary(path: &Path, scan: &TraceScan) -> TraceSummary {
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

impl ReplayArgs {
    fn pacing(&self, qd: u32) -> Result<Pacing, SuiteError> {
        Ok(match self.mode {
            args::Mode::QueueDepth => Pacing::QueueDepth { default_qd: qd },
            args::Mode::FixedQd => Pacing::FixedQd(qd),
            args::Mode::Timed => {
                if !(self.speed > 0.0 && self.speed.is_finite()) {
                    return Err(SuiteError::Invalid(format!(
                        "--speed {}: must be a positive number",
                        self.speed
                    )));
                }
                Pacing::Timed {
                    speed: self.speed,
                    max_idle_ns: self.max_idle.0.map(args::ns),
                }
            }
        })
    }
}

impl Procedure for ReplayConfig {
    const NAME: &'static str = "replay";
    type Args = ReplayArgs;
    type Summary = ReplaySummary;

    /// One pass over the trace; the trace read whole and checked first, and the buffers
    /// sized for it (issue 19: as many I/Os as the trace, or --qd, keeps in flight,
    /// each as large as its largest I/O, within --buffer-memory).
    fn configure(a: &ReplayArgs, target: &TargetChoice) -> Result<Configured<Self>, SuiteError> {
        let trace = a
            .trace
            .as_deref()
            .expect("clap requires the trace without --resume");
        if !trace.exists() {
            return Err(SuiteError::Refused {
                message: format!("trace {} does not exist", trace.display()),
                hint: "make one with `storbench import`, `storbench record` or `storbench synth`"
                    .into(),
            });
        }
        let qd = a.engine.qd_or(args::DEFAULT_QD)?;
        let pacing = a.pacing(qd)?;
        let time_limit_ns = a.time.map(args::ns);
        if time_limit_ns == Some(0) {
            return Err(SuiteError::Refused {
                message: "--time 0: a replay of no time does no work".into(),
                hint: "give a duration, e.g. --time 10s, or leave it out to replay the whole trace"
                    .into(),
            });
        }
        let path = std::fs::canonicalize(trace).map_err(|e| SuiteError::Refused {
            message: format!("trace {}: {e}", trace.display()),
            hint: "check the path".into(),
        })?;
        // Opening reads the footer: not Parquet, or not a trace, is the user's input
        // (exit 2), a failed read an I/O failure. The scan then reads every row.
        storbench_trace::TraceReader::open(&path).map_err(args::trace_input)?;
        let scan = TraceScan::of(&path).map_err(|e| SuiteError::Refused {
            message: e.to_string(),
            hint: "is the input a storbench Parquet trace? (storbench import makes one)".into(),
        })?;
        let summary = trace_summary(&path, &scan);
        let want = match pacing {
            Pacing::FixedQd(n) => n as usize,
            _ => (scan.max_in_flight as usize).max(qd as usize),
        };
        let cap = target
            .open
            .buffer_memory_bytes
            .unwrap_or(storbench_engine::DEFAULT_BUFFER_MEMORY_BYTES);
        let plan = BufferPlan::new(want, summary.max_io_bytes.max(4096), cap).map_err(|e| {
            SuiteError::Refused {
                message: format!("{}: row {}: {e}", path.display(), scan.max_len_row),
                hint: "raise --buffer-memory, or fold the trace with `storbench export --span`"
                    .into(),
            }
        })?;
        // Past the cap, the suite notes in the result how many it kept in flight.
        Ok(Configured::new(ReplayConfig {
            target: target.spec.clone(),
            open: crate::targets::RealOpen {
                write: summary.writes(),
                max_in_flight: Some(plan.slots),
                buffer_bytes: Some(plan.slot_bytes),
                buffer_memory_bytes: Some(cap),
                ..a.engine.open(target)
            },
            trace: summary,
            pacing,
            time_limit_ns,
            span: a.span,
            seed: a.seed,
            data: a.engine.data,
            log_ios: a.log_ios,
        })
        .with_scan(path, scan))
    }

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
    ) -> Result<ReplaySummary, SuiteError> {
        let r = &records[0];
        let plan = &self.plans(dir, runner.target.info())?[0];
        let s = ReplaySummary {
            replayed_ios: r.issued_ios,
            trace_ios: self.trace.ios,
            fold_span_bytes: plan.fold_span_bytes,
            fidelity: r.fidelity.clone(),
        };
        Ok(s)
    }
}
