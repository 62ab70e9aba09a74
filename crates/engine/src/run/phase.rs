//! [`PhaseRun`]: one phase in progress. The loop is five steps, each a method:
//! `fill` (take I/Os from the sources while pacing allows), `submit` (hand the batch
//! to the target), `wait` (let time pass until a completion, a due time, the time
//! limit or the next tick), `reap` (take completions in time order) and `account`
//! (one completion into the metrics and the observer).
//!
//! A phase of several jobs on one target in one loop (`--jobs` on a simulated drive
//! or a virtual target) gives each job a [`Lane`]: its own source, pacing state,
//! queue-depth limit and metrics. `fill` takes one I/O from each lane in turn, round
//! robin from the lane after the last one that issued, until no lane may issue: the
//! drive sees the jobs' I/Os interleaved as a multi-queue host issues them, and where
//! the jobs want more in flight than the target takes, they share its slots fairly.
//! Every choice follows the target's clock and the lane order, so a simulated run is
//! the same bit for bit. One lane is the phase of one job, exactly as before jobs.

// One fold-and-align rule for replay and `export --span`: the trace crate's.
use super::merge::{job_seed, merge, Counts, JobPart};
use super::pace::{IssueErrors, Schedule};
use super::{EngineError, Flow, InFlightIo, Observer, Pacing, PhaseOutcome, RunOptions};
use crate::data::DataFiller;
use crate::target::{Completion, IoRequest, Target};
use std::sync::atomic::Ordering;
use storbench_metrics::{Recorder, SecondSample, NS_PER_S};
use storbench_trace::formats::export::fold_align;
use storbench_trace::{IoRecord, Op};
use storbench_workload::Source;

/// One I/O in flight, indexed by its slot.
#[derive(Clone, Copy, Debug)]
pub(super) struct InFlight {
    /// The job (lane) that issued it.
    lane: u32,
    op: Op,
    offset_bytes: u64,
    len_bytes: u64,
    issue_ns: u64,
    /// As the source gave them (for a checkpoint's list of I/Os in flight).
    at_ns: Option<u64>,
    trace_qd: Option<u32>,
    /// Submission order: I/Os its lane issued before it in the phase.
    seq: u64,
}

impl InFlight {
    fn io(&self) -> InFlightIo {
        InFlightIo {
            op: self.op,
            offset_bytes: self.offset_bytes,
            len_bytes: self.len_bytes,
            at_ns: self.at_ns,
            trace_qd: self.trace_qd,
            issue_ns: self.issue_ns,
        }
    }
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

/// Why a lane stopped adding I/Os to the batch.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Gate {
    /// It added one (the turn goes on).
    Issued,
    /// Every slot it may use is taken (its queue depth, or the target's).
    Slots,
    /// Pacing holds its next I/O back (its QD or its due time), or its source ended.
    Pacing,
    /// It takes no more I/O (source ended, time limit, stop).
    Done,
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

/// One job of the phase: what it took from its source, its pacing, its metrics. Its
/// source lives beside it ([`PhaseRun::sources`], same index).
pub(super) struct Lane {
    pending: Option<Pending>,
    /// Trace time of the latest I/O taken (queue-depth idle gaps).
    prev_at_ns: Option<u64>,
    schedule: Option<Schedule>,
    issue_errors: Option<IssueErrors>,
    counts: Counts,
    recorder: Recorder,
    filler: DataFiller,
    /// Its I/Os in flight, and the most its pacing keeps (`FixedQd`'s N, else the
    /// target's limit).
    busy: usize,
    limit: usize,
    exhausted: bool,
    first_error: Option<String>,
    /// Its last submission or completion (queue-depth idle gaps start there).
    last_event_ns: u64,
    /// Its source's figure, as of the last mark or the end.
    trace_avg_qd: Option<f64>,
    /// What stopped it in the last `fill`.
    gate: Gate,
}

impl Lane {
    /// The lane's share of the phase as if it ended at `at_ns` (I/Os in flight not
    /// counted): a checkpoint's.
    fn part_at(&self, at_ns: u64) -> JobPart {
        JobPart {
            metrics: self.recorder.snapshot(at_ns),
            counts: self.counts.clone(),
            issue_errors: self.issue_errors.clone(),
            anchor_ns: self.schedule.as_ref().and_then(|s| s.start_ns),
            first_error: self.first_error.clone(),
            trace_avg_qd: self.trace_avg_qd,
            complete: false,
        }
    }
}

/// One phase in progress.
pub(super) struct PhaseRun<'a> {
    target: &'a mut dyn Target,
    /// One source per lane.
    sources: Vec<&'a mut dyn Source>,
    lanes: Vec<Lane>,
    opts: &'a RunOptions,
    observer: &'a mut dyn Observer,
    /// I/Os are folded onto `[0, span)` and aligned to `lbs`.
    span: u64,
    lbs: u64,
    max_in_flight: usize,
    slots: Slots,
    clock: Clock,
    stopped: bool,
    /// Round robin: the lane whose turn comes first in the next `fill`.
    next_lane: usize,
    /// The lanes' windows merged (several lanes; one lane's are its recorder's).
    series: Vec<SecondSample>,
    /// Scratch for merging one window of every lane.
    window: Vec<SecondSample>,
    batch: Vec<IoRequest>,
    reaped: Vec<Completion>,
}

impl<'a> PhaseRun<'a> {
    /// Check the options against the target and set up the phase, one lane per source.
    pub(super) fn new(
        target: &'a mut dyn Target,
        sources: Vec<&'a mut dyn Source>,
        opts: &'a RunOptions,
        observer: &'a mut dyn Observer,
    ) -> Result<PhaseRun<'a>, EngineError> {
        assert!(!sources.is_empty(), "a phase of no job");
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
        let limit = slot_limit(opts.pacing, max_in_flight, &info.name)?;
        let now = target.now_ns();
        let start_ns = opts.start_ns.unwrap_or(now);
        assert!(start_ns <= now, "a phase that starts in the future");
        // Jobs that share the phase's timeline: their timed schedules start at the
        // phase start, in trace time their sources give (idle cut there).
        let shared_timeline = sources.len() > 1 || opts.start_ns.is_some();
        let lanes = (0..sources.len())
            .map(|j| Lane {
                pending: None,
                prev_at_ns: None,
                schedule: match opts.pacing {
                    Pacing::Timed { speed, .. } if shared_timeline => {
                        Some(Schedule::anchored(speed, start_ns))
                    }
                    Pacing::Timed { speed, max_idle_ns } => Some(Schedule::new(speed, max_idle_ns)),
                    _ => None,
                },
                issue_errors: matches!(opts.pacing, Pacing::Timed { .. }).then(IssueErrors::new),
                counts: Counts::default(),
                recorder: Recorder::new(start_ns),
                filler: DataFiller::new(job_seed(opts.seed, j as u32)),
                busy: 0,
                limit,
                exhausted: false,
                first_error: None,
                last_event_ns: start_ns,
                trace_avg_qd: None,
                gate: Gate::Pacing,
            })
            .collect();
        Ok(PhaseRun {
            target,
            sources,
            lanes,
            opts,
            observer,
            span,
            lbs,
            max_in_flight,
            slots: Slots::new(max_in_flight),
            clock: Clock {
                start_ns,
                last_event_ns: start_ns,
                next_tick_ns: now + opts.tick_ns.max(1),
                next_second_ns: start_ns + NS_PER_S,
                limit_ns: opts.time_limit_ns.map(|l| start_ns.saturating_add(l)),
            },
            stopped: false,
            next_lane: 0,
            series: Vec::new(),
            window: Vec::new(),
            batch: Vec::with_capacity(max_in_flight),
            reaped: Vec::with_capacity(max_in_flight),
        })
    }

    /// Drive the target until every source is exhausted, the time limit passes or the
    /// stop flag is set; drain what is in flight; return the metrics.
    pub(super) fn run(mut self) -> Result<PhaseOutcome, EngineError> {
        self.drive()?;
        Ok(self.finish())
    }

    /// [`PhaseRun::run`] for one job of several on its own thread: its share of the
    /// phase, for the caller to merge with the others'.
    pub(super) fn run_part(mut self) -> Result<JobPart, EngineError> {
        assert_eq!(self.lanes.len(), 1, "a job on its own thread is one lane");
        self.drive()?;
        // Cross the last second before the end: at every later mark of the other jobs,
        // this one's whole share lies before the mark.
        let end_ns = self.target.now_ns().max(self.clock.last_event_ns);
        self.cross_seconds(end_ns);
        let part = self.finish_parts().pop().expect("one lane");
        let m = &part.metrics;
        self.observer
            .on_tick(m.elapsed_ns, part.counts.done, &m.series);
        Ok(part)
    }

    fn drive(&mut self) -> Result<(), EngineError> {
        loop {
            let now = self.target.now_ns();
            assert!(
                now >= self.clock.last_event_ns,
                "target clock went backwards"
            );
            self.poll_stop();
            self.cross_seconds(now);
            if self.any_submitting(now) {
                self.fill(now)?;
                self.submit(now)?;
            } else {
                for lane in &mut self.lanes {
                    lane.gate = Gate::Done;
                }
            }
            self.note_starved(now);
            if self.slots.busy() == 0 && !self.any_submitting(now) {
                return Ok(());
            }
            self.wait(now)?;
            self.reap();
            self.tick();
        }
    }

    fn poll_stop(&mut self) {
        if let Some(s) = &self.opts.stop {
            self.stopped |= s.load(Ordering::Relaxed);
        }
    }

    /// Whether lane `i` still takes I/Os from its source at `now`.
    fn submitting(&self, i: usize, now: u64) -> bool {
        !self.stopped
            && !self.lanes[i].exhausted
            && !matches!(self.clock.limit_ns, Some(l) if now >= l)
    }

    fn any_submitting(&self, now: u64) -> bool {
        (0..self.lanes.len()).any(|i| self.submitting(i, now))
    }

    /// Build one batch of every I/O pacing allows at `now`: one I/O per lane in turn,
    /// until no lane adds one. Each lane's gate says what stopped it.
    fn fill(&mut self, now: u64) -> Result<(), EngineError> {
        self.batch.clear();
        let n = self.lanes.len();
        // The lane after `i` (no division: this runs once per I/O).
        let after = |i: usize| if i + 1 == n { 0 } else { i + 1 };
        let mut i = self.next_lane;
        // Lanes tried in a row without one issuing.
        let mut held = 0;
        while held < n {
            let gate = if self.submitting(i, now) {
                self.try_issue(i, now)?
            } else {
                Gate::Done
            };
            self.lanes[i].gate = gate;
            if gate == Gate::Issued {
                held = 0;
                self.next_lane = after(i);
            } else {
                held += 1;
            }
            i = after(i);
        }
        Ok(())
    }

    /// Lane `i`'s next I/O into the batch, if pacing lets it go at `now`.
    fn try_issue(&mut self, i: usize, now: u64) -> Result<Gate, EngineError> {
        let Some(p) = self.next_pending(i)? else {
            return Ok(Gate::Pacing);
        };
        let lane = &self.lanes[i];
        // The batch's I/Os already hold their slots.
        if self.slots.busy() >= self.max_in_flight || lane.busy >= lane.limit {
            return Ok(Gate::Slots);
        }
        let n = lane.busy;
        let go = match self.opts.pacing {
            Pacing::QueueDepth { default_qd } => {
                n < p.trace_qd.unwrap_or(default_qd).max(1) as usize && self.idle_over(i, n, now)
            }
            Pacing::FixedQd(_) => true,
            Pacing::Timed { .. } => p.due_ns <= now,
        };
        if !go {
            return Ok(Gate::Pacing);
        }
        self.issue(i, p, now)?;
        Ok(Gate::Issued)
    }

    /// Queue-depth with `max_idle_ns`: whether lane `i`'s pending I/O's idle time
    /// (counted from the moment none of its I/Os is in flight) is over at `now`.
    fn idle_over(&mut self, i: usize, in_flight: usize, now: u64) -> bool {
        let lane = &mut self.lanes[i];
        let last_event_ns = lane.last_event_ns;
        let Some(p) = lane.pending.as_mut() else {
            return true;
        };
        if p.idle_ns == 0 || in_flight > 0 {
            return true;
        }
        if p.due_ns == 0 {
            p.due_ns = last_event_ns + p.idle_ns;
        }
        now >= p.due_ns
    }

    /// Lane `i`'s I/O to issue next: the one held back, or a new one from its source
    /// (folded, aligned and scheduled). `None` once the source is exhausted.
    fn next_pending(&mut self, i: usize) -> Result<Option<Pending>, EngineError> {
        if self.lanes[i].pending.is_some() {
            return Ok(self.lanes[i].pending);
        }
        let io = match self.sources[i].next_io() {
            None => {
                self.lanes[i].exhausted = true;
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
        let target = &*self.target;
        let lane = &mut self.lanes[i];
        let due_ns =
            match (lane.schedule.as_mut(), io.at_ns) {
                (None, _) => 0,
                (Some(s), Some(at)) => s.due(at, || target.now_ns()),
                (Some(_), None) => return Err(EngineError::Invalid(
                    "timed pacing needs a source with issue times (a trace); generators have none"
                        .into(),
                )),
            };
        let idle_ns = match (self.opts.max_idle_ns, self.opts.pacing, io.at_ns) {
            (Some(cap), Pacing::QueueDepth { .. }, Some(at)) if io.trace_qd.unwrap_or(1) <= 1 => {
                let gap = lane.prev_at_ns.map_or(0, |p| at.saturating_sub(p));
                gap.min(cap)
            }
            _ => 0,
        };
        if let Some(at) = io.at_ns {
            lane.prev_at_ns = Some(lane.prev_at_ns.map_or(at, |p| p.max(at)));
        }
        let p = Pending {
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
        };
        lane.pending = Some(p);
        // The value, not a read of what was just stored field by field: that read
        // spans two narrower stores and stalls (store forwarding fails), 5 ns an I/O.
        Ok(Some(p))
    }

    /// Put lane `i`'s `p` in a slot (its write data filled) and in the batch, at `now`.
    fn issue(&mut self, i: usize, p: Pending, now: u64) -> Result<(), EngineError> {
        let lane = &mut self.lanes[i];
        lane.counts.folded += u64::from(p.folded);
        lane.counts.aligned += u64::from(p.aligned);
        lane.counts.aligned_extra_bytes += p.aligned_extra_bytes;
        if let Pacing::QueueDepth { default_qd } = self.opts.pacing {
            if p.trace_qd.unwrap_or(default_qd) as usize > self.max_in_flight {
                lane.counts.qd_capped += 1;
            }
        }
        let slot = self.slots.take(InFlight {
            lane: i as u32,
            op: p.op,
            offset_bytes: p.offset_bytes,
            len_bytes: p.len_bytes,
            issue_ns: now,
            at_ns: p.at_ns,
            trace_qd: p.trace_qd,
            seq: lane.counts.submitted,
        });
        if p.op.is_data() {
            if let Err(e) = self.fill_buffer(i, slot, p) {
                self.slots.release(slot);
                return Err(e);
            }
        }
        let lane = &mut self.lanes[i];
        if let Some(e) = lane.issue_errors.as_mut() {
            e.record(p.due_ns, now);
        }
        self.batch.push(IoRequest {
            slot,
            op: p.op,
            offset_bytes: p.offset_bytes,
            len_bytes: p.len_bytes,
            data: self.opts.data,
        });
        lane.recorder.on_submit(now, p.op);
        lane.counts.submitted += 1;
        lane.busy += 1;
        lane.last_event_ns = now;
        lane.pending = None;
        Ok(())
    }

    /// Check the slot's buffer (real targets) holds the I/O, and fill a write's data.
    fn fill_buffer(&mut self, i: usize, slot: u32, p: Pending) -> Result<(), EngineError> {
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
            self.lanes[i]
                .filler
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
        self.clock.last_event_ns = now;
        Ok(())
    }

    /// Timed: a due I/O that waits only for a free slot is starved of slots.
    fn note_starved(&mut self, now: u64) {
        for lane in &mut self.lanes {
            if lane.gate == Gate::Slots && lane.schedule.is_some() {
                if let Some(p) = lane.pending {
                    if p.due_ns <= now {
                        lane.counts.slot_starved += 1;
                    }
                }
            }
        }
    }

    /// Let time pass: until a completion makes room for a lane that waits for one,
    /// the next timed I/O (or idle gap's end) is due, the time limit or the next tick.
    fn wait(&mut self, now: u64) -> Result<(), EngineError> {
        let mut completion = false;
        let mut due: Option<u64> = None;
        let mut submitting = false;
        for i in 0..self.lanes.len() {
            if !self.submitting(i, now) {
                continue;
            }
            submitting = true;
            let lane = &self.lanes[i];
            match lane.pending {
                _ if lane.gate == Gate::Slots => completion = true,
                // Timed: wait for the next I/O's time, reaping as we go.
                Some(p) if lane.schedule.is_some() => due = min_opt(due, Some(p.due_ns)),
                // Queue-depth: the trace's idle gap (capped), none of its own in flight.
                Some(p) if p.due_ns > now && lane.busy == 0 => due = min_opt(due, Some(p.due_ns)),
                // Queue-depth: wait for a completion to make room.
                _ => {
                    assert!(
                        lane.busy > 0,
                        "queue-depth pacing blocked with none in flight"
                    );
                    completion = true;
                }
            }
        }
        let (min_complete, deadline) = if !submitting {
            (1, None)
        } else {
            let mut d = min_opt(
                min_opt(due, self.clock.limit_ns),
                Some(self.clock.next_tick_ns),
            );
            // A job on its own thread wakes at each whole second, where the others wait
            // for it to say where it stands.
            if self.opts.start_ns.is_some() {
                d = min_opt(d, Some(self.clock.next_second_ns));
            }
            (usize::from(completion), d)
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

    /// One completion: free its slot, feed its lane's metrics and the observer.
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
        let lane = &mut self.lanes[f.lane as usize];
        assert!(lane.busy > 0);
        lane.busy -= 1;
        lane.last_event_ns = c.complete_ns;
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
            lane.first_error.get_or_insert_with(|| {
                format!(
                    "{} at offset {} length {}: {e}",
                    f.op, f.offset_bytes, f.len_bytes
                )
            });
        }
        lane.recorder.on_complete(&rec, error.is_none());
        lane.counts.done += 1;
        if self.opts.log_ios {
            match error {
                None => self.observer.on_io(&rec),
                Some(_) => self.observer.on_io(&IoRecord {
                    complete_ns: None,
                    ..rec
                }),
            }
        }
    }

    /// Show the observer each whole second of phase time up to `t_ns`, at exactly that
    /// instant: every event before it fed to the metrics, none at or after it.
    fn cross_seconds(&mut self, t_ns: u64) {
        while t_ns >= self.clock.next_second_ns {
            let at_ns = self.clock.next_second_ns;
            for (lane, src) in self.lanes.iter_mut().zip(&self.sources) {
                lane.recorder.close_to(at_ns);
                lane.trace_avg_qd = src.trace_avg_qd();
            }
            if self.lanes.len() > 1 {
                self.window.clear();
                self.window.extend(self.lanes.iter().map(|l| {
                    *l.recorder
                        .series()
                        .last()
                        .expect("a window ends at the mark")
                }));
                self.series.push(SecondSample::merge_jobs(&self.window));
            }
            let series = match self.lanes.as_slice() {
                [one] => one.recorder.series(),
                _ => &self.series,
            };
            let mark = SecondMark {
                elapsed_ns: at_ns - self.clock.start_ns,
                at_ns,
                series,
                jobs: Jobs::Lanes {
                    lanes: &self.lanes,
                    slots: &self.slots.io,
                    pacing: self.opts.pacing,
                    start_ns: self.clock.start_ns,
                    backend: &self.target.info().backend,
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
            let done = self.lanes.iter().map(|l| l.counts.done).sum();
            let elapsed_ns = now - self.clock.start_ns;
            let series = match self.lanes.as_slice() {
                [one] => one.recorder.series(),
                _ => &self.series,
            };
            self.observer.on_tick(elapsed_ns, done, series);
            self.clock.next_tick_ns = now + self.opts.tick_ns.max(1);
        }
    }

    /// Close every lane's metrics at the last event: the lanes' shares of the phase.
    fn finish_parts(&mut self) -> Vec<JobPart> {
        assert_eq!(self.slots.busy(), 0);
        let end_ns = self.target.now_ns().max(self.clock.last_event_ns);
        let stopped = self.stopped;
        let lanes = std::mem::take(&mut self.lanes);
        lanes
            .into_iter()
            .zip(&self.sources)
            .map(|(lane, src)| JobPart {
                metrics: lane.recorder.finish(end_ns),
                anchor_ns: lane.schedule.as_ref().and_then(|s| s.start_ns),
                complete: !stopped || (lane.exhausted && lane.pending.is_none()),
                counts: lane.counts,
                issue_errors: lane.issue_errors,
                first_error: lane.first_error,
                trace_avg_qd: src.trace_avg_qd(),
            })
            .collect()
    }

    /// Close the metrics at the last event and say how faithful the pacing was.
    fn finish(mut self) -> PhaseOutcome {
        let parts = self.finish_parts();
        let done = parts.iter().map(|p| p.counts.done).sum();
        let outcome = merge(
            parts,
            self.opts.pacing,
            self.clock.start_ns,
            &self.target.info().backend,
        );
        let m = &outcome.metrics;
        self.observer.on_tick(m.elapsed_ns, done, &m.series);
        outcome
    }
}

/// Where the jobs of a phase stand at a [`SecondMark`].
pub(super) enum Jobs<'r> {
    /// Jobs interleaved in this loop: read from their lanes.
    Lanes {
        lanes: &'r [Lane],
        slots: &'r [Option<InFlight>],
        pacing: Pacing,
        start_ns: u64,
        backend: &'r str,
    },
    /// Jobs on threads of their own, asked for their state when it is wanted.
    Threads(&'r dyn JobsAt),
}

/// Jobs on threads of their own at a whole second (see `super::jobs`).
pub(super) trait JobsAt {
    fn jobs(&self) -> usize;
    fn errors(&self) -> (u64, Option<&str>);
    fn submitted_ios(&self, job: usize) -> u64;
    fn in_flight(&self, job: usize) -> Vec<InFlightIo>;
    fn outcome(&self) -> PhaseOutcome;
}

/// Where a phase stands at a whole second of its time ([`Observer::on_second`]): all
/// its jobs at that instant.
pub struct SecondMark<'r> {
    /// Phase time of the mark: a whole number of seconds.
    pub elapsed_ns: u64,
    /// The mark on the target's clock.
    pub at_ns: u64,
    pub(super) series: &'r [SecondSample],
    pub(super) jobs: Jobs<'r>,
}

impl SecondMark<'_> {
    /// Finished per-second windows so far (the last one ends at the mark), the jobs'
    /// merged.
    pub fn series(&self) -> &[SecondSample] {
        self.series
    }

    /// The phase's result as if it had ended at the mark, in-flight I/Os not counted
    /// (`complete` false). I/Os submitted before the mark, and the phase figures.
    pub fn outcome(&self) -> PhaseOutcome {
        match &self.jobs {
            Jobs::Lanes {
                lanes,
                pacing,
                start_ns,
                backend,
                ..
            } => {
                let parts = lanes.iter().map(|l| l.part_at(self.at_ns)).collect();
                merge(parts, *pacing, *start_ns, backend)
            }
            Jobs::Threads(t) => t.outcome(),
        }
    }

    /// One job on its own thread: its share at the mark, for the phase's merge.
    pub(super) fn part(&self) -> JobPart {
        match &self.jobs {
            Jobs::Lanes { lanes: [one], .. } => one.part_at(self.at_ns),
            _ => panic!("a job's part is taken on its own one-lane loop"),
        }
    }

    /// I/Os failed before the mark, and the first of them (`op at offset O length L:
    /// error`; of the first job that had one).
    pub fn errors(&self) -> (u64, Option<&str>) {
        match &self.jobs {
            Jobs::Lanes { lanes, .. } => (
                lanes.iter().map(|l| l.recorder.errors()).sum(),
                lanes.iter().find_map(|l| l.first_error.as_deref()),
            ),
            Jobs::Threads(t) => t.errors(),
        }
    }

    /// How many jobs run the phase.
    pub fn jobs(&self) -> usize {
        match &self.jobs {
            Jobs::Lanes { lanes, .. } => lanes.len(),
            Jobs::Threads(t) => t.jobs(),
        }
    }

    /// I/Os job `job` submitted before the mark (in flight at the mark included): how
    /// far into its source it is.
    pub fn job_submitted_ios(&self, job: usize) -> u64 {
        match &self.jobs {
            Jobs::Lanes { lanes, .. } => lanes[job].counts.submitted,
            Jobs::Threads(t) => t.submitted_ios(job),
        }
    }

    /// I/Os submitted before the mark (in flight at the mark included), all jobs.
    pub fn submitted_ios(&self) -> u64 {
        (0..self.jobs()).map(|j| self.job_submitted_ios(j)).sum()
    }

    /// Job `job`'s I/Os in flight at the mark, in its submission order.
    pub fn job_in_flight(&self, job: usize) -> Vec<InFlightIo> {
        match &self.jobs {
            Jobs::Lanes { slots, .. } => {
                let mut v: Vec<(u64, InFlightIo)> = slots
                    .iter()
                    .flatten()
                    .filter(|f| f.lane as usize == job)
                    .map(|f| (f.seq, f.io()))
                    .collect();
                v.sort_unstable_by_key(|(seq, _)| *seq);
                v.into_iter().map(|(_, io)| io).collect()
            }
            Jobs::Threads(t) => t.in_flight(job),
        }
    }

    /// The I/Os in flight at the mark: each job's in its submission order, job after job.
    pub fn in_flight(&self) -> Vec<InFlightIo> {
        (0..self.jobs())
            .flat_map(|j| self.job_in_flight(j))
            .collect()
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
