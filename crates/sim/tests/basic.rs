mod common;

use common::*;
use storbench_engine::{Completion, DataKind, IoRequest, Target};
use storbench_sim::{open_spec, presets, SimError, State, VictimPolicy};
use storbench_trace::Op;

#[test]
fn spec_parses_presets_and_overrides() {
    let ssd = open_spec("sim:client-7op,capacity=1g,seed=3,victim=fifo,op=12%").unwrap();
    let c = ssd.config();
    assert_eq!(c.capacity_bytes, 1 << 30);
    assert_eq!(c.seed, 3);
    assert_eq!(c.victim, VictimPolicy::Fifo);
    assert!((c.op - 0.12).abs() < 1e-12);
    assert_eq!(ssd.info().capacity_bytes, 1 << 30);
    for p in presets() {
        let spec = format!("sim:{},capacity=1g", p.name);
        open_spec(&spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
    }
}

#[test]
fn spec_errors_are_typed_with_hints() {
    match open_spec("sim:nope") {
        Err(SimError::UnknownPreset { presets, .. }) => assert!(presets.contains("client-7op")),
        other => panic!("{:?}", other.err()),
    }
    match open_spec("sim:client-7op,colour=red") {
        Err(e @ SimError::UnknownKey { .. }) => {
            assert!(e.to_string().contains("`colour`"), "{e}");
            assert!(e.hint().is_some_and(|h| h.contains("capacity")), "{e:?}");
        }
        other => panic!("{:?}", other.err()),
    }
    assert!(matches!(
        open_spec("sim:client-7op,victim=lru"),
        Err(SimError::BadValue { .. })
    ));
    assert!(matches!(open_spec("file:/x"), Err(SimError::NotSim { .. })));
    assert!(matches!(
        open_spec("sim:client-7op,capacity"),
        Err(SimError::NotKeyValue { .. })
    ));
    // Too little spare for GC is refused, not a panic later.
    assert!(matches!(
        open_spec("sim:client-7op,capacity=64m,op=0.001"),
        Err(SimError::Invalid(_))
    ));
}

/// Regression (issue 30): `sim:client-7op,capacity=1g,capacity=2g` ran on 2 GiB
/// without a word, and `,,` was accepted; both are errors naming the key or the item.
#[test]
fn a_sim_spec_key_given_twice_or_an_empty_item_is_an_error() {
    match open_spec("sim:client-7op,capacity=1g,capacity=2g") {
        Err(e @ SimError::DuplicateKey { .. }) => {
            let m = e.to_string();
            assert!(
                m.contains("`capacity` is given twice")
                    && m.contains("capacity=1g")
                    && m.contains("capacity=2g")
                    && !m.contains("hint:")
                    && e.hint().is_some_and(|h| h.contains("once")),
                "{m}"
            );
        }
        other => panic!("{:?}", other.err()),
    }
    for (spec, position) in [
        ("sim:client-7op,,capacity=1g", 1),
        ("sim:client-7op,capacity=1g,", 2),
        ("sim:client-7op,capacity=1g, ,seed=2", 2),
        ("sim:client-7op,=4g", 1),
    ] {
        match open_spec(spec) {
            Err(e @ SimError::EmptyItem { .. }) => {
                let m = e.to_string();
                assert!(
                    m.contains(spec) && m.contains(&format!("item {position} is empty")),
                    "{m}"
                );
            }
            other => panic!("{spec}: {:?}", other.err()),
        }
    }
    // Each key once, spaces around items: still fine.
    let ssd = open_spec("sim:client-7op, capacity=1g , seed=2").unwrap();
    assert_eq!(ssd.config().capacity_bytes, 1 << 30);
}

#[test]
fn consistency_holds_through_fill_random_trim_and_purge() {
    for victim in ["greedy", "fifo", "random", "cost-benefit"] {
        let mut ssd = open_spec(&format!(
            "sim:client-7op,capacity=64m,channels=2,dies=2,victim={victim}"
        ))
        .unwrap();
        let cap = ssd.config().capacity_bytes;
        let units = cap / 4096;
        seq_fill(&mut ssd, cap);
        let c = ssd.check();
        assert_eq!(c.valid, units);
        rand_writes(&mut ssd, 32, units * 2, units, 7);
        let c = ssd.check();
        assert_eq!(c.valid, units, "{victim}");
        assert_eq!(c.free + c.valid + c.invalid, c.total);
        assert!(ssd.counters().gc_runs > 0);
        // TRIM the second half.
        run(&mut ssd, 4, 1, |_| (Op::Trim, cap / 2, cap / 2));
        assert_eq!(ssd.check().valid, units / 2);
        rand_writes(&mut ssd, 32, units, units / 2, 9);
        assert_eq!(ssd.check().valid, units / 2);
        ssd.purge().unwrap();
        let c = ssd.check();
        assert_eq!(c.valid + c.invalid, 0);
        assert_eq!(ssd.mapped_units(), 0);
    }
}

#[test]
fn reads_and_flush_complete_with_lengths() {
    let mut ssd = open_spec("sim:client-12op,capacity=256m").unwrap();
    ssd.submit(&[IoRequest {
        slot: 0,
        op: Op::Write,
        offset_bytes: 0,
        len_bytes: 65536,
        data: DataKind::Random,
    }])
    .unwrap();
    let mut out: Vec<Completion> = Vec::new();
    ssd.advance(1, None, &mut out).unwrap();
    assert_eq!(out[0].result, Ok(65536));
    let t_write = out[0].complete_ns;
    assert!(t_write > 0);
    out.clear();
    ssd.submit(&[
        IoRequest {
            slot: 1,
            op: Op::Read,
            offset_bytes: 0,
            len_bytes: 65536,
            data: DataKind::Random,
        },
        IoRequest {
            slot: 2,
            op: Op::Flush,
            offset_bytes: 0,
            len_bytes: 0,
            data: DataKind::Random,
        },
        IoRequest {
            slot: 3,
            op: Op::Read,
            offset_bytes: 256 << 20,
            len_bytes: 4096,
            data: DataKind::Random,
        },
    ])
    .unwrap();
    ssd.advance(3, None, &mut out).unwrap();
    assert_eq!(out.len(), 3);
    let by_slot = |s: u32| out.iter().find(|c| c.slot == s).unwrap().result;
    assert_eq!(by_slot(1), Ok(65536));
    assert_eq!(by_slot(2), Ok(0));
    assert_eq!(by_slot(3), Err(-22), "read past the end fails with EINVAL");
    let c = ssd.counters();
    assert_eq!(c.host_read_bytes, 65536, "a failed read moves no data");
    // 16 units written in 4 stripes (8 KiB pages x 2 planes): one multi-plane read each.
    assert_eq!(c.nand_page_reads, 4);
    // Completion times never run ahead of the clock and never go backwards.
    for c in &out {
        assert!(c.complete_ns <= ssd.now_ns() && c.complete_ns >= t_write);
    }
    // Idle time passes to the deadline with nothing in flight.
    out.clear();
    let now = ssd.now_ns();
    ssd.advance(0, Some(now + 1_000_000), &mut out).unwrap();
    assert_eq!(ssd.now_ns(), now + 1_000_000);
}

#[test]
fn same_seed_same_counters_and_completion_times() {
    let go = || {
        let mut ssd = open_spec("sim:client-7op,capacity=64m,victim=random,seed=5").unwrap();
        let cap = ssd.config().capacity_bytes;
        let a = seq_fill(&mut ssd, cap);
        let b = rand_writes(&mut ssd, 32, 40_000, cap / 4096, 3);
        (
            ssd.counters(),
            a.completions_hash,
            b.completions_hash,
            ssd.now_ns(),
        )
    };
    let (c1, a1, b1, t1) = go();
    let (c2, a2, b2, t2) = go();
    assert_eq!(c1, c2);
    assert_eq!((a1, b1, t1), (a2, b2, t2));
    // A different victim seed changes the outcome (the seed is really used).
    let mut ssd = open_spec("sim:client-7op,capacity=64m,victim=random,seed=6").unwrap();
    let cap = ssd.config().capacity_bytes;
    seq_fill(&mut ssd, cap);
    rand_writes(&mut ssd, 32, 40_000, cap / 4096, 3);
    assert_ne!(ssd.counters().nand_write_bytes, c1.nand_write_bytes);
}

#[test]
fn compressing_drive_writes_less_nand_for_compressible_data() {
    let wa_of = |data: DataKind| {
        let mut ssd = open_spec("sim:sandforce-compress,capacity=256m").unwrap();
        let cap = ssd.config().capacity_bytes;
        let units = cap / 4096;
        run_data(&mut ssd, 32, cap / (128 << 10), data, |i| {
            (Op::Write, i * (128 << 10), 128 << 10)
        });
        let fill = ssd.counters().wa;
        let before = ssd.counters();
        let mut r = Lcg(77);
        run_data(&mut ssd, 32, units * 3, data, move |_| {
            (Op::Write, (r.next() % units) * 4096, 4096)
        });
        let steady = ssd.counters().since(&before).wa;
        let c = ssd.check();
        assert_eq!(c.free + c.valid + c.invalid, c.total);
        (fill, steady)
    };
    let (fill_rand, steady_rand) = wa_of(DataKind::Random);
    let (fill_half, steady_half) = wa_of(DataKind::Compressible(2.0));
    let (fill_zero, _) = wa_of(DataKind::Zeros);
    eprintln!(
        "compressing drive: incompressible fill WA {fill_rand:.3} steady {steady_rand:.3}; \
         2:1 fill {fill_half:.3} steady {steady_half:.3}; zeros fill {fill_zero:.3}"
    );
    assert!(
        fill_rand >= 1.0 && steady_rand > 1.0,
        "incompressible data: WA >= 1"
    );
    assert!((fill_half - 0.5).abs() < 0.01);
    assert!((fill_zero - 0.25).abs() < 0.01);
    // Half the live data on NAND: the effective spare area is far larger.
    assert!(steady_half < steady_rand / 2.0);
    // The same drive without compression ignores the hint.
    let mut plain = open_spec("sim:client-7op,capacity=256m").unwrap();
    run_data(&mut plain, 32, 64, DataKind::Zeros, |i| {
        (Op::Write, i * (128 << 10), 128 << 10)
    });
    assert!((plain.counters().wa - 1.0).abs() < 1e-9);
}

#[test]
fn idle_time_runs_background_gc_and_wear_is_counted() {
    // 548 superblocks of 128 units, 36 of them spare: idle-time GC works up to 20 free.
    let mut ssd = open_spec("sim:client-7op,capacity=256m,bg_gc_free_blocks=20").unwrap();
    let units = ssd.config().user_units();
    ssd.fast_state(State::SteadyStateRandom {
        span_fraction: 1.0,
        writes_multiple: 1.0,
        seed: 4,
    })
    .unwrap();
    rand_writes(&mut ssd, 32, units / 4, units, 12);
    let free_busy = ssd.free_blocks();
    let before = ssd.counters();
    assert!(
        free_busy < 20,
        "foreground GC keeps only its reserve: {free_busy}"
    );
    // No idle: nothing happens in the background.
    let mut out: Vec<Completion> = Vec::new();
    ssd.advance(0, None, &mut out).unwrap();
    assert_eq!(ssd.counters().gc_background_runs, before.gc_background_runs);
    // One second of host idle.
    let t = ssd.now_ns();
    ssd.advance(0, Some(t + 1_000_000_000), &mut out).unwrap();
    let d = ssd.counters().since(&before);
    eprintln!(
        "idle 1 s: {} background GC runs, free blocks {free_busy} -> {}",
        d.gc_background_runs,
        ssd.free_blocks()
    );
    assert!(d.gc_background_runs > 0 && d.host_write_bytes == 0);
    assert!(ssd.free_blocks() >= 20);
    let c = ssd.counters();
    assert!(c.erase_count_max >= c.erase_count_min && c.erase_count_mean > 0.5);
    let g = ssd.config();
    let blocks = g.native_blocks() as f64;
    assert!((c.erase_count_mean * blocks - c.nand_erases as f64).abs() < 1e-6 * blocks);
    ssd.check();
}
