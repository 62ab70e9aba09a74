//! A quick look at one simulated drive's behaviour through the engine loop: fresh and
//! QD1 figures, sequential reads at QD1, and the steady state of 4 KB QD32 random
//! writes (per-second IOPS, their spread, service-time percentiles). The figures the
//! structural parts of the model (issue 31) are judged by, for one spec.
//!
//! usage: sim_probe SPEC [STEADY_SECONDS] [SPAN_FRACTION]

#[path = "../tests/common/calib.rs"]
mod calib;

use calib::{per_second, phase, spec, NS};
use storbench_sim::{open_spec, State};
use storbench_trace::Op;
use storbench_workload::generator::{Limit, Pattern};

fn mean_sd(v: &[f64]) -> (f64, f64) {
    let m = v.iter().sum::<f64>() / v.len() as f64;
    let var = v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / v.len() as f64;
    (m, var.sqrt())
}

fn main() {
    let mut args = std::env::args().skip(1);
    let drive = args.next().expect("usage: sim_probe SPEC [SECONDS] [SPAN]");
    let secs: u64 = args.next().map_or(60, |s| s.parse().unwrap());
    let span_fraction: f64 = args.next().map_or(1.0, |s| s.parse().unwrap());
    let mut ssd = open_spec(&drive).unwrap();
    let cap = ssd.config().capacity_bytes;
    let rand = |op, qd, span| spec(Pattern::Random, op, 4096, qd, span, Limit::None);
    let w32 = phase(&mut ssd, rand(Op::Write, 32, cap), Some(2 * NS));
    let w1 = phase(&mut ssd, rand(Op::Write, 1, cap), Some(NS));
    println!(
        "fresh 4K write QD32 {:.0} IOPS (p50 {:.0} p99 {:.0} us), QD1 {:.0} IOPS ({:.1} us)",
        w32.iops, w32.service.p50_us, w32.service.p99_us, w1.iops, w1.service.mean_us
    );
    ssd.fast_state(State::SequentialFill).unwrap();
    let r32 = phase(&mut ssd, rand(Op::Read, 32, cap), Some(NS));
    let r1 = phase(&mut ssd, rand(Op::Read, 1, cap), Some(NS));
    let len = (1u64 << 30).min(cap / 2);
    let seq = |op, qd| {
        spec(
            Pattern::Sequential,
            op,
            128 << 10,
            qd,
            len,
            Limit::Bytes(len),
        )
    };
    let s1 = phase(&mut ssd, seq(Op::Read, 1), None).read_rate_mb_per_s;
    let s32 = phase(&mut ssd, seq(Op::Read, 32), None).read_rate_mb_per_s;
    println!(
        "4K read QD32 {:.0} IOPS, QD1 {:.0} IOPS ({:.1} us); 128K seq read QD1 {s1:.0} MB/s, QD32 {s32:.0} MB/s",
        r32.iops, r1.iops, r1.service.mean_us
    );
    ssd.fast_state(State::SteadyStateRandom {
        span_fraction,
        writes_multiple: 2.0,
        seed: 3,
    })
    .unwrap();
    let span = (cap as f64 * span_fraction) as u64 / 4096 * 4096;
    phase(&mut ssd, rand(Op::Write, 32, span), Some(20 * NS));
    let before = ssd.counters();
    let m = phase(&mut ssd, rand(Op::Write, 32, span), Some(secs * NS));
    let iops = per_second(&m);
    let (avg, sd) = mean_sd(&iops);
    let lo = iops.iter().cloned().fold(f64::INFINITY, f64::min);
    let hi = iops.iter().cloned().fold(0.0, f64::max);
    println!(
        "steady 4K write QD32 over {span_fraction} of the span: {avg:.0} IOPS, sd {sd:.0} (avg/sd {:.1}), min {lo:.0} max {hi:.0}; p50 {:.0} p99 {:.0} p99.9 {:.0} us (p99/p50 {:.2}); WA {:.2}",
        avg / sd,
        m.service.p50_us,
        m.service.p99_us,
        m.service.p99_9_us,
        m.service.p99_us / m.service.p50_us,
        ssd.counters().since(&before).wa
    );
    let head: Vec<String> = iops.iter().take(30).map(|x| format!("{x:.0}")).collect();
    println!("first 30 s: {}", head.join(" "));
}
