//! Issue 35: `replay --jobs N` gives the trace's streams to the jobs (stream k to job
//! k mod N), each job replaying its streams in the trace's order, in `queue-depth` and
//! `timed` pacing, on a simulated drive (one loop) and on a file (a thread each).

use std::path::Path;
use storbench_engine::{DataKind, Pacing};
use storbench_suite::replay::{ReplayConfig, TraceSummary};
use storbench_suite::targets::RealOpen;
use storbench_suite::{execute, Control, Start, SuiteResult};
use storbench_trace::{IoRecord, Op, TraceMeta, TraceWriter};
use storbench_workload::replay::TraceScan;

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

fn replay(target: &str, trace: &Path, pacing: Pacing, jobs: u32, dir: &Path) -> SuiteResult {
    let scan = TraceScan::of(trace).unwrap();
    let c = ReplayConfig {
        target: target.into(),
        open: RealOpen {
            size_bytes: Some(64 << 20),
            max_in_flight: Some(8),
            buffer_bytes: Some(4096),
            ..RealOpen::default()
        },
        trace: TraceSummary::from_scan(trace, &scan),
        pacing,
        time_limit_ns: None,
        span: None,
        seed: 1,
        data: DataKind::Random,
        log_ios: false,
        jobs,
        scan: Some(scan),
    };
    execute(dir, Start::New(c), &Control::default()).unwrap()
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
    assert_eq!(p.job_ios_issued, vec![2_000, 1_000]);
    assert_eq!(p.metrics.read_ios + p.metrics.write_ios, n);
    assert_eq!(p.metrics.write_ios, n / 4);
    // The same replay again is the same, bit for bit (one loop on the drive's clock).
    let again = replay(sim, &trace, qd, 2, &tmp.path().join("qd2b"));
    assert_eq!(again.phases[0].metrics, p.metrics);
    // Four jobs for three streams: one job has nothing to do, and the result says so.
    let r = replay(sim, &trace, qd, 4, &tmp.path().join("qd4"));
    assert_eq!(r.phases[0].job_ios_issued, vec![1_000, 1_000, 1_000, 0]);
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
    assert_eq!(p.job_ios_issued, vec![1_000, 1_000, 1_000]);
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
    assert_eq!(p.job_ios_issued, vec![20_000, 10_000]);
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
