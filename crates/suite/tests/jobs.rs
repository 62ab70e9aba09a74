//! Issue 35: `replay --jobs N` gives the trace's streams to the jobs (stream k to job
//! k mod N), each job replaying its streams in the trace's order, in `queue-depth` and
//! `timed` pacing, on a simulated drive (one loop) and on a file (a thread each); and
//! `run --jobs N` draws each job's offsets from the seed, interleaved on a simulated drive.

use std::path::Path;
use storbench_engine::{DataKind, Pacing};
use storbench_suite::replay::{trace_summary, ReplayConfig};
use storbench_suite::run::RunConfig;
use storbench_suite::targets::RealOpen;
use storbench_suite::{execute, Control, Start, SuiteResult};
use storbench_trace::{IoRecord, Op, TraceMeta, TraceWriter};
use storbench_workload::generator::Generator;
use storbench_workload::replay::TraceScan;
use storbench_workload::Source;

/// `n` I/Os 20 us apart, each 15 us long, alternating between streams `a`, `b` and
/// `c` (a, b, c, a, ...); 4 KiB reads and writes at scattered offsets.
fn three_streams(path: &Path, n: u64) {
    let mut w = TraceWriter::create(path, &TraceMeta::default()).unwrap();
    let names = ["a", "b", "c"];
    for i in 0..n {
        let op = if i.is_multiple_of(4) {
            Op::Write
        } else {
            Op::Read
        };
        let mut r = IoRecord {
            complete_ns: Some(i * 20_000 + 15_000),
            ..IoRecord::new(op, (i * 7919 % 4096) * 4096, 4096, i * 20_000)
        };
        r.stream = Some(w.intern_stream(names[(i % 3) as usize]));
        w.write(&r).unwrap();
    }
    w.finish().unwrap();
}

fn replay(
    target: &str,
    trace: &Path,
    pacing: Pacing,
    jobs: u32,
    dir: &Path,
) -> SuiteResult<ReplayConfig> {
    let scan = TraceScan::of(trace).unwrap();
    let c = ReplayConfig {
        target: target.into(),
        open: RealOpen {
            size_bytes: Some(64 << 20),
            max_in_flight: Some(8),
            buffer_bytes: Some(4096),
            ..RealOpen::default()
        },
        trace: trace_summary(trace, &scan),
        pacing,
        time_limit_ns: None,
        span: None,
        seed: 1,
        data: DataKind::Random,
        log_ios: false,
        jobs,
    };
    let start = Start::Scanned(c, vec![(trace.to_path_buf(), scan)]);
    execute(dir, start, &Control::default()).unwrap()
}

#[test]
fn replay_jobs_take_the_traces_streams_in_order() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = tmp.path().join("t.parquet");
    let n = 3_000;
    three_streams(&trace, n);
    let sim = "sim:nvme-mlc-2016,capacity=256m,seed=2";
    let qd = Pacing::QueueDepth { default_qd: 8 };
    // Two jobs: streams a and c to job 0, b to job 1.
    let r = replay(sim, &trace, qd, 2, &tmp.path().join("qd2"));
    let p = &r.phases[0];
    assert_eq!(p.job_issued_ios, vec![2_000, 1_000]);
    assert_eq!(p.metrics.read_ios + p.metrics.write_ios, n);
    assert_eq!(p.metrics.write_ios, n / 4);
    // The same replay again is the same, bit for bit (one loop on the drive's clock).
    let again = replay(sim, &trace, qd, 2, &tmp.path().join("qd2b"));
    assert_eq!(again.phases[0].metrics, p.metrics);
    // Four jobs for three streams: one job has nothing to do, and the result says so.
    let r = replay(sim, &trace, qd, 4, &tmp.path().join("qd4"));
    assert_eq!(r.phases[0].job_issued_ios, vec![1_000, 1_000, 1_000, 0]);
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("1 of its 4 jobs replayed no I/O")),
        "{:?}",
        r.notes
    );

    // Timed: every job on the trace's timeline from one start. On the simulated
    // drive's clock every I/O is issued when it is due: no error, no drift, and the
    // replay lasts the trace's span.
    let timed = Pacing::Timed {
        speed: 1.0,
        max_idle_ns: None,
    };
    let r = replay(sim, &trace, timed, 3, &tmp.path().join("timed"));
    let p = &r.phases[0];
    assert_eq!(p.job_issued_ios, vec![1_000, 1_000, 1_000]);
    let f = p.fidelity.as_ref().unwrap();
    assert_eq!(f.issue_error_max_ns, Some(0), "{f:?}");
    assert_eq!(f.drift_ns, Some(0));
    let span = (n - 1) * 20_000;
    assert!(
        p.metrics.elapsed_ns >= span,
        "{} < {span}",
        p.metrics.elapsed_ns
    );
    assert!(
        p.metrics.elapsed_ns < span + 2_000_000,
        "{}",
        p.metrics.elapsed_ns
    );
}

/// On a file, each job is a thread with a ring: the streams' I/Os all done once, and
/// a timed replay keeps to the trace's timeline (the drift is the machine's).
#[test]
fn replay_jobs_on_a_file_keep_the_trace_timeline() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = tmp.path().join("t.parquet");
    let n = 30_000;
    three_streams(&trace, n);
    let file = tmp.path().join("target.dat");
    let timed = Pacing::Timed {
        speed: 1.0,
        max_idle_ns: None,
    };
    let r = replay(
        file.to_str().unwrap(),
        &trace,
        timed,
        2,
        &tmp.path().join("f"),
    );
    let p = &r.phases[0];
    assert_eq!(p.job_issued_ios, vec![20_000, 10_000]);
    assert_eq!(
        p.metrics.read_ios + p.metrics.write_ios + p.metrics.errors,
        n
    );
    assert_eq!(p.metrics.errors, 0, "{:?}", p.first_error);
    // 0.6 s of trace: the replay is as long, within what a busy host adds at the end.
    let span = (n - 1) * 20_000;
    assert!(p.metrics.elapsed_ns >= span);
    let f = p.fidelity.as_ref().unwrap();
    let drift = f.drift_ns.unwrap();
    assert!(drift.unsigned_abs() < 300_000_000, "drift {drift} ns");
}

/// `run --jobs 2` on a simulated drive, its I/Os logged: (the result, the log).
fn run_two_jobs(seed: u64, dir: &Path) -> (SuiteResult<RunConfig>, Vec<IoRecord>) {
    let c = RunConfig {
        jobs: 2,
        limit_bytes: Some(6_000 * 4096),
        seed,
        log_ios: true,
        ..RunConfig::new("sim:nvme-mlc-2016,capacity=256m,seed=2")
    };
    let r = execute(dir, Start::New(c), &Control::default()).unwrap();
    let (_, ios, _, _) = storbench_trace::read_all(&dir.join("ios.parquet")).unwrap();
    (r, ios)
}

/// Issue 35: each job of `run --jobs 2` draws its offsets from a seed of its own made
/// from the run's seed (job 0 the run's, as one job would), so the same seed gives
/// the same offsets, job by job, and the same result bit for bit; and the simulated
/// drive sees the two jobs' I/Os interleaved in virtual time, as a multi-queue host
/// issues them, each job keeping its 32 in flight.
#[test]
#[allow(
    clippy::too_many_lines,
    reason = "one end-to-end scenario on one device or directory; its steps share state and read in order"
)]
fn run_jobs_offsets_come_from_the_seed_job_by_job_and_interleave_on_sim() {
    let tmp = tempfile::tempdir().unwrap();
    let (r, log) = run_two_jobs(5, &tmp.path().join("a"));
    let p = &r.phases[0];
    assert_eq!(p.job_issued_ios, vec![3_000, 3_000]);
    assert_eq!(log.len(), 6_000);

    // What each job must have issued: the generator of its share, from the seed.
    let info = &r.target;
    let c = RunConfig {
        jobs: 2,
        limit_bytes: Some(6_000 * 4096),
        seed: 5,
        ..RunConfig::new(&info.name)
    };
    let spec = storbench_suite::run::spec(&c, info).unwrap();
    let want: Vec<Vec<u64>> = (0..2)
        .map(|j| {
            let mut g = Generator::new(spec.for_job(j, 2)).unwrap();
            std::iter::from_fn(|| g.next_io().map(|io| io.unwrap().offset_bytes)).collect()
        })
        .collect();
    assert_eq!(want[0].len(), 3_000);
    assert_eq!(want[1].len(), 3_000);
    assert_ne!(want[0], want[1], "jobs draw from seeds of their own");
    // Job 0 is the run of one job with this seed.
    let mut one = Generator::new(spec.for_job(0, 1)).unwrap();
    let first: Vec<u64> = (0..100)
        .map(|_| one.next_io().unwrap().unwrap().offset_bytes)
        .collect();
    assert_eq!(&want[0][..100], &first[..]);

    // The log holds exactly the two jobs' offsets...
    let sorted = |mut v: Vec<u64>| {
        v.sort_unstable();
        v
    };
    let got = sorted(log.iter().map(|io| io.offset_bytes).collect());
    assert_eq!(got, sorted(want.concat()));
    // ...issued interleaved: every I/O an offset only one job issues, by its job, and
    // both jobs busy over the whole phase, each in its generator's order.
    let only = |j: usize| -> std::collections::HashSet<u64> {
        let other: std::collections::HashSet<u64> = want[1 - j].iter().copied().collect();
        want[j]
            .iter()
            .copied()
            .filter(|o| !other.contains(o))
            .collect()
    };
    let (only0, only1) = (only(0), only(1));
    let mut by_issue = log.clone();
    by_issue.sort_by_key(|io| io.issue_ns);
    let job_of = |io: &IoRecord| {
        if only0.contains(&io.offset_bytes) {
            Some(0)
        } else if only1.contains(&io.offset_bytes) {
            Some(1)
        } else {
            None
        }
    };
    let first_64: Vec<usize> = by_issue[..64].iter().filter_map(job_of).collect();
    let ones = first_64.iter().filter(|&&j| j == 1).count();
    assert!(
        (24..=40).contains(&ones) && first_64.len() - ones >= 24,
        "the first 64 I/Os: {first_64:?}"
    );
    let span = |j: usize| {
        let t: Vec<u64> = by_issue
            .iter()
            .filter(|io| job_of(io) == Some(j))
            .map(|io| io.issue_ns)
            .collect();
        (t[0], *t.last().unwrap())
    };
    let (s0, s1) = (span(0), span(1));
    let end = p.metrics.elapsed_ns;
    assert!(s0.0.abs_diff(s1.0) < end / 100, "{s0:?} {s1:?}");
    assert!(s0.1.abs_diff(s1.1) < end / 20, "{s0:?} {s1:?} of {end}");
    for (j, w) in want.iter().enumerate() {
        let mine: Vec<u64> = by_issue
            .iter()
            .filter(|io| job_of(io) == Some(j))
            .map(|io| io.offset_bytes)
            .collect();
        let order: Vec<u64> = w.iter().copied().filter(|o| mine.contains(o)).collect();
        assert_eq!(mine, order, "job {j} issued in its generator's order");
    }
    // Each job kept its 32 in flight; the drive saw both at once.
    assert_eq!(p.metrics.qd.max, 32);

    // The same seed: the same I/Os at the same virtual times, the same result.
    let (again, log2) = run_two_jobs(5, &tmp.path().join("b"));
    assert_eq!(again.phases[0].metrics, p.metrics);
    assert_eq!(log2, log);
    // Another seed: other offsets.
    let (_, log3) = run_two_jobs(6, &tmp.path().join("c"));
    assert_ne!(sorted(log3.iter().map(|io| io.offset_bytes).collect()), got);
}
