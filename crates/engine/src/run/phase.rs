//! [`PhaseRun`]: one phase in progress. The loop is five steps, each a method:
//! `fill` (take I/Os from the source while pacing allows), `submit` (hand the batch
//! to the target), `wait` (let time pass until a completion, a due time, the time
//! limit or the next tick), `reap` (take completions in time order) and `account`
//! (one completion into the metrics and the observer).

// One fold-and-align rule for replay and `export --span`: the trace crate's.
use super::pace::{IssueErrors, Schedule};
use super::{EngineError, Fidelity, Flow, InFlightIo, Observer, Pacing, PhaseOutcome, RunOptions};
use crate::data::DataFiller;
use crate::target::{Completion, IoRequest, Target};
use std::sync::atomic::Ordering;
use storbench_metrics::{PhaseMetrics, Recorder, NS_PER_S};
use storbench_trace::formats::export::fold_align;
use storbench_trace::{IoRecord, Op};
use storbench_workload::Source;

/// One I/O in flight, indexed by its slot.
#[derive(Clone, Copy, Debug)]
struct InFlight {
    op: Op,
    offset_bytes: u64,
    len_bytes: u64,
    issue_ns: u64,
    /// As the source gave them (for a checkpoint's list of I/Os in flight).
    at_ns: Option<u64>,
    trace_qd: Option<u32>,
    /// Submission order: I/Os issued before it in the phase.
    seq: u64,
}

/// The next I/O, folded and aligned, with its schedule.
#[derive(Clone, Copy, Debug)]
struct Pending {
    op: Op,
    offset_bytes: u64,
    len_bytes: u64,
    trace_qd: Option<u32>,
    at_ns: Option<u64>,
    /// Timed: scheduled submission time on the target clock. Queue-depth with
    /// [`RunOptions::max_idle_ns`]: the end of the idle time it waits for (0 until set).
    due_ns: u64,
    /// Queue-depth with `max_idle_ns`: idle time to leave before it once none is in
    /// flight (its gap in the trace, capped).
    idle_ns: u64,
    /// Folded onto the span / aligned to the block size: counted when it is issued, so
    /// an I/O taken but not issued when the phase stops is not counted.
    folded: bool,
    aligned: bool,
    /// Bytes alignment added to the I/O (widened to whole logical blocks).
    aligned_extra_bytes: u64,
}

/// Why `fill` stopped adding I/Os to the batch.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Gate {
    /// Every slot the pacing may use is taken.
    Slots,
    /// Pacing holds the next I/O back (its QD or its due time), or the source ended.
    Pacing,
}

/// Where the phase is on the target's clock.
struct Clock {
    start_ns: u64,
    /// Time of the last submission or completion fed to the metrics.
    last_event_ns: u64,
    next_tick_ns: u64,
    /// The next whole second of phase time ([`Observer::on_second`]).
    next_second_ns: u64,
    /// Stop submitting at this time (`RunOptions::time_limit_ns`).
    limit_ns: Option<u64>,
}

/// The engine's slots: which I/O each holds, and the free ones as a stack (bounded by
/// the target's `max_in_flight`).
struct Slots {
    io: Vec<Option<InFlight>>,
    free: Vec<u32>,
}

impl Slots {
    fn new(n: usize) -> Slots {
        Slots {
            io: vec![None; n],
            free: (0..n as u32).rev().collect(),
        }
    }

    fn busy(&self) -> usize {
        self.io.len() - self.free.len()
    }

    fn take(&mut self, io: InFlight) -> u32 {
        let slot = self.free.pop().expect("a free slot below the slot limit");
        assert!(self.io[slot as usize].is_none());
        self.io[slot as usize] = Some(io);
        slot
    }

    fn release(&mut self, slot: u32) -> InFlight {
        let io = self
            .io
            .get_mut(slot as usize)
            .and_then(Option::take)
            .unwrap_or_else(|| panic!("completion of slot {slot} not in flight"));
        self.free.push(slot);
        io
    }
}

/// Counters of the phase (see [`PhaseOutcome`]).
#[derive(Default)]
struct Counts {
    folded: u64,
    aligned: u64,
    aligned_extra_bytes: u64,
    qd_capped: u64,
    slot_starved: u64,
    submitted: u64,
    done: u64,
}

/// One phase in progress.
pub(super) struct PhaseRun<'a> {
    target: &'a mut dyn Target,
    source: &'a mut dyn Source,
    opts: &'a RunOptions,
    observer: &'a mut dyn Observer,
    /// I/Os are folded onto `[0, span)` and aligned to `lbs`.
    span: u64,
    lbs: u64,
    /// Most I/Os the pacing keeps in flight (`FixedQd`'s N, else the target's limit).
    slot_limit: usize,
    max_in_flight: usize,
    slots: Slots,
    recorder: Recorder,
    filler: DataFiller,
    pending: Option<Pending>,
    /// Trace time of the latest I/O taken (queue-depth idle gaps).
    prev_at_ns: Option<u64>,
    schedule: Option<Schedule>,
    issue_errors: Option<IssueErrors>,
    counts: Counts,
    clock: Clock,
    exhausted: bool,
    stopped: bool,
    first_error: Option<String>,
    batch: Vec<IoRequest>,
    reaped: Vec<Completion>,
}

impl<'a> PhaseRun<'a> {
    /// Check the options against the target and set up the phase.
    pub(super) fn new(
        target: &'a mut dyn Target,
        source: &'a mut dyn Source,
        opts: &'a RunOptions,
        observer: &'a mut dyn Observer,
    ) -> Result<PhaseRun<'a>, EngineError> {
        let info = target.info();
        let lbs = u64::from(info.logical_block_bytes.max(1));
        let span = opts
            .fold_span_bytes
            .unwrap_or(info.capacity_bytes)
            .min(info.capacity_bytes)
            / lbs
            * lbs;
        if span == 0 {
            return Err(EngineError::Invalid(format!(
                "target {} has no whole logical block to do I/O on ({} bytes, block {} bytes)",
                info.name, info.capacity_bytes, lbs
            )));
        }
        let max_in_flight = target.max_in_flight();
        assert!(max_in_flight > 0, "target accepts no I/O in flight");
        let slot_limit = slot_limit(opts.pacing, max_in_flight, &info.name)?;
        let start_ns = target.now_ns();
        let (schedule, issue_errors) = match opts.pacing {
            Pacing::Timed { speed, max_idle_ns } => (
                Some(Schedule::new(speed, max_idle_ns)),
                Some(IssueErrors::new()),
            ),
            _ => (None, None),
        };
        Ok(PhaseRun {
            target,
            source,
            opts,
            observer,
            span,
            lbs,
            slot_limit,
            max_in_flight,
            slots: Slots::new(max_in_flight),
            recorder: Recorder::new(start_ns),
            filler: DataFiller::new(opts.seed),
            pending: None,
            prev_at_ns: None,
            schedule,
            issue_errors,
            counts: Counts::default(),
            clock: Clock {
                start_ns,
                last_event_ns: start_ns,
                next_tick_ns: start_ns + opts.tick_ns.max(1),
                next_second_ns: start_ns + NS_PER_S,
                limit_ns: opts.time_limit_ns.map(|l| start_ns.saturating_add(l)),
            },
            exhausted: false,
            stopped: false,
            first_error: None,
            batch: Vec::with_capacity(max_in_flight),
            reaped: Vec::with_capacity(max_in_flight),
        })
    }

    /// Drive the target until the source is exhausted, the time limit passes or the
    /// stop flag is set; drain what is in flight; return the metrics.
    pub(super) fn run(mut self) -> Result<PhaseOutcome, EngineError> {
        loop {
            let now = self.target.now_ns();
            assert!(
                now >= self.clock.last_event_ns,
                "target clock went backwards"
            );
            self.poll_stop();
            self.cross_seconds(now);
            let mut gate = Gate::Pacing;
            if self.submitting(now) {
                gate = self.fill(now)?;
                self.submit(now)?;
            }
            self.note_starved(gate, now);
            if self.slots.busy() == 0 && !self.submitting(now) {
                break;
            }
            self.wait(gate, now)?;
            self.reap();
            self.tick();
        }
        self.finish()
    }

    fn poll_stop(&mut self) {
        if let Some(s) = &self.opts.stop {
            self.stopped |= s.load(Ordering::Relaxed);
        }
    }

    /// Whether the phase still takes I/Os from the source at `now`.
    fn submitting(&self, now: u64) -> bool {
        !self.stopped && !self.exhausted && !matches!(self.clock.limit_ns, Some(l) if now >= l)
    }

    /// Build one batch of every I/O pacing allows at `now`; say what stopped it.
    fn fill(&mut self, now: u64) -> Result<Gate, EngineError> {
        self.batch.clear();
        loop {
            let Some(p) = self.next_pending()? else {
                return Ok(Gate::Pacing);
            };
            // The batch's I/Os already hold their slots.
            let n = self.slots.busy();
            if n >= self.slot_limit {
                return Ok(Gate::Slots);
            }
            let go = match self.opts.pacing {
                Pacing::QueueDepth { default_qd } => {
                    n < p.trace_qd.unwrap_or(default_qd).max(1) as usize && self.idle_over(n, now)
                }
                Pacing::FixedQd(_) => true,
                Pacing::Timed { .. } => p.due_ns <= now,
            };
            if !go {
                return Ok(Gate::Pacing);
            }
            self.issue(p, now)?;
        }
    }

    /// Queue-depth with `max_idle_ns`: whether the pending I/O's idle time (counted
    /// from the moment none is in flight) is over at `now`.
    fn idle_over(&mut self, in_flight: usize, now: u64) -> bool {
        let Some(p) = self.pending.as_mut() else {
            return true;
        };
        if p.idle_ns == 0 || in_flight > 0 {
            return true;
        }
        if p.due_ns == 0 {
            p.due_ns = self.clock.last_event_ns + p.idle_ns;
        }
        now >= p.due_ns
    }

    /// The I/O to issue next: the one held back, or a new one from the source (folded,
    /// aligned and scheduled). `None` once the source is exhausted.
    fn next_pending(&mut self) -> Result<Option<Pending>, EngineError> {
        if self.pending.is_some() {
            return Ok(self.pending);
        }
        let io = match self.source.next_io() {
            None => {
                self.exhausted = true;
                return Ok(None);
            }
            Some(r) => r?,
        };
        let (offset_bytes, len_bytes, folded, aligned) = if io.op == Op::Flush {
            (0, 0, false, false)
        } else {
            fold_align(io.offset_bytes, io.len_bytes, self.span, self.lbs)
        };
        let aligned_extra_bytes = if aligned {
            len_bytes.saturating_sub(io.len_bytes)
        } else {
            0
        };
        let due_ns =
            match (self.schedule.as_mut(), io.at_ns) {
                (None, _) => 0,
                (Some(s), Some(at)) => s.due(at, || self.target.now_ns()),
                (Some(_), None) => return Err(EngineError::Invalid(
                    "timed pacing needs a source with issue times (a trace); generators have none"
                        .into(),
                )),
            };
        let idle_ns = match (self.opts.max_idle_ns, self.opts.pacing, io.at_ns) {
            (Some(cap), Pacing::QueueDepth { .. }, Some(at)) if io.trace_qd.unwrap_or(1) <= 1 => {
                let gap = self.prev_at_ns.map_or(0, |p| at.saturating_sub(p));
                gap.min(cap)
            }
            _ => 0,
        };
        if let Some(at) = io.at_ns {
            self.prev_at_ns = Some(self.prev_at_ns.map_or(at, |p| p.max(at)));
        }
        self.pending = Some(Pending {
            idle_ns,
            op: io.op,
            offset_bytes,
            len_bytes,
            trace_qd: io.trace_qd,
            at_ns: io.at_ns,
            due_ns,
            folded,
            aligned,
            aligned_extra_bytes,
        });
        Ok(self.pending)
    }

    /// Put `p` in a slot (its write data filled) and in the batch, at `now`.
    fn issue(&mut self, p: Pending, now: u64) -> Result<(), EngineError> {
        self.counts.folded += u64::from(p.folded);
        self.counts.aligned += u64::from(p.aligned);
        self.counts.aligned_extra_bytes += p.aligned_extra_bytes;
        if let Pacing::QueueDepth { default_qd } = self.opts.pacing {
            if p.trace_qd.unwrap_or(default_qd) as usize > self.max_in_flight {
                self.counts.qd_capped += 1;
            }
        }
        let slot = self.slots.take(InFlight {
            op: p.op,
            offset_bytes: p.offset_bytes,
            len_bytes: p.len_bytes,
            issue_ns: now,
            at_ns: p.at_ns,
            trace_qd: p.trace_qd,
            seq: self.counts.submitted + self.batch.len() as u64,
        });
        if p.op.is_data() {
            if let Err(e) = self.fill_buffer(slot, p) {
                self.slots.release(slot);
                return Err(e);
            }
        }
        if let Some(e) = self.issue_errors.as_mut() {
            e.record(p.due_ns, now);
        }
        self.batch.push(IoRequest {
            slot,
            op: p.op,
            offset_bytes: p.offset_bytes,
            len_bytes: p.len_bytes,
            data: self.opts.data,
        });
        self.recorder.on_submit(now, p.op);
        self.pending = None;
        Ok(())
    }

    /// Check the slot's buffer (real targets) holds the I/O, and fill a write's data.
    fn fill_buffer(&mut self, slot: u32, p: Pending) -> Result<(), EngineError> {
        let block_bytes = self.target.info().logical_block_bytes;
        let Some(buf) = self.target.buffer(slot) else {
            return Ok(());
        };
        if (buf.len() as u64) < p.len_bytes {
            // The suite sizes a target's buffers for every I/O as widened to its
            // logical blocks; another caller gets this, naming both sizes.
            return Err(EngineError::Invalid(format!(
                "an I/O of {} bytes (widened to the target's {}-byte blocks) is larger than the target's buffers ({} bytes): \
                 size them with BufferPlan from the source's largest I/O as widened (TraceScan::max_io_bytes_on)",
                p.len_bytes,
                block_bytes,
                buf.len()
            )));
        }
        if p.op == Op::Write {
            self.filler
                .fill(self.opts.data, &mut buf[..p.len_bytes as usize]);
        }
        Ok(())
    }

    /// Hand the batch to the target (one call).
    fn submit(&mut self, now: u64) -> Result<(), EngineError> {
        if self.batch.is_empty() {
            return Ok(());
        }
        self.target.submit(&self.batch)?;
        self.counts.submitted += self.batch.len() as u64;
        self.clock.last_event_ns = now;
        Ok(())
    }

    /// Timed: a due I/O that waits only for a free slot is starved of slots.
    fn note_starved(&mut self, gate: Gate, now: u64) {
        if gate == Gate::Slots && self.schedule.is_some() {
            if let Some(p) = self.pending {
                if p.due_ns <= now {
                    self.counts.slot_starved += 1;
                }
            }
        }
    }

    /// Let time pass: until a completion makes room, the next timed I/O is due, the
    /// time limit or the next tick.
    fn wait(&mut self, gate: Gate, now: u64) -> Result<(), EngineError> {
        let tick = Some(self.clock.next_tick_ns);
        let limit = self.clock.limit_ns;
        let (min_complete, deadline) = if !self.submitting(now) {
            (1, None)
        } else if gate == Gate::Slots {
            (1, min_opt(limit, tick))
        } else {
            match self.pending {
                // Timed: wait for the next I/O's time, reaping as we go.
                Some(p) if self.schedule.is_some() => {
                    (0, min_opt(min_opt(Some(p.due_ns), limit), tick))
                }
                // Queue-depth: the trace's idle gap (capped), none in flight.
                Some(p) if p.due_ns > now && self.slots.busy() == 0 => {
                    (0, min_opt(min_opt(Some(p.due_ns), limit), tick))
                }
                // Queue-depth: wait for a completion to make room.
                _ => {
                    assert!(
                        self.slots.busy() > 0,
                        "queue-depth pacing blocked with none in flight"
                    );
                    (1, min_opt(limit, tick))
                }
            }
        };
        self.reaped.clear();
        self.target
            .advance(min_complete, deadline, &mut self.reaped)?;
        Ok(())
    }

    /// Account every completion the wait collected, in time order.
    fn reap(&mut self) {
        self.reaped.sort_unstable_by_key(|c| c.complete_ns);
        let reaped = std::mem::take(&mut self.reaped);
        for c in &reaped {
            self.account(c);
        }
        self.reaped = reaped;
    }

    /// One completion: free its slot, feed the metrics and the observer.
    fn account(&mut self, c: &Completion) {
        self.cross_seconds(c.complete_ns);
        let f = self.slots.release(c.slot);
        assert!(
            c.complete_ns >= self.clock.last_event_ns,
            "target returned a completion at {} ns before an earlier event at {} ns",
            c.complete_ns,
            self.clock.last_event_ns
        );
        self.clock.last_event_ns = c.complete_ns;
        let rec = IoRecord {
            issue_ns: f.issue_ns,
            complete_ns: Some(c.complete_ns),
            offset_bytes: f.offset_bytes,
            len_bytes: f.len_bytes,
            op: f.op,
            stream: None,
            device: None,
        };
        let error = match c.result {
            Ok(n) if f.op.is_data() && n != f.len_bytes => {
                Some(format!("short transfer of {n} bytes"))
            }
            Ok(_) => None,
            Err(errno) => Some(std::io::Error::from_raw_os_error(errno.abs()).to_string()),
        };
        if let Some(e) = &error {
            self.first_error.get_or_insert_with(|| {
                format!(
                    "{} at offset {} length {}: {e}",
                    f.op, f.offset_bytes, f.len_bytes
                )
            });
        }
        self.recorder.on_complete(&rec, error.is_none());
        if self.opts.log_ios {
            match error {
                None => self.observer.on_io(&rec),
                Some(_) => self.observer.on_io(&IoRecord {
                    complete_ns: None,
                    ..rec
                }),
            }
        }
        self.counts.done += 1;
    }

    /// Show the observer each whole second of phase time up to `t_ns`, at exactly that
    /// instant: every event before it fed to the metrics, none at or after it.
    fn cross_seconds(&mut self, t_ns: u64) {
        while t_ns >= self.clock.next_second_ns {
            let at_ns = self.clock.next_second_ns;
            self.recorder.close_to(at_ns);
            let mark = SecondMark {
                elapsed_ns: at_ns - self.clock.start_ns,
                at_ns,
                recorder: &self.recorder,
                slots: &self.slots.io,
                report: Report {
                    pacing: self.opts.pacing,
                    counts: &self.counts,
                    issue_errors: self.issue_errors.as_ref(),
                    anchor_ns: self.schedule.as_ref().and_then(|s| s.start_ns),
                    start_ns: self.clock.start_ns,
                    backend: &self.target.info().backend,
                    first_error: &self.first_error,
                    trace_avg_qd: self.source.trace_avg_qd(),
                },
            };
            if self.observer.on_second(&mark) == Flow::Stop {
                self.stopped = true;
            }
            self.clock.next_second_ns += NS_PER_S;
        }
    }

    /// Tell the observer where the phase stands, about every `tick_ns`.
    fn tick(&mut self) {
        let now = self.target.now_ns();
        if now >= self.clock.next_tick_ns {
            self.observer.on_tick(
                now - self.clock.start_ns,
                self.counts.done,
                self.recorder.series(),
            );
            self.clock.next_tick_ns = now + self.opts.tick_ns.max(1);
        }
    }

    /// Close the metrics at the last event and say how faithful the pacing was.
    fn finish(self) -> Result<PhaseOutcome, EngineError> {
        assert_eq!(self.slots.busy(), 0);
        let start_ns = self.clock.start_ns;
        let end_ns = self.target.now_ns().max(self.clock.last_event_ns);
        let metrics = self.recorder.finish(end_ns);
        self.observer
            .on_tick(end_ns - start_ns, self.counts.done, &metrics.series);
        let report = Report {
            pacing: self.opts.pacing,
            counts: &self.counts,
            issue_errors: self.issue_errors.as_ref(),
            anchor_ns: self.schedule.as_ref().and_then(|s| s.start_ns),
            start_ns,
            backend: &self.target.info().backend,
            first_error: &self.first_error,
            trace_avg_qd: self.source.trace_avg_qd(),
        };
        let complete = !self.stopped || (self.exhausted && self.pending.is_none());
        Ok(report.outcome(metrics, complete))
    }
}

/// What a [`PhaseOutcome`] is made of besides the metrics.
struct Report<'r> {
    pacing: Pacing,
    counts: &'r Counts,
    issue_errors: Option<&'r IssueErrors>,
    /// When the timed schedule began (its first I/O was handed over).
    anchor_ns: Option<u64>,
    start_ns: u64,
    backend: &'r str,
    first_error: &'r Option<String>,
    trace_avg_qd: Option<f64>,
}

impl Report<'_> {
    fn outcome(&self, metrics: PhaseMetrics, complete: bool) -> PhaseOutcome {
        let mut fidelity = Fidelity {
            mode: self.pacing.name().to_string(),
            slot_starved_ios: self.counts.slot_starved,
            qd_capped_ios: self.counts.qd_capped,
            ..Fidelity::default()
        };
        match self.issue_errors {
            Some(e) => e.report(self.anchor_ns.unwrap_or(self.start_ns), &mut fidelity),
            None => {
                fidelity.trace_avg_qd = self.trace_avg_qd;
                fidelity.replayed_avg_qd = Some(metrics.qd.mean_over_busy);
            }
        }
        PhaseOutcome {
            metrics,
            complete,
            folded_ios: self.counts.folded,
            aligned_ios: self.counts.aligned,
            aligned_extra_bytes: self.counts.aligned_extra_bytes,
            fidelity,
            backend: self.backend.to_owned(),
            submitted_ios: self.counts.submitted,
            first_error: self.first_error.clone(),
        }
    }
}

/// Where a phase stands at a whole second of its time ([`Observer::on_second`]).
pub struct SecondMark<'r> {
    /// Phase time of the mark: a whole number of seconds.
    pub elapsed_ns: u64,
    /// The mark on the target's clock.
    pub at_ns: u64,
    recorder: &'r Recorder,
    slots: &'r [Option<InFlight>],
    report: Report<'r>,
}

impl SecondMark<'_> {
    /// Finished per-second windows so far (the last one ends at the mark).
    pub fn series(&self) -> &[storbench_metrics::SecondSample] {
        self.recorder.series()
    }

    /// The phase's result as if it had ended at the mark, in-flight I/Os not counted
    /// (`complete` false). I/Os submitted before the mark, and the phase figures.
    pub fn outcome(&self) -> PhaseOutcome {
        self.report
            .outcome(self.recorder.snapshot(self.at_ns), false)
    }

    /// I/Os failed before the mark, and the first of them (`op at offset O length L: error`).
    pub fn errors(&self) -> (u64, Option<&str>) {
        (self.recorder.errors(), self.report.first_error.as_deref())
    }

    /// I/Os submitted before the mark (in flight at the mark included).
    pub fn submitted_ios(&self) -> u64 {
        self.report.counts.submitted
    }

    /// The I/Os in flight at the mark, in submission order.
    pub fn in_flight(&self) -> Vec<InFlightIo> {
        let mut v: Vec<(u64, InFlightIo)> = self
            .slots
            .iter()
            .filter_map(|io| {
                io.map(|f| {
                    (
                        f.seq,
                        InFlightIo {
                            op: f.op,
                            offset_bytes: f.offset_bytes,
                            len_bytes: f.len_bytes,
                            at_ns: f.at_ns,
                            trace_qd: f.trace_qd,
                            issue_ns: f.issue_ns,
                        },
                    )
                })
            })
            .collect();
        v.sort_unstable_by_key(|(seq, _)| *seq);
        v.into_iter().map(|(_, io)| io).collect()
    }
}

/// Most I/Os in flight under `pacing` on a target that accepts `max_in_flight`.
fn slot_limit(pacing: Pacing, max_in_flight: usize, target: &str) -> Result<usize, EngineError> {
    match pacing {
        Pacing::FixedQd(0) => Err(EngineError::Invalid(
            "fixed-qd needs a queue depth of at least 1".into(),
        )),
        Pacing::FixedQd(n) if n as usize > max_in_flight => Err(EngineError::Invalid(format!(
            "queue depth {n} exceeds what target {target} accepts in flight ({max_in_flight})"
        ))),
        Pacing::FixedQd(n) => Ok(n as usize),
        Pacing::QueueDepth { default_qd: 0 } => Err(EngineError::Invalid(
            "queue-depth pacing needs a default QD of at least 1".into(),
        )),
        Pacing::QueueDepth { .. } => Ok(max_in_flight),
        Pacing::Timed { speed, .. } if !(speed > 0.0 && speed.is_finite()) => Err(
            EngineError::Invalid(format!("replay speed {speed} must be a positive number")),
        ),
        Pacing::Timed { .. } => Ok(max_in_flight),
    }
}

fn min_opt(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) => x,
        (None, y) => y,
    }
}
