//! Speed of the simulated SSD: steady-state 4 KiB random writes at QD32 through the
//! Target trait, simulated host I/Os per second of wall time, and memory per simulated GB.
//! (The wall clock is read here, by the benchmark, never by the simulator.)
//!
//! usage: sim_speed [SPEC] [IOS]

use std::time::Instant;
use storbench_engine::{Completion, DataKind, IoRequest, Target};
use storbench_sim::{open_spec, State};
use storbench_trace::Op;

fn rss_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// CPU time of this thread (ns), from /proc/self/schedstat: the machine may be shared,
/// so wall time alone understates the simulator's speed.
fn cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
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
    let units = ssd.config().user_units();
    let qd = 32usize;
    let mut free: Vec<u32> = (0..qd as u32).collect();
    let mut out: Vec<Completion> = Vec::with_capacity(qd);
    let mut batch: Vec<IoRequest> = Vec::with_capacity(qd);
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let before = ssd.counters();
    let (mut submitted, mut done) = (0u64, 0u64);
    let v0 = ssd.now_ns();
    let t1 = Instant::now();
    let cpu0 = cpu_ns();
    while done < ios {
        batch.clear();
        while submitted < ios {
            let Some(slot) = free.pop() else { break };
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            batch.push(IoRequest {
                slot,
                op: Op::Write,
                offset_bytes: (x % units) * 4096,
                len_bytes: 4096,
                data: DataKind::Random,
            });
            submitted += 1;
        }
        if !batch.is_empty() {
            ssd.submit(&batch).unwrap();
        }
        out.clear();
        ssd.advance(1, None, &mut out).unwrap();
        for c in &out {
            free.push(c.slot);
            done += 1;
        }
    }
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
}
