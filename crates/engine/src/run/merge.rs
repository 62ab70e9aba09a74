//! A phase's result from its jobs' shares: [`JobPart`] is what one job measured
//! (its metrics, counters and issue errors, before any percentile is taken), and
//! [`merge`] makes the phase's [`PhaseOutcome`] of them: histograms merged, never
//! percentiles averaged. One part gives the outcome of a phase of one job, exactly.

use super::pace::IssueErrors;
use super::{Fidelity, Pacing, PhaseOutcome};
pub use storbench_core::generator::job_seed;
use storbench_metrics::PhaseMetrics;

/// Counters of one job of a phase (see [`PhaseOutcome`]).
#[derive(Clone, Debug, Default)]
pub(super) struct Counts {
    pub folded: u64,
    pub aligned: u64,
    pub aligned_extra_bytes: u64,
    pub qd_capped: u64,
    pub slot_starved: u64,
    pub submitted: u64,
    pub done: u64,
}

impl Counts {
    fn add(&mut self, o: &Counts) {
        self.folded += o.folded;
        self.aligned += o.aligned;
        self.aligned_extra_bytes += o.aligned_extra_bytes;
        self.qd_capped += o.qd_capped;
        self.slot_starved += o.slot_starved;
        self.submitted += o.submitted;
        self.done += o.done;
    }
}

/// What one job of a phase measured, from the phase's start.
#[derive(Clone, Debug)]
pub(super) struct JobPart {
    pub metrics: PhaseMetrics,
    pub counts: Counts,
    /// Timed pacing: how late its I/Os were issued.
    pub issue_errors: Option<IssueErrors>,
    /// When its timed schedule began.
    pub anchor_ns: Option<u64>,
    pub first_error: Option<String>,
    pub trace_avg_qd: Option<f64>,
    /// Its source ran to its end (or it was not stopped).
    pub complete: bool,
}

/// The phase's outcome from its jobs' parts (in job order).
pub(super) fn merge(
    mut parts: Vec<JobPart>,
    pacing: Pacing,
    start_ns: u64,
    backend: &str,
) -> PhaseOutcome {
    assert!(!parts.is_empty(), "a phase of no job");
    if parts.len() == 1 {
        let p = parts.pop().expect("one part");
        let report = Report {
            pacing,
            counts: &p.counts,
            issue_errors: p.issue_errors.as_ref(),
            anchor_ns: p.anchor_ns,
            start_ns,
            backend,
            first_error: &p.first_error,
            trace_avg_qd: p.trace_avg_qd,
        };
        return report.outcome(p.metrics, p.complete);
    }
    let metrics: Vec<PhaseMetrics> = parts.iter().map(|p| p.metrics.clone()).collect();
    let metrics = PhaseMetrics::merge_jobs(&metrics).expect("histograms of one build merge");
    let mut counts = Counts::default();
    let mut issue_errors: Option<IssueErrors> = None;
    for p in &parts {
        counts.add(&p.counts);
        if let Some(e) = &p.issue_errors {
            match issue_errors.as_mut() {
                None => issue_errors = Some(e.clone()),
                Some(all) => all.add(e),
            }
        }
    }
    // Per-job averages of the trace's QD, as the replayed one (per job) is.
    let avgs: Vec<f64> = parts.iter().filter_map(|p| p.trace_avg_qd).collect();
    let trace_avg_qd =
        (avgs.len() == parts.len()).then(|| avgs.iter().sum::<f64>() / avgs.len() as f64);
    let first_error = parts.iter().find_map(|p| p.first_error.clone());
    let job_submitted_ios = parts.iter().map(|p| p.counts.submitted).collect();
    let report = Report {
        pacing,
        counts: &counts,
        issue_errors: issue_errors.as_ref(),
        anchor_ns: parts.iter().filter_map(|p| p.anchor_ns).min(),
        start_ns,
        backend,
        first_error: &first_error,
        trace_avg_qd,
    };
    let mut outcome = report.outcome(metrics, parts.iter().all(|p| p.complete));
    outcome.job_submitted_ios = job_submitted_ios;
    outcome
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
            job_submitted_ios: Vec::new(),
            first_error: self.first_error.clone(),
        }
    }
}
