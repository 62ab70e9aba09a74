//! The one engine loop: pull I/Os from a [`Source`], pace them, submit them to a
//! [`Target`], reap completions and feed the metrics [`Recorder`].
//!
//! The loop reads no clock of its own: every time comes from [`Target::now_ns`] and time
//! passes only inside [`Target::advance`], so a real device (CLOCK_MONOTONIC) and a
//! simulated one (virtual time) run through the same code with no special case.
//!
//! Pacing:
//! - [`Pacing::QueueDepth`]: keep the source's order; issue an I/O once the number in
//!   flight is below its `trace_qd` (the in-flight count it had in the trace, itself
//!   included), or `default_qd` when the source has none. Idle time disappears.
//! - [`Pacing::Timed`]: issue each I/O at `at_ns / speed` after the first I/O (which is
//!   due when the source hands it over, so opening the source is not lateness), with gaps
//!   between consecutive trace issue times longer than `max_idle_ns` cut to that length
//!   (gaps measured in trace time, before dividing by speed). I/Os due together go in
//!   one submission; the target sleeps then spins towards each deadline.
//! - [`Pacing::FixedQd`]: ignore times, keep N in flight.
//!
//! Offsets past the end of the fold span (the target's capacity unless
//! [`RunOptions::fold_span_bytes`] says less) are folded onto it, and unaligned I/O is
//! aligned to the target's logical block size; both are counted in [`PhaseOutcome`].

use crate::data::DataFiller;
use crate::target::{Completion, DataKind, IoRequest, Target, TargetError};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use storbench_metrics::{PhaseMetrics, Recorder, SecondSample};
use storbench_trace::{IoRecord, Op};
use storbench_workload::{Source, SourceError};

/// Default gap cut of `timed` replay: idle gaps longer than 1 s in the trace are cut
/// to 1 s (`--max-idle none` keeps every gap).
pub const DEFAULT_MAX_IDLE_NS: u64 = 1_000_000_000;

/// Default interval between [`Observer::on_tick`] calls, on the target's clock.
pub const DEFAULT_TICK_NS: u64 = 250_000_000;

/// How I/Os are paced.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pacing {
    /// Keep the trace's in-flight count (`trace_qd`), or `default_qd` where it has none.
    QueueDepth { default_qd: u32 },
    /// Issue at trace time / speed, idle gaps cut to `max_idle_ns` (None: keep all).
    Timed {
        speed: f64,
        max_idle_ns: Option<u64>,
    },
    /// Ignore times, keep N in flight.
    FixedQd(u32),
}

impl Pacing {
    pub fn name(&self) -> &'static str {
        match self {
            Pacing::QueueDepth { .. } => "queue-depth",
            Pacing::Timed { .. } => "timed",
            Pacing::FixedQd(_) => "fixed-qd",
        }
    }
}

/// Options of one phase.
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub pacing: Pacing,
    /// Content of written data.
    pub data: DataKind,
    /// Seed of the data filler.
    pub seed: u64,
    /// Stop submitting after this long (target clock) and drain; still `complete`.
    pub time_limit_ns: Option<u64>,
    /// Set (by a Ctrl-C handler, say) to stop submitting, drain, and return
    /// `complete == false`.
    pub stop: Option<Arc<AtomicBool>>,
    /// Pass every completed I/O to [`Observer::on_io`] (for ios.parquet).
    pub log_ios: bool,
    /// I/Os are folded onto `[0, fold_span_bytes)`; `None`: the target's capacity.
    pub fold_span_bytes: Option<u64>,
    /// Interval of [`Observer::on_tick`] on the target's clock.
    pub tick_ns: u64,
}

impl RunOptions {
    pub fn new(pacing: Pacing) -> RunOptions {
        RunOptions {
            pacing,
            data: DataKind::Random,
            seed: 0,
            time_limit_ns: None,
            stop: None,
            log_ios: false,
            fold_span_bytes: None,
            tick_ns: DEFAULT_TICK_NS,
        }
    }
}

/// Watches a phase: progress bars, ios.parquet writers, checkpoints.
pub trait Observer {
    /// A completed I/O (only with [`RunOptions::log_ios`]), in completion order. Times
    /// on the target clock. A failed I/O comes with `complete_ns == None`.
    fn on_io(&mut self, _io: &IoRecord) {}
    /// About every [`RunOptions::tick_ns`] of target time: time since the phase start,
    /// I/Os completed so far, finished per-second windows so far.
    fn on_tick(&mut self, _elapsed_ns: u64, _done_ios: u64, _series: &[SecondSample]) {}
}

/// An observer that watches nothing.
pub struct NoObserver;
impl Observer for NoObserver {}

/// How faithfully the replay followed the trace.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Fidelity {
    /// `queue-depth`, `timed` or `fixed-qd`.
    pub mode: String,
    /// Timed: issue-time error (actual minus scheduled submission), ns.
    pub issue_error_ns_p50: Option<u64>,
    pub issue_error_ns_p90: Option<u64>,
    pub issue_error_ns_p99: Option<u64>,
    pub issue_error_ns_p999: Option<u64>,
    pub issue_error_ns_max: Option<u64>,
    pub issue_error_ns_mean: Option<f64>,
    /// Timed: actual minus scheduled time of the last issue, ns, and that as a percent
    /// of the scheduled duration.
    pub drift_ns: Option<i64>,
    pub drift_pct: Option<f64>,
    /// Timed: I/Os issued late because every slot of the target was busy.
    pub slot_starved_ios: u64,
    /// Queue-depth: time-weighted average QD over busy time, in the trace and replayed.
    pub trace_avg_qd: Option<f64>,
    pub replayed_avg_qd: Option<f64>,
    /// Queue-depth: I/Os whose trace QD exceeded what the target accepts in flight.
    pub qd_capped_ios: u64,
}

/// The result of one phase.
#[derive(Clone, Debug)]
pub struct PhaseOutcome {
    pub metrics: PhaseMetrics,
    /// False when stopped by [`RunOptions::stop`] before the source was exhausted.
    pub complete: bool,
    /// Issued I/Os whose offset was past the fold span and was folded onto it.
    pub folded_ios: u64,
    /// Issued I/Os whose offset or length was not a multiple of the logical block size.
    pub aligned_ios: u64,
    pub fidelity: Fidelity,
    /// The target's I/O backend (`io_uring`, `threads`, `virtual`).
    pub backend: String,
    pub submitted_ios: u64,
    /// First failed completion, for the error message (`op offset+len: errno`).
    pub first_error: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Target(#[from] TargetError),
    #[error(transparent)]
    Source(#[from] SourceError),
    #[error("{0}")]
    Invalid(String),
}

/// One I/O in flight, indexed by its slot.
#[derive(Clone, Copy, Debug)]
struct InFlight {
    op: Op,
    offset_bytes: u64,
    len_bytes: u64,
    issue_ns: u64,
}

/// The next I/O, folded and aligned, with its schedule.
#[derive(Clone, Copy, Debug)]
struct Pending {
    op: Op,
    offset_bytes: u64,
    len_bytes: u64,
    trace_qd: Option<u32>,
    /// Timed: scheduled submission time on the target clock.
    due_ns: u64,
    /// Folded onto the span / aligned to the block size: counted when it is issued, so
    /// an I/O taken but not issued when the phase stops is not counted.
    folded: bool,
    aligned: bool,
}

/// Fold `[offset, offset+len)` onto `[0, span)` and align to `lbs`. Returns
/// (offset, len, folded, aligned).
fn fold_align(offset: u64, len: u64, span: u64, lbs: u64) -> (u64, u64, bool, bool) {
    assert!(lbs > 0 && span >= lbs && span.is_multiple_of(lbs));
    let mut aligned = false;
    let mut start = offset;
    let mut end = offset.saturating_add(len);
    if !start.is_multiple_of(lbs) || !end.is_multiple_of(lbs) {
        aligned = true;
        start = start / lbs * lbs;
        end = end.div_ceil(lbs) * lbs;
    }
    let mut l = end - start;
    let mut folded = false;
    if l > span {
        l = span;
        folded = true;
    }
    if start + l > span {
        folded = true;
        start %= span;
        if start + l > span {
            start = span - l;
        }
    }
    assert!(start.is_multiple_of(lbs) && l.is_multiple_of(lbs) && start + l <= span);
    (start, l, folded, aligned)
}

/// Timed schedule: trace time -> target time.
struct Schedule {
    speed: f64,
    max_idle_ns: Option<u64>,
    /// Target time the first I/O is due: when the source handed it over (so opening
    /// the source and decoding its first batch is not counted as lateness). Set by
    /// the first [`Schedule::due`].
    start_ns: Option<u64>,
    prev_at_ns: Option<u64>,
    /// Trace time since the first I/O with idle gaps cut.
    cut_trace_ns: u64,
}

impl Schedule {
    fn new(speed: f64, max_idle_ns: Option<u64>) -> Schedule {
        Schedule {
            speed,
            max_idle_ns,
            start_ns: None,
            prev_at_ns: None,
            cut_trace_ns: 0,
        }
    }

    /// Due time of an I/O issued at `at_ns` in the trace; `now_ns` is read only for
    /// the first I/O, which anchors the schedule.
    fn due(&mut self, at_ns: u64, now_ns: impl FnOnce() -> u64) -> u64 {
        if let Some(prev) = self.prev_at_ns {
            let gap = at_ns.saturating_sub(prev);
            let gap = match self.max_idle_ns {
                Some(m) => gap.min(m),
                None => gap,
            };
            self.cut_trace_ns += gap;
        }
        self.prev_at_ns = Some(self.prev_at_ns.map_or(at_ns, |p| p.max(at_ns)));
        let start = *self.start_ns.get_or_insert_with(now_ns);
        start + (self.cut_trace_ns as f64 / self.speed) as u64
    }
}

/// Issue-error histogram bound: errors above 60 s are clamped (they are reported as
/// the max anyway).
const ISSUE_ERROR_MAX_NS: u64 = 60_000_000_000;

/// Run one phase: drive `target` with `source` until the source is exhausted, the time
/// limit passes or `stop` is set; drain what is in flight; return the metrics.
pub fn run_phase(
    target: &mut dyn Target,
    source: &mut dyn Source,
    opts: &RunOptions,
    observer: &mut dyn Observer,
) -> Result<PhaseOutcome, EngineError> {
    let info = target.info().clone();
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
    let slot_limit = match opts.pacing {
        Pacing::FixedQd(n) => {
            if n == 0 {
                return Err(EngineError::Invalid(
                    "fixed-qd needs a queue depth of at least 1".into(),
                ));
            }
            if n as usize > max_in_flight {
                return Err(EngineError::Invalid(format!(
                    "queue depth {n} exceeds what target {} accepts in flight ({max_in_flight})",
                    info.name
                )));
            }
            n as usize
        }
        Pacing::QueueDepth { default_qd } => {
            if default_qd == 0 {
                return Err(EngineError::Invalid(
                    "queue-depth pacing needs a default QD of at least 1".into(),
                ));
            }
            max_in_flight
        }
        Pacing::Timed { speed, .. } => {
            if !(speed > 0.0 && speed.is_finite()) {
                return Err(EngineError::Invalid(format!(
                    "replay speed {speed} must be a positive number"
                )));
            }
            max_in_flight
        }
    };

    let start_ns = target.now_ns();
    let mut recorder = Recorder::new(start_ns);
    let mut filler = DataFiller::new(opts.seed);
    let mut in_flight: Vec<Option<InFlight>> = vec![None; max_in_flight];
    // Free slots as a stack: bounded by max_in_flight.
    let mut free: Vec<u32> = (0..max_in_flight as u32).rev().collect();
    let mut batch: Vec<IoRequest> = Vec::with_capacity(max_in_flight);
    let mut reaped: Vec<Completion> = Vec::with_capacity(max_in_flight);
    let mut schedule = match opts.pacing {
        Pacing::Timed { speed, max_idle_ns } => Some(Schedule::new(speed, max_idle_ns)),
        _ => None,
    };
    let mut issue_err = if schedule.is_some() {
        Some(
            hdrhistogram::Histogram::<u64>::new_with_bounds(1, ISSUE_ERROR_MAX_NS, 3)
                .expect("valid histogram bounds"),
        )
    } else {
        None
    };
    let mut issue_err_sum_ns: u128 = 0;
    let mut issue_err_max_ns: u64 = 0;
    let mut last_due_ns: Option<u64> = None;
    let mut last_issue_ns: Option<u64> = None;

    let mut pending: Option<Pending> = None;
    let mut exhausted = false;
    let mut stopped = false;
    let mut n_in_flight: usize = 0;
    let mut folded_ios = 0u64;
    let mut aligned_ios = 0u64;
    let mut qd_capped_ios = 0u64;
    let mut slot_starved_ios = 0u64;
    let mut submitted_ios = 0u64;
    let mut done_ios = 0u64;
    let mut first_error: Option<String> = None;
    let mut last_event_ns = start_ns;
    let mut next_tick_ns = start_ns + opts.tick_ns.max(1);
    let limit_ns = opts.time_limit_ns.map(|l| start_ns.saturating_add(l));

    loop {
        let now = target.now_ns();
        assert!(now >= last_event_ns, "target clock went backwards");
        if !stopped
            && opts
                .stop
                .as_ref()
                .is_some_and(|s| s.load(Ordering::Relaxed))
        {
            stopped = true;
        }
        let submitting = !stopped && !exhausted && !matches!(limit_ns, Some(l) if now >= l);

        // Build one batch of everything that may be issued now.
        batch.clear();
        let mut blocked_by_slots = false;
        if submitting {
            loop {
                if pending.is_none() {
                    match source.next_io() {
                        None => {
                            exhausted = true;
                            break;
                        }
                        Some(Err(e)) => return Err(e.into()),
                        Some(Ok(io)) => {
                            let (offset_bytes, len_bytes, folded, aligned) = if io.op == Op::Flush {
                                (0, 0, false, false)
                            } else {
                                fold_align(io.offset_bytes, io.len_bytes, span, lbs)
                            };
                            let due_ns = match schedule.as_mut() {
                                Some(s) => match io.at_ns {
                                    Some(at) => s.due(at, || target.now_ns()),
                                    None => {
                                        return Err(EngineError::Invalid(
                                            "timed pacing needs a source with issue times \
                                             (a trace); generators have none"
                                                .into(),
                                        ))
                                    }
                                },
                                None => 0,
                            };
                            pending = Some(Pending {
                                op: io.op,
                                offset_bytes,
                                len_bytes,
                                trace_qd: io.trace_qd,
                                due_ns,
                                folded,
                                aligned,
                            });
                        }
                    }
                }
                let p = pending.expect("pending was just filled");
                let n = n_in_flight + batch.len();
                if n >= slot_limit {
                    blocked_by_slots = true;
                    break;
                }
                match opts.pacing {
                    Pacing::QueueDepth { default_qd } => {
                        let want = p.trace_qd.unwrap_or(default_qd).max(1) as usize;
                        if n >= want {
                            break;
                        }
                    }
                    Pacing::FixedQd(_) => {}
                    Pacing::Timed { .. } => {
                        if p.due_ns > now {
                            break;
                        }
                    }
                }
                // Issue it.
                folded_ios += u64::from(p.folded);
                aligned_ios += u64::from(p.aligned);
                if let Pacing::QueueDepth { default_qd } = opts.pacing {
                    if p.trace_qd.unwrap_or(default_qd) as usize > max_in_flight {
                        qd_capped_ios += 1;
                    }
                }
                let slot = free.pop().expect("a free slot below the slot limit");
                if p.op.is_data() {
                    if let Some(buf) = target.buffer(slot) {
                        if (buf.len() as u64) < p.len_bytes {
                            free.push(slot);
                            return Err(EngineError::Invalid(format!(
                                "an I/O of {} bytes is larger than the target's buffers \
                                 ({} bytes); open the target with larger buffers",
                                p.len_bytes,
                                buf.len()
                            )));
                        }
                        if p.op == Op::Write {
                            filler.fill(opts.data, &mut buf[..p.len_bytes as usize]);
                        }
                    }
                }
                if let Some(h) = issue_err.as_mut() {
                    let err = now.saturating_sub(p.due_ns);
                    h.record(err.clamp(1, ISSUE_ERROR_MAX_NS)).expect("clamped");
                    issue_err_sum_ns += u128::from(err);
                    issue_err_max_ns = issue_err_max_ns.max(err);
                    last_due_ns = Some(p.due_ns);
                    last_issue_ns = Some(now);
                }
                assert!(in_flight[slot as usize].is_none());
                in_flight[slot as usize] = Some(InFlight {
                    op: p.op,
                    offset_bytes: p.offset_bytes,
                    len_bytes: p.len_bytes,
                    issue_ns: now,
                });
                batch.push(IoRequest {
                    slot,
                    op: p.op,
                    offset_bytes: p.offset_bytes,
                    len_bytes: p.len_bytes,
                    data: opts.data,
                });
                recorder.on_submit(now, p.op);
                pending = None;
            }
            if !batch.is_empty() {
                target.submit(&batch)?;
                n_in_flight += batch.len();
                submitted_ios += batch.len() as u64;
                last_event_ns = now;
            }
        }
        if blocked_by_slots && schedule.is_some() {
            if let Some(p) = pending {
                if p.due_ns <= now {
                    slot_starved_ios += 1;
                }
            }
        }

        let submitting = !stopped && !exhausted && !matches!(limit_ns, Some(l) if now >= l);
        if n_in_flight == 0 && !submitting {
            break;
        }

        // Let time pass.
        reaped.clear();
        let tick_deadline = Some(next_tick_ns);
        let (min_complete, deadline) = if !submitting {
            (1, None)
        } else if blocked_by_slots {
            (1, min_opt(limit_ns, tick_deadline))
        } else {
            match pending {
                Some(p) if schedule.is_some() => {
                    // Timed: wait for the next I/O's time, reaping as we go.
                    (0, min_opt(min_opt(Some(p.due_ns), limit_ns), tick_deadline))
                }
                _ => {
                    // Queue-depth: wait for a completion to make room.
                    assert!(
                        n_in_flight > 0,
                        "queue-depth pacing blocked with none in flight"
                    );
                    (1, min_opt(limit_ns, tick_deadline))
                }
            }
        };
        target.advance(min_complete, deadline, &mut reaped)?;
        reaped.sort_unstable_by_key(|c| c.complete_ns);
        for c in reaped.drain(..) {
            let f = in_flight
                .get_mut(c.slot as usize)
                .and_then(Option::take)
                .unwrap_or_else(|| panic!("completion of slot {} not in flight", c.slot));
            assert!(
                c.complete_ns >= last_event_ns,
                "target returned a completion at {} ns before an earlier event at {} ns",
                c.complete_ns,
                last_event_ns
            );
            last_event_ns = c.complete_ns;
            let rec = IoRecord {
                issue_ns: f.issue_ns,
                complete_ns: Some(c.complete_ns),
                offset_bytes: f.offset_bytes,
                len_bytes: f.len_bytes,
                op: f.op,
                stream: None,
                device: None,
            };
            let ok = match c.result {
                Ok(n) if f.op.is_data() && n != f.len_bytes => {
                    if first_error.is_none() {
                        first_error = Some(format!(
                            "{} at offset {} length {}: short transfer of {n} bytes",
                            f.op, f.offset_bytes, f.len_bytes
                        ));
                    }
                    false
                }
                Ok(_) => true,
                Err(errno) => {
                    if first_error.is_none() {
                        first_error = Some(format!(
                            "{} at offset {} length {}: {}",
                            f.op,
                            f.offset_bytes,
                            f.len_bytes,
                            std::io::Error::from_raw_os_error(errno.abs())
                        ));
                    }
                    false
                }
            };
            recorder.on_complete(&rec, ok);
            if opts.log_ios {
                if ok {
                    observer.on_io(&rec);
                } else {
                    observer.on_io(&IoRecord {
                        complete_ns: None,
                        ..rec
                    });
                }
            }
            free.push(c.slot);
            n_in_flight -= 1;
            done_ios += 1;
        }
        let now = target.now_ns();
        if now >= next_tick_ns {
            observer.on_tick(now - start_ns, done_ios, recorder.series());
            next_tick_ns = now + opts.tick_ns.max(1);
        }
    }
    assert_eq!(n_in_flight, 0);
    assert_eq!(free.len(), max_in_flight);

    let end_ns = target.now_ns().max(last_event_ns);
    let metrics = recorder.finish(end_ns);
    observer.on_tick(end_ns - start_ns, done_ios, &metrics.series);

    let mut fidelity = Fidelity {
        mode: opts.pacing.name().to_string(),
        slot_starved_ios,
        qd_capped_ios,
        ..Fidelity::default()
    };
    match opts.pacing {
        Pacing::Timed { .. } => {
            let h = issue_err.expect("timed has a histogram");
            if !h.is_empty() {
                fidelity.issue_error_ns_p50 = Some(h.value_at_quantile(0.50));
                fidelity.issue_error_ns_p90 = Some(h.value_at_quantile(0.90));
                fidelity.issue_error_ns_p99 = Some(h.value_at_quantile(0.99));
                fidelity.issue_error_ns_p999 = Some(h.value_at_quantile(0.999));
                fidelity.issue_error_ns_max = Some(issue_err_max_ns);
                fidelity.issue_error_ns_mean = Some(issue_err_sum_ns as f64 / h.len() as f64);
            }
            if let (Some(due), Some(act)) = (last_due_ns, last_issue_ns) {
                let drift = act as i64 - due as i64;
                fidelity.drift_ns = Some(drift);
                let sched = due
                    - schedule
                        .as_ref()
                        .and_then(|s| s.start_ns)
                        .unwrap_or(start_ns);
                if sched > 0 {
                    fidelity.drift_pct = Some(drift as f64 * 100.0 / sched as f64);
                }
            }
        }
        Pacing::QueueDepth { .. } | Pacing::FixedQd(_) => {
            fidelity.trace_avg_qd = source.trace_avg_qd();
            fidelity.replayed_avg_qd = Some(metrics.qd.mean_over_busy);
        }
    }

    Ok(PhaseOutcome {
        metrics,
        complete: !stopped || (exhausted && pending.is_none()),
        folded_ios,
        aligned_ios,
        fidelity,
        backend: info.backend.clone(),
        submitted_ios,
        first_error,
    })
}

fn min_opt(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

/// Let `duration_ns` of idle time pass on `target` (nothing may be in flight).
pub fn idle(target: &mut dyn Target, duration_ns: u64) -> Result<(), EngineError> {
    let deadline = target.now_ns().saturating_add(duration_ns);
    let mut out = Vec::new();
    target.advance(0, Some(deadline), &mut out)?;
    assert!(
        out.is_empty(),
        "completions during idle: something was in flight"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fold_and_align() {
        // In range and aligned: untouched.
        assert_eq!(
            fold_align(4096, 4096, 1 << 20, 512),
            (4096, 4096, false, false)
        );
        // Unaligned: widened to whole blocks.
        assert_eq!(fold_align(100, 1000, 1 << 20, 512), (0, 1536, false, true));
        // Past the end: folded by modulo.
        assert_eq!(
            fold_align((1 << 20) + 8192, 4096, 1 << 20, 512),
            (8192, 4096, true, false)
        );
        // Straddling the end after the modulo: moved back to fit.
        assert_eq!(
            fold_align((2 << 20) - 1024, 4096, 1 << 20, 512),
            ((1 << 20) - 4096, 4096, true, false)
        );
        // Longer than the span: clipped.
        assert_eq!(
            fold_align(0, 4 << 20, 1 << 20, 512),
            (0, 1 << 20, true, false)
        );
    }

    #[test]
    fn schedule_cuts_idle_and_scales() {
        let mut s = Schedule::new(2.0, Some(1000));
        // The first I/O anchors the schedule at the time it is handed over.
        assert_eq!(s.due(10_000, || 50), 50);
        assert_eq!(s.due(10_400, || unreachable!("read once")), 250);
        assert_eq!(s.due(1_000_000, || 0), 750); // gap cut to 1000 -> +500
        assert_eq!(s.due(1_000_000, || 0), 750);
    }
}
