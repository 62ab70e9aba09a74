//! Shared by the engine's integration tests (each test binary compiles its own copy,
//! so an item one binary does not use is not dead code).
#![allow(dead_code)]

use storbench_engine::{run_phase, NoObserver, Pacing, PhaseOutcome, RunOptions, Target};
use storbench_trace::Op;
use storbench_workload::{NextIo, Source};

/// An I/O with no trace time and no trace queue depth.
pub fn io(op: Op, offset_bytes: u64, len_bytes: u64) -> NextIo {
    NextIo {
        op,
        offset_bytes,
        len_bytes,
        at_ns: None,
        trace_qd: None,
    }
}

/// Runs `source` on `target` to its end with default options and no observer.
pub fn run_to_end(
    target: &mut dyn Target,
    source: &mut dyn Source,
    pacing: Pacing,
) -> PhaseOutcome {
    run_phase(target, source, &RunOptions::new(pacing), &mut NoObserver).expect("run_phase failed")
}
