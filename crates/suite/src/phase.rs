//! The resumable phase runner: every procedure is a fixed list of [`PhasePlan`]s
//! (known from its configuration before it starts), run in order through the one
//! engine loop.
//!
//! Long phases run in chunks: a chunk ends when the checkpoint interval has passed
//! (the observer raises the engine's stop flag; in-flight I/Os drain), its aggregates
//! are merged into the phase's partial result, its per-second rows are in the journal,
//! and a checkpoint is written. On a real target the interval is wall time; on the
//! simulated drive it is whole seconds (at least one) of the drive's own clock, so
//! where chunks end (and with them the drains, and every figure) does not depend on
//! the host's speed: same seeds, same result, however loaded the machine. (60 s of a
//! simulated drive's clock take well under a minute of wall time.) An I/O the engine
//! took from the source but had not submitted when the chunk ended is handed to the
//! next chunk first, so a chunk boundary never skips an I/O. A kill at any moment
//! therefore loses at most the current chunk; a resume continues from the last
//! checkpoint's source position with the remaining time, and the phase result merges
//! every chunk exactly (counts, bytes, busy time, service-time histograms, QD
//! distribution).
//!
//! The simulated drive lives in memory, so on resume its state is rebuilt first by
//! re-simulating, deterministically and without recording, the I/O the finished work
//! issued, chunk by chunk with the same drains (same seeds, same order, same timing):
//! [`Runner::rebuild`]. A resumed simulated run therefore ends exactly as an
//! uninterrupted one. Results of finished phases and the rows already recorded are
//! kept, never recomputed.

use crate::image::{FileImage, GeneratedImage};
use crate::purge::PurgeReport;
use crate::state::{Checkpoint, Journal, PhaseStatus, RunDir, StateError};
use crate::targets::SuiteTarget;
use serde::{Deserialize, Serialize};
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use storbench_engine::{
    run_phase, EngineError, Fidelity, NoObserver, Observer, Pacing, RunOptions,
};
use storbench_metrics::{PhaseMetrics, SecondSample};
use storbench_workload::generator::{GenSpec, Generator, Limit, Mix, Pattern};
use storbench_workload::{NextIo, Source, SourceError};

/// What one phase does.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Work {
    /// Return the drive to its fresh state (secure erase).
    Purge,
    /// `passes` sequential passes of `block_bytes` writes over `[start, start+len)`.
    SeqWrite {
        start_bytes: u64,
        len_bytes: u64,
        block_bytes: u64,
        qd: u32,
        passes: u32,
    },
    /// Uniform random writes of `block_bytes` over `[0, span)`; no end of its own.
    RandWrite {
        span_bytes: u64,
        block_bytes: u64,
        qd: u32,
        seed: u64,
    },
    /// One TRIM pass over `[0, span)` in `chunk_bytes` pieces.
    Trim {
        span_bytes: u64,
        chunk_bytes: u64,
        qd: u32,
    },
    /// Restore a generated image (see [`crate::image`]).
    GeneratedImage {
        span_bytes: u64,
        fill: f64,
        seed: u64,
        qd: u32,
    },
    /// Restore the user's image file.
    FileImage {
        path: PathBuf,
        span_bytes: u64,
        qd: u32,
    },
    /// Replay a Parquet trace, queue-depth pacing (idle time cut).
    Replay { path: PathBuf, default_qd: u32 },
    /// Leave the drive idle (no I/O) so it can do its background work.
    Idle { duration_ns: u64 },
}

impl Work {
    fn qd(&self) -> u32 {
        match self {
            Work::Purge | Work::Idle { .. } => 1,
            Work::SeqWrite { qd, .. }
            | Work::RandWrite { qd, .. }
            | Work::Trim { qd, .. }
            | Work::GeneratedImage { qd, .. }
            | Work::FileImage { qd, .. } => *qd,
            Work::Replay { default_qd, .. } => *default_qd,
        }
    }

    /// The source of this work, positioned after `skip` I/Os.
    pub fn source(&self, skip: u64) -> Result<Box<dyn Source>, SourceError> {
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
            Work::Replay { path, .. } => {
                let mut r = storbench_workload::replay::ReplaySource::open(path)?;
                for _ in 0..skip {
                    match r.next_io() {
                        Some(x) => {
                            x?;
                        }
                        None => break,
                    }
                }
                // Decode the trace on a helper thread, as `storbench replay` does: a
                // Parquet batch decode on the engine thread (a few ms) made every
                // timed I/O due meanwhile late.
                let p = storbench_engine::Prefetch::new(r).map_err(|e| {
                    SourceError::Invalid(format!(
                        "{}: starting the trace read-ahead thread: {e}",
                        path.display()
                    ))
                })?;
                Ok(Box::new(p))
            }
        }
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
        }
    }
}

/// The result of one phase, stored in the run state and in result.json.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhaseRecord {
    pub name: String,
    pub title: String,
    pub work: Work,
    pub time_limit_ns: Option<u64>,
    /// Aggregates merged over every chunk (series not included: see the journal and
    /// the phase's Parquet series). All zero for a purge.
    pub metrics: PhaseMetrics,
    pub purge: Option<PurgeReport>,
    /// I/Os the phase's source issued (the rebuild of a simulated drive re-issues them).
    pub ios_issued: u64,
    pub folded_ios: u64,
    pub aligned_ios: u64,
    /// Why the phase ended: `source-done`, `time-limit` or `steady-state`.
    pub ended: String,
    pub chunks: u32,
    /// I/Os submitted in each chunk (a rebuild re-simulates them chunk by chunk).
    #[serde(default)]
    pub chunk_ios: Vec<u64>,
    /// Process runs the phase took (1 unless it was interrupted and resumed).
    pub segments: u32,
    pub fidelity: Option<Fidelity>,
    /// Wall time the phase took, summed over segments.
    pub wall_ms: u64,
}

impl PhaseRecord {
    /// The record of a phase that drives no I/O through the engine (purge, idle),
    /// started at `t0`.
    fn without_io(plan: &PhasePlan, segments: u32, t0: Instant) -> PhaseRecord {
        PhaseRecord {
            name: plan.name.clone(),
            title: plan.title.clone(),
            work: plan.work.clone(),
            time_limit_ns: None,
            metrics: PhaseMetrics::default(),
            purge: None,
            ios_issued: 0,
            folded_ios: 0,
            aligned_ios: 0,
            ended: "source-done".into(),
            chunks: 0,
            chunk_ios: Vec::new(),
            segments,
            fidelity: None,
            wall_ms: t0.elapsed().as_millis() as u64,
        }
    }
}

/// One per-second row of a phase's series: the window start in ms since the phase
/// began (summed over chunks and resumes) and the engine's sample.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeriesRow {
    pub t_ms: u64,
    pub s: SecondSample,
}

/// Partial result of a phase in progress (the checkpoint's carry).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Partial {
    metrics: Option<PhaseMetrics>,
    ios_issued: u64,
    folded_ios: u64,
    aligned_ios: u64,
    chunks: u32,
    #[serde(default)]
    chunk_ios: Vec<u64>,
    wall_ms: u64,
    fidelity: Option<Fidelity>,
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
    #[error("interrupted during phase {phase}; progress is saved: continue with `--resume {dir}`")]
    Interrupted { phase: String, dir: PathBuf },
    #[error("phase {phase}: {first_error} ({errors} I/O errors)")]
    IoErrors {
        phase: String,
        errors: u64,
        first_error: String,
    },
    #[error("{0}")]
    Invalid(String),
}

/// How a procedure runs: stop flag (Ctrl-C, tests), progress bars, checkpoint interval.
#[derive(Clone, Debug)]
pub struct Control {
    /// Set to stop at the next chunk boundary with everything saved.
    pub stop: Arc<AtomicBool>,
    /// Show progress bars (the CLI sets this only on a terminal).
    pub progress: bool,
    /// Time between checkpoints inside a phase (at most 60 s): wall time on a real
    /// target; on a simulated drive the drive's clock, rounded up to whole seconds and
    /// stored with the run (a resume keeps the interval the run started with).
    pub checkpoint_interval: Duration,
    /// Print one line per phase to stderr.
    pub verbose: bool,
    /// The command line, recorded in result.json.
    pub command_line: Vec<String>,
}

impl Default for Control {
    fn default() -> Self {
        Control {
            stop: Arc::new(AtomicBool::new(false)),
            progress: false,
            checkpoint_interval: Duration::from_secs(60),
            verbose: false,
            command_line: Vec::new(),
        }
    }
}

/// A source that counts what it handed out, can end early (rebuilds), serves first an
/// I/O held back from the previous chunk, and remembers the last I/O it handed out
/// (the engine drops an I/O it took but had not submitted when a chunk stops).
struct Counted<'a> {
    inner: &'a mut dyn Source,
    issued: Rc<Cell<u64>>,
    limit: Option<u64>,
    held: Option<NextIo>,
    last: Option<NextIo>,
}

impl<'a> Counted<'a> {
    fn new(inner: &'a mut dyn Source, limit: Option<u64>, held: Option<NextIo>) -> Self {
        Counted {
            inner,
            issued: Rc::new(Cell::new(0)),
            limit,
            held,
            last: None,
        }
    }

    /// After the engine returned having submitted `submitted` I/Os: the I/O it took
    /// but never submitted (at most one: the engine holds one pending), to hand out
    /// first next time.
    fn unsubmitted(&mut self, submitted: u64) -> Option<NextIo> {
        let pulled = self.issued.get();
        assert!(
            pulled == submitted || pulled == submitted + 1,
            "engine took {pulled} I/Os from the source and submitted {submitted}"
        );
        if pulled > submitted {
            Some(
                self.last
                    .take()
                    .expect("the last I/O handed out is remembered"),
            )
        } else {
            None
        }
    }
}

impl Source for Counted<'_> {
    fn next_io(&mut self) -> Option<Result<NextIo, SourceError>> {
        if self.limit.is_some_and(|l| self.issued.get() >= l) {
            return None;
        }
        let r = match self.held.take() {
            Some(io) => Some(Ok(io)),
            None => self.inner.next_io(),
        };
        if let Some(Ok(io)) = &r {
            self.issued.set(self.issued.get() + 1);
            self.last = Some(*io);
        }
        r
    }
    fn total_ios(&self) -> Option<u64> {
        self.inner.total_ios()
    }
    fn total_bytes(&self) -> Option<u64> {
        self.inner.total_bytes()
    }
    fn trace_avg_qd(&self) -> Option<f64> {
        self.inner.trace_avg_qd()
    }
}

/// Watches one chunk: journals the per-second rows, ends the chunk at the checkpoint
/// interval or on a stop request, and watches for steady state.
struct ChunkObserver<'a> {
    journal: &'a mut Journal<SeriesRow>,
    base_ms: u64,
    appended: usize,
    started: Instant,
    interval: Duration,
    /// Simulated drives: end the chunk after this much of the drive's clock instead
    /// of `interval` of wall time.
    interval_target_ns: Option<u64>,
    chunk_stop: Arc<AtomicBool>,
    user_stop: Arc<AtomicBool>,
    error: Option<StateError>,
    /// Full-second IOPS of the whole phase so far (steady-state watch).
    iops: Vec<f64>,
    steady: Option<SteadyStop>,
    steady_hit: bool,
    progress: Option<&'a indicatif::ProgressBar>,
    base_elapsed_ns: u64,
    time_limited: bool,
    issued: Rc<Cell<u64>>,
    base_issued: u64,
}

impl Observer for ChunkObserver<'_> {
    fn on_tick(&mut self, elapsed_ns: u64, _done_ios: u64, series: &[SecondSample]) {
        for s in &series[self.appended.min(series.len())..] {
            let row = SeriesRow {
                t_ms: self.base_ms + s.t_s * 1000,
                s: *s,
            };
            if self.error.is_none() {
                if let Err(e) = self.journal.append(&row) {
                    self.error = Some(e);
                    self.chunk_stop.store(true, Ordering::Relaxed);
                }
            }
            if s.window_ns == storbench_metrics::NS_PER_S {
                self.iops.push(s.iops());
            }
        }
        self.appended = self.appended.max(series.len());
        if let Some(st) = self.steady {
            let round = st.round_s.max(1) as usize;
            let rounds: Vec<f64> = self
                .iops
                .chunks_exact(round)
                .map(|c| c.iter().sum::<f64>() / c.len() as f64)
                .collect();
            if !self.steady_hit
                && rounds.len() >= st.window_rounds
                && storbench_metrics::snia_steady_state(&rounds, st.window_rounds).is_some()
            {
                self.steady_hit = true;
                self.chunk_stop.store(true, Ordering::Relaxed);
            }
        }
        let due = match self.interval_target_ns {
            Some(v) => elapsed_ns >= v,
            None => self.started.elapsed() >= self.interval,
        };
        if due || self.user_stop.load(Ordering::Relaxed) {
            self.chunk_stop.store(true, Ordering::Relaxed);
        }
        if let Some(pb) = self.progress {
            if self.time_limited {
                pb.set_position((self.base_elapsed_ns + elapsed_ns) / 1_000_000_000);
            } else {
                pb.set_position(self.base_issued + self.issued.get());
            }
        }
    }
}

/// Runs a procedure's phases on one target inside one run directory.
pub struct Runner<'a> {
    pub rd: &'a mut RunDir,
    pub target: &'a mut SuiteTarget,
    pub ctl: &'a Control,
}

fn state_result<T: serde::de::DeserializeOwned>(
    v: &serde_json::Value,
    phase: &str,
) -> Result<T, SuiteError> {
    serde_json::from_value(v.clone()).map_err(|e| {
        SuiteError::Invalid(format!(
            "state.json: phase {phase}: stored result does not read back: {e}"
        ))
    })
}

impl Runner<'_> {
    fn say(&self, msg: &str) {
        if self.ctl.verbose {
            eprintln!("{msg}");
        }
    }

    /// The stored record of a finished phase.
    pub fn record(&self, name: &str) -> Result<Option<PhaseRecord>, SuiteError> {
        let p = self.rd.state.phase(name);
        match (&p.status, &p.result) {
            (PhaseStatus::Done, Some(v)) => Ok(Some(state_result(v, name)?)),
            _ => Ok(None),
        }
    }

    /// Read a phase's per-second series from its journal (all rows recorded so far).
    pub fn series(&self, name: &str) -> Result<Vec<SeriesRow>, SuiteError> {
        let path = self.rd.journal_path(name);
        if !path.exists() {
            return Ok(Vec::new());
        }
        Ok(Journal::<SeriesRow>::read_all(&path)?)
    }

    /// Rebuild the in-memory state of a simulated drive after a resume by re-running,
    /// without recording, the I/O of every finished phase and of the finished chunks of
    /// the phase in progress. Real targets keep their state: nothing to do. Returns
    /// the number of I/Os re-simulated.
    pub fn rebuild(&mut self, plans: &[PhasePlan]) -> Result<u64, SuiteError> {
        if self.target.persistent() || self.rd.state.resumes == 0 {
            return Ok(0);
        }
        let started = Instant::now();
        let mut total = 0u64;
        for plan in plans {
            let p = self.rd.state.phase(&plan.name).clone();
            // The I/Os of each finished chunk (one chunk of all of them for a record
            // written before chunks were kept).
            let chunks = |ios: u64, chunk_ios: Vec<u64>| {
                if chunk_ios.iter().sum::<u64>() == ios {
                    chunk_ios
                } else {
                    vec![ios]
                }
            };
            let (ios, chunk_ios) = match (&p.status, &p.result, &p.checkpoint) {
                (PhaseStatus::Done, Some(v), _) => {
                    let r: PhaseRecord = state_result(v, &plan.name)?;
                    (r.ios_issued, chunks(r.ios_issued, r.chunk_ios))
                }
                (PhaseStatus::Running, _, Some(cp)) => {
                    let carry: Partial = if cp.carry.is_null() {
                        Partial::default()
                    } else {
                        state_result(&cp.carry, &plan.name)?
                    };
                    (cp.cursor, chunks(cp.cursor, carry.chunk_ios))
                }
                (PhaseStatus::Running, _, None)
                    if matches!(plan.work, Work::Purge | Work::Idle { .. }) =>
                {
                    (0, Vec::new())
                }
                _ => break,
            };
            if plan.work == Work::Purge {
                if p.status == PhaseStatus::Done {
                    self.target.purge().map_err(|e| SuiteError::Io {
                        context: "rebuilding the simulated drive: purge".into(),
                        source: e,
                    })?;
                }
                continue;
            }
            if let Work::Idle { duration_ns } = plan.work {
                if p.status == PhaseStatus::Done {
                    storbench_engine::idle(self.target.target(), duration_ns).map_err(|e| {
                        SuiteError::Engine {
                            phase: plan.name.clone(),
                            source: e,
                        }
                    })?;
                }
                continue;
            }
            if ios == 0 {
                continue;
            }
            self.say(&format!(
                "  rebuilding the simulated drive: re-simulating {ios} I/Os of phase {}",
                plan.name
            ));
            let mut src = plan.work.source(0).map_err(|e| SuiteError::Source {
                phase: plan.name.clone(),
                source: e,
            })?;
            // Chunk by chunk, each ending in a drain as the original did, so the drive
            // ends in exactly the state the checkpoint saw.
            for n in chunk_ios {
                let mut counted = Counted::new(src.as_mut(), Some(n), None);
                let mut opts = RunOptions::new(Pacing::QueueDepth {
                    default_qd: plan.work.qd(),
                });
                opts.fold_span_bytes = plan.fold_span_bytes;
                let out = run_phase(self.target.target(), &mut counted, &opts, &mut NoObserver)
                    .map_err(|e| SuiteError::Engine {
                        phase: plan.name.clone(),
                        source: e,
                    })?;
                assert_eq!(out.submitted_ios, n, "phase {}: rebuild chunk", plan.name);
                total += n;
            }
            if p.status != PhaseStatus::Done {
                break;
            }
        }
        self.rd
            .state
            .extra
            .insert("last_rebuild_ios".into(), serde_json::json!(total));
        self.rd.state.extra.insert(
            "last_rebuild_wall_ms".into(),
            serde_json::json!(started.elapsed().as_millis() as u64),
        );
        self.rd.save()?;
        Ok(total)
    }

    /// Run `plan` (or return its stored record when it is already done).
    pub fn run(&mut self, plan: &PhasePlan) -> Result<PhaseRecord, SuiteError> {
        if let Some(r) = self.record(&plan.name)? {
            return Ok(r);
        }
        if self.ctl.stop.load(Ordering::Relaxed) {
            return Err(SuiteError::Interrupted {
                phase: plan.name.clone(),
                dir: self.rd.dir().to_owned(),
            });
        }
        let cp = self.rd.begin_phase(&plan.name)?;
        let segments = self.rd.state.phase(&plan.name).segments;
        self.say(&format!("phase {}: {}", plan.name, plan.title));
        if plan.work == Work::Purge {
            let t0 = Instant::now();
            let purge = self.target.purge().map_err(|e| SuiteError::Io {
                context: format!("phase {}: purge", plan.name),
                source: e,
            })?;
            return self.store(PhaseRecord {
                purge: Some(purge),
                ..PhaseRecord::without_io(plan, segments, t0)
            });
        }

        if let Work::Idle { duration_ns } = plan.work {
            let t0 = Instant::now();
            storbench_engine::idle(self.target.target(), duration_ns).map_err(|e| {
                SuiteError::Engine {
                    phase: plan.name.clone(),
                    source: e,
                }
            })?;
            return self.store(PhaseRecord {
                time_limit_ns: Some(duration_ns),
                metrics: PhaseMetrics {
                    elapsed_ns: duration_ns,
                    ..PhaseMetrics::default()
                },
                ended: "time-limit".into(),
                ..PhaseRecord::without_io(plan, segments, t0)
            });
        }
        let mut partial: Partial = match &cp {
            Some(c) if !c.carry.is_null() => {
                serde_json::from_value(c.carry.clone()).map_err(|e| {
                    SuiteError::Invalid(format!(
                        "state.json: phase {}: checkpoint does not read back: {e}",
                        plan.name
                    ))
                })?
            }
            _ => Partial::default(),
        };
        let keep_rows = cp.as_ref().map_or(0, |c| c.series_rows);
        let (mut journal, kept) =
            Journal::<SeriesRow>::open(&self.rd.journal_path(&plan.name), keep_rows)?;
        let mut iops: Vec<f64> = kept
            .iter()
            .filter(|r| r.s.window_ns == storbench_metrics::NS_PER_S)
            .map(|r| r.s.iops())
            .collect();

        let pb = if self.ctl.progress {
            let total = match plan.time_limit_ns {
                Some(l) => l / 1_000_000_000,
                None => plan
                    .work
                    .source(0)
                    .ok()
                    .and_then(|s| s.total_ios())
                    .unwrap_or(0),
            };
            let pb = indicatif::ProgressBar::new(total);
            let unit = if plan.time_limit_ns.is_some() {
                "s"
            } else {
                "I/Os"
            };
            pb.set_style(
                indicatif::ProgressStyle::with_template(&format!(
                    "{{msg:>14}} [{{bar:40}}] {{pos}}/{{len}} {unit} ETA {{eta}}"
                ))
                .expect("valid template")
                .progress_chars("=> "),
            );
            pb.set_message(plan.name.clone());
            Some(pb)
        } else {
            None
        };

        // One source per process run of the phase, positioned once at the checkpoint's
        // cursor and shared by its chunks (re-skipping per chunk would be quadratic).
        let mut src = plan
            .work
            .source(partial.ios_issued)
            .map_err(|e| SuiteError::Source {
                phase: plan.name.clone(),
                source: e,
            })?;
        let ended: &str;
        // An I/O taken from the source but not submitted when the last chunk ended.
        let mut held: Option<NextIo> = None;
        // Whole seconds of the drive's clock (at least one), so that each chunk holds
        // whole per-second windows and only its drain makes a short one.
        let interval_target_ns = (!self.target.persistent()).then(|| {
            let ns = self
                .rd
                .state
                .extra
                .get(crate::procedure::SIM_CHUNK_KEY)
                .and_then(|v| v.as_u64())
                .unwrap_or(self.ctl.checkpoint_interval.as_nanos() as u64);
            ns.div_ceil(storbench_metrics::NS_PER_S).max(1) * storbench_metrics::NS_PER_S
        });
        loop {
            let elapsed_before = partial.metrics.as_ref().map_or(0, |m| m.elapsed_ns);
            let remaining = plan.time_limit_ns.map(|l| l.saturating_sub(elapsed_before));
            if remaining == Some(0) {
                ended = "time-limit";
                break;
            }
            let t0 = Instant::now();
            let mut counted = Counted::new(src.as_mut(), None, held.take());
            let issued = counted.issued.clone();
            let chunk_stop = Arc::new(AtomicBool::new(false));
            let mut opts = RunOptions::new(Pacing::QueueDepth {
                default_qd: plan.work.qd(),
            });
            opts.time_limit_ns = remaining;
            opts.stop = Some(chunk_stop.clone());
            opts.fold_span_bytes = plan.fold_span_bytes;
            opts.seed = partial.ios_issued ^ 0x5354_4f52;
            if let Some(v) = interval_target_ns {
                // The observer ends a chunk at a tick: tick at least once per interval.
                opts.tick_ns = opts.tick_ns.min(v);
            }
            let mut obs = ChunkObserver {
                journal: &mut journal,
                base_ms: elapsed_before / 1_000_000,
                appended: 0,
                started: t0,
                interval: self.ctl.checkpoint_interval,
                interval_target_ns,
                chunk_stop: chunk_stop.clone(),
                user_stop: self.ctl.stop.clone(),
                error: None,
                iops: std::mem::take(&mut iops),
                steady: plan.steady_stop,
                steady_hit: false,
                progress: pb.as_ref(),
                base_elapsed_ns: elapsed_before,
                time_limited: plan.time_limit_ns.is_some(),
                issued: issued.clone(),
                base_issued: partial.ios_issued,
            };
            let mut outcome = run_phase(self.target.target(), &mut counted, &opts, &mut obs)
                .map_err(|e| SuiteError::Engine {
                    phase: plan.name.clone(),
                    source: e,
                })?;
            let steady_hit = obs.steady_hit;
            iops = std::mem::take(&mut obs.iops);
            held = counted.unsubmitted(outcome.submitted_ios);
            if let Some(e) = obs.error.take() {
                return Err(e.into());
            }
            if outcome.metrics.errors > 0 {
                return Err(SuiteError::IoErrors {
                    phase: plan.name.clone(),
                    errors: outcome.metrics.errors,
                    first_error: outcome.first_error.clone().unwrap_or_default(),
                });
            }
            // The chunk's per-second rows are in the journal; the carry holds aggregates.
            let mut chunk = std::mem::take(&mut outcome.metrics);
            chunk.series.clear();
            match &mut partial.metrics {
                Some(m) => m
                    .append(&chunk)
                    .expect("service-time histograms of one build merge"),
                None => partial.metrics = Some(chunk),
            }
            // The cursor counts submitted I/Os: a resume skips exactly those, and the
            // one held back (if any) is the next the source hands out.
            partial.ios_issued += outcome.submitted_ios;
            partial.chunk_ios.push(outcome.submitted_ios);
            // The engine counts folds and alignments of issued I/Os only, so the one
            // held back is counted once, by the chunk that issues it.
            partial.folded_ios += outcome.folded_ios;
            partial.aligned_ios += outcome.aligned_ios;
            partial.chunks += 1;
            partial.wall_ms += t0.elapsed().as_millis() as u64;
            partial.fidelity = Some(outcome.fidelity.clone());
            journal.sync()?;
            let m = partial.metrics.as_ref().expect("just set");
            let cp = Checkpoint {
                phase_elapsed_ns: m.elapsed_ns,
                ios_done: m.read_ios + m.write_ios + m.trim_ios + m.flush_ios,
                bytes_done: m.read_bytes + m.write_bytes + m.trim_bytes,
                cursor: partial.ios_issued,
                series_rows: journal.rows(),
                wall_unix_ms: 0,
                carry: serde_json::to_value(&partial).expect("partial serializes"),
            };
            self.rd.checkpoint(&plan.name, cp)?;
            if steady_hit {
                ended = "steady-state";
                break;
            }
            if outcome.complete {
                ended = if plan.time_limit_ns.is_some() && src_not_exhausted(&plan.work) {
                    "time-limit"
                } else {
                    "source-done"
                };
                break;
            }
            if self.ctl.stop.load(Ordering::Relaxed) {
                if let Some(pb) = &pb {
                    pb.abandon();
                }
                return Err(SuiteError::Interrupted {
                    phase: plan.name.clone(),
                    dir: self.rd.dir().to_owned(),
                });
            }
        }
        if let Some(pb) = &pb {
            pb.finish_and_clear();
        }
        let rec = PhaseRecord {
            name: plan.name.clone(),
            title: plan.title.clone(),
            work: plan.work.clone(),
            time_limit_ns: plan.time_limit_ns,
            metrics: partial.metrics.unwrap_or_default(),
            purge: None,
            ios_issued: partial.ios_issued,
            folded_ios: partial.folded_ios,
            aligned_ios: partial.aligned_ios,
            ended: ended.into(),
            chunks: partial.chunks,
            chunk_ios: partial.chunk_ios,
            segments,
            fidelity: partial.fidelity,
            wall_ms: partial.wall_ms,
        };
        self.store(rec)
    }

    /// Mark the phase done with this record in the run state.
    fn store(&mut self, rec: PhaseRecord) -> Result<PhaseRecord, SuiteError> {
        self.rd.finish_phase(
            &rec.name,
            serde_json::to_value(&rec).expect("record serializes"),
        )?;
        Ok(rec)
    }
}

/// Random writes never run out; they end by the time limit.
fn src_not_exhausted(w: &Work) -> bool {
    matches!(w, Work::RandWrite { .. })
}

/// The journal of `phase` in `dir` (for readers outside a run).
pub fn journal_path(dir: &Path, phase: &str) -> PathBuf {
    dir.join(crate::state::JOURNAL_DIR)
        .join(format!("{phase}.jsonl"))
}
