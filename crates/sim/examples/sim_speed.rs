//! Speed of the simulated SSD: steady-state 4 KiB random writes at QD32 through the
//! Target trait, simulated host I/Os per second of wall time, and memory per simulated GB.
//! (The wall clock is read here, by the benchmark, never by the simulator.)
//!
//! usage: sim_speed [SPEC] [IOS]

use std::time::Instant;
use storbench_engine::Target;
use storbench_sim::{open_spec, State};

mod common;
use common::{cpu_ns, random_writes, rss_kib};

fn main() {
    let mut args = std::env::args().skip(1);
    let spec = args
        .next()
        .unwrap_or_else(|| "sim:client-7op,capacity=4g,victim=greedy".to_string());
    let ios: u64 = args
        .next()
        .map(|s| s.parse().expect("IOS"))
        .unwrap_or(5_000_000);
    let rss0 = rss_kib().unwrap_or(0);
    let mut ssd = open_spec(&spec).unwrap_or_else(|e| panic!("{e}"));
    let t0 = Instant::now();
    ssd.fast_state(State::SteadyStateRandom {
        span_fraction: 1.0,
        writes_multiple: 1.5,
        seed: 1,
    })
    .unwrap();
    let precond_s = t0.elapsed().as_secs_f64();
    let rss1 = rss_kib().unwrap_or(0);
    let before = ssd.counters();
    let v0 = ssd.now_ns();
    let t1 = Instant::now();
    let cpu0 = cpu_ns();
    random_writes(&mut ssd, ios, 32);
    let wall = t1.elapsed().as_secs_f64();
    let cpu = match (cpu0, cpu_ns()) {
        (Some(a), Some(b)) => (b - a) as f64 / 1e9,
        _ => wall,
    };
    let c = ssd.counters().since(&before);
    let virt_s = (ssd.now_ns() - v0) as f64 / 1e9;
    let gb = ssd.config().capacity_bytes as f64 / 1e9;
    let mem_mb = (rss1.saturating_sub(rss0)) as f64 / 1024.0;
    println!("spec                     {spec}");
    println!("precondition (direct)    {precond_s:.2} s wall, fill + 1.5x capacity of 4K writes");
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
    println!(
        "memory                   {mem_mb:.1} MB for {gb:.2} GB = {:.2} MB per simulated GB",
        mem_mb / gb
    );
    // Exact figures: a pure optimization must leave all three unchanged for a spec.
    println!(
        "fingerprint              virtual_ns {} nand_write_bytes {} mapping_digest {:016x}",
        ssd.now_ns(),
        ssd.counters().nand_write_bytes,
        ssd.mapping_digest()
    );
}
