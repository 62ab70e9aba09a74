//! Writes the traces bench/engine_fio.sh replays: a Poisson arrival process at a given
//! rate with bursts (every `burst_every` I/Os, `burst_len` I/Os arrive back to back),
//! 4 KB random reads over a span, as a storbench Parquet trace. fio gets the same I/Os
//! through `storbench export --format fio-iolog-v3` (one iolog writer, in the trace crate).
//!
//! usage: bench_trace OUT.parquet IOS RATE_IOPS SPAN_BYTES

use rand_xoshiro::rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::path::Path;
use storbench_trace::{IoRecord, Op, TraceMeta, TraceWriter};

fn main() {
    let a: Vec<String> = std::env::args().collect();
    if a.len() != 5 {
        eprintln!("usage: bench_trace OUT.parquet IOS RATE_IOPS SPAN_BYTES");
        std::process::exit(2);
    }
    let out = Path::new(&a[1]);
    let n: u64 = a[2].parse().expect("IOS");
    let rate: f64 = a[3].parse().expect("RATE_IOPS");
    let span: u64 = a[4].parse().expect("SPAN_BYTES");
    let blocks = span / 4096;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(42);
    let mut w = TraceWriter::create(
        out,
        &TraceMeta {
            source_format: Some("bench:poisson-bursts".into()),
            capacity_bytes: Some(span),
            logical_block_bytes: Some(512),
            ..TraceMeta::default()
        },
    )
    .expect("create trace");
    let burst_every = 1000u64;
    let burst_len = 32u64;
    let mut t_ns = 0f64;
    let mean_gap_ns = 1e9 / rate;
    for i in 0..n {
        if i % burst_every >= burst_len || i < burst_every {
            // Exponential inter-arrival: -ln(U) * mean.
            let u = ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
            t_ns += -u.ln() * mean_gap_ns;
        }
        let off = ((rng.next_u64() as u128 * blocks as u128) >> 64) as u64 * 4096;
        let rec = IoRecord::new(Op::Read, off, 4096, t_ns as u64);
        w.write(&rec).expect("write");
    }
    w.finish().expect("finish");
    eprintln!(
        "wrote {n} I/Os over {:.3} s to {}",
        t_ns / 1e9,
        out.display()
    );
}
