//! Time of putting a simulated drive into a known state: the direct way
//! (`SimSsd::fast_state`) against the per-write way (`SimSsd::replay_state`, every write
//! through the FTL, untimed), for a sequential fill and a steady state of uniform
//! random writes; then the same measured phase of 4 KiB random writes at QD32 on both
//! states, to show they agree. (The wall clock is read here, never by the simulator.)
//!
//! usage: sim_precondition [SPEC] [WRITES_MULTIPLE] [PHASE_IOS]

use std::time::Instant;
use storbench_engine::Target;
use storbench_sim::{open_spec, SimSsd, State};

mod common;
use common::{cpu_ns, random_writes, rss_kib};

/// `n` uniformly random 4 KiB writes at QD32: (WA, simulated IOPS).
fn phase(ssd: &mut SimSsd, n: u64) -> (f64, f64) {
    let before = ssd.counters();
    let t0 = ssd.now_ns();
    random_writes(ssd, n, 32);
    let wa = ssd.counters().since(&before).wa;
    (wa, n as f64 / ((ssd.now_ns() - t0) as f64 / 1e9))
}

fn main() {
    let mut args = std::env::args().skip(1);
    let spec = args
        .next()
        .unwrap_or_else(|| "sim:client-7op,capacity=64g".to_string());
    let w: f64 = args
        .next()
        .map(|s| s.parse().expect("WRITES_MULTIPLE"))
        .unwrap_or(2.0);
    let phase_ios: u64 = args
        .next()
        .map(|s| s.parse().expect("PHASE_IOS"))
        .unwrap_or(2_000_000);
    println!("spec {spec}; steady state = fill + {w} x capacity of 4K random writes; measured phase {phase_ios} x 4K random writes QD32");
    println!(
        "{:<16} {:<7} {:>9} {:>9} {:>9} {:>10} {:>10} {:>12}",
        "state", "way", "cpu s", "wall s", "rss MiB", "state WA", "phase WA", "phase IOPS"
    );
    let states = [
        ("sequential-fill", State::SequentialFill),
        (
            "steady-random",
            State::SteadyStateRandom {
                span_fraction: 1.0,
                writes_multiple: w,
                seed: 1,
            },
        ),
    ];
    for (name, st) in states {
        let mut cpu = [0.0f64; 2];
        for (i, way) in ["direct", "replay"].into_iter().enumerate() {
            let mut ssd = open_spec(&spec).unwrap_or_else(|e| panic!("{e}"));
            let (c0, t0) = (cpu_ns().unwrap_or(0), Instant::now());
            if way == "direct" {
                ssd.fast_state(st).unwrap();
            } else {
                ssd.replay_state(st).unwrap();
            }
            cpu[i] = (cpu_ns().unwrap_or(0) - c0) as f64 / 1e9;
            let wall = t0.elapsed().as_secs_f64();
            let rss = rss_kib().unwrap_or(0) as f64 / 1024.0;
            let state_wa = ssd.counters().wa;
            let (wa, iops) = phase(&mut ssd, phase_ios);
            println!(
                "{name:<16} {way:<7} {:>9.2} {wall:>9.2} {rss:>9.0} {state_wa:>10.3} {wa:>10.3} {iops:>12.0}",
                cpu[i]
            );
        }
        println!(
            "{name:<16} replay / direct CPU time: {:.1}x",
            cpu[1] / cpu[0].max(1e-9)
        );
    }
}
