//! The engine loop on real file targets, with each backend: data lands where it should,
//! reads come back, TRIM punches holes, the stop flag drains.

mod common;
use common::{io, run_to_end};

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use storbench_engine::testing::VecSource;
use storbench_engine::{
    open_real, run_phase, BackendChoice, NoObserver, Observer, OpenOptions, Pacing, RunOptions,
    Target, TargetSpec,
};
use storbench_trace::{IoRecord, Op};
use storbench_workload::generator::{GenSpec, Generator, Limit, Mix, Pattern};
use storbench_workload::NextIo;

const SIZE: u64 = 8 << 20;

fn open(
    path: &std::path::Path,
    backend: BackendChoice,
    write: bool,
) -> Option<storbench_engine::RealTarget> {
    let o = OpenOptions {
        write,
        size_bytes: Some(SIZE),
        max_in_flight: 16,
        buffer_bytes: 128 << 10,
        backend,
        ..OpenOptions::default()
    };
    match open_real(&TargetSpec::File(path.to_path_buf()), &o) {
        Ok(t) => Some(t),
        Err(e) if backend == BackendChoice::Uring => {
            eprintln!("skipped: io_uring unavailable here: {e}");
            None
        }
        Err(e) => panic!("open {}: {e}", path.display()),
    }
}

fn fill_then_read(backend: BackendChoice) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("target.bin");
    let Some(mut t) = open(&path, backend, true) else {
        return;
    };
    assert_eq!(t.info().capacity_bytes, SIZE);
    let want_backend = match backend {
        BackendChoice::Uring | BackendChoice::UringAsync => "io_uring",
        BackendChoice::Threads => "threads",
        BackendChoice::Auto => t.info().backend.as_str(),
    }
    .to_string();
    assert_eq!(t.info().backend, want_backend);
    if backend == BackendChoice::UringAsync {
        let d = &t.info().details;
        assert_eq!(
            d.get("io_uring_sqe_async").map(String::as_str),
            Some("true")
        );
    }

    // 128 KB sequential fill of the whole file.
    let mut g = Generator::new(GenSpec::seq_fill(0, SIZE, 1)).unwrap();
    let out = run_to_end(&mut t, &mut g, Pacing::QueueDepth { default_qd: 1 });
    assert!(out.complete);
    assert_eq!(out.metrics.errors, 0, "{:?}", out.first_error);
    assert_eq!(out.metrics.write_bytes, SIZE);
    assert_eq!(out.backend, want_backend);
    drop(t);
    let data = std::fs::read(&path).unwrap();
    assert_eq!(data.len() as u64, SIZE);
    // Fresh random data everywhere: no zero 4 KB block, no two equal 4 KB blocks.
    let mut blocks: Vec<&[u8]> = data.chunks(4096).collect();
    assert!(blocks.iter().all(|b| b.iter().any(|&x| x != 0)));
    blocks.sort_unstable();
    blocks.dedup();
    assert_eq!(blocks.len() as u64, SIZE / 4096, "a written block repeats");

    // 4 KB random reads at QD8 for 2000 I/Os, then a flush.
    let mut t = open(&path, backend, false).unwrap();
    let spec = GenSpec {
        pattern: Pattern::Random,
        mix: Mix::ReadWrite { read_pct: 100 },
        block_bytes: 4096,
        qd: 8,
        span_start_bytes: 0,
        span_bytes: SIZE,
        limit: Limit::Ios(2000),
        seed: 2,
    };
    let mut g = Generator::new(spec).unwrap();
    let out = run_to_end(&mut t, &mut g, Pacing::FixedQd(8));
    assert_eq!(out.metrics.read_ios, 2000);
    assert_eq!(out.metrics.errors, 0, "{:?}", out.first_error);
    assert!(out.metrics.qd.max <= 8);
    assert!(out.metrics.service.min_us > 0.0);
    // Reads read what is on disk.
    let off = 4096 * 17;
    let mut src = VecSource::new(vec![io(Op::Read, off, 4096)]);
    run_to_end(&mut t, &mut src, Pacing::FixedQd(1));
    // Slot 0 served the only I/O of that phase (free slots are a stack from 0).
    let buf = t.buffer(0).unwrap()[..4096].to_vec();
    assert_eq!(&buf[..], &data[off as usize..off as usize + 4096]);
    // A read-only target refuses writes.
    let mut src = VecSource::new(vec![io(Op::Write, 0, 4096)]);
    let e = run_phase(
        &mut t,
        &mut src,
        &RunOptions::new(Pacing::FixedQd(1)),
        &mut NoObserver,
    )
    .unwrap_err();
    assert!(e.to_string().contains("read-only"), "{e}");
}

#[test]
fn uring_fill_and_read() {
    fill_then_read(BackendChoice::Uring);
}

/// `--backend io_uring-async`: the same writes and reads, each marked IOSQE_ASYNC.
#[test]
fn uring_async_fill_and_read() {
    fill_then_read(BackendChoice::UringAsync);
}

#[test]
fn threads_fill_and_read() {
    fill_then_read(BackendChoice::Threads);
}

fn allocated_bytes(path: &std::path::Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).unwrap().blocks() * 512
}

fn trim_punches_holes(backend: BackendChoice) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trim.bin");
    let Some(mut t) = open(&path, backend, true) else {
        return;
    };
    let mut g = Generator::new(GenSpec::seq_fill(0, SIZE, 3)).unwrap();
    run_to_end(&mut t, &mut g, Pacing::QueueDepth { default_qd: 1 });
    let before = allocated_bytes(&path);
    // TRIM the first half, plus a flush.
    let mut src = VecSource::new(vec![io(Op::Trim, 0, SIZE / 2), io(Op::Flush, 0, 0)]);
    let out = run_to_end(&mut t, &mut src, Pacing::FixedQd(1));
    assert_eq!(out.metrics.errors, 0, "{:?}", out.first_error);
    assert_eq!(out.metrics.trim_ios, 1);
    assert_eq!(out.metrics.flush_ios, 1);
    drop(t);
    let data = std::fs::read(&path).unwrap();
    assert!(
        data[..(SIZE / 2) as usize].iter().all(|&b| b == 0),
        "trimmed half not zero"
    );
    assert!(data[(SIZE / 2) as usize..]
        .chunks(4096)
        .all(|b| b.iter().any(|&x| x != 0)));
    let after = allocated_bytes(&path);
    assert!(
        after + SIZE / 4 < before,
        "no hole punched: {before} -> {after}"
    );
    assert_eq!(std::fs::metadata(&path).unwrap().len(), SIZE, "size kept");
}

#[test]
fn uring_trim_punches_holes() {
    trim_punches_holes(BackendChoice::Uring);
}

#[test]
fn threads_trim_punches_holes() {
    trim_punches_holes(BackendChoice::Threads);
}

struct StopAt(Arc<AtomicBool>, u64, u64);
impl Observer for StopAt {
    fn on_io(&mut self, _io: &IoRecord) {
        self.2 += 1;
        if self.2 >= self.1 {
            self.0.store(true, Ordering::Relaxed);
        }
    }
}

#[test]
fn stop_flag_drains_real_io() {
    for backend in [BackendChoice::Auto, BackendChoice::Threads] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stop.bin");
        let mut t = open(&path, backend, true).unwrap();
        let flag = Arc::new(AtomicBool::new(false));
        let mut g = Generator::new(GenSpec::rand_write_4k_qd32(0, SIZE, 4)).unwrap();
        let mut opts = RunOptions::new(Pacing::FixedQd(16));
        opts.stop = Some(flag.clone());
        opts.log_ios = true;
        let mut obs = StopAt(flag, 500, 0);
        let out = run_phase(&mut t, &mut g, &opts, &mut obs).unwrap();
        assert!(!out.complete);
        assert_eq!(out.metrics.write_ios, out.submitted_ios);
        assert_eq!(obs.2, out.submitted_ios);
        assert!(out.submitted_ios >= 500 && out.submitted_ios < 500 + 16);
        assert_eq!(out.metrics.unfinished_ios, 0);
    }
}

#[test]
fn timed_replay_on_a_real_target_follows_the_schedule() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("timed.bin");
    let Some(mut t) = open(&path, BackendChoice::Auto, true) else {
        return;
    };
    // 2000 reads at 10 µs intervals (100k IOPS), 20 ms.
    let ios: Vec<NextIo> = (0..2000u64)
        .map(|i| NextIo {
            op: Op::Read,
            offset_bytes: (i * 4096) % SIZE,
            len_bytes: 4096,
            at_ns: Some(i * 10_000),
            trace_qd: None,
        })
        .collect();
    let opts = RunOptions::new(Pacing::Timed {
        speed: 1.0,
        max_idle_ns: None,
    });
    let out = run_phase(&mut t, &mut VecSource::new(ios), &opts, &mut NoObserver).unwrap();
    assert_eq!(out.metrics.read_ios, 2000);
    // Never early: the schedule is a lower bound, so elapsed >= the trace's 19.99 ms.
    assert!(out.metrics.elapsed_ns >= 19_990_000);
    assert!(out.fidelity.issue_error_p50_ns.is_some());
    assert!(out.fidelity.drift_ns.unwrap() >= 0);
}
