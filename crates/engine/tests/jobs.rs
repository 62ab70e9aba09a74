//! Issue 35: a phase as several jobs. On a virtual target the jobs are lanes of one
//! loop, interleaved round robin on its clock; on a file each job is a thread with a
//! ring of its own. Either way the result is one, its histograms merged.

use storbench_engine::testing::DelayTarget;
use storbench_engine::{
    job_seed, open_real, run_jobs, run_lanes, BackendChoice, Flow, Observer, OpenOptions, Pacing,
    PhaseOutcome, RunOptions, SecondMark, Target, TargetSpec,
};
use storbench_metrics::ServiceHistogram;
use storbench_trace::IoRecord;
use storbench_workload::generator::{GenSpec, Generator, Limit, Mix, Pattern};
use storbench_workload::Source;

const MB: u64 = 1 << 20;

/// `ios` 4 KiB random reads at QD `qd` over `[start, start + span)`, seed `seed`.
fn reads(start: u64, span: u64, qd: u32, ios: u64, seed: u64) -> Generator {
    Generator::new(GenSpec {
        pattern: Pattern::Random,
        mix: Mix::ReadWrite { read_pct: 100 },
        block_bytes: 4096,
        qd,
        span_start_bytes: start,
        span_bytes: span,
        limit: if ios == 0 {
            Limit::None
        } else {
            Limit::Ios(ios)
        },
        seed,
    })
    .unwrap()
}

/// Keeps every completed I/O, and at each mark the phase as the observer sees it.
#[derive(Default)]
struct Log {
    ios: Vec<IoRecord>,
    marks: Vec<Mark>,
}

struct Mark {
    elapsed_ns: u64,
    jobs: usize,
    submitted: Vec<u64>,
    in_flight: Vec<usize>,
    outcome: PhaseOutcome,
    windows: usize,
}

impl Observer for Log {
    fn on_io(&mut self, io: &IoRecord) {
        self.ios.push(*io);
    }
    fn on_second(&mut self, m: &SecondMark<'_>) -> Flow {
        let jobs = m.jobs();
        self.marks.push(Mark {
            elapsed_ns: m.elapsed_ns,
            jobs,
            submitted: (0..jobs).map(|j| m.job_submitted_ios(j)).collect(),
            in_flight: (0..jobs).map(|j| m.job_in_flight(j).len()).collect(),
            outcome: m.outcome(),
            windows: m.series().len(),
        });
        Flow::Continue
    }
}

/// The histogram of every logged I/O's service time: the union of the jobs'.
fn union_of(ios: &[IoRecord]) -> ServiceHistogram {
    let mut h = ServiceHistogram::new();
    for io in ios {
        h.record(io.complete_ns.unwrap() - io.issue_ns);
    }
    h
}

/// Two lanes of QD 16 on a target that takes 64: both keep 16 in flight, so the
/// target sees 32, each lane's I/Os from its own source.
#[test]
fn lanes_keep_their_own_queue_depth_each() {
    let mut t = DelayTarget::new(1 << 30, 100_000, 64);
    let mut a = reads(0, 512 * MB, 16, 4_000, job_seed(7, 0));
    let mut b = reads(512 * MB, 512 * MB, 16, 4_000, job_seed(7, 1));
    let opts = RunOptions::new(Pacing::QueueDepth { default_qd: 16 });
    let out = run_lanes(&mut t, vec![&mut a, &mut b], &opts, &mut Log::default()).unwrap();
    assert!(out.complete);
    assert_eq!(out.metrics.read_ios, 8_000);
    assert_eq!(out.submitted_ios, 8_000);
    assert_eq!(t.max_seen_in_flight, 32);
    // Per-job depth: each job had 16 in flight nearly all the time.
    assert_eq!(out.metrics.qd.max, 16);
    assert!(out.metrics.qd.mean_over_busy > 15.9, "{:?}", out.metrics.qd);
    // Both at once: the phase took as long as one job alone (250 waves of 100 us).
    assert_eq!(out.metrics.elapsed_ns, 250 * 100_000);
    // Interleaved: each wave has both lanes' I/Os in it.
    let first: Vec<bool> = t.submissions[..32]
        .iter()
        .map(|(_, r)| r.offset_bytes < 512 * MB)
        .collect();
    assert_eq!(first.iter().filter(|&&x| x).count(), 16);
    assert_eq!(&first[..4], &[true, false, true, false], "round robin");
}

/// Jobs that want more in flight than the target takes share its slots fairly, and
/// the same sources give the same run.
#[test]
fn lanes_share_a_target_fairly_and_deterministically() {
    let run = || {
        let mut t = DelayTarget::new(1 << 30, 50_000, 32).lean();
        let mut a = reads(0, 512 * MB, 32, 0, 1);
        let mut b = reads(512 * MB, 512 * MB, 32, 0, 2);
        let mut opts = RunOptions::new(Pacing::QueueDepth { default_qd: 32 });
        opts.time_limit_ns = Some(3_500_000_000);
        let mut log = Log::default();
        let out = run_lanes(&mut t, vec![&mut a, &mut b], &opts, &mut log).unwrap();
        (out, log)
    };
    let (out, log) = run();
    let (again, log2) = run();
    assert_eq!(out, again, "the same sources, the same run");
    // 32 slots, 50 us each: 640,000 IOPS over both jobs, halves each.
    assert_eq!(out.metrics.read_ios, 3_500_000_000 / 50_000 * 32);
    assert_eq!(log.marks.len(), 3);
    for (m, m2) in log.marks.iter().zip(&log2.marks) {
        assert_eq!(m.jobs, 2);
        assert_eq!(m.submitted, m2.submitted);
        let (a, b) = (m.submitted[0], m.submitted[1]);
        assert!(a.abs_diff(b) <= 1, "unfair share: {a} and {b}");
        assert_eq!(m.in_flight.iter().sum::<usize>(), 32);
        assert_eq!(m.outcome, m2.outcome);
        assert_eq!(m.windows as u64, m.elapsed_ns / 1_000_000_000);
    }
}

/// A phase of one lane through `run_lanes` is the phase `run_phase` runs.
#[test]
fn one_lane_is_run_phase() {
    let opts = RunOptions::new(Pacing::QueueDepth { default_qd: 8 });
    let mut t1 = DelayTarget::new(1 << 30, 30_000, 32).lean();
    let mut g1 = reads(0, 1 << 30, 8, 50_000, 3);
    let a = storbench_engine::run_phase(&mut t1, &mut g1, &opts, &mut Log::default()).unwrap();
    let mut t2 = DelayTarget::new(1 << 30, 30_000, 32).lean();
    let mut g2 = reads(0, 1 << 30, 8, 50_000, 3);
    let b = run_lanes(
        &mut t2,
        vec![&mut g2 as &mut dyn Source],
        &opts,
        &mut Log::default(),
    )
    .unwrap();
    assert_eq!(a, b);
}

/// Two jobs on threads of their own on one file: one ring each, one result. The
/// merged service-time histogram is the union of every I/O's (from the I/O log),
/// the marks show both jobs at each second with their positions, and each job kept
/// its own queue depth.
#[test]
fn jobs_on_threads_merge_into_one_result() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("target.bin");
    let size = 64 * MB;
    let o = OpenOptions {
        write: true,
        size_bytes: Some(size),
        max_in_flight: 8,
        buffer_bytes: 4096,
        backend: BackendChoice::Auto,
        ..OpenOptions::default()
    };
    let main = match open_real(&TargetSpec::File(path.clone()), &o) {
        Ok(t) => t,
        Err(e) => panic!("open {}: {e}", path.display()),
    };
    let targets: Vec<Box<dyn Target + Send>> = (0..2)
        .map(|_| Box::new(main.job_target(8, 4096).unwrap()) as Box<dyn Target + Send>)
        .collect();
    let sources: Vec<Box<dyn Source + Send>> = (0..2)
        .map(|j| Box::new(reads(0, size, 8, 0, job_seed(5, j))) as Box<dyn Source + Send>)
        .collect();
    let mut opts = RunOptions::new(Pacing::QueueDepth { default_qd: 8 });
    opts.time_limit_ns = Some(2_300_000_000);
    opts.log_ios = true;
    let mut log = Log::default();
    let out = run_jobs(targets, sources, &opts, &mut log).unwrap();
    assert!(out.complete);
    assert_eq!(out.metrics.errors, 0, "{:?}", out.first_error);
    let n = out.metrics.read_ios;
    assert!(n > 1000, "{n} reads");
    assert_eq!(log.ios.len() as u64, n, "every I/O logged once");
    assert_eq!(out.submitted_ios, n);
    // The merged histogram is the union of every I/O's service time.
    let union = union_of(&log.ios).stats();
    assert_eq!(
        out.metrics.service_read.histogram.buckets,
        union.histogram.buckets
    );
    assert_eq!(
        (
            out.metrics.service_read.count,
            out.metrics.service_read.p99_us,
            out.metrics.service_read.max_us
        ),
        (union.count, union.p99_us, union.max_us)
    );
    // Per job depth 8, never more.
    assert_eq!(out.metrics.qd.max, 8);
    // Marks at 1 s and 2 s, both jobs at each, positions adding up.
    assert_eq!(log.marks.len(), 2);
    for (i, m) in log.marks.iter().enumerate() {
        assert_eq!(m.elapsed_ns, (i as u64 + 1) * 1_000_000_000);
        assert_eq!(m.jobs, 2);
        assert!(m.submitted.iter().all(|&s| s > 0));
        assert!(m.in_flight.iter().all(|&f| f <= 8));
        assert_eq!(m.outcome.submitted_ios, m.submitted.iter().sum::<u64>());
        let done = m.outcome.metrics.read_ios;
        let flying: usize = m.in_flight.iter().sum();
        assert_eq!(done + flying as u64, m.outcome.submitted_ios);
        assert_eq!(m.windows, i + 1);
    }
    // The series sums to the whole.
    let sum: u64 = out.metrics.series.iter().map(|s| s.read_ios).sum();
    assert_eq!(sum, n);
    // Both jobs read: the I/O log has I/Os in flight at once from both rings (more
    // than one job's depth in flight at some instant).
    let mut ev: Vec<(u64, i32)> = log
        .ios
        .iter()
        .flat_map(|io| [(io.issue_ns, 1), (io.complete_ns.unwrap(), -1)])
        .collect();
    ev.sort();
    let mut cur = 0;
    let mut most = 0;
    for (_, d) in ev {
        cur += d;
        most = most.max(cur);
    }
    assert!(
        most > 8,
        "never more than one job's I/Os in flight ({most})"
    );
}
