//! The recorder is in the engine's hot path: no allocation per event. Counted with a
//! counting global allocator (this test binary holds only this test).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};
use storbench_core::{IoRecord, Op};
use storbench_metrics::Recorder;

struct Counting;
static ALLOCS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards every call to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn a_million_ios_allocate_only_per_second_of_series() {
    let mut r = Recorder::new(0);
    // QD 64 steady stream: a submission every 10 µs, 640 µs service, over 10 s.
    let n: u64 = 1_000_000;
    let mut inflight: std::collections::VecDeque<IoRecord> =
        std::collections::VecDeque::with_capacity(64);
    let before = ALLOCS.load(Ordering::Relaxed);
    for i in 0..n {
        let t = i * 10_000;
        while inflight
            .front()
            .is_some_and(|io| io.complete_ns.unwrap() <= t)
        {
            let io = inflight.pop_front().unwrap();
            r.on_complete(&io, true);
        }
        let op = if i % 3 == 0 { Op::Write } else { Op::Read };
        r.on_submit(t, op);
        let mut io = IoRecord::new(op, i * 4096, 4096, t);
        // completions in submission order, 640 µs each: 64 in flight after each submission
        io.complete_ns = Some(t + 640_000);
        inflight.push_back(io);
    }
    while let Some(io) = inflight.pop_front() {
        r.on_complete(&io, true);
    }
    let allocs = ALLOCS.load(Ordering::Relaxed) - before;
    // the series grows by one entry per second (amortized doubling): ~10 s -> a few reallocs
    assert!(allocs <= 8, "{allocs} allocations for {n} I/Os");
    assert_eq!(r.series().len(), 10);
    let m = r.finish(10 * 1_000_000_000 + 640_000);
    assert_eq!(m.read_ios + m.write_ios, n);
    assert_eq!(m.qd.max, 64);
}
