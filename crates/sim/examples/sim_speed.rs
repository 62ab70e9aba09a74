//! Speed of the simulated SSD: steady-state 4 KiB random writes at QD32, simulated host
//! I/Os per CPU-second, two ways on the same drive:
//! 1. direct: a minimal driver on the `Target` trait (the simulator's own cost);
//! 2. engine: the CLI's random-write generator through the one engine loop
//!    (`run_phase`, with its metrics recorder), as `storbench run` drives it.
//!
//! Then memory per simulated GB (resident set growth from opening the drive to its
//! steady state). The wall clock and /proc are read here, by the benchmark, never by
//! the simulator.
//!
//! usage: sim_speed [SPEC] [IOS] [ENGINE_IOS] [steady|fresh]
//! (ENGINE_IOS 0 skips the engine phase; `fresh` starts from a secure-erased drive, as
//! `storbench run` does, instead of the random-write steady state)

use std::time::Instant;
use storbench_engine::{run_phase, NoObserver, Pacing, RunOptions, Target};
use storbench_sim::{open_spec, SimCounters, SimSsd, State};
use storbench_workload::generator::{GenSpec, Generator, Limit};

mod common;
use common::{cpu_ns, random_writes, rss_kib};

/// CPU and wall seconds of `f` on this thread.
fn timed(f: impl FnOnce()) -> (f64, f64) {
    let t = Instant::now();
    let c0 = cpu_ns();
    f();
    let wall = t.elapsed().as_secs_f64();
    let cpu = match (c0, cpu_ns()) {
        (Some(a), Some(b)) => (b - a) as f64 / 1e9,
        _ => wall,
    };
    (cpu, wall)
}

fn report(what: &str, ssd: &SimSsd, ios: u64, c: &SimCounters, v0: u64, cpu: f64, wall: f64) {
    let virt_s = (ssd.now_ns() - v0) as f64 / 1e9;
    println!("[{what}]");
    println!("host I/Os                {ios}");
    println!("WA                       {:.2}", c.wa);
    println!("wall time                {wall:.2} s");
    println!("simulated IOPS / wall s  {:.0}", ios as f64 / wall);
    println!("cpu time (this thread)   {cpu:.2} s");
    println!("simulated IOPS / cpu s   {:.0}", ios as f64 / cpu);
    println!(
        "  ratio to 1M target     {:.2} (per cpu second)",
        ios as f64 / cpu / 1e6
    );
    println!(
        "virtual time             {virt_s:.2} s ({:.0} simulated IOPS)",
        ios as f64 / virt_s
    );
}

/// `storbench run --rw randwrite --bs 4k --qd 32` over the whole drive, through the
/// engine loop, and its rate against the direct driver's.
fn engine_phase(ssd: &mut SimSsd, engine_ios: u64, direct_rate: f64) {
    let cap = ssd.config().capacity_bytes;
    let mut gspec = GenSpec::rand_write_4k_qd32(0, cap, 1);
    gspec.limit = Limit::Ios(engine_ios);
    let mut generator = Generator::new(gspec).expect("generator");
    let mut opts = RunOptions::new(Pacing::QueueDepth { default_qd: 32 });
    opts.seed = 1;
    let before = ssd.counters();
    let v0 = ssd.now_ns();
    let mut outcome = None;
    let (cpu, wall) = timed(|| {
        outcome = Some(run_phase(ssd, &mut generator, &opts, &mut NoObserver));
    });
    let outcome = outcome.unwrap().expect("run_phase");
    assert!(outcome.complete);
    assert_eq!(outcome.submitted_ios, engine_ios);
    let c = ssd.counters().since(&before);
    assert_eq!(c.host_write_ios, engine_ios);
    report("engine: run_phase", ssd, engine_ios, &c, v0, cpu, wall);
    let rate = engine_ios as f64 / cpu;
    println!(
        "engine / direct          {:.2} ({:.0} ns per I/O in the engine loop and metrics)",
        rate / direct_rate,
        1e9 / rate - 1e9 / direct_rate
    );
}

fn main() {
    let mut args = std::env::args().skip(1);
    let spec = args
        .next()
        .unwrap_or_else(|| "sim:client-7op,capacity=4g,victim=greedy".to_string());
    let ios: u64 = args
        .next()
        .map(|s| s.parse().expect("IOS"))
        .unwrap_or(5_000_000);
    let engine_ios: u64 = args
        .next()
        .map(|s| s.parse().expect("ENGINE_IOS"))
        .unwrap_or(ios);
    let steady = match args.next().as_deref() {
        None | Some("steady") => true,
        Some("fresh") => false,
        Some(x) => panic!("state `{x}`: steady or fresh"),
    };
    let rss0 = rss_kib().unwrap_or(0);
    let mut ssd = open_spec(&spec).unwrap_or_else(|e| panic!("{e}"));
    println!("spec                     {spec}");
    if steady {
        let t0 = Instant::now();
        ssd.fast_state(State::SteadyStateRandom {
            span_fraction: 1.0,
            writes_multiple: 1.5,
            seed: 1,
        })
        .unwrap();
        let precond_s = t0.elapsed().as_secs_f64();
        println!(
            "precondition (direct)    {precond_s:.2} s wall, fill + 1.5x capacity of 4K writes"
        );
    } else {
        println!("precondition             none (fresh drive)");
    }
    let rss1 = rss_kib().unwrap_or(0);

    let before = ssd.counters();
    let v0 = ssd.now_ns();
    let (cpu, wall) = timed(|| random_writes(&mut ssd, ios, 32));
    let c = ssd.counters().since(&before);
    report("direct: Target trait", &ssd, ios, &c, v0, cpu, wall);
    let direct_rate = ios as f64 / cpu;
    // Exact figures: a pure optimization must leave all three unchanged for a spec.
    println!(
        "fingerprint              virtual_ns {} nand_write_bytes {} mapping_digest {:016x}",
        ssd.now_ns(),
        ssd.counters().nand_write_bytes,
        ssd.mapping_digest()
    );

    if engine_ios > 0 {
        if !steady {
            // Each phase starts from a fresh drive (as each `storbench run` does).
            ssd = open_spec(&spec).unwrap_or_else(|e| panic!("{e}"));
        }
        engine_phase(&mut ssd, engine_ios, direct_rate);
    }

    let gb = ssd.config().capacity_bytes as f64 / 1e9;
    let mem_mb = (rss1.saturating_sub(rss0)) as f64 / 1024.0;
    println!(
        "memory                   {mem_mb:.1} MB for {gb:.2} GB = {:.2} MB per simulated GB",
        mem_mb / gb
    );
}
