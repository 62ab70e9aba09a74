//! The fast (direct) preconditioning against the honest slow way: every state is
//! followed by the same measured phase of uniform 4 KiB random writes at QD32 on both
//! drives, and the phase's WA and IOPS must agree. Run with --nocapture for figures.
mod common;

use common::*;
use storbench_engine::Target;
use storbench_sim::{open_spec, Precondition, SimSsd, State};

/// Measured phase: `mult` x span uniformly random 4 KiB writes at QD32 (timed).
fn phase(ssd: &mut SimSsd, mult: f64, seed: u64) -> (f64, f64) {
    let units = ssd.config().user_units();
    let before = ssd.counters();
    let r = rand_writes(ssd, 32, (units as f64 * mult) as u64, units, seed);
    (ssd.counters().since(&before).wa, r.iops())
}

#[test]
fn direct_sequential_fill_is_the_slow_fill_exactly() {
    for extra in [
        "victim=greedy",
        "victim=fifo",
        "victim=cost-benefit",
        "victim=random",
        "victim=greedy,wear_level=false",
        "compress=true",
    ] {
        let preset = if extra.starts_with("compress") {
            "sandforce-compress"
        } else {
            "client-7op"
        };
        let spec = format!("sim:{preset},capacity=96m,channels=2,dies=3,{extra}");
        let mut slow = open_spec(&spec).unwrap();
        let cap = slow.config().capacity_bytes;
        seq_fill(&mut slow, cap);
        let mut fast = open_spec(&spec).unwrap();
        assert_eq!(
            fast.fast_state(State::SequentialFill).unwrap(),
            Precondition::Direct
        );
        assert_eq!(
            fast.now_ns(),
            0,
            "fast preconditioning takes no virtual time"
        );
        // The same mapping, blocks, victim order and FTL counters.
        assert_eq!(slow.mapping_digest(), fast.mapping_digest(), "{spec}");
        assert_eq!(slow.check(), fast.check());
        assert_eq!(slow.valid_fractions(), fast.valid_fractions());
        let (s, f) = (slow.counters(), fast.counters());
        assert_eq!(
            (s.nand_write_bytes, s.nand_erases, s.host_write_bytes),
            (f.nand_write_bytes, f.nand_erases, f.host_write_bytes)
        );
        // So the measured phase does the same FTL work: WA equal to the bit. IOPS
        // differ only by the slow drive's leftover die work at the start (< 2%).
        let (wa_s, iops_s) = phase(&mut slow, 1.0, 5);
        let (wa_f, iops_f) = phase(&mut fast, 1.0, 5);
        eprintln!("{spec}: WA {wa_s:.4} / {wa_f:.4}, IOPS {iops_s:.0} / {iops_f:.0}");
        assert_eq!(wa_s, wa_f, "{spec}");
        assert!((iops_f / iops_s - 1.0).abs() < 0.02, "{spec}");
        assert_eq!(slow.mapping_digest(), fast.mapping_digest());
        fast.check();
    }
}

/// Steady state: the direct state is drawn from a model drive (512 blocks here,
/// against 4,700 superblocks of 64 units on the drive (8 pages x 2 planes x 4 dies);
/// drives under twice the model are replayed) and its random streams differ from the slow
/// way's, so the agreement is statistical. Tolerances: the WA of the 1 x span measured
/// phase varies by about +-1.5% between random streams on this drive (slow-way runs
/// with other seeds), so WA agrees within 3%; IOPS follow from WA (GC work per host
/// write) plus queueing noise (how GC work falls on the dies), within 5%. The cumulative counters of the state (WA of
/// fill + random phase, erase counts) come from the model scaled up, within 3%.
#[test]
fn direct_steady_state_agrees_with_the_slow_way() {
    for victim in ["greedy", "fifo", "cost-benefit"] {
        let spec = format!(
            "sim:client-12op,capacity=1g,channels=2,dies=2,page=4k,pages_per_block=8,victim={victim}"
        );
        let mut slow = open_spec(&spec).unwrap();
        let cap = slow.config().capacity_bytes;
        let units = cap / 4096;
        seq_fill(&mut slow, cap);
        rand_writes(&mut slow, 32, 3 * units, units, 11);
        let mut fast = open_spec(&spec).unwrap();
        let how = fast
            .fast_state(State::SteadyStateRandom {
                span_fraction: 1.0,
                writes_multiple: 3.0,
                seed: 99,
            })
            .unwrap();
        assert_eq!(how, Precondition::Direct);
        assert_eq!(fast.now_ns(), 0);
        let (cs, cf) = (slow.counters(), fast.counters());
        let c = fast.check();
        assert_eq!(c.valid, units);
        assert_eq!(fast.mapped_units(), units);
        let rel = |a: f64, b: f64| (a / b - 1.0).abs();
        eprintln!(
            "{victim}: state WA slow {:.3} fast {:.3}; erases {} / {}; spread {} / {}",
            cs.wa,
            cf.wa,
            cs.nand_erases,
            cf.nand_erases,
            cs.erase_count_spread,
            cf.erase_count_spread
        );
        assert!(rel(cf.wa, cs.wa) < 0.03, "{victim} state WA");
        assert!(rel(cf.nand_erases as f64, cs.nand_erases as f64) < 0.03);
        assert_eq!(cs.host_write_bytes, cf.host_write_bytes);
        let (s, f) = (slow.valid_fractions(), fast.valid_fractions());
        let q = |v: &[f64], p: f64| v[((v.len() - 1) as f64 * p) as usize];
        for p in [0.1, 0.5, 0.9] {
            assert!((q(&s, p) - q(&f, p)).abs() < 0.03, "{victim} quantile {p}");
        }
        let (wa_s, iops_s) = phase(&mut slow, 1.0, 5);
        let (wa_f, iops_f) = phase(&mut fast, 1.0, 5);
        eprintln!(
            "{victim}: measured phase WA slow {wa_s:.3} fast {wa_f:.3} ({:+.2}%), IOPS {iops_s:.0} / {iops_f:.0} ({:+.2}%)",
            (wa_f / wa_s - 1.0) * 100.0,
            (iops_f / iops_s - 1.0) * 100.0
        );
        assert!(rel(wa_f, wa_s) < 0.03, "{victim} WA");
        assert!(rel(iops_f, iops_s) < 0.05, "{victim} IOPS");
        slow.check();
        fast.check();
    }
}

#[test]
fn small_drives_replay_their_steady_state_exactly() {
    let spec = "sim:client-7op,capacity=128m";
    let (mut a, mut b) = (open_spec(spec).unwrap(), open_spec(spec).unwrap());
    let st = State::SteadyStateRandom {
        span_fraction: 0.9,
        writes_multiple: 2.0,
        seed: 3,
    };
    assert_eq!(a.fast_state(st).unwrap(), Precondition::Replay);
    b.replay_state(st).unwrap();
    assert_eq!(a.counters(), b.counters());
    assert_eq!(a.mapping_digest(), b.mapping_digest());
}

#[test]
fn slc_drives_fall_back_to_replay_and_match_it() {
    let spec = "sim:tlc-slc,capacity=256m,slc_static=16m,slc_dynamic=32m";
    let mut a = open_spec(spec).unwrap();
    let mut b = open_spec(spec).unwrap();
    let st = State::SteadyStateRandom {
        span_fraction: 1.0,
        writes_multiple: 1.0,
        seed: 3,
    };
    assert_eq!(a.fast_state(st).unwrap(), Precondition::Replay);
    b.replay_state(st).unwrap();
    assert_eq!(a.counters(), b.counters());
    assert_eq!(a.mapping_digest(), b.mapping_digest());
    a.check();
}

#[test]
fn fast_state_is_deterministic_and_seeded() {
    let go = |seed: u64| {
        let mut ssd = open_spec(
            "sim:client-7op,capacity=1g,channels=2,dies=2,page=4k,pages_per_block=8,victim=cost-benefit",
        )
        .unwrap();
        let how = ssd
            .fast_state(State::SteadyStateRandom {
                span_fraction: 0.8,
                writes_multiple: 2.0,
                seed,
            })
            .unwrap();
        assert_eq!(how, Precondition::Direct);
        let c = ssd.check();
        assert_eq!(c.valid, (ssd.config().user_units() as f64 * 0.8) as u64);
        let units = ssd.config().user_units();
        let r = rand_writes(&mut ssd, 32, 20_000, units, 3);
        (ssd.counters(), ssd.mapping_digest(), r.completions_hash)
    };
    let a = go(1);
    assert_eq!(a, go(1));
    assert_ne!(a.1, go(2).1, "the seed is used");
}
