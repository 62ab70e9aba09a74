//! A procedure's phases: what each does ([`Work`], [`PhasePlan`]), what it measured
//! ([`PhaseRecord`]), and how a run is controlled ([`Control`]). Every procedure,
//! `run` and `replay` included, is a fixed list of plans (known from its
//! configuration before it starts) that [`Runner`](crate::runner::Runner) runs in
//! order through the one engine loop, with checkpoints that change nothing.

use crate::image::{FileImage, GeneratedImage};
use crate::state::StateError;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;
use storbench_engine::{DataKind, EngineError, Pacing};
use storbench_metrics::{PhaseMetrics, SecondSample};
pub use storbench_results::phase::{PhaseRecord, Work};
use storbench_trace::Op;
use storbench_workload::generator::{GenSpec, Generator, Limit, Mix, Pattern};
use storbench_workload::{NextIo, Source, SourceError};

pub use crate::runner::{journal_path, Runner};

/// What the suite does with a phase's [`Work`]: the I/O source it runs.
pub trait WorkSource {
    /// The source of this work, positioned after `skip` I/Os.
    fn source(&self, skip: u64) -> Result<Box<dyn Source>, SourceError>;
}

impl WorkSource for Work {
    fn source(&self, skip: u64) -> Result<Box<dyn Source>, SourceError> {
        let gen = |spec: GenSpec| -> Result<Box<dyn Source>, SourceError> {
            let mut g = Generator::new(spec)?;
            for _ in 0..skip {
                match g.next_io() {
                    Some(r) => {
                        r?;
                    }
                    None => break,
                }
            }
            Ok(Box::new(g))
        };
        match self {
            Work::Purge | Work::Idle { .. } => Err(SourceError::Invalid(
                "a purge or idle phase has no I/O source".into(),
            )),
            Work::SeqWrite {
                start_bytes,
                len_bytes,
                block_bytes,
                qd,
                passes,
            } => gen(GenSpec {
                pattern: Pattern::Sequential,
                mix: Mix::ReadWrite { read_pct: 0 },
                block_bytes: *block_bytes,
                qd: *qd,
                span_start_bytes: *start_bytes,
                span_bytes: *len_bytes,
                limit: Limit::Bytes(len_bytes * u64::from(*passes)),
                seed: 0,
            }),
            Work::RandWrite {
                span_bytes,
                block_bytes,
                qd,
                seed,
            } => gen(GenSpec {
                pattern: Pattern::Random,
                mix: Mix::ReadWrite { read_pct: 0 },
                block_bytes: *block_bytes,
                qd: *qd,
                span_start_bytes: 0,
                span_bytes: *span_bytes,
                limit: Limit::None,
                seed: *seed,
            }),
            Work::Trim {
                span_bytes,
                chunk_bytes,
                qd,
            } => gen(GenSpec {
                qd: *qd,
                ..GenSpec::trim_span(0, *span_bytes, *chunk_bytes)
            }),
            Work::GeneratedImage {
                span_bytes,
                fill,
                seed,
                ..
            } => Ok(Box::new(GeneratedImage::new(
                *span_bytes,
                *fill,
                *seed,
                skip,
            ))),
            Work::FileImage {
                path, span_bytes, ..
            } => Ok(Box::new(FileImage::open(path, *span_bytes, skip)?)),
            Work::TraceImage {
                path, span_bytes, ..
            } => Ok(Box::new(crate::image::TraceImage::open(
                path,
                *span_bytes,
                skip,
            )?)),
            Work::Generate { spec } => gen(spec.clone()),
            Work::Replay {
                path, skip_trims, ..
            } => {
                let r = storbench_workload::replay::ReplaySource::open(path)?;
                if *skip_trims {
                    prefetched(NoTrims(r), skip, path)
                } else {
                    prefetched(r, skip, path)
                }
            }
        }
    }
}

/// `source` after `skip` I/Os, decoded on a helper thread, as `storbench replay` does:
/// a Parquet batch decode on the engine thread (a few ms) made every timed I/O due
/// meanwhile late.
fn prefetched<S: Source + Send + 'static>(
    mut r: S,
    skip: u64,
    path: &std::path::Path,
) -> Result<Box<dyn Source>, SourceError> {
    for _ in 0..skip {
        match r.next_io() {
            Some(x) => {
                x?;
            }
            None => break,
        }
    }
    let p = storbench_engine::Prefetch::new(r).map_err(|e| {
        SourceError::Invalid(format!(
            "{}: starting the trace read-ahead thread: {e}",
            path.display()
        ))
    })?;
    Ok(Box::new(p))
}

/// A trace without its TRIMs (`bench --no-trim`): the rest in the trace's order.
struct NoTrims<S>(S);

impl<S: Source> Source for NoTrims<S> {
    fn next_io(&mut self) -> Option<Result<NextIo, SourceError>> {
        loop {
            match self.0.next_io()? {
                Ok(io) if io.op == Op::Trim => continue,
                r => return Some(r),
            }
        }
    }
    fn total_bytes(&self) -> Option<u64> {
        self.0.total_bytes()
    }
    fn trace_avg_qd(&self) -> Option<f64> {
        self.0.trace_avg_qd()
    }
}

/// Stop a time-limited random-write phase once the SNIA steady-state rule holds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SteadyStop {
    pub round_s: u64,
    pub window_rounds: usize,
}

/// One phase of a procedure.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhasePlan {
    pub name: String,
    /// What the phase is for, in words (reports).
    pub title: String,
    pub work: Work,
    /// Phase length on the target's clock (random writes); `None`: until the source ends.
    pub time_limit_ns: Option<u64>,
    /// I/Os are folded onto `[0, fold_span_bytes)` (trace bench `--span`).
    pub fold_span_bytes: Option<u64>,
    pub steady_stop: Option<SteadyStop>,
    /// How I/Os are paced; `None`: queue-depth at the work's QD.
    #[serde(default)]
    pub pacing: Option<Pacing>,
    /// Queue-depth replay: the trace's idle gaps kept up to this long (`None`: cut).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_idle_ns: Option<u64>,
    /// Content of written data.
    #[serde(default = "random_data")]
    pub data: DataKind,
    /// Seed of the written data (mixed with a fixed one).
    #[serde(default)]
    pub seed: u64,
    /// Log every completed I/O to `ios.parquet`.
    #[serde(default)]
    pub log_ios: bool,
    /// End the phase (and the run, with an error) at the first whole second after an
    /// I/O failed; `false` runs on, counting failures (`run`, `replay`).
    #[serde(default = "yes")]
    pub stop_on_error: bool,
}

pub(crate) fn random_data() -> DataKind {
    DataKind::Random
}

/// `plans` with every write carrying `data` (`--data` of a procedure).
pub(crate) fn with_data(mut plans: Vec<PhasePlan>, data: DataKind) -> Vec<PhasePlan> {
    for p in &mut plans {
        p.data = data;
    }
    plans
}

fn yes() -> bool {
    true
}

impl PhasePlan {
    pub fn new(name: &str, title: &str, work: Work) -> PhasePlan {
        PhasePlan {
            name: name.to_owned(),
            title: title.to_owned(),
            work,
            time_limit_ns: None,
            fold_span_bytes: None,
            steady_stop: None,
            pacing: None,
            max_idle_ns: None,
            data: DataKind::Random,
            seed: 0,
            log_ios: false,
            stop_on_error: true,
        }
    }

    /// The pacing the engine uses.
    pub fn pacing(&self) -> Pacing {
        self.pacing.unwrap_or(Pacing::QueueDepth {
            default_qd: self.work.qd(),
        })
    }
}

/// The record of a phase that drives no I/O through the engine (purge, idle).
pub(crate) fn without_io(plan: &PhasePlan, segments: u32, wall_ms: u64) -> PhaseRecord {
    PhaseRecord {
        name: plan.name.clone(),
        title: plan.title.clone(),
        work: plan.work.clone(),
        time_limit_ns: None,
        metrics: PhaseMetrics::default(),
        purge: None,
        issued_ios: 0,
        folded_ios: 0,
        aligned_ios: 0,
        aligned_extra_bytes: 0,
        ended: "source-done".into(),
        segments,
        fidelity: None,
        first_error: None,
        counters: None,
        wall_ms,
    }
}

/// One per-second row of a phase's series: the window start in ms since the phase
/// began (a whole number of seconds; `s.t_s` is the same in seconds) and the sample.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeriesRow {
    pub t_ms: u64,
    pub s: SecondSample,
}

#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    #[error(transparent)]
    State(#[from] StateError),
    #[error("phase {phase}: {source}")]
    Engine {
        phase: String,
        #[source]
        source: EngineError,
    },
    #[error("phase {phase}: {source}")]
    Source {
        phase: String,
        #[source]
        source: SourceError,
    },
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Target(#[from] crate::targets::TargetOpenError),
    #[error("interrupted during phase {phase}; rolled back to the last checkpoint ({at}), which is saved: continue with `--resume {dir}`")]
    Interrupted {
        phase: String,
        dir: PathBuf,
        /// Where the run stands, in words (`12 s into the phase`).
        at: String,
    },
    #[error("phase {phase}: {first_error} ({errors} I/O errors)")]
    IoErrors {
        phase: String,
        errors: u64,
        first_error: String,
    },
    #[error("{0}")]
    Invalid(String),
    /// Input the run cannot use, refused before it writes anything, with what to do.
    #[error("{message}\n  hint: {hint}")]
    Refused { message: String, hint: String },
}

/// How a procedure runs: stop flag (Ctrl-C, tests), progress bars, checkpoint interval.
#[derive(Clone, Debug)]
pub struct Control {
    /// Set (by a signal) to stop at the next whole second of the phase, checkpointed
    /// there: the run rolls back to that checkpoint, as after a kill.
    pub stop: Arc<AtomicBool>,
    /// Show progress bars (the CLI sets this only on a terminal).
    pub progress: bool,
    /// Time between checkpoints inside a phase (at most 60 s): wall time on a real
    /// target, the drive's clock on a simulated one. Checkpoints are taken at whole
    /// seconds of the phase and change no figure.
    pub checkpoint_interval: Duration,
    /// Print one line per phase to stderr.
    pub verbose: bool,
    /// The command line, recorded in result.json.
    pub command_line: Vec<String>,
    /// A new run may discard the run (or results) already in its directory.
    pub replace: bool,
}

impl Default for Control {
    fn default() -> Self {
        Control {
            stop: Arc::new(AtomicBool::new(false)),
            progress: false,
            checkpoint_interval: Duration::from_secs(60),
            verbose: false,
            command_line: Vec::new(),
            replace: false,
        }
    }
}
