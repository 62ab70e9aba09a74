//! The procedure options of issue 6 that the seeds' findings (procedures.rs) do not
//! exercise: `--precondition-passes 2`, `--stop-at-steady-state`, the season procedure
//! on its own (purge, one sequential pass, a scattered image restore), and the trace
//! bench's `--span` folding a trace's footprint into part of the drive. Small simulated
//! drives keep each to about a second.

use std::path::Path;
use storbench_report::RunResult;
use storbench_suite::bench::{BenchConfig, BenchSummary, DriveState, Workload};
use storbench_suite::consistency::{ConsistencyConfig, ConsistencySummary};
use storbench_suite::phase::Work;
use storbench_suite::purge::PurgeMethod;
use storbench_suite::season::{
    generated_image_bytes, SeasonConfig, SeasonSummary, DEFAULT_IMAGE_FILL,
};
use storbench_suite::{execute, Control, Start, SuiteResult};
use storbench_trace::{IoRecord, Op, TraceMeta, TraceWriter};

const NS: u64 = 1_000_000_000;
const SIM: &str = "sim:client-7op,capacity=256m,seed=7";
const CAPACITY: u64 = 256 << 20;

fn run_consistency(
    dir: &Path,
    f: impl FnOnce(&mut ConsistencyConfig),
) -> SuiteResult<ConsistencyConfig> {
    let mut c = ConsistencyConfig::quick(SIM);
    c.duration_ns = 6 * NS;
    c.round_ns = NS;
    c.score_last_s = 3;
    f(&mut c);
    execute(dir, Start::New(c), &Control::default()).unwrap()
}

fn phase<'a, C, S>(r: &'a RunResult<C, S>, name: &str) -> &'a storbench_suite::PhaseRecord {
    r.phases
        .iter()
        .find(|p| p.name == name)
        .unwrap_or_else(|| panic!("no phase {name}"))
}

#[test]
fn precondition_passes_write_the_span_that_many_times() {
    let tmp = tempfile::tempdir().unwrap();
    let one = run_consistency(&tmp.path().join("one"), |_| {});
    let two = run_consistency(&tmp.path().join("two"), |c| c.precondition_passes = 2);
    let three_quarters = run_consistency(&tmp.path().join("span"), |c| {
        c.span_fraction = 0.75;
        c.precondition_passes = 2;
    });
    let pre = |r: &SuiteResult<ConsistencyConfig>| phase(r, "precondition").metrics.clone();
    assert_eq!(pre(&one).write_bytes, CAPACITY);
    assert_eq!(pre(&two).write_bytes, 2 * CAPACITY);
    assert_eq!(pre(&three_quarters).write_bytes, 2 * (CAPACITY / 4 * 3));
    // 128 KB writes, sequential: every write but the first of each pass follows the last.
    let m = pre(&two);
    assert_eq!(m.write_ios, 2 * CAPACITY / (128 << 10));
    assert_eq!(m.write_bytes / m.write_ios, 128 << 10);
    // The random writes stay on the tested span.
    match &phase(&three_quarters, "random-write").work {
        Work::RandWrite {
            span_bytes,
            block_bytes,
            qd,
            ..
        } => {
            assert_eq!(*span_bytes, CAPACITY / 4 * 3);
            assert_eq!((*block_bytes, *qd), (4096, 32));
        }
        w => panic!("random-write phase does {w:?}"),
    }
}

#[test]
fn stop_at_steady_state_ends_the_random_writes_once_reached() {
    let tmp = tempfile::tempdir().unwrap();
    let limit_s = 300;
    let run = |name: &str, stop: bool| {
        let r = run_consistency(&tmp.path().join(name), |c| {
            c.duration_ns = limit_s * NS;
            c.round_ns = 2 * NS;
            c.stop_at_steady_state = stop;
        });
        let s: ConsistencySummary = r.summary.clone().unwrap();
        (r, s)
    };
    let (r, s) = run("stop", true);
    let rw = phase(&r, "random-write");
    eprintln!(
        "steady state at {:?} s; the phase ended ({}) after {} s of {limit_s}",
        s.steady_state_at_s,
        rw.ended,
        s.iops_per_s.len()
    );
    assert_eq!(rw.ended, "steady-state");
    assert_eq!(s.ended, "steady-state");
    assert!(s.steady_state_reached);
    let at = s.steady_state_at_s.unwrap();
    let ran = s.iops_per_s.len() as u64;
    assert!(ran < limit_s, "stopped early: {ran} s");
    // It stops at the round that reached steady state (the rule is checked as each
    // second's window closes), not rounds later.
    assert!(at <= ran && ran <= at + 2, "reached at {at} s, ran {ran} s");
    let sd = s.steady_state.as_ref().unwrap();
    assert!(sd.data_excursion <= 0.20 * sd.window_mean, "{sd:?}");
    assert!(sd.slope_excursion <= 0.10 * sd.window_mean, "{sd:?}");
    assert_eq!((sd.round_index as u64 + 1) * 2, at);

    // Without the option the same run goes to its time limit and reports the same
    // moment of steady state.
    let (r2, s2) = run("full", false);
    assert_eq!(phase(&r2, "random-write").ended, "time-limit");
    // Checkpoints (every 60 s of the drive's clock) do not stop the phase: every
    // second up to the limit is a full one.
    let full = s2.iops_per_s.len() as u64;
    assert_eq!(full, limit_s, "{full} full seconds");
    assert_eq!(s2.steady_state_at_s, Some(at));
}

#[test]
fn season_purges_fills_once_and_restores_a_scattered_image() {
    let tmp = tempfile::tempdir().unwrap();
    let r = execute(
        &tmp.path().join("season"),
        Start::New(SeasonConfig::new(SIM)),
        &Control::default(),
    )
    .unwrap();
    let names: Vec<&str> = r.phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["purge", "seq-pass", "restore"]);
    let purge = phase(&r, "purge").purge.clone().unwrap();
    assert_eq!(purge.method, PurgeMethod::Simulator);
    assert!(purge.fresh);
    let seq = &phase(&r, "seq-pass").metrics;
    assert_eq!(seq.write_bytes, CAPACITY);
    assert_eq!(seq.write_ios, CAPACITY / (128 << 10));
    let s: SeasonSummary = r.summary.clone().unwrap();
    let share = s.image_restored_bytes as f64 / CAPACITY as f64;
    eprintln!(
        "generated image: {:.1}% of the drive in {} writes (mean {:.0} KiB)",
        share * 100.0,
        s.image_writes,
        s.image_restored_bytes as f64 / s.image_writes as f64 / 1024.0
    );
    // The restore wrote exactly the generated image: a share of the drive near the
    // default 40% (one draw of a heavy-tailed file-size mix on a small drive: the
    // average over seeds is tested in image.rs), in writes of mixed sizes (runs of
    // files end at odd lengths, so the mean write is below the 128 KiB maximum).
    assert_eq!(
        s.image_restored_bytes,
        generated_image_bytes(CAPACITY, DEFAULT_IMAGE_FILL, 2009)
    );
    assert!((0.15..0.65).contains(&share), "image covers {share}");
    let mean = s.image_restored_bytes / s.image_writes;
    assert!((4096..128 << 10).contains(&mean), "mean write {mean}");
    // The seasoned drive has been through garbage collection: NAND writes exceed host writes.
    let d = &r.health_delta;
    assert_eq!(
        d.host_write_bytes,
        Some(seq.write_bytes + s.image_restored_bytes)
    );
    assert!(d.write_amplification.unwrap() > 1.0);
}

/// A trace of 64 KiB writes spread evenly over the whole 256 MiB drive.
fn whole_drive_trace(path: &Path) -> u64 {
    let mut w = TraceWriter::create(path, &TraceMeta::default()).unwrap();
    let n = 512u64;
    let step = CAPACITY / n;
    for i in 0..n {
        w.write(&IoRecord::new(Op::Write, i * step, 64 << 10, i * 1000))
            .unwrap();
    }
    w.finish().unwrap();
    n
}

#[test]
fn bench_span_folds_the_trace_footprint_into_that_part_of_the_drive() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = tmp.path().join("whole.parquet");
    let n = whole_drive_trace(&trace);
    let bench = |name: &str, span: f64| {
        let mut c = BenchConfig::new(
            SIM,
            Workload::Trace {
                path: trace.clone(),
            },
        );
        c.span_fraction = span;
        let r = execute(&tmp.path().join(name), Start::New(c), &Control::default()).unwrap();
        let s: BenchSummary = r.summary.clone().unwrap();
        (r, s)
    };
    let (full, sf) = bench("full", 1.0);
    assert_eq!(sf.folded_ios, 0);
    assert_eq!(sf.span_bytes, CAPACITY);
    assert!(full.notes.iter().all(|n| !n.contains("folded")));
    let (part, sp) = bench("part", 0.75);
    assert_eq!(sp.span_bytes, CAPACITY / 4 * 3);
    // The writes that lay in the last quarter were folded (a 64 KiB write starting
    // inside the span but running past its end is folded too).
    let beyond = (0..n)
        .filter(|i| i * (CAPACITY / n) + (64 << 10) > CAPACITY / 4 * 3)
        .count() as u64;
    assert_eq!(sp.folded_ios, beyond, "{:?}", part.notes);
    assert!(part.notes.iter().any(|n| n.contains("folded")));
    assert_eq!(sp.writes, n);
    assert_eq!(sp.write_bytes, n * (64 << 10));
    assert_eq!(phase(&part, "replay").folded_ios, beyond);
}

#[test]
fn checkpoints_skip_no_io() {
    // Checkpoints at every second of the simulated drive's clock, with I/Os in flight
    // and one taken from the source but not yet submitted at each: the fill and the
    // replay still issue every I/O once.
    let tmp = tempfile::tempdir().unwrap();
    let ctl = Control {
        checkpoint_interval: std::time::Duration::from_millis(20),
        ..Control::default()
    };
    let big = "sim:client-7op,capacity=2g,seed=7";
    let mut c = ConsistencyConfig::quick(big);
    c.duration_ns = NS;
    let r = execute(&tmp.path().join("cons"), Start::New(c), &ctl).unwrap();
    let pre = phase(&r, "precondition");
    assert!(pre.metrics.elapsed_ns >= 3 * NS, "several checkpoints");
    assert_eq!(pre.metrics.write_bytes, 2 << 30);
    assert_eq!(pre.issued_ios, (2 << 30) / (128 << 10));
    let rw = phase(&r, "random-write");
    assert_eq!(
        rw.issued_ios, rw.metrics.write_ios,
        "the cursor counts submitted I/Os"
    );

    // 64 KiB writes cycling over the whole drive; those in the last quarter fold.
    let trace = tmp.path().join("cycle.parquet");
    let n = 16384u64;
    let per_lap = CAPACITY / (64 << 10);
    {
        let mut w = TraceWriter::create(&trace, &TraceMeta::default()).unwrap();
        for i in 0..n {
            let off = (i % per_lap) * (64 << 10);
            w.write(&IoRecord::new(Op::Write, off, 64 << 10, i * 1000))
                .unwrap();
        }
        w.finish().unwrap();
    }
    let mut b = BenchConfig::new(SIM, Workload::Trace { path: trace });
    b.span_fraction = 0.75;
    b.default_qd = 4;
    let r = execute(&tmp.path().join("bench"), Start::New(b), &ctl).unwrap();
    let rp = phase(&r, "replay");
    let s: BenchSummary = r.summary.clone().unwrap();
    assert!(rp.metrics.elapsed_ns >= 2 * NS, "several checkpoints");
    assert_eq!(s.writes, n);
    assert_eq!(rp.issued_ios, n);
    // Each folded I/O counted once.
    assert_eq!(s.folded_ios, n / 4);
}

#[test]
fn defaults_follow_the_seeds() {
    // METHODOLOGY section 4 (seed 001: consistency and TRIM; seed 002: seasoning).
    let c = ConsistencyConfig::new(SIM);
    assert_eq!(c.span_fraction, 1.0);
    assert_eq!(c.duration_ns, 2000 * NS, "~2000 s of random writes");
    assert_eq!((c.qd, c.block_bytes), (32, 4096), "4 KB at QD32");
    assert_eq!(c.precondition_passes, 1, "one sequential fill (SNIA: 2)");
    assert_eq!(c.precondition_block_bytes, 128 << 10);
    assert_eq!(c.score_last_s, 400, "scores over the last 400 s");
    assert_eq!(c.window_rounds, 5, "SNIA window of 5 rounds");
    assert!(!c.stop_at_steady_state);
    let t = storbench_suite::trimcheck::TrimCheckConfig::new(SIM);
    assert_eq!(t.dirty_for_ns, 120 * 60 * NS, "120 min of random writes");
    assert_eq!(t.qd, 32);
    let s = SeasonConfig::new(SIM);
    assert_eq!(s.passes, 1, "one 128 KB sequential pass (SNIA: 2)");
    assert!(
        s.image.is_none(),
        "a generated image unless the user gives one"
    );
    // --quick keeps the procedure and shortens only its times.
    let q = ConsistencyConfig::quick(SIM);
    assert_eq!((q.qd, q.block_bytes, q.precondition_passes), (32, 4096, 1));
    assert!(q.duration_ns <= 30 * NS);
}

#[test]
fn bench_season_with_span_leaves_the_rest_of_the_drive_as_spare_area() {
    let tmp = tempfile::tempdir().unwrap();
    let sim = "sim:client-7op,capacity=512m,seed=5";
    let cap = 512u64 << 20;
    let bench = |name: &str, span: f64| {
        let mut c = BenchConfig::new(
            sim,
            Workload::Profile {
                name: "heavy-2011".into(),
                scale: 0.004,
                seed: 1,
            },
        );
        c.span_fraction = span;
        c.state = DriveState::Seasoned;
        let r = execute(&tmp.path().join(name), Start::New(c), &Control::default()).unwrap();
        let s: BenchSummary = r.summary.clone().unwrap();
        (r, s)
    };
    let (full, sf) = bench("full", 1.0);
    let (part, sp) = bench("part", 0.75);
    assert_eq!(
        phase(&full, "seq-pass").metrics.write_bytes,
        cap,
        "seasoning fills the whole drive"
    );
    // With --span 75% the seasoning fills and restores only the tested span.
    assert_eq!(phase(&part, "seq-pass").metrics.write_bytes, cap / 4 * 3);
    match &phase(&part, "image").work {
        Work::TraceImage { span_bytes, .. } => assert_eq!(*span_bytes, cap / 4 * 3),
        w => panic!("restore does {w:?}"),
    }
    eprintln!(
        "heavy-2011 x0.004 on a seasoned 512 MiB 7% OP drive: full span {:.1} MB/s (WA {:.2}), 75% span {:.1} MB/s (WA {:.2})",
        sf.data_rate_mb_per_s,
        full.health_delta.write_amplification.unwrap(),
        sp.data_rate_mb_per_s,
        part.health_delta.write_amplification.unwrap()
    );
    // The unmapped quarter is spare area: less garbage collection, a faster bench.
    assert!(
        part.health_delta.write_amplification.unwrap()
            < full.health_delta.write_amplification.unwrap()
    );
    assert!(sp.data_rate_mb_per_s > sf.data_rate_mb_per_s);
}

#[test]
fn bench_on_a_drive_too_small_for_the_profile_folds_its_trace_and_says_so() {
    // Issue 21: the profile's trace used to be sized for the drive (an error here, a
    // different trace on every drive); it is now the profile's own, folded onto a
    // drive smaller than its footprint.
    let tmp = tempfile::tempdir().unwrap();
    let c = BenchConfig::new(
        "sim:client-7op,capacity=32m,seed=1",
        Workload::Profile {
            name: "heavy-2011".into(),
            scale: 0.001,
            seed: 1,
        },
    );
    let r = execute(tmp.path(), Start::New(c), &Control::default()).unwrap();
    let s: BenchSummary = r.summary.clone().unwrap();
    assert!(s.folded_ios > 0);
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("heavy-2011") && n.contains("folded")),
        "{:?}",
        r.notes
    );
}

#[test]
fn every_phase_reports_its_own_host_and_flash_writes() {
    // Issue 21: host against flash writes only per procedure mixed the seasoning's
    // writes with the phase of interest; each phase now has its own.
    let tmp = tempfile::tempdir().unwrap();
    let r = run_consistency(&tmp.path().join("c"), |_| {});
    let (mut host, mut nand) = (0, 0);
    for p in &r.phases {
        let c = p
            .counters
            .as_ref()
            .unwrap_or_else(|| panic!("{} has no counters", p.name));
        assert!(c.available, "{}: {c:?}", p.name);
        assert_eq!(
            c.host_write_bytes,
            Some(p.metrics.write_bytes),
            "{}",
            p.name
        );
        host += c.host_write_bytes.unwrap();
        nand += c.nand_write_bytes.unwrap();
    }
    let wa = |n: &str| phase(&r, n).counters.as_ref().unwrap().write_amplification;
    assert_eq!(wa("purge"), None, "no host writes, no ratio");
    let fill = wa("precondition").unwrap();
    let random = wa("random-write").unwrap();
    eprintln!("WA: sequential fill {fill:.3}, random writes {random:.3}");
    assert!((1.0..1.05).contains(&fill), "{fill}");
    assert!(
        random > 1.5,
        "random writes on a full drive collect garbage: {random}"
    );
    // The phases add up to the whole run.
    assert_eq!(r.health_delta.host_write_bytes, Some(host));
    assert_eq!(r.health_delta.nand_write_bytes, Some(nand));
}
