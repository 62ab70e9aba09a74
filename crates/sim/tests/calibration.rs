//! The 2013-class SATA MLC client preset at 256 GiB against the published figures of
//! METHODOLOGY "Timing" (seed 001 and the drives' datasheets and reviews), through the
//! engine loop. Each test prints its figures beside the published ones (run with
//! --nocapture); docs/simulator.md's calibration table is the same output
//! (`cargo run --release -p storbench-sim --example sim_calibrate`).
mod common;

use common::calib::{per_second, phase, sata_2013_figures, seed_001_named, spec, NS};
use storbench_metrics::snia_steady_state;
use storbench_sim::{open_spec, State};
use storbench_trace::Op;
use storbench_workload::generator::{Limit, Pattern};

const DRIVE: &str = "sim:sata-mlc-2013,capacity=256g";

#[test]
fn sata_mlc_2013_at_256g_lands_inside_every_published_range() {
    let figures = sata_2013_figures(DRIVE);
    eprintln!("{DRIVE}");
    for f in &figures {
        eprintln!("{}", f.line());
    }
    let outside: Vec<&str> = figures
        .iter()
        .filter(|f| !f.inside())
        .map(|f| f.name)
        .collect();
    assert!(
        outside.is_empty(),
        "outside the published range: {outside:?}"
    );
}

/// Seed 001's consistency test at 256 GiB: a sequential fill, then 2000 s of
/// 4 KB QD32 random writes. The article's curve: a fresh plateau, a fall after tens
/// of seconds when the spare area runs out, steady state (SNIA rule, 60 s rounds)
/// well before the end, at 10-15K IOPS.
#[test]
fn consistency_at_256g_keeps_the_articles_shape() {
    let mut ssd = open_spec(DRIVE).unwrap();
    let cap = ssd.config().capacity_bytes;
    // The 128 KB fill, built directly: the same mapping, blocks and counters as the
    // honest fill (tests/precondition.rs checks that bit for bit) without simulating
    // 2 million writes.
    ssd.fast_state(State::SequentialFill).unwrap();
    let m = phase(
        &mut ssd,
        spec(Pattern::Random, Op::Write, 4096, 32, cap, Limit::None),
        Some(2000 * NS),
    );
    let iops = per_second(&m);
    assert_eq!(iops.len(), 2000);
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let plateau = mean(&iops[..10]);
    // The plateau ends where a second falls below half of it.
    let drop_s = iops.iter().position(|&x| x < plateau / 2.0).unwrap();
    let rounds: Vec<f64> = iops.chunks_exact(60).map(mean).collect();
    let steady = snia_steady_state(&rounds, 5).expect("steady state by the SNIA rule");
    let steady_s = (steady.round_index as u64 + 1) * 60;
    let last = mean(&iops[1600..]);
    let by_100s: Vec<String> = iops
        .chunks(100)
        .map(|c| format!("{:.0}", mean(c)))
        .collect();
    eprintln!(
        "consistency at 256 GiB: plateau {plateau:.0} IOPS until {drop_s} s, steady state \
         (SNIA, 60 s rounds) at {steady_s} s, last 400 s {last:.0} IOPS; per 100 s: {}",
        by_100s.join(" ")
    );
    assert!(plateau > 50_000.0, "fresh plateau {plateau}");
    assert!(
        (10..=120).contains(&drop_s),
        "drop after tens of seconds: {drop_s} s"
    );
    assert!(steady_s <= 1600, "steady state at {steady_s} s");
    assert!((10_000.0..=15_000.0).contains(&last), "steady {last}");
}

/// Seed 001's figures for the named drives (the calibration table of
/// docs/simulator.md): the Intel 730 about 15K in steady state and at least 30K with
/// 25% spare area; the SanDisk Extreme II about 10K.
#[test]
fn named_drives_meet_seed_001() {
    let rows = seed_001_named(20, 40);
    for r in &rows {
        eprintln!("{}", r.row());
    }
    let [i730, spare, x2] = [&rows[0], &rows[1], &rows[2]];
    assert!(
        (0.8..1.25).contains(&i730.ratio()),
        "730 steady {}",
        i730.simulated
    );
    assert!(
        spare.ratio() >= 1.0,
        "730 25% spare minimum {}",
        spare.simulated
    );
    assert!(
        (0.8..1.25).contains(&x2.ratio()),
        "Extreme II steady {}",
        x2.simulated
    );
}
