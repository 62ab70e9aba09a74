//! The simulated drive against theory (METHODOLOGY section 6). Every test prints its
//! measured figures next to the formula (run with --nocapture to see them).
mod common;

use common::*;
use storbench_engine::Target;
use storbench_sim::{open_spec, wa_fifo_theory, wa_random_theory, SimSsd, State};
use storbench_trace::Op;

/// One die, 4 KiB pages, so a block is `ppb` mapping units and the whole drive is one log.
fn drive(victim: &str, op: f64, ppb: u32, capacity: &str) -> SimSsd {
    open_spec(&format!(
        "sim:client-7op,capacity={capacity},channels=1,dies=1,planes=1,page=4k,\
         pages_per_block={ppb},victim={victim},op={op},gc_free_blocks=2,bg_gc_free_blocks=2,seed=7"
    ))
    .unwrap()
}

/// alpha = physical pages that can hold data / user pages written. The GC reserve of
/// `gc_free_blocks` erased blocks never holds data, so it is not counted.
fn alpha(ssd: &SimSsd, span_fraction: f64) -> (f64, f64) {
    let c = ssd.config();
    let blocks = c.native_blocks();
    let upb = c.units_per_block() as u64;
    let user = (c.user_units() as f64 * span_fraction).floor();
    let nominal = (blocks * upb) as f64 / user;
    let effective = ((blocks - c.gc_free_blocks as u64) * upb) as f64 / user;
    (nominal, effective)
}

/// Steady-state WA of uniform random 4 KiB writes over the first `span_fraction`:
/// warm up with the fast path, then measure `window` x span writes the honest way at QD32.
fn steady_wa(ssd: &mut SimSsd, span_fraction: f64) -> f64 {
    steady_wa_window(ssd, span_fraction, 2)
}

fn steady_wa_window(ssd: &mut SimSsd, span_fraction: f64, window: u64) -> f64 {
    ssd.fast_state(State::SteadyStateRandom {
        span_fraction,
        writes_multiple: 3.0,
        seed: 1,
    })
    .unwrap();
    let span = (ssd.config().user_units() as f64 * span_fraction) as u64;
    // One span of honest writes first: the measurement starts from the drive's own
    // steady state, not from the fast state's statistical copy of it.
    rand_writes(ssd, 32, span, span, 8); // (Lcg seeds are made odd: 8 -> 9, not 5)
    let before = ssd.counters();
    rand_writes(ssd, 32, window * span, span, 5);
    let wa = ssd.counters().since(&before).wa;
    let census = ssd.check();
    assert_eq!(census.valid, span);
    wa
}

#[test]
fn fifo_victims_match_the_fifo_formula_within_1_percent() {
    for op in [0.07, 0.12, 0.28, 0.50] {
        let mut ssd = drive("fifo", op, 64, "256m");
        let (nominal, a) = alpha(&ssd, 1.0);
        let wa = steady_wa(&mut ssd, 1.0);
        let th = wa_fifo_theory(a);
        eprintln!(
            "fifo  op {op:.2}: alpha {a:.4} (nominal {nominal:.4}) WA {wa:.3} formula {th:.3} ({:+.2}%)",
            (wa / th - 1.0) * 100.0
        );
        assert!((wa / th - 1.0).abs() < 0.01, "op {op}: WA {wa} vs {th}");
    }
}

/// Greedy sits below the FIFO formula by an amount that shrinks as 1/(pages per block):
/// with few pages per block the valid counts of same-age blocks spread out and greedy
/// picks the emptier ones; as blocks grow the counts concentrate and greedy turns into
/// FIFO. Measured at 7% OP (release build, 1 x span windows after 3 to 10 x span of
/// warm-up): 128 pages -5.6%, 256 pages -2.85% (windows -2.60..-3.00%), 512 pages -1.46%,
/// the same with 548 or 2192 blocks and with 3x or 10x warm-up. So at 7% OP and 256
/// pages greedy is intrinsically about 2.85% under the formula and the 3% bound
/// holds with only ~0.1% to spare, whatever the sample size: this test therefore
/// measures a long window (4 x span after an honest 1 x span warm-up past the fast
/// state, so about +-0.1%), and checks the 1/ppb law itself at 512 pages per block,
/// which is what shows the model right.
#[test]
fn greedy_victims_at_256_pages_per_block_within_3_percent_of_formula() {
    let mut dev7 = 0.0;
    for op in [0.07, 0.12, 0.28, 0.50] {
        let mut ssd = drive("greedy", op, 256, "512m");
        let (nominal, a) = alpha(&ssd, 1.0);
        let wa = steady_wa_window(&mut ssd, 1.0, if op == 0.07 { 4 } else { 2 });
        let th = wa_fifo_theory(a);
        let dev = wa / th - 1.0;
        eprintln!(
            "greedy op {op:.2}: alpha {a:.4} (nominal {nominal:.4}) WA {wa:.3} formula {th:.3} ({:+.2}%)",
            dev * 100.0
        );
        assert!(dev.abs() < 0.03, "op {op}: WA {wa} vs {th}");
        assert!(wa <= th * 1.005, "greedy should not be worse than FIFO");
        if op == 0.07 {
            dev7 = dev;
        }
    }
    let mut ssd = drive("greedy", 0.07, 512, "1g");
    let (_, a) = alpha(&ssd, 1.0);
    let wa = steady_wa_window(&mut ssd, 1.0, 2);
    let dev512 = wa / wa_fifo_theory(a) - 1.0;
    eprintln!(
        "greedy op 0.07 at 512 pages/block: {:+.2}% (256 pages: {:+.2}%, ratio {:.2}, 1/ppb law: 0.5)",
        dev512 * 100.0,
        dev7 * 100.0,
        dev512 / dev7
    );
    assert!(dev7 < -0.015 && (0.35..0.65).contains(&(dev512 / dev7)));
}

#[test]
fn random_victims_within_3_percent_of_alpha_over_alpha_minus_1() {
    for op in [0.07, 0.12, 0.28, 0.50] {
        // Victims' valid fractions spread widely under random selection: measure a
        // long window so the mean is known to well under 1%.
        let mut ssd = drive("random", op, 64, "256m");
        let (nominal, a) = alpha(&ssd, 1.0);
        let wa = steady_wa_window(&mut ssd, 1.0, 4);
        let th = wa_random_theory(a);
        eprintln!(
            "random op {op:.2}: alpha {a:.4} (nominal {nominal:.4}) WA {wa:.3} alpha/(alpha-1) {th:.3} ({:+.2}%)",
            (wa / th - 1.0) * 100.0
        );
        assert!((wa / th - 1.0).abs() < 0.03, "op {op}: WA {wa} vs {th}");
    }
}

#[test]
fn cost_benefit_victims_sit_between_random_and_fifo() {
    let mut ssd = drive("cost-benefit", 0.12, 64, "64m");
    let (_, a) = alpha(&ssd, 1.0);
    let wa = steady_wa(&mut ssd, 1.0);
    eprintln!(
        "cost-benefit op 0.12: WA {wa:.3} (fifo {:.3}, random {:.3})",
        wa_fifo_theory(a),
        wa_random_theory(a)
    );
    // For uniform traffic age carries no information; cost-benefit behaves like greedy.
    assert!(wa < wa_random_theory(a) && wa < wa_fifo_theory(a) * 1.03);
}

#[test]
fn trim_of_part_of_the_span_lowers_wa_per_effective_alpha() {
    let mut ssd = drive("fifo", 0.07, 64, "256m");
    let cap = ssd.config().capacity_bytes;
    let units = cap / 4096;
    ssd.fast_state(State::SequentialFill).unwrap();
    // The honest way: TRIM the last quarter, then random writes over the rest.
    run(&mut ssd, 1, 1, |_| (Op::Trim, cap / 4 * 3, cap / 4));
    assert_eq!(ssd.mapped_units(), units / 4 * 3);
    let span = units / 4 * 3;
    rand_writes(&mut ssd, 32, 3 * span, span, 3);
    let before = ssd.counters();
    rand_writes(&mut ssd, 32, 2 * span, span, 4);
    let wa = ssd.counters().since(&before).wa;
    let (_, a_full) = alpha(&ssd, 1.0);
    let (_, a_eff) = alpha(&ssd, 0.75);
    let th = wa_fifo_theory(a_eff);
    eprintln!(
        "trim 25%: WA {wa:.3}, formula at effective alpha {a_eff:.4}: {th:.3} ({:+.2}%); untrimmed formula {:.3}",
        (wa / th - 1.0) * 100.0,
        wa_fifo_theory(a_full)
    );
    assert!((wa / th - 1.0).abs() < 0.02, "WA {wa} vs {th}");
    assert!(wa < 0.5 * wa_fifo_theory(a_full));
    ssd.check();
}

#[test]
fn spare_area_raises_steady_state_random_write_iops() {
    let spec = "sim:client-7op,capacity=512m";
    let iops = |span_fraction: f64| {
        let mut ssd = open_spec(spec).unwrap();
        ssd.fast_state(State::SteadyStateRandom {
            span_fraction,
            writes_multiple: 2.0,
            seed: 2,
        })
        .unwrap();
        let span = (ssd.config().user_units() as f64 * span_fraction) as u64;
        // Let the write buffer and GC settle, then measure.
        rand_writes(&mut ssd, 32, span / 4, span, 8);
        let before = ssd.counters();
        let r = rand_writes(&mut ssd, 32, span / 2, span, 9);
        (r.iops(), ssd.counters().since(&before).wa)
    };
    let (full, wa_full) = iops(1.0);
    let (spare, wa_spare) = iops(0.75);
    eprintln!(
        "4K QD32 random write steady state: full span {full:.0} IOPS (WA {wa_full:.2}), \
         25% spare area {spare:.0} IOPS (WA {wa_spare:.2}), ratio {:.2}",
        spare / full
    );
    assert!(spare > 1.5 * full, "spare {spare} vs full {full}");
}

#[test]
fn slc_cache_fills_falls_off_a_cliff_and_recovers_after_idle() {
    let mut ssd = open_spec("sim:tlc-slc,capacity=1g,slc_static=64m,slc_dynamic=0").unwrap();
    let chunk = 16u64 << 20;
    let mut off = 0u64;
    let mut speed = |ssd: &mut SimSsd| {
        let n = chunk / (128 << 10);
        let base = off;
        off += chunk;
        let r = run(ssd, 32, n, |i| {
            (Op::Write, base + i * (128 << 10), 128 << 10)
        });
        chunk as f64 / ((r.end_ns - r.start_ns) as f64 / 1e9) / 1e6
    };
    let mut mbps = Vec::new();
    for _ in 0..8 {
        mbps.push(speed(&mut ssd));
    }
    let c = ssd.counters();
    eprintln!("SLC cache 64 MiB, sequential 128K QD32 MB/s per 16 MiB: {mbps:.0?}");
    assert!(c.slc_hit_bytes >= 60 << 20 && c.native_direct_bytes > 0);
    let cached = mbps[0];
    let cliff = mbps[6];
    assert!(cliff < 0.5 * cached, "cliff {cliff} vs cached {cached}");
    // Idle for 10 s of virtual time: the cache is folded into TLC.
    let mut out = Vec::new();
    let t = ssd.now_ns();
    ssd.advance(0, Some(t + 10_000_000_000), &mut out).unwrap();
    let folded = ssd.counters().since(&c);
    assert!(folded.slc_folds > 0 && folded.slc_fold_bytes >= 60 << 20);
    let again = speed(&mut ssd);
    eprintln!(
        "after 10 s idle: {again:.0} MB/s (folded {} MiB)",
        folded.slc_fold_bytes >> 20
    );
    assert!(again > 0.8 * cached, "recovered {again} vs {cached}");
    ssd.check();
}
