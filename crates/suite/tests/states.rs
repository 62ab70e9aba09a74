//! Issue 21: `bench` drive states after the 2009 article (fresh, seasoned, used, each
//! with the trace's own image), `--max-idle`, `--no-trim`, a profile trace fixed by its
//! footprint, and `--data`, on small simulated drives.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use storbench_engine::DataKind;
use storbench_suite::bench::{BenchConfig, BenchSummary, DriveState, Workload};
use storbench_suite::image::TraceImage;
use storbench_suite::{execute, Control, Start, SuiteResult};
use storbench_trace::{IoRecord, Op, TraceMeta, TraceReader, TraceWriter};
use storbench_workload::Source;

const SIM: &str = "sim:client-7op,capacity=512m,seed=5";

fn heavy(scale: f64) -> Workload {
    Workload::Profile {
        name: "heavy-2011".into(),
        scale,
        seed: 1,
    }
}

fn bench(dir: &Path, c: BenchConfig) -> (SuiteResult<BenchConfig>, BenchSummary) {
    let r = execute(dir, Start::New(c), &Control::default()).unwrap();
    let s = r.summary.clone().unwrap();
    (r, s)
}

fn names(r: &SuiteResult<BenchConfig>) -> Vec<&str> {
    r.phases.iter().map(|p| p.name.as_str()).collect()
}

fn phase<'a>(r: &'a SuiteResult<BenchConfig>, n: &str) -> &'a storbench_suite::PhaseRecord {
    r.phases.iter().find(|p| p.name == n).unwrap()
}

fn records(path: &Path) -> Vec<IoRecord> {
    let mut rd = TraceReader::open(path).unwrap();
    let mut all = Vec::new();
    let mut batch = Vec::new();
    while rd.next_batch(&mut batch).unwrap() {
        all.extend_from_slice(&batch);
    }
    all
}

/// Independent oracle, sector by sector: no read of the trace finds a sector that
/// neither the image nor an earlier write of the trace wrote.
fn never_written_reads(trace: &[IoRecord], image: &[(u64, u64)]) -> u64 {
    let mut written: HashSet<u64> = HashSet::new();
    for &(o, l) in image {
        written.extend(o / 512..(o + l) / 512);
    }
    let mut bad = 0;
    for r in trace {
        let sectors = r.offset_bytes / 512..(r.offset_bytes + r.len_bytes).div_ceil(512);
        match r.op {
            Op::Write => written.extend(sectors),
            Op::Read => bad += sectors.filter(|s| !written.contains(s)).count() as u64,
            _ => {}
        }
    }
    bad
}

#[test]
fn fresh_and_seasoned_both_restore_the_trace_image_and_move_the_traces_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let run = |state: DriveState| {
        let mut c = BenchConfig::new(SIM, heavy(0.002));
        c.state = state;
        bench(&tmp.path().join(state.name()), c)
    };
    let (fr, fs) = run(DriveState::Fresh);
    let (sr, ss) = run(DriveState::Seasoned);
    let (nr, ns) = run(DriveState::AsIs);
    assert_eq!(names(&fr), ["purge", "image", "replay"]);
    assert_eq!(names(&sr), ["purge", "seq-pass", "image", "replay"]);
    assert_eq!(names(&nr), ["replay"]);
    assert_eq!(
        (fs.state.as_str(), ss.state.as_str()),
        ("fresh", "seasoned")
    );
    assert_eq!(
        fr.config.state,
        DriveState::Fresh,
        "the config says the state too"
    );

    // The image is the trace's pre-existing data, restored in full in both states.
    let trace = tmp.path().join("fresh").join("trace.parquet");
    let recs = records(&trace);
    let img = TraceImage::open(&trace, 512 << 20, 0).unwrap();
    let image_bytes = img.total_bytes().unwrap();
    assert!(image_bytes > 0);
    assert_eq!(never_written_reads(&recs, img.runs()), 0);
    let without: u64 = never_written_reads(&recs, &[]);
    assert!(without > 0, "the trace reads data it never wrote");
    for (r, s) in [(&fr, &fs), (&sr, &ss)] {
        assert_eq!(s.image_bytes, image_bytes);
        assert_eq!(phase(r, "image").metrics.write_bytes, image_bytes);
        assert_eq!(s.image_writes, img.runs().len() as u64);
    }

    // Data moved equals the trace's bytes exactly, in every state.
    let (rb, wb) = recs.iter().fold((0, 0), |(r, w), x| match x.op {
        Op::Read => (r + x.len_bytes, w),
        Op::Write => (r, w + x.len_bytes),
        _ => (r, w),
    });
    for s in [&fs, &ss, &ns] {
        assert_eq!((s.read_bytes, s.write_bytes), (rb, wb));
    }
    assert!(
        fr.notes.iter().all(|n| !n.contains("widened")),
        "{:?}",
        fr.notes
    );

    // The trace phase's own flash/host ratio, apart from the state's writes.
    for s in [&fs, &ss] {
        let c = s.replay_counters.as_ref().unwrap();
        assert_eq!(c.host_write_bytes, Some(wb));
        assert!(c.write_amplification.unwrap() >= 1.0);
    }
    let drop = 100.0 * (ss.data_rate_mb_per_s / fs.data_rate_mb_per_s - 1.0);
    eprintln!(
        "heavy-2011 x0.002 on {SIM}: image {:.1} MiB; fresh {:.1} MB/s (replay WA {:.2}), seasoned {:.1} MB/s (replay WA {:.2}), {drop:+.1}%; as-is (empty drive) {:.1} MB/s",
        image_bytes as f64 / (1 << 20) as f64,
        fs.data_rate_mb_per_s,
        fs.replay_counters.as_ref().unwrap().write_amplification.unwrap(),
        ss.data_rate_mb_per_s,
        ss.replay_counters.as_ref().unwrap().write_amplification.unwrap(),
        ns.data_rate_mb_per_s,
    );
    assert!(ss.data_rate_mb_per_s < fs.data_rate_mb_per_s);
    assert!(drop > -85.0, "fresh -> seasoned {drop:.1}%");
}

#[test]
fn used_state_replays_the_trace_n_times_before_the_measured_pass() {
    let tmp = tempfile::tempdir().unwrap();
    let mut c = BenchConfig::new(SIM, heavy(0.001));
    c.state = DriveState::Used;
    c.used_passes = 2;
    let (r, s) = bench(&tmp.path().join("used"), c);
    assert_eq!(
        names(&r),
        ["purge", "seq-pass", "image", "used-1", "used-2", "replay"]
    );
    assert_eq!((s.state.as_str(), s.used_passes), ("used", Some(2)));
    let w = |n: &str| phase(&r, n).metrics.write_bytes;
    assert_eq!(w("used-1"), s.write_bytes);
    assert_eq!(w("used-2"), s.write_bytes);
    let mut zero = BenchConfig::new(SIM, heavy(0.001));
    zero.state = DriveState::Used;
    zero.used_passes = 0;
    let e = execute(
        &tmp.path().join("zero"),
        Start::New(zero),
        &Control::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("--used-passes 0"), "{e}");
}

/// A trace of `n` bursts of 4 KiB writes (and one TRIM each) 2 s apart, in 10 ms.
fn bursty_trace(path: &Path, n: u64) -> PathBuf {
    let mut w = TraceWriter::create(path, &TraceMeta::default()).unwrap();
    for b in 0..n {
        let t0 = b * 2_000_000_000;
        for i in 0..64u64 {
            let off = ((b * 64 + i) * 7919 % 16384) * 4096;
            let mut r = IoRecord::new(Op::Write, off, 4096, t0 + i * 100_000);
            r.complete_ns = Some(t0 + i * 100_000 + 50_000);
            w.write(&r).unwrap();
        }
        let mut t = IoRecord::new(Op::Trim, b * (1 << 20), 1 << 20, t0 + 7_000_000);
        t.complete_ns = Some(t0 + 7_100_000);
        w.write(&t).unwrap();
    }
    w.finish().unwrap();
    path.to_owned()
}

#[test]
fn max_idle_keeps_the_traces_gaps_up_to_the_cap_and_busy_time_excludes_them() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = bursty_trace(&tmp.path().join("b.parquet"), 6);
    let run = |name: &str, cap: Option<u64>| {
        let mut c = BenchConfig::new(
            SIM,
            Workload::Trace {
                path: trace.clone(),
            },
        );
        c.max_idle_ns = cap;
        bench(&tmp.path().join(name), c)
    };
    let (cr, cut) = run("cut", None);
    let (kr, kept) = run("kept", Some(500_000_000));
    let elapsed = |r: &SuiteResult<BenchConfig>| phase(r, "replay").metrics.elapsed_ns as f64 / 1e9;
    eprintln!(
        "6 bursts 2 s apart: idle cut {:.3} s elapsed, busy {:.4} s; --max-idle 500ms {:.3} s elapsed, busy {:.4} s",
        elapsed(&cr),
        cut.busy_s,
        elapsed(&kr),
        kept.busy_s
    );
    // Five gaps of 2 s, each capped at 0.5 s.
    assert!(elapsed(&cr) < 0.5, "{}", elapsed(&cr));
    assert!(
        (2.5..3.0).contains(&elapsed(&kr)),
        "five gaps of 0.5 s: {}",
        elapsed(&kr)
    );
    assert!(
        kept.busy_s < 0.5,
        "busy time excludes idle: {}",
        kept.busy_s
    );
    assert_eq!(kept.max_idle_s, Some(0.5));
    assert!(kr.notes.iter().any(|n| n.contains("--max-idle")));
    assert_eq!((cut.writes, kept.writes), (384, 384));
}

#[test]
fn tom_bench_with_no_trim_replays_no_trim_and_says_so() {
    // Seed 004: "TRIM wouldn't work even if it were sent during the trace replay
    // (which, sadly, it isn't)".
    let tmp = tempfile::tempdir().unwrap();
    let trace = bursty_trace(&tmp.path().join("b.parquet"), 6);
    let run = |name: &str, no_trim: bool| {
        let mut c = BenchConfig::new(
            SIM,
            Workload::Trace {
                path: trace.clone(),
            },
        );
        c.no_trim = no_trim;
        c.state = DriveState::Seasoned;
        bench(&tmp.path().join(name), c)
    };
    let (wr, with) = run("with", false);
    let (nr, without) = run("without", true);
    let trims = |r: &SuiteResult<BenchConfig>| phase(r, "replay").metrics.trim_ios;
    assert_eq!(trims(&wr), 6);
    assert_eq!(trims(&nr), 0, "no TRIM replayed");
    assert_eq!(
        nr.health_delta.host_write_bytes,
        wr.health_delta.host_write_bytes
    );
    assert_eq!((with.trims_skipped, without.trims_skipped), (0, 6));
    assert_eq!(without.writes, with.writes);
    let note = nr.notes.iter().find(|n| n.contains("--no-trim")).unwrap();
    assert!(note.contains("6 TRIMs were not replayed"), "{note}");
    assert!(wr.notes.iter().all(|n| !n.contains("--no-trim")));
}

#[test]
fn profile_trace_is_the_same_on_every_drive_and_folds_only_on_a_smaller_one() {
    let tmp = tempfile::tempdir().unwrap();
    let run = |name: &str, sim: &str| {
        let c = BenchConfig::new(sim, heavy(0.001));
        let (r, s) = bench(&tmp.path().join(name), c);
        (
            r,
            s,
            std::fs::read(tmp.path().join(name).join("trace.parquet")).unwrap(),
        )
    };
    // Scale 0.001: offsets over half of 256 MiB = 128 MiB.
    let (_, big, t_big) = run("big", "sim:client-7op,capacity=1g,seed=5");
    let (_, mid, t_mid) = run("mid", "sim:client-7op,capacity=512m,seed=5");
    let (sr, small, t_small) = run("small", "sim:client-7op,capacity=64m,seed=5");
    assert!(
        t_big == t_mid && t_mid == t_small,
        "one trace for every drive"
    );
    assert_eq!((big.folded_ios, mid.folded_ios), (0, 0));
    assert!(small.folded_ios > 0);
    assert_eq!(big.write_bytes, small.write_bytes);
    let note = sr.notes.iter().find(|n| n.contains("heavy-2011")).unwrap();
    assert!(note.contains("folded"), "{note}");
}

#[test]
fn data_kind_reaches_every_phase_and_the_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let mut c = BenchConfig::new(SIM, heavy(0.001));
    c.state = DriveState::Fresh;
    c.data = DataKind::Zeros;
    let (r, s) = bench(&tmp.path().join("z"), c);
    assert_eq!(s.data, "zeros");
    assert_eq!(r.config.data, storbench_engine::DataKind::Zeros);
}

#[test]
fn io_widened_to_whole_sectors_is_counted_with_its_extra_bytes_in_notes() {
    // Issue 21: where a target still has to align an I/O, the count and the extra
    // bytes go in notes (and so on the terminal).
    let tmp = tempfile::tempdir().unwrap();
    let trace = tmp.path().join("odd.parquet");
    let mut w = TraceWriter::create(&trace, &TraceMeta::default()).unwrap();
    for i in 0..10u64 {
        // 1000 bytes: two 512-byte sectors, 24 bytes more.
        w.write(&IoRecord::new(Op::Write, i * 4096, 1000, i * 1000))
            .unwrap();
        w.write(&IoRecord::new(
            Op::Write,
            i * 4096 + 8192 * 16,
            4096,
            i * 1000 + 1,
        ))
        .unwrap();
    }
    w.finish().unwrap();
    let (r, s) = bench(
        &tmp.path().join("b"),
        BenchConfig::new(SIM, Workload::Trace { path: trace }),
    );
    let p = phase(&r, "replay");
    assert_eq!((p.aligned_ios, p.aligned_extra_bytes), (10, 240));
    assert_eq!(s.write_bytes, 10 * 1024 + 10 * 4096);
    let note = r.notes.iter().find(|n| n.contains("widened")).unwrap();
    assert!(
        note.contains("10 I/Os") && note.contains("(512 bytes)") && note.contains("240 bytes"),
        "{note}"
    );
}
