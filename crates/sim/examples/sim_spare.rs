//! Seed 001's spare-area test as the article ran it, in time: a fill, then 4 KB QD32
//! random writes over 75% of the LBAs for SECONDS (the article: just over 2000 s),
//! per-second IOPS, and the mean and lowest second of the last 600 s (the article's
//! graphs zoom in from t = 1400 s). The fill covers the tested span (`span`, as
//! METHODOLOGY reads "limiting the LBA range": a 75% partition of a purged drive) or
//! every LBA (`all`: the last 25% then holds data that is never overwritten).
//!
//! usage: sim_spare SPEC span|all [SECONDS]

#[path = "../tests/common/calib.rs"]
mod calib;

use calib::{per_second, phase, spec, NS};
use storbench_sim::{open_spec, State};
use storbench_trace::Op;
use storbench_workload::generator::{GenSpec, Limit, Pattern};

fn main() {
    let mut args = std::env::args().skip(1);
    let drive = args
        .next()
        .expect("usage: sim_spare SPEC span|all [SECONDS]");
    let fill_all = match args.next().as_deref() {
        Some("all") => true,
        Some("span") | None => false,
        Some(x) => panic!("fill `{x}`: span or all"),
    };
    let secs: u64 = args.next().map_or(2000, |s| s.parse().expect("SECONDS"));
    let mut ssd = open_spec(&drive).unwrap_or_else(|e| panic!("{e}"));
    let cap = ssd.config().capacity_bytes;
    let span = (cap as f64 * 0.75) as u64 / 4096 * 4096;
    if fill_all {
        ssd.fast_state(State::SequentialFill).unwrap();
    } else {
        phase(&mut ssd, GenSpec::seq_fill(0, span, 1), None);
    }
    let rand = spec(Pattern::Random, Op::Write, 4096, 32, span, Limit::None);
    let before = ssd.counters();
    let v = per_second(&phase(&mut ssd, rand, Some(secs * NS)));
    let per_100s: Vec<String> = v
        .chunks(100)
        .map(|c| format!("{:.0}", c.iter().sum::<f64>() / c.len() as f64))
        .collect();
    let tail = &v[v.len().saturating_sub(600)..];
    let min = tail.iter().cloned().fold(f64::INFINITY, f64::min);
    let mean = tail.iter().sum::<f64>() / tail.len() as f64;
    println!(
        "{drive}, fill {}, 4 KB QD32 random writes over 75%: per 100 s {}",
        if fill_all { "all" } else { "span" },
        per_100s.join(" ")
    );
    println!(
        "last 600 s: mean {mean:.0} IOPS, lowest second {min:.0}; WA of the writes {:.2}",
        ssd.counters().since(&before).wa
    );
}
