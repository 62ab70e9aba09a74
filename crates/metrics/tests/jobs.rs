//! Issue 35: a phase run as several jobs (`--jobs N`) is one result, its histograms
//! merged, never its percentiles averaged.

use storbench_core::{IoRecord, Op};
use storbench_metrics::{LatencyStats, PhaseMetrics, Recorder, SecondSample, ServiceHistogram};

const S: u64 = 1_000_000_000;

/// One job: `n` I/Os kept `qd` in flight from `start`, each taking a service time from
/// a job-specific spread (xorshift), reads and writes by `write_every`. Returns the
/// job's metrics at `end` and every I/O's (op, service time).
fn job(
    seed: u64,
    qd: u64,
    n: u64,
    base_ns: u64,
    write_every: u64,
) -> (PhaseMetrics, Vec<(Op, u64)>) {
    let mut x = seed | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut r = Recorder::new(0);
    let mut done = Vec::new();
    let mut t = 0u64;
    let mut i = 0u64;
    while i < n {
        // A wave of `qd` I/Os submitted at t, completing in submission order.
        let wave: Vec<(Op, u64)> = (0..qd.min(n - i))
            .map(|k| {
                let op = if (i + k).is_multiple_of(write_every) {
                    Op::Write
                } else {
                    Op::Read
                };
                (op, base_ns + next() % (50 * base_ns))
            })
            .collect();
        for (op, _) in &wave {
            r.on_submit(t, *op);
        }
        let mut ends: Vec<(u64, Op, u64)> =
            wave.iter().map(|&(op, svc)| (t + svc, op, svc)).collect();
        ends.sort();
        for (e, op, svc) in &ends {
            let mut rec = IoRecord::new(*op, 0, 4096, t);
            rec.complete_ns = Some(*e);
            r.on_complete(&rec, true);
            done.push((*op, *svc));
        }
        t = ends.last().unwrap().0;
        i += wave.len() as u64;
    }
    (r.finish(t), done)
}

/// The same population: every bucket, count, extreme, sum and percentile exactly; the
/// sum of squares (f64, added in another order) and the std dev to 1e-12.
fn same(a: &LatencyStats, b: &LatencyStats) {
    assert_eq!(a.histogram.buckets, b.histogram.buckets);
    let exact = |s: &LatencyStats| {
        (
            s.count,
            s.histogram.sum_ns,
            s.histogram.min_ns,
            s.histogram.max_ns,
            [
                s.mean_us,
                s.min_us,
                s.max_us,
                s.p50_us,
                s.p90_us,
                s.p99_us,
                s.p99_9_us,
                s.p99_99_us,
            ],
        )
    };
    assert_eq!(exact(a), exact(b));
    let rel = |x: f64, y: f64| (x - y).abs() <= 1e-12 * x.abs().max(y.abs());
    assert!(rel(a.histogram.sum_sq_ns2, b.histogram.sum_sq_ns2));
    assert!(rel(a.stddev_us, b.stddev_us));
}

#[test]
fn merged_histogram_equals_the_union_of_the_jobs_histograms() {
    // Three jobs with different service-time spreads and lengths: a merged p99 is the
    // union's, which no average of the jobs' p99s gives.
    let jobs = [
        job(1, 32, 40_000, 10_000, 4),
        job(2, 32, 25_000, 80_000, 3),
        job(3, 8, 10_000, 2_000, 2),
    ];
    let parts: Vec<PhaseMetrics> = jobs.iter().map(|(m, _)| m.clone()).collect();
    let merged = PhaseMetrics::merge_jobs(&parts).unwrap();

    let mut union = ServiceHistogram::new();
    let mut union_read = ServiceHistogram::new();
    let mut union_write = ServiceHistogram::new();
    for (_, ios) in &jobs {
        for &(op, svc) in ios {
            union.record(svc);
            match op {
                Op::Read => union_read.record(svc),
                _ => union_write.record(svc),
            }
        }
    }
    same(&merged.service, &union.stats());
    same(&merged.service_read, &union_read.stats());
    same(&merged.service_write, &union_write.stats());
    assert_eq!(merged.service.count, 75_000);
    // Not the average of the jobs' percentiles.
    let avg_p99 = parts.iter().map(|p| p.service.p99_us).sum::<f64>() / 3.0;
    assert!(
        (merged.service.p99_us - avg_p99).abs() > 1.0,
        "{} vs {avg_p99}",
        merged.service.p99_us
    );

    // Counts add, the phase ends with its last job, IOPS follow.
    assert_eq!(
        merged.read_ios,
        parts.iter().map(|p| p.read_ios).sum::<u64>()
    );
    assert_eq!(
        merged.write_bytes,
        parts.iter().map(|p| p.write_bytes).sum::<u64>()
    );
    assert_eq!(merged.end_ns, parts.iter().map(|p| p.end_ns).max().unwrap());
    let total = (merged.read_ios + merged.write_ios) as f64;
    assert!((merged.iops - total / (merged.elapsed_ns as f64 / 1e9)).abs() < 1e-6);
    // Per-job queue depth, added: job-time at each depth.
    let at32: u64 = parts
        .iter()
        .map(|p| p.qd.time_by_qd_ns.get(32).copied().unwrap_or(0))
        .sum();
    assert_eq!(merged.qd.time_by_qd_ns[32], at32);
    assert_eq!(merged.qd.max, 32);

    // The series: every window's counts add over the jobs that have it.
    let windows = parts.iter().map(|p| p.series.len()).max().unwrap();
    assert_eq!(merged.series.len(), windows);
    assert!(windows > 1, "the test wants several windows");
    for (t, w) in merged.series.iter().enumerate() {
        let ios: u64 = parts
            .iter()
            .filter_map(|p| p.series.get(t))
            .map(|s| s.read_ios + s.write_ios)
            .sum();
        assert_eq!(w.read_ios + w.write_ios, ios, "window {t}");
        assert_eq!(w.t_s, t as u64);
    }
    let sum: u64 = merged.series.iter().map(|s| s.read_ios).sum();
    assert_eq!(sum, merged.read_ios);
}

#[test]
fn one_job_merges_to_itself() {
    let (m, _) = job(9, 16, 5_000, 30_000, 5);
    assert_eq!(
        PhaseMetrics::merge_jobs(std::slice::from_ref(&m)).unwrap(),
        m
    );
    let s = m.series[0];
    assert_eq!(SecondSample::merge_jobs(&[s]), s);
    assert_eq!(
        PhaseMetrics::merge_jobs(&[]),
        Err(storbench_metrics::MergeError::NoJobs)
    );
}

#[test]
fn a_window_of_two_jobs_weighs_means_by_their_ios() {
    let a = SecondSample {
        t_s: 3,
        window_ns: S,
        read_ios: 300,
        read_latency_us_mean: 10.0,
        latency_us_mean: 10.0,
        latency_us_max: 40.0,
        busy_ns: S,
        qd_mean: 2.0,
        ..SecondSample::default()
    };
    // Ended 0.5 s into the window.
    let b = SecondSample {
        t_s: 3,
        window_ns: S / 2,
        read_ios: 100,
        read_latency_us_mean: 50.0,
        latency_us_mean: 50.0,
        latency_us_max: 90.0,
        busy_ns: S / 2,
        qd_mean: 4.0,
        ..SecondSample::default()
    };
    let m = SecondSample::merge_jobs(&[a, b]);
    assert_eq!((m.t_s, m.window_ns, m.read_ios), (3, S, 400));
    assert_eq!(m.read_latency_us_mean, 20.0);
    assert_eq!(m.latency_us_mean, 20.0);
    assert_eq!(m.latency_us_max, 90.0);
    assert_eq!(m.busy_ns, S);
    // 2 in flight for 1 s and 4 for 0.5 s: 4 I/O-seconds over the 1 s window.
    assert_eq!(m.qd_mean, 4.0);
}
