//! The resumable phase runner: runs a procedure's [`PhasePlan`]s in order through the
//! one engine loop, in one run directory, on one target.
//!
//! A phase runs as one engine loop from its start to its end: checkpoints never stop
//! or drain it. At a whole second of the phase (the engine's
//! [`Observer::on_second`]), when the checkpoint interval has passed (wall time on a
//! real target, the drive's clock on a simulated one) or a signal asked to stop, the
//! runner journals the per-second rows and saves a checkpoint: the phase's result up
//! to that instant (I/Os in flight not counted), the source's position, and the I/Os
//! in flight. Checkpoints therefore change no figure, whatever their interval.
//!
//! A signal stops the run at the next whole second, checkpointed there, and rolls back
//! to that checkpoint, as a kill -9 rolls back to the last one. A resume continues
//! from the checkpoint:
//! - on a real target (whose state is on the device) with the phase's result so far,
//!   the I/Os that were in flight issued again first, then the source from its
//!   position, and the rest of the phase time;
//! - on the simulated drive (whose state lives in memory) by re-simulating,
//!   deterministically, every finished phase ([`Runner::rebuild`]) and the current
//!   one from its start, checking each re-simulated second against the row kept in
//!   the journal and recording from the checkpoint on. A resumed simulated run ends
//!   exactly as an uninterrupted one, bit for bit.

use crate::health::{self, HealthSnapshot};
use crate::phase::{Control, PhasePlan, PhaseRecord, SeriesRow, SuiteError, Work, WorkSource};
use crate::progress::Progress;
use crate::state::{Checkpoint, Journal, PhaseStatus, RunDir};
use crate::targets::SuiteTarget;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Instant;
use storbench_engine::{
    run_phase, Fidelity, Flow, InFlightIo, NoObserver, Observer, PhaseOutcome, RunOptions,
    SecondMark,
};
use storbench_metrics::{PhaseMetrics, SecondSample, NS_PER_S};
use storbench_report::IoLogWriter;
use storbench_trace::{IoRecord, TraceMeta};
use storbench_workload::{NextIo, Source, SourceError};

/// Seed of the write-data filler of every phase (data content, not I/O order).
const DATA_SEED: u64 = 0x5354_4f52;

/// The phase's result so far, merged over the process runs (segments) that ran it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct Tally {
    /// Series not included (they are in the journal).
    metrics: Option<PhaseMetrics>,
    folded_ios: u64,
    aligned_ios: u64,
    #[serde(default)]
    aligned_extra_bytes: u64,
    fidelity: Option<Fidelity>,
    first_error: Option<String>,
    wall_ms: u64,
}

impl Tally {
    /// This tally followed by a segment's outcome, which took `wall_ms`.
    fn plus(&self, seg: &PhaseOutcome, wall_ms: u64) -> Tally {
        let mut m = seg.metrics.clone();
        m.series.clear();
        let metrics = match &self.metrics {
            None => m,
            Some(base) => {
                let mut all = base.clone();
                all.append(&m)
                    .expect("service-time histograms of one build merge");
                all
            }
        };
        let mut fidelity = seg.fidelity.clone();
        if let Some(b) = &self.fidelity {
            fidelity.slot_starved_ios += b.slot_starved_ios;
            fidelity.qd_capped_ios += b.qd_capped_ios;
            fidelity.trace_avg_qd = fidelity.trace_avg_qd.or(b.trace_avg_qd);
        }
        // The whole phase's QD, not the last segment's.
        if fidelity.replayed_avg_qd.is_some() {
            fidelity.replayed_avg_qd = Some(metrics.qd.mean_over_busy);
        }
        Tally {
            metrics: Some(metrics),
            folded_ios: self.folded_ios + seg.folded_ios,
            aligned_ios: self.aligned_ios + seg.aligned_ios,
            aligned_extra_bytes: self.aligned_extra_bytes + seg.aligned_extra_bytes,
            fidelity: Some(fidelity),
            first_error: self.first_error.clone().or(seg.first_error.clone()),
            wall_ms: self.wall_ms + wall_ms,
        }
    }

    /// The phase's record from this tally.
    fn record(self, plan: &PhasePlan, issued_ios: u64, ended: &str, segments: u32) -> PhaseRecord {
        PhaseRecord {
            name: plan.name.clone(),
            title: plan.title.clone(),
            work: plan.work.clone(),
            time_limit_ns: plan.time_limit_ns,
            metrics: self.metrics.unwrap_or_default(),
            purge: None,
            issued_ios,
            folded_ios: self.folded_ios,
            aligned_ios: self.aligned_ios,
            aligned_extra_bytes: self.aligned_extra_bytes,
            ended: ended.into(),
            segments,
            fidelity: self.fidelity,
            first_error: self.first_error,
            counters: None,
            wall_ms: self.wall_ms,
        }
    }
}

/// What a checkpoint carries besides its counts (`Checkpoint::carry` in state.json).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Carry {
    /// The phase's result up to the checkpoint, I/Os in flight at it not counted.
    tally: Tally,
    /// I/Os of the source submitted before the checkpoint: where it continues.
    cursor: u64,
    /// I/Os submitted and not completed at the checkpoint (or handed back unsubmitted),
    /// in submission order: a resume on a real target issues them again first.
    in_flight: Vec<InFlightIo>,
}

/// A phase's source in one segment: first the I/Os carried from the checkpoint, then
/// the source itself; ends after `limit` I/Os if set (rebuilds).
struct Resumed<'a> {
    carried: std::collections::VecDeque<NextIo>,
    inner: &'a mut dyn Source,
    limit: Option<u64>,
    handed: u64,
}

impl<'a> Resumed<'a> {
    fn new(inner: &'a mut dyn Source, carried: &[InFlightIo], limit: Option<u64>) -> Self {
        Resumed {
            carried: carried.iter().map(InFlightIo::next_io).collect(),
            inner,
            limit,
            handed: 0,
        }
    }
}

impl Source for Resumed<'_> {
    fn next_io(&mut self) -> Option<Result<NextIo, SourceError>> {
        if self.limit.is_some_and(|l| self.handed >= l) {
            return None;
        }
        let r = match self.carried.pop_front() {
            Some(io) => Some(Ok(io)),
            None => self.inner.next_io(),
        };
        if matches!(r, Some(Ok(_))) {
            self.handed += 1;
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

/// The engine's options for `plan` with `time_limit_ns` left: the same for a phase,
/// its resumed segments and its re-simulation.
fn engine_options(plan: &PhasePlan, time_limit_ns: Option<u64>) -> RunOptions {
    let mut opts = RunOptions::new(plan.pacing());
    opts.data = plan.data;
    opts.seed = DATA_SEED ^ plan.seed;
    opts.time_limit_ns = time_limit_ns;
    opts.fold_span_bytes = plan.fold_span_bytes;
    opts.log_ios = plan.log_ios;
    opts.max_idle_ns = plan.max_idle_ns;
    opts
}

/// Where a segment starts: the phase's start on a simulated drive (re-simulated), the
/// checkpoint on a real target.
struct Start {
    elapsed_ns: u64,
    tally: Tally,
    cursor: u64,
    carried: Vec<InFlightIo>,
    /// Rows kept in the journal that this segment re-simulates and checks.
    verify: Vec<SeriesRow>,
    /// Phase time of the checkpoint resumed from: none is taken before it.
    checkpoint_ns: u64,
    /// The checkpoint's carry (what an interrupt before the next one rolls back to).
    carry: Option<Carry>,
}

/// Watches one segment of a phase: journals the rows, checkpoints at whole seconds,
/// stops on a signal, on steady state or on an I/O error, drives the progress bar and
/// the I/O log.
struct Watch<'w> {
    plan: &'w PhasePlan,
    rd: &'w mut RunDir,
    journal: Journal<SeriesRow>,
    ctl: &'w Control,
    start: Start,
    /// Checkpoints by the drive's clock (simulated drive) instead of the wall.
    drive_clock: bool,
    started: Instant,
    last_cp_wall: Instant,
    last_cp_ns: u64,
    /// Rows of this segment handled (checked or journaled).
    rows_seen: usize,
    /// Full-second IOPS of the phase so far (steady-state watch, progress).
    iops: Vec<f64>,
    steady_hit: bool,
    failed: bool,
    interrupted: bool,
    error: Option<SuiteError>,
    progress: Option<Progress>,
    ios: Option<IoLogWriter>,
    /// A block device target's descriptor (a duplicate: the engine holds the target)
    /// and name, to digest its ends at each checkpoint (`crate::trust`).
    ends: Option<(std::os::fd::OwnedFd, std::path::PathBuf)>,
}

impl<'w> Watch<'w> {
    /// A watch over a phase from `start`, with no progress bar or I/O log yet.
    fn new(
        plan: &'w PhasePlan,
        rd: &'w mut RunDir,
        journal: Journal<SeriesRow>,
        ctl: &'w Control,
        start: Start,
        drive_clock: bool,
    ) -> Self {
        let now = Instant::now();
        let last_cp_ns = start.checkpoint_ns.max(start.elapsed_ns);
        Watch {
            plan,
            rd,
            journal,
            ctl,
            start,
            drive_clock,
            started: now,
            last_cp_wall: now,
            last_cp_ns,
            rows_seen: 0,
            iops: Vec::new(),
            steady_hit: false,
            failed: false,
            interrupted: false,
            error: None,
            progress: None,
            ios: None,
            ends: None,
        }
    }

    /// Keeps the digest of a block device's ends in the state, saved with its next save.
    fn note_ends(&mut self) {
        use std::os::fd::AsFd;
        if let Some((fd, name)) = &self.ends {
            crate::trust::note_ends(self.rd, Some(fd.as_fd()), name);
        }
    }

    /// After the engine loop: ends the progress bar and the ios.parquet log, then
    /// returns the outcome unless the loop, an observer step or the log failed (the
    /// first of these).
    fn settle(
        &mut self,
        outcome: Result<PhaseOutcome, SuiteError>,
    ) -> Result<PhaseOutcome, SuiteError> {
        if let Some(p) = &self.progress {
            match &outcome {
                Ok(o) if o.complete || self.steady_hit => p.finish(),
                _ => p.abandon(),
            }
        }
        let logged = self.ios.take().map(|w| w.finish());
        let outcome = outcome?;
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        if let Some(Err(e)) = logged {
            return Err(crate::output::report_err(e));
        }
        Ok(outcome)
    }

    /// Why the phase ended (the record's `ended`).
    fn ended(&self, outcome: &PhaseOutcome, remaining: Option<u64>) -> &'static str {
        if self.failed {
            "io-errors"
        } else if self.steady_hit {
            "steady-state"
        } else if remaining.is_some_and(|r| outcome.metrics.elapsed_ns >= r) {
            "time-limit"
        } else {
            "source-done"
        }
    }
}

impl Watch<'_> {
    /// Check a re-simulated row against the journal, or journal a new one.
    fn row(&mut self, s: &SecondSample) -> Result<(), SuiteError> {
        let t_ms = self.start.elapsed_ns / 1_000_000 + s.t_s * 1000;
        let row = SeriesRow {
            t_ms,
            s: SecondSample {
                t_s: t_ms / 1000,
                ..*s
            },
        };
        if s.window_ns == NS_PER_S {
            self.iops.push(s.iops());
        }
        let i = self.rows_seen;
        self.rows_seen += 1;
        match self.start.verify.get(i) {
            Some(kept) if *kept == row => Ok(()),
            Some(kept) => Err(SuiteError::Invalid(format!(
                "phase {}: the re-simulated second {} differs from the one recorded before the resume ({kept:?} then {row:?}); the run cannot be continued",
                self.plan.name, row.s.t_s
            ))),
            None => Ok(self.journal.append(&row)?),
        }
    }

    fn rows(&mut self, series: &[SecondSample]) -> Result<(), SuiteError> {
        for s in &series[self.rows_seen.min(series.len())..] {
            self.row(s)?;
        }
        Ok(())
    }

    fn steady(&self) -> bool {
        let Some(st) = self.plan.steady_stop else {
            return false;
        };
        let round = st.round_s.max(1) as usize;
        let rounds: Vec<f64> = self
            .iops
            .chunks_exact(round)
            .map(|c| c.iter().sum::<f64>() / c.len() as f64)
            .collect();
        rounds.len() >= st.window_rounds
            && storbench_metrics::snia_steady_state(&rounds, st.window_rounds).is_some()
    }

    fn checkpoint_due(&self, elapsed_ns: u64, user_stop: bool) -> bool {
        if elapsed_ns <= self.start.checkpoint_ns
            || self.plan.time_limit_ns.is_some_and(|l| elapsed_ns >= l)
        {
            return false;
        }
        let interval = self.ctl.checkpoint_interval;
        user_stop
            || self.steady_hit
            || if self.drive_clock {
                elapsed_ns - self.last_cp_ns >= interval.as_nanos() as u64
            } else {
                self.last_cp_wall.elapsed() >= interval
            }
    }

    /// Save the phase as it stands at `mark`.
    fn checkpoint(&mut self, mark: &SecondMark<'_>, elapsed_ns: u64) -> Result<(), SuiteError> {
        let wall_ms = self.started.elapsed().as_millis() as u64;
        let tally = self.start.tally.plus(&mark.outcome(), wall_ms);
        let submitted = mark.submitted_ios();
        let carried = self.start.carried.len() as u64;
        let carried_done = submitted.min(carried);
        let mut in_flight = mark.in_flight();
        in_flight.extend_from_slice(&self.start.carried[carried_done as usize..]);
        self.journal.sync()?;
        let m = tally
            .metrics
            .as_ref()
            .expect("a tally with a segment has metrics");
        let carry = Carry {
            cursor: self.start.cursor + submitted - carried_done,
            in_flight,
            tally: tally.clone(),
        };
        let cp = Checkpoint {
            phase_elapsed_ns: elapsed_ns,
            ios_done: m.read_ios + m.write_ios + m.trim_ios + m.flush_ios,
            bytes_done: m.read_bytes + m.write_bytes + m.trim_bytes,
            cursor: carry.cursor,
            series_rows: self.journal.rows(),
            wall_unix_ms: 0,
            carry: serde_json::to_value(&carry).expect("carry serializes"),
        };
        self.note_ends();
        self.rd.checkpoint(&self.plan.name, cp)?;
        self.start.carry = Some(carry);
        self.last_cp_wall = Instant::now();
        self.last_cp_ns = elapsed_ns;
        Ok(())
    }

    fn second(&mut self, mark: &SecondMark<'_>) -> Result<Flow, SuiteError> {
        self.rows(mark.series())?;
        let elapsed_ns = self.start.elapsed_ns + mark.elapsed_ns;
        self.steady_hit = self.steady_hit || self.steady();
        if self.plan.stop_on_error && mark.errors().0 > 0 {
            self.failed = true;
            return Ok(Flow::Stop);
        }
        let user_stop = self.ctl.stop.load(Ordering::Relaxed);
        if self.checkpoint_due(elapsed_ns, user_stop) {
            self.checkpoint(mark, elapsed_ns)?;
        }
        if user_stop {
            self.interrupted = true;
        }
        Ok(if user_stop || self.steady_hit {
            Flow::Stop
        } else {
            Flow::Continue
        })
    }
}

impl Observer for Watch<'_> {
    fn on_io(&mut self, io: &IoRecord) {
        let Some(w) = self.ios.as_mut() else {
            return;
        };
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
            self.error.get_or_insert(crate::output::report_err(e));
            self.ios = None;
        }
    }

    fn on_tick(&mut self, elapsed_ns: u64, done_ios: u64, _series: &[SecondSample]) {
        if let Some(p) = &self.progress {
            let base_ios = self.start.tally.metrics.as_ref().map_or(0, |m| {
                m.read_ios + m.write_ios + m.trim_ios + m.flush_ios + m.errors
            });
            p.update(
                self.start.elapsed_ns + elapsed_ns,
                base_ios + done_ios,
                self.iops.last().copied(),
            );
        }
    }

    fn on_second(&mut self, mark: &SecondMark<'_>) -> Flow {
        if self.error.is_some() {
            return Flow::Stop;
        }
        match self.second(mark) {
            Ok(flow) => flow,
            Err(e) => {
                self.error = Some(e);
                Flow::Stop
            }
        }
    }
}

/// Runs a procedure's phases on one target inside one run directory.
pub struct Runner<'a> {
    pub rd: &'a mut RunDir,
    pub target: &'a mut SuiteTarget,
    pub ctl: &'a Control,
    /// The record of a phase that ended without finishing (interrupted, or stopped by
    /// a failed I/O): its result up to where it stopped, for the partial result.
    pub unfinished: Option<PhaseRecord>,
}

fn engine_err(plan: &PhasePlan) -> impl FnOnce(storbench_engine::EngineError) -> SuiteError + '_ {
    move |e| SuiteError::Engine {
        phase: plan.name.clone(),
        source: e,
    }
}

impl<'a> Runner<'a> {
    pub fn new(rd: &'a mut RunDir, target: &'a mut SuiteTarget, ctl: &'a Control) -> Self {
        Runner {
            rd,
            target,
            ctl,
            unfinished: None,
        }
    }

    /// A phase line on stderr; a closed stderr (`2>&1 | head`) must not stop the run.
    fn say(&self, msg: &str) {
        if self.ctl.verbose {
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "{msg}");
        }
    }

    /// The stored record of a finished phase.
    pub fn record(&self, name: &str) -> Result<Option<PhaseRecord>, SuiteError> {
        let p = self.rd.state.phase(name);
        match (&p.status, &p.result) {
            (PhaseStatus::Done, Some(r)) => Ok(Some(r.clone())),
            _ => Ok(None),
        }
    }

    /// Read a phase's per-second series from its journal (all rows recorded so far).
    pub fn series(&self, name: &str) -> Result<Vec<SeriesRow>, SuiteError> {
        Ok(Journal::<SeriesRow>::read_all_in(
            self.rd.journal(),
            &RunDir::journal_name(name),
        )?)
    }

    /// Rebuild the in-memory state of a simulated drive after a resume by re-running,
    /// without recording, every finished phase with the options it ran with (the
    /// phase in progress is re-simulated by [`Runner::run`]). Real targets keep their
    /// state: nothing to do. Returns the number of I/Os re-simulated.
    pub fn rebuild(&mut self, plans: &[PhasePlan]) -> Result<u64, SuiteError> {
        if self.target.persistent() || self.rd.state.resumes == 0 {
            return Ok(0);
        }
        let started = Instant::now();
        let mut total = 0u64;
        for plan in plans {
            let Some(rec) = self.record(&plan.name)? else {
                break;
            };
            match plan.work {
                Work::Purge => {
                    self.target.purge().map_err(|e| SuiteError::Io {
                        context: "rebuilding the simulated drive: purge".into(),
                        source: e,
                    })?;
                }
                Work::Idle { duration_ns } => {
                    storbench_engine::idle(self.target.target(), duration_ns)
                        .map_err(engine_err(plan))?;
                }
                _ => {
                    total += self.resimulate(plan, rec.issued_ios)?;
                }
            }
        }
        self.rd.state.last_rebuild = Some(crate::state::Rebuild {
            ios: total,
            wall_ms: started.elapsed().as_millis() as u64,
        });
        self.rd.save()?;
        Ok(total)
    }

    /// Re-run a finished phase's `ios` I/Os as it ran them, recording nothing.
    fn resimulate(&mut self, plan: &PhasePlan, ios: u64) -> Result<u64, SuiteError> {
        if ios == 0 {
            return Ok(0);
        }
        self.say(&format!(
            "  rebuilding the simulated drive: re-simulating {ios} I/Os of phase {}",
            plan.name
        ));
        let mut src = plan.work.source(0).map_err(|e| SuiteError::Source {
            phase: plan.name.clone(),
            source: e,
        })?;
        let mut limited = Resumed::new(src.as_mut(), &[], Some(ios));
        let mut opts = engine_options(plan, plan.time_limit_ns);
        opts.log_ios = false;
        let out = run_phase(self.target.target(), &mut limited, &opts, &mut NoObserver)
            .map_err(engine_err(plan))?;
        if out.submitted_ios != ios {
            return Err(SuiteError::Invalid(format!(
                "phase {}: re-simulating it issued {} I/Os where the run issued {ios}; the run cannot be continued",
                plan.name, out.submitted_ios
            )));
        }
        Ok(ios)
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
                at: "before the phase began".into(),
            });
        }
        crate::trust::note_target_ends(self.rd, self.target);
        let cp = self.rd.begin_phase(&plan.name)?;
        let segments = self.rd.state.phase(&plan.name).segments;
        self.say(&format!("phase {}: {}", plan.name, plan.title));
        let before = self.health_before(&plan.name)?;
        let t0 = Instant::now();
        let mut rec = match plan.work {
            Work::Purge => {
                let purge = self.target.purge().map_err(|e| SuiteError::Io {
                    context: format!("phase {}: purge", plan.name),
                    source: e,
                })?;
                PhaseRecord {
                    purge: Some(purge),
                    ..crate::phase::without_io(plan, segments, t0.elapsed().as_millis() as u64)
                }
            }
            Work::Idle { duration_ns } => {
                storbench_engine::idle(self.target.target(), duration_ns)
                    .map_err(engine_err(plan))?;
                PhaseRecord {
                    time_limit_ns: Some(duration_ns),
                    metrics: PhaseMetrics {
                        elapsed_ns: duration_ns,
                        ..PhaseMetrics::default()
                    },
                    ended: "time-limit".into(),
                    ..crate::phase::without_io(plan, segments, t0.elapsed().as_millis() as u64)
                }
            }
            _ => self.io_phase(plan, cp, segments)?,
        };
        rec.counters = Some(health::delta(&before, &self.target.health()));
        crate::trust::note_target_ends(self.rd, self.target);
        self.rd.finish_phase(&rec.name, rec.clone())?;
        Ok(rec)
    }

    /// The drive's counters when the phase began, taken at its first start and kept in
    /// the run state (a resumed phase keeps the ones from before it ran).
    fn health_before(&mut self, phase: &str) -> Result<HealthSnapshot, SuiteError> {
        if let Some(h) = &self.rd.state.phase(phase).health_before {
            return Ok(h.clone());
        }
        let h = self.target.health();
        self.rd.state.phase_mut(phase).health_before = Some(h.clone());
        self.rd.save()?;
        Ok(h)
    }

    /// Where the phase's segment starts (see [`Start`]).
    fn start(
        &self,
        plan: &PhasePlan,
        cp: Option<Checkpoint>,
        kept: Vec<SeriesRow>,
    ) -> Result<Start, SuiteError> {
        let Some(cp) = cp else {
            return Ok(Start {
                elapsed_ns: 0,
                tally: Tally::default(),
                cursor: 0,
                carried: Vec::new(),
                verify: Vec::new(),
                checkpoint_ns: 0,
                carry: None,
            });
        };
        let carry: Carry = serde_json::from_value(cp.carry.clone()).map_err(|e| {
            SuiteError::Invalid(format!(
                "state.json: phase {}: checkpoint does not read back: {e}; hint: finish the run with the storbench version that started it",
                plan.name
            ))
        })?;
        Ok(if self.target.persistent() {
            Start {
                elapsed_ns: cp.phase_elapsed_ns,
                tally: carry.tally.clone(),
                cursor: carry.cursor,
                carried: carry.in_flight.clone(),
                verify: Vec::new(),
                checkpoint_ns: 0,
                carry: Some(carry),
            }
        } else {
            Start {
                elapsed_ns: 0,
                tally: Tally::default(),
                cursor: 0,
                carried: Vec::new(),
                verify: kept,
                checkpoint_ns: cp.phase_elapsed_ns,
                carry: Some(carry),
            }
        })
    }

    /// A phase that drives I/O: one engine loop from its start (or its checkpoint) to
    /// its end, checkpointed at whole seconds.
    fn io_phase(
        &mut self,
        plan: &PhasePlan,
        cp: Option<Checkpoint>,
        segments: u32,
    ) -> Result<PhaseRecord, SuiteError> {
        let keep_rows = cp.as_ref().map_or(0, |c| c.series_rows);
        let (journal, kept) = Journal::open(
            self.rd.journal(),
            &RunDir::journal_name(&plan.name),
            keep_rows,
        )?;
        let start = self.start(plan, cp, kept)?;
        let remaining = plan
            .time_limit_ns
            .map(|l| l.saturating_sub(start.elapsed_ns));
        let mut src = plan
            .work
            .source(start.cursor)
            .map_err(|e| SuiteError::Source {
                phase: plan.name.clone(),
                source: e,
            })?;
        let progress = self
            .ctl
            .progress
            .then(|| Progress::new(&plan.name, plan.time_limit_ns, src.total_ios()));
        let ios = match plan.log_ios {
            false => None,
            true => Some(self.io_log(plan)?),
        };
        let dir = self.rd.dir().to_owned();
        let carried = start.carried.clone();
        let start_cursor = start.cursor;
        let mut source = Resumed::new(src.as_mut(), &carried, None);
        let opts = engine_options(plan, remaining);
        let drive_clock = !self.target.persistent();
        let mut watch = Watch::new(plan, &mut *self.rd, journal, self.ctl, start, drive_clock);
        watch.progress = progress;
        watch.ios = ios;
        watch.ends = crate::trust::ends_source(self.target)?;
        let outcome = run_phase(self.target.target(), &mut source, &opts, &mut watch)
            .map_err(engine_err(plan));
        let outcome = watch.settle(outcome)?;
        if watch.interrupted {
            // The I/Os in flight at the checkpoint have ended since: the digest of the
            // ends now is the one a resume will find.
            watch.note_ends();
            watch.rd.save()?;
            let at = format!("{} s into the phase", watch.last_cp_ns / NS_PER_S);
            if let Some(c) = watch.start.carry.take() {
                self.unfinished = Some(c.tally.record(plan, c.cursor, "interrupted", segments));
            }
            return Err(SuiteError::Interrupted {
                phase: plan.name.clone(),
                dir,
                at,
            });
        }
        watch.rows(&outcome.metrics.series)?;
        watch.journal.sync()?;
        let wall_ms = watch.started.elapsed().as_millis() as u64;
        let tally = watch.start.tally.plus(&outcome, wall_ms);
        let submitted = outcome.submitted_ios;
        let issued_ios = start_cursor + submitted - submitted.min(carried.len() as u64);
        let ended = watch.ended(&outcome, remaining);
        let rec = tally.record(plan, issued_ios, ended, segments);
        self.stop_on_errors(plan, rec)
    }

    /// With `stop_on_error`, a phase that saw I/O errors fails, its record kept as
    /// the unfinished one.
    fn stop_on_errors(
        &mut self,
        plan: &PhasePlan,
        rec: PhaseRecord,
    ) -> Result<PhaseRecord, SuiteError> {
        if plan.stop_on_error && rec.metrics.errors > 0 {
            let err = SuiteError::IoErrors {
                phase: plan.name.clone(),
                errors: rec.metrics.errors,
                first_error: rec.first_error.clone().unwrap_or_default(),
            };
            self.unfinished = Some(PhaseRecord {
                ended: "io-errors".into(),
                ..rec
            });
            return Err(err);
        }
        Ok(rec)
    }

    /// The phase's ios.parquet writer (`--log-ios`), in the trace format.
    fn io_log(&self, plan: &PhasePlan) -> Result<IoLogWriter, SuiteError> {
        let info = self.target.info();
        let meta = TraceMeta {
            source_file: match &plan.work {
                Work::Replay { path, .. } => Some(path.display().to_string()),
                _ => None,
            },
            capacity_bytes: Some(info.capacity_bytes),
            logical_block_bytes: Some(info.logical_block_bytes),
            ..TraceMeta::default()
        };
        IoLogWriter::create(self.rd.out(), &meta).map_err(crate::output::report_err)
    }
}

/// The journal of `phase` in `dir` (for readers outside a run).
pub fn journal_path(dir: &Path, phase: &str) -> PathBuf {
    dir.join(crate::state::JOURNAL_DIR)
        .join(format!("{phase}.jsonl"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use storbench_metrics::Recorder;
    use storbench_trace::Op;

    /// A segment's outcome: `n` reads at QD `qd`, each 1 ms, from `t0`.
    fn segment(qd: u64, n: u64) -> PhaseOutcome {
        let mut r = Recorder::new(0);
        let mut t = 0;
        for _ in 0..n / qd {
            for _ in 0..qd {
                r.on_submit(t, Op::Read);
            }
            for _ in 0..qd {
                let io = IoRecord {
                    complete_ns: Some(t + 1_000_000),
                    ..IoRecord::new(Op::Read, 0, 4096, t)
                };
                r.on_complete(&io, true);
            }
            t += 1_000_000;
        }
        let metrics = r.finish(t);
        PhaseOutcome {
            fidelity: Fidelity {
                mode: "queue-depth".into(),
                replayed_avg_qd: Some(metrics.qd.mean_over_busy),
                trace_avg_qd: Some(3.0),
                qd_capped_ios: 1,
                ..Fidelity::default()
            },
            metrics,
            complete: true,
            folded_ios: 2,
            aligned_ios: 0,
            aligned_extra_bytes: 0,
            backend: "virtual".into(),
            submitted_ios: n,
            first_error: None,
        }
    }

    #[test]
    fn replayed_avg_qd_is_the_whole_runs_not_the_last_chunks() {
        // Regression (issue 21): the bench reported the last chunk's replayed QD
        // (5.816) for a run whose QD over all its busy time was 5.473.
        let first = Tally::default().plus(&segment(2, 400), 10);
        let both = first.plus(&segment(8, 400), 5);
        let f = both.fidelity.as_ref().unwrap();
        let m = both.metrics.as_ref().unwrap();
        // 200 ms at QD2 and 50 ms at QD8: (2*200 + 8*50) / 250 = 3.2.
        assert!((f.replayed_avg_qd.unwrap() - 3.2).abs() < 1e-9, "{f:?}");
        assert_eq!(f.replayed_avg_qd, Some(m.qd.mean_over_busy));
        assert_eq!(m.read_ios, 800);
        assert!(m.series.is_empty(), "series live in the journal");
        assert_eq!((both.folded_ios, f.qd_capped_ios, both.wall_ms), (4, 2, 15));
    }
}
