//! Shared by the simulator benchmarks (examples): the measured workload and the
//! process probes. The wall clock and /proc are read here, never by the simulator.

use storbench_engine::{Completion, DataKind, IoRequest, Target};
use storbench_sim::SimSsd;
use storbench_trace::Op;

/// CPU time of this thread (ns), from /proc/thread-self/schedstat: the machine may be
/// shared, so wall time alone understates the simulator's speed.
pub fn cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

/// Resident set size of this process (KiB).
pub fn rss_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Drives `n` uniformly random 4 KiB writes at queue depth `qd` through the `Target`
/// trait, from a fixed xorshift stream, until all have completed.
pub fn random_writes(ssd: &mut SimSsd, n: u64, qd: u32) {
    let units = ssd.config().user_units();
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut free: Vec<u32> = (0..qd).collect();
    let mut out: Vec<Completion> = Vec::with_capacity(qd as usize);
    let mut batch: Vec<IoRequest> = Vec::with_capacity(qd as usize);
    let (mut submitted, mut done) = (0u64, 0u64);
    while done < n {
        batch.clear();
        while submitted < n {
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
}
