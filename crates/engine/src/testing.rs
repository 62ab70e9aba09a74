//! Test helpers: a virtual-time target that completes every I/O a fixed delay after
//! its submission, and a source over a vector. Public so other crates' tests (suite,
//! sim) can drive the engine without a device.

use crate::target::{Completion, IoRequest, Target, TargetError, TargetInfo, TargetKind};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use storbench_workload::{NextIo, Source, SourceError};

/// A virtual-time target: each I/O completes `delay_ns` after it was submitted. Its
/// clock moves only inside [`Target::advance`]. It records what it was given, for tests.
pub struct DelayTarget {
    info: TargetInfo,
    now_ns: u64,
    delay_ns: u64,
    max_in_flight: usize,
    /// (completion time, submission sequence, slot): a min-heap, FIFO among equal times.
    pending: BinaryHeap<Reverse<(u64, u64, u32)>>,
    seq: u64,
    /// Every submission: (time, request).
    pub submissions: Vec<(u64, IoRequest)>,
    /// Number of `submit` calls (batches).
    pub submit_calls: u64,
    /// Largest number in flight seen right after a submission.
    pub max_seen_in_flight: usize,
    /// Slot buffers, when created with [`DelayTarget::with_buffers`].
    buffers: Option<Vec<Vec<u8>>>,
    /// The last write's data, per offset (with buffers), to check data content.
    pub written: Vec<Vec<u8>>,
    /// Bytes each in-flight slot moves (its completion's result).
    slot_len: Vec<u64>,
    /// Keep `submissions` (off for long runs: memory stays flat).
    log: bool,
}

impl DelayTarget {
    pub fn new(capacity_bytes: u64, delay_ns: u64, max_in_flight: usize) -> DelayTarget {
        assert!(max_in_flight > 0);
        DelayTarget {
            info: TargetInfo {
                kind: TargetKind::Test,
                name: format!("test:delay={delay_ns}ns"),
                capacity_bytes,
                logical_block_bytes: 512,
                rotational: None,
                discard: true,
                model: None,
                backend: "virtual".into(),
                details: BTreeMap::new(),
            },
            now_ns: 0,
            delay_ns,
            max_in_flight,
            pending: BinaryHeap::new(),
            seq: 0,
            submissions: Vec::new(),
            submit_calls: 0,
            max_seen_in_flight: 0,
            buffers: None,
            written: Vec::new(),
            slot_len: vec![0; max_in_flight],
            log: true,
        }
    }

    /// Keep no log of submissions (long runs, benchmarks): memory stays flat.
    pub fn lean(mut self) -> DelayTarget {
        self.log = false;
        self
    }

    /// Give each slot a buffer of `buffer_bytes`; writes' contents are kept in `written`.
    pub fn with_buffers(mut self, buffer_bytes: usize) -> DelayTarget {
        self.buffers = Some(vec![vec![0u8; buffer_bytes]; self.max_in_flight]);
        self
    }

    /// Start the clock at `now_ns` (a target opened a while ago).
    pub fn with_start(mut self, now_ns: u64) -> DelayTarget {
        self.now_ns = now_ns;
        self
    }

    pub fn in_flight(&self) -> usize {
        self.pending.len()
    }
}

impl Target for DelayTarget {
    fn info(&self) -> &TargetInfo {
        &self.info
    }

    fn now_ns(&self) -> u64 {
        self.now_ns
    }

    fn max_in_flight(&self) -> usize {
        self.max_in_flight
    }

    fn buffer(&mut self, slot: u32) -> Option<&mut [u8]> {
        self.buffers
            .as_mut()
            .map(|b| b[slot as usize].as_mut_slice())
    }

    fn submit(&mut self, reqs: &[IoRequest]) -> Result<(), TargetError> {
        self.submit_calls += 1;
        for r in reqs {
            assert!(
                r.offset_bytes + r.len_bytes <= self.info.capacity_bytes,
                "I/O past the end"
            );
            debug_assert!(
                !self.pending.iter().any(|Reverse((_, _, s))| *s == r.slot),
                "slot {} reused while in flight",
                r.slot
            );
            if r.op == storbench_trace::Op::Write {
                if let Some(b) = &self.buffers {
                    self.written
                        .push(b[r.slot as usize][..r.len_bytes as usize].to_vec());
                }
            }
            self.slot_len[r.slot as usize] = if r.op.is_data() { r.len_bytes } else { 0 };
            self.pending
                .push(Reverse((self.now_ns + self.delay_ns, self.seq, r.slot)));
            self.seq += 1;
            if self.log {
                self.submissions.push((self.now_ns, *r));
            }
        }
        assert!(
            self.pending.len() <= self.max_in_flight,
            "over max_in_flight"
        );
        self.max_seen_in_flight = self.max_seen_in_flight.max(self.pending.len());
        Ok(())
    }

    fn advance(
        &mut self,
        min_complete: usize,
        deadline_ns: Option<u64>,
        out: &mut Vec<Completion>,
    ) -> Result<(), TargetError> {
        let mut n = 0usize;
        if min_complete == 0 && deadline_ns.is_none() {
            while let Some(&Reverse((t, _, slot))) = self.pending.peek() {
                if t > self.now_ns {
                    break;
                }
                self.pending.pop();
                out.push(Completion {
                    slot,
                    complete_ns: t,
                    result: Ok(self.slot_len[slot as usize]),
                });
            }
            return Ok(());
        }
        assert!(
            deadline_ns.is_some() || min_complete <= self.pending.len(),
            "advance would wait forever: {min_complete} wanted, {} in flight",
            self.pending.len()
        );
        loop {
            match self.pending.peek() {
                Some(&Reverse((t, _, slot))) if !matches!(deadline_ns, Some(d) if t > d) => {
                    self.pending.pop();
                    self.now_ns = self.now_ns.max(t);
                    out.push(Completion {
                        slot,
                        complete_ns: t,
                        result: Ok(self.slot_len[slot as usize]),
                    });
                    n += 1;
                    if min_complete > 0 && n >= min_complete {
                        // Deliver everything else completing at this same instant.
                        while let Some(&Reverse((t2, _, s2))) = self.pending.peek() {
                            if t2 > self.now_ns {
                                break;
                            }
                            self.pending.pop();
                            out.push(Completion {
                                slot: s2,
                                complete_ns: t2,
                                result: Ok(self.slot_len[s2 as usize]),
                            });
                        }
                        return Ok(());
                    }
                }
                _ => {
                    if let Some(d) = deadline_ns {
                        self.now_ns = self.now_ns.max(d);
                    }
                    return Ok(());
                }
            }
        }
    }
}

/// A source over a vector of I/Os.
pub struct VecSource {
    ios: std::vec::IntoIter<NextIo>,
    total: u64,
    trace_avg_qd: Option<f64>,
}

impl VecSource {
    pub fn new(ios: Vec<NextIo>) -> VecSource {
        VecSource {
            total: ios.len() as u64,
            ios: ios.into_iter(),
            trace_avg_qd: None,
        }
    }

    pub fn with_trace_avg_qd(mut self, qd: f64) -> VecSource {
        self.trace_avg_qd = Some(qd);
        self
    }
}

impl Source for VecSource {
    fn next_io(&mut self) -> Option<Result<NextIo, SourceError>> {
        self.ios.next().map(Ok)
    }

    fn total_ios(&self) -> Option<u64> {
        Some(self.total)
    }

    fn trace_avg_qd(&self) -> Option<f64> {
        self.trace_avg_qd
    }
}
