//! The measurement plan: the phases `storbench twin measure` runs on a drive, and the
//! same phases the fit runs on each candidate simulated drive.
//!
//! Every phase is a generator (or a purge, or idle time) over a share of the drive's
//! capacity, so the plan scales from the measured drive to the fit's small simulated
//! one: a phase that wrote twice the span on the drive writes twice the span on the
//! candidate ([`Plan::scaled_to`]).

use serde::{Deserialize, Serialize};
use storbench_workload::generator::{GenSpec, Limit, Mix, Pattern};

pub use storbench_results::consistency::NS_PER_S;
const SEQ_BLOCK_BYTES: u64 = 128 << 10;
const RAND_BLOCK_BYTES: u64 = 4 << 10;

/// What one phase does.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum StepWork {
    /// Secure erase.
    Purge,
    /// No I/O for this long (the drive's background work).
    Idle { duration_ns: u64 },
    /// A generator, queue-depth paced at its QD; stops at its limit or the time limit.
    Io {
        spec: GenSpec,
        time_limit_ns: Option<u64>,
    },
}

/// One phase of the plan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Step {
    pub name: String,
    pub title: String,
    pub work: StepWork,
}

pub use storbench_results::twin::PlanShape;

/// The plan's phases, in order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub capacity_bytes: u64,
    pub steps: Vec<Step>,
}

/// `share` of `capacity`, whole 128 KiB pieces.
pub fn span(capacity_bytes: u64, share: f64) -> u64 {
    ((capacity_bytes as f64 * share) as u64 / SEQ_BLOCK_BYTES).max(1) * SEQ_BLOCK_BYTES
}

fn io(name: &str, title: &str, spec: GenSpec, time_limit_ns: Option<u64>) -> Step {
    Step {
        name: name.into(),
        title: title.into(),
        work: StepWork::Io {
            spec,
            time_limit_ns,
        },
    }
}

fn seq(start: u64, len: u64, read: bool) -> GenSpec {
    GenSpec {
        pattern: Pattern::Sequential,
        mix: Mix::ReadWrite {
            read_pct: if read { 100 } else { 0 },
        },
        block_bytes: SEQ_BLOCK_BYTES,
        qd: 32,
        span_start_bytes: start,
        span_bytes: len,
        limit: Limit::Bytes(len),
        seed: 0,
    }
}

fn rand(span_bytes: u64, read_pct: u8, qd: u32, limit: Limit, seed: u64) -> GenSpec {
    GenSpec {
        pattern: Pattern::Random,
        mix: Mix::ReadWrite { read_pct },
        block_bytes: RAND_BLOCK_BYTES,
        qd,
        span_start_bytes: 0,
        span_bytes,
        limit,
        seed,
    }
}

fn bytes_of(span_bytes: u64, writes: f64) -> Limit {
    Limit::Bytes(((span_bytes as f64 * writes) as u64 / RAND_BLOCK_BYTES).max(1) * RAND_BLOCK_BYTES)
}

fn step(name: &str, title: &str, work: StepWork) -> Step {
    Step {
        name: name.into(),
        title: title.into(),
        work,
    }
}

impl Plan {
    /// The plan for a drive of `capacity_bytes`.
    pub fn new(capacity_bytes: u64, shape: &PlanShape) -> Plan {
        let full = span(capacity_bytes, 1.0);
        let lead = span(capacity_bytes, 1.0 / 32.0);
        let head = span(capacity_bytes, 0.125);
        let half = span(capacity_bytes, 0.5);
        let quarter = span(capacity_bytes, 0.25);
        let n = Limit::Ios(shape.rand_ios);
        let rt = shape.rand_time_limit_ns;
        let wt = shape.warm_time_limit_ns;
        let st = shape.steady_time_limit_ns;
        let mut steps = vec![step("purge", "secure erase (purge)", StepWork::Purge)];
        // Random writes on the fresh drive: the controller, its buffer and the
        // programs, with no garbage collection in the way.
        for (i, qd) in [1u32, 4, 32].into_iter().enumerate() {
            steps.push(io(
                &format!("write-qd{qd}"),
                &format!("4 KB random writes at QD{qd}, fresh drive"),
                rand(full, 0, qd, n, 21 + i as u64),
                rt,
            ));
        }
        steps.extend([
            step("purge-fresh", "secure erase (purge)", StepWork::Purge),
            // The fill in pieces: how long a write buffer or SLC cache holds the
            // drive's first speed, and what that speed is, show in the first two.
            io(
                "seq-write-lead",
                "128 KB sequential writes, first 1/32 of a fresh drive",
                seq(0, lead, false),
                None,
            ),
            io(
                "seq-write-head",
                "128 KB sequential writes, the rest of the first eighth",
                seq(lead, head - lead, false),
                None,
            ),
            io(
                "seq-write",
                "128 KB sequential writes, the rest of the drive",
                seq(head, full - head, false),
                None,
            ),
            // Reads are measured on a quiet drive: what the write buffer and an SLC
            // cache do after a fill is the write path's, not the reads'.
            step(
                "settle-writes",
                "idle after the fill",
                StepWork::Idle {
                    duration_ns: shape.settle_ns,
                },
            ),
            io(
                "seq-read",
                "128 KB sequential reads of the drive",
                seq(0, full, true),
                None,
            ),
        ]);
        for (i, qd) in [1u32, 4, 32].into_iter().enumerate() {
            steps.push(io(
                &format!("read-qd{qd}"),
                &format!("4 KB random reads at QD{qd}"),
                rand(full, 100, qd, n, 11 + i as u64),
                rt,
            ));
        }
        // Large random reads: their latency over the 4 KB reads' is the transfer of
        // the rest of the data over the NAND channels and the host link, which 4 KB
        // reads hide in the dies' read time.
        let mut big = rand(full, 100, 1, n, 14);
        big.block_bytes = SEQ_BLOCK_BYTES;
        steps.push(io("read-128k-qd1", "128 KB random reads at QD1", big, rt));
        steps.extend([
            io(
                "mixed",
                "4 KB random 70% reads at QD4 on the full drive, writes running",
                rand(full, 70, 4, n, 31),
                rt,
            ),
            io(
                "warm-full",
                "4 KB random writes at QD32 across the drive until steady state",
                rand(full, 0, 32, bytes_of(full, shape.warm_span_writes), 41),
                wt,
            ),
            io(
                "steady-full",
                "4 KB random writes at QD32 across the drive, steady state",
                rand(full, 0, 32, bytes_of(full, shape.steady_span_writes), 42),
                st,
            ),
            io(
                "mixed-steady",
                "4 KB random 70% reads at QD4 in steady state, garbage collection running",
                rand(full, 70, 4, n, 32),
                rt,
            ),
            io(
                "trim",
                "one TRIM pass over the drive",
                GenSpec::trim_span(0, full, (full / 64).clamp(1 << 20, 1 << 30) / 4096 * 4096),
                None,
            ),
            step(
                "settle",
                "idle after the TRIM pass",
                StepWork::Idle {
                    duration_ns: shape.settle_ns,
                },
            ),
            io(
                "trim-recovery",
                "128 KB sequential writes after TRIM, first quarter",
                seq(0, quarter, false),
                None,
            ),
            step("purge-half", "secure erase (purge)", StepWork::Purge),
            io(
                "fill-half",
                "128 KB sequential writes, first half of the drive",
                seq(0, half, false),
                None,
            ),
            io(
                "warm-half",
                "4 KB random writes at QD32 across half the drive until steady state",
                rand(half, 0, 32, bytes_of(half, shape.warm_span_writes), 51),
                wt,
            ),
            io(
                "steady-half",
                "4 KB random writes at QD32 across half the drive, steady state",
                rand(half, 0, 32, bytes_of(half, shape.steady_span_writes), 52),
                st,
            ),
        ]);
        Plan {
            capacity_bytes,
            steps,
        }
    }

    /// This plan on a drive of `capacity_bytes`, each I/O phase as long as the
    /// measured drive ran it (`done`: I/Os and bytes each phase completed, by name):
    /// I/O counts kept, byte counts scaled with the capacity.
    pub fn scaled_to(&self, capacity_bytes: u64, done: &[PhaseAmount]) -> Plan {
        let ratio = capacity_bytes as f64 / self.capacity_bytes as f64;
        let scale = |b: u64, block: u64| ((b as f64 * ratio) as u64 / block).max(1) * block;
        let steps = self
            .steps
            .iter()
            .map(|s| {
                let work = match &s.work {
                    StepWork::Io { spec, .. } => {
                        let mut spec = spec.clone();
                        spec.span_start_bytes = scale(spec.span_start_bytes, SEQ_BLOCK_BYTES)
                            * u64::from(spec.span_start_bytes > 0);
                        spec.span_bytes = scale(spec.span_bytes, SEQ_BLOCK_BYTES);
                        let amount = done.iter().find(|a| a.name == s.name);
                        spec.limit = match (spec.limit, amount) {
                            (Limit::Ios(n), a) => Limit::Ios(a.map_or(n, |a| a.ios.max(1))),
                            (Limit::Bytes(b), a) => Limit::Bytes(scale(
                                a.map_or(b, |a| a.bytes.max(1)),
                                RAND_BLOCK_BYTES,
                            )),
                            (l, _) => l,
                        };
                        if let Mix::Trim = spec.mix {
                            spec.block_bytes =
                                (spec.span_bytes / 64).clamp(1 << 20, 1 << 30) / 4096 * 4096;
                            spec.limit = Limit::Bytes(spec.span_bytes);
                        }
                        StepWork::Io {
                            spec,
                            time_limit_ns: None,
                        }
                    }
                    w => w.clone(),
                };
                Step {
                    name: s.name.clone(),
                    title: s.title.clone(),
                    work,
                }
            })
            .collect();
        Plan {
            capacity_bytes,
            steps,
        }
    }
}

pub use storbench_results::twin::PhaseAmount;
