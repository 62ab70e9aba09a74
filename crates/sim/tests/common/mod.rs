//! A tiny closed-loop driver for the Target trait (the engine loop is not needed here).
#![allow(dead_code)]

pub mod calib;

use storbench_engine::{Completion, DataKind, IoRequest, Target};
use storbench_sim::SimSsd;
use storbench_trace::Op;

/// Result of a run: virtual time used and every completion's (slot, complete_ns).
pub struct RunStats {
    pub start_ns: u64,
    pub end_ns: u64,
    pub ios: u64,
    pub completions_hash: u64,
}

impl RunStats {
    pub fn iops(&self) -> f64 {
        self.ios as f64 / ((self.end_ns - self.start_ns) as f64 / 1e9)
    }
}

/// Keep `qd` I/Os in flight until `n` have completed; `next(i)` gives the i-th I/O.
pub fn run(
    ssd: &mut SimSsd,
    qd: usize,
    n: u64,
    next: impl FnMut(u64) -> (Op, u64, u64),
) -> RunStats {
    run_data(ssd, qd, n, DataKind::Random, next)
}

/// As [`run`], with writes carrying `data`.
pub fn run_data(
    ssd: &mut SimSsd,
    qd: usize,
    n: u64,
    data: DataKind,
    mut next: impl FnMut(u64) -> (Op, u64, u64),
) -> RunStats {
    assert!(qd <= ssd.max_in_flight());
    let start_ns = ssd.now_ns();
    let mut free: Vec<u32> = (0..qd as u32).rev().collect();
    let mut out: Vec<Completion> = Vec::with_capacity(qd);
    let mut batch: Vec<IoRequest> = Vec::with_capacity(qd);
    let (mut submitted, mut done) = (0u64, 0u64);
    let mut hash = 0xcbf29ce484222325u64;
    while done < n {
        batch.clear();
        while submitted < n {
            let Some(slot) = free.pop() else { break };
            let (op, offset_bytes, len_bytes) = next(submitted);
            batch.push(IoRequest {
                slot,
                op,
                offset_bytes,
                len_bytes,
                data,
            });
            submitted += 1;
        }
        if !batch.is_empty() {
            ssd.submit(&batch).unwrap();
        }
        out.clear();
        ssd.advance(1, None, &mut out).unwrap();
        assert!(
            !out.is_empty(),
            "advance returned no completion with I/O in flight"
        );
        for c in &out {
            assert!(c.result.is_ok(), "I/O failed: {c:?}");
            assert!(c.complete_ns <= ssd.now_ns());
            hash = (hash ^ c.complete_ns ^ ((c.slot as u64) << 48)).wrapping_mul(0x100000001b3);
            free.push(c.slot);
            done += 1;
        }
    }
    RunStats {
        start_ns,
        end_ns: ssd.now_ns(),
        ios: n,
        completions_hash: hash,
    }
}

/// Deterministic xorshift for test LBAs.
pub struct Lcg(pub u64);
impl Lcg {
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
}

/// Sequential fill with 128 KiB writes at QD32.
pub fn seq_fill(ssd: &mut SimSsd, span_bytes: u64) -> RunStats {
    let n = span_bytes / (128 << 10);
    run(ssd, 32, n, |i| (Op::Write, i * (128 << 10), 128 << 10))
}

/// Uniformly random 4 KiB writes inside the first `span_units` units.
pub fn rand_writes(ssd: &mut SimSsd, qd: usize, n: u64, span_units: u64, seed: u64) -> RunStats {
    let mut r = Lcg(seed | 1);
    run(ssd, qd, n, move |_| {
        (Op::Write, (r.next() % span_units) * 4096, 4096)
    })
}
