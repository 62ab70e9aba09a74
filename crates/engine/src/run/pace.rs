//! Timed pacing: the schedule from trace time to target time, and how late each I/O
//! was issued against it.

use super::Fidelity;

/// Timed schedule: trace time -> target time.
pub(super) struct Schedule {
    speed: f64,
    max_idle_ns: Option<u64>,
    /// Target time the first I/O is due: when the source handed it over (so opening
    /// the source and decoding its first batch is not counted as lateness). Set by
    /// the first [`Schedule::due`].
    pub(super) start_ns: Option<u64>,
    prev_at_ns: Option<u64>,
    /// Trace time since the first I/O with idle gaps cut.
    cut_trace_ns: u64,
}

impl Schedule {
    pub(super) fn new(speed: f64, max_idle_ns: Option<u64>) -> Schedule {
        Schedule {
            speed,
            max_idle_ns,
            start_ns: None,
            prev_at_ns: None,
            cut_trace_ns: 0,
        }
    }

    /// The schedule of one job of several sharing a timeline: trace time 0 is due at
    /// `start_ns` (the phase start), and the source's times are taken as they are (it
    /// cut the idle gaps of the whole trace, so every job's are cut alike).
    pub(super) fn anchored(speed: f64, start_ns: u64) -> Schedule {
        Schedule {
            speed,
            max_idle_ns: None,
            start_ns: Some(start_ns),
            prev_at_ns: Some(0),
            cut_trace_ns: 0,
        }
    }

    /// Due time of an I/O issued at `at_ns` in the trace; `now_ns` is read only for
    /// the first I/O, which anchors the schedule.
    pub(super) fn due(&mut self, at_ns: u64, now_ns: impl FnOnce() -> u64) -> u64 {
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

/// How late each timed I/O was issued (actual minus scheduled submission).
#[derive(Clone, Debug)]
pub(super) struct IssueErrors {
    hist: hdrhistogram::Histogram<u64>,
    sum_ns: u128,
    max_ns: u64,
    last_due_ns: Option<u64>,
    last_issue_ns: Option<u64>,
}

impl IssueErrors {
    pub(super) fn new() -> IssueErrors {
        IssueErrors {
            hist: hdrhistogram::Histogram::<u64>::new_with_bounds(1, ISSUE_ERROR_MAX_NS, 3)
                .expect("valid histogram bounds"),
            sum_ns: 0,
            max_ns: 0,
            last_due_ns: None,
            last_issue_ns: None,
        }
    }

    /// An I/O due at `due_ns` was issued at `now_ns`.
    pub(super) fn record(&mut self, due_ns: u64, now_ns: u64) {
        let err = now_ns.saturating_sub(due_ns);
        self.hist
            .record(err.clamp(1, ISSUE_ERROR_MAX_NS))
            .expect("clamped");
        self.sum_ns += u128::from(err);
        self.max_ns = self.max_ns.max(err);
        self.last_due_ns = Some(due_ns);
        self.last_issue_ns = Some(now_ns);
    }

    /// Add another job's errors: the histograms merge; the last issue is the one due
    /// last (the end of the schedule, for the drift).
    pub(super) fn add(&mut self, o: &IssueErrors) {
        self.hist.add(&o.hist).expect("same histogram bounds");
        self.sum_ns += o.sum_ns;
        self.max_ns = self.max_ns.max(o.max_ns);
        if o.last_due_ns > self.last_due_ns {
            self.last_due_ns = o.last_due_ns;
            self.last_issue_ns = o.last_issue_ns;
        }
    }

    /// Fill the timed figures of `f`; `start_ns` is when the schedule began.
    pub(super) fn report(&self, start_ns: u64, f: &mut Fidelity) {
        let h = &self.hist;
        if !h.is_empty() {
            f.issue_error_p50_ns = Some(h.value_at_quantile(0.50));
            f.issue_error_p90_ns = Some(h.value_at_quantile(0.90));
            f.issue_error_p99_ns = Some(h.value_at_quantile(0.99));
            f.issue_error_p99_9_ns = Some(h.value_at_quantile(0.999));
            f.issue_error_max_ns = Some(self.max_ns);
            f.issue_error_mean_ns = Some(self.sum_ns as f64 / h.len() as f64);
        }
        if let (Some(due), Some(act)) = (self.last_due_ns, self.last_issue_ns) {
            let drift = act as i64 - due as i64;
            f.drift_ns = Some(drift);
            let sched = due - start_ns;
            if sched > 0 {
                f.drift_pct = Some(drift as f64 * 100.0 / sched as f64);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
