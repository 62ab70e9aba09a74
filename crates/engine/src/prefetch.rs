//! [`Prefetch`]: a [`Source`] read ahead on a helper thread, so that producing I/Os
//! never stalls the engine loop.
//!
//! A trace source decodes a Parquet batch of 65,536 rows at a time, which takes a few
//! milliseconds. Done on the engine thread, in `timed` replay at 50,000 IOPS each
//! decode made about 150 I/Os late at once (by up to 3 ms): the p99.9 issue error and
//! a good share of the p99. The helper thread decodes ahead while the engine waits.
//!
//! Bounded: at most [`CHUNKS_AHEAD`] chunks of [`CHUNK_IOS`] I/Os wait in the channel,
//! plus the chunk the engine reads and the one the helper fills.

use std::sync::mpsc::{sync_channel, Receiver};
use std::thread::JoinHandle;
use storbench_workload::{NextIo, Source, SourceError};

/// I/Os per chunk handed from the helper thread to the engine.
pub const CHUNK_IOS: usize = 1024;
/// Chunks the helper may produce ahead of the engine (the channel bound).
pub const CHUNKS_AHEAD: usize = 8;

enum Msg {
    Chunk(Vec<NextIo>),
    Failed(SourceError),
    End { trace_avg_qd: Option<f64> },
}

/// Reads `S` ahead on a helper thread; a [`Source`] giving the same I/Os in the same
/// order, errors included.
pub struct Prefetch {
    rx: Option<Receiver<Msg>>,
    chunk: Vec<NextIo>,
    pos: usize,
    finished: bool,
    total_ios: Option<u64>,
    total_bytes: Option<u64>,
    trace_avg_qd: Option<f64>,
    thread: Option<JoinHandle<()>>,
}

impl Prefetch {
    /// Start reading `source` ahead. Fails only when the thread cannot be spawned.
    pub fn new<S: Source + Send + 'static>(source: S) -> std::io::Result<Prefetch> {
        let total_ios = source.total_ios();
        let total_bytes = source.total_bytes();
        let (tx, rx) = sync_channel::<Msg>(CHUNKS_AHEAD);
        let thread = std::thread::Builder::new()
            .name("storbench-prefetch".into())
            .spawn(move || {
                drop_realtime_policy();
                let mut source = source;
                loop {
                    let mut chunk = Vec::with_capacity(CHUNK_IOS);
                    let mut last = None;
                    while chunk.len() < CHUNK_IOS {
                        match source.next_io() {
                            Some(Ok(io)) => chunk.push(io),
                            Some(Err(e)) => {
                                last = Some(Msg::Failed(e));
                                break;
                            }
                            None => {
                                last = Some(Msg::End {
                                    trace_avg_qd: source.trace_avg_qd(),
                                });
                                break;
                            }
                        }
                    }
                    // A failed send means the engine dropped the Prefetch: stop.
                    if !chunk.is_empty() && tx.send(Msg::Chunk(chunk)).is_err() {
                        return;
                    }
                    if let Some(m) = last {
                        let _ = tx.send(m);
                        return;
                    }
                }
            })?;
        Ok(Prefetch {
            rx: Some(rx),
            chunk: Vec::new(),
            pos: 0,
            finished: false,
            total_ios,
            total_bytes,
            trace_avg_qd: None,
            thread: Some(thread),
        })
    }
}

/// Run the calling (helper) thread at the normal policy. Under `chrt -f` the helper
/// inherits the engine's realtime policy; its decoding beside a spinning engine thread
/// then kept both CPUs of a 2-CPU host busy with realtime work, and the kernel's
/// fair-server throttling stalled the engine for 50 ms at a time. Eight chunks ahead,
/// the helper needs no priority.
fn drop_realtime_policy() {
    // SAFETY: sched_getscheduler/sched_setscheduler on the calling thread (pid 0) with
    // a valid sched_param; they touch no memory of ours beyond `param`.
    unsafe {
        if libc::sched_getscheduler(0) != libc::SCHED_OTHER {
            let param = libc::sched_param { sched_priority: 0 };
            // Failure leaves the inherited policy: only lateness, never wrong results.
            libc::sched_setscheduler(0, libc::SCHED_OTHER, &param);
        }
    }
}

impl Source for Prefetch {
    fn next_io(&mut self) -> Option<Result<NextIo, SourceError>> {
        loop {
            if let Some(io) = self.chunk.get(self.pos) {
                self.pos += 1;
                return Some(Ok(*io));
            }
            if self.finished {
                return None;
            }
            let rx = self.rx.as_ref().expect("receiver lives until drop");
            match rx.recv() {
                Ok(Msg::Chunk(c)) => {
                    assert!(!c.is_empty() && c.len() <= CHUNK_IOS);
                    self.chunk = c;
                    self.pos = 0;
                }
                Ok(Msg::Failed(e)) => {
                    self.finished = true;
                    return Some(Err(e));
                }
                Ok(Msg::End { trace_avg_qd }) => {
                    self.finished = true;
                    self.trace_avg_qd = trace_avg_qd;
                    return None;
                }
                Err(_) => {
                    // The helper hung up without End or Failed: it panicked.
                    self.finished = true;
                    return Some(Err(SourceError::Invalid(
                        "the source's read-ahead thread stopped unexpectedly".into(),
                    )));
                }
            }
        }
    }

    fn total_ios(&self) -> Option<u64> {
        self.total_ios
    }

    fn total_bytes(&self) -> Option<u64> {
        self.total_bytes
    }

    fn trace_avg_qd(&self) -> Option<f64> {
        self.trace_avg_qd
    }
}

impl Drop for Prefetch {
    fn drop(&mut self) {
        // Hang up first so a helper blocked on a full channel returns, then wait for it
        // (it holds the source's file open).
        self.rx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use storbench_trace::Op;

    /// Gives `n` reads at 1 us apart, then `fail_at` (if any) an error, and a known
    /// trace average QD once exhausted.
    struct Counting {
        n: u64,
        next: u64,
        fail_at: Option<u64>,
    }

    impl Source for Counting {
        fn next_io(&mut self) -> Option<Result<NextIo, SourceError>> {
            if Some(self.next) == self.fail_at {
                self.next += 1;
                return Some(Err(SourceError::Invalid("bad row".into())));
            }
            if self.next >= self.n {
                return None;
            }
            let i = self.next;
            self.next += 1;
            Some(Ok(NextIo {
                op: Op::Read,
                offset_bytes: i * 4096,
                len_bytes: 4096,
                at_ns: Some(i * 1000),
                trace_qd: Some((i % 7) as u32 + 1),
            }))
        }
        fn total_ios(&self) -> Option<u64> {
            Some(self.n)
        }
        fn total_bytes(&self) -> Option<u64> {
            Some(self.n.saturating_mul(4096))
        }
        fn trace_avg_qd(&self) -> Option<f64> {
            (self.next >= self.n).then_some(3.5)
        }
    }

    #[test]
    fn same_ios_in_order_across_chunks() {
        let n = (CHUNK_IOS * 3 + 17) as u64;
        let mut p = Prefetch::new(Counting {
            n,
            next: 0,
            fail_at: None,
        })
        .unwrap();
        assert_eq!(p.total_ios(), Some(n));
        assert_eq!(p.total_bytes(), Some(n * 4096));
        assert_eq!(p.trace_avg_qd(), None, "not known before the end");
        let mut expect = Counting {
            n,
            next: 0,
            fail_at: None,
        };
        let mut count = 0;
        while let Some(io) = p.next_io() {
            let want = expect.next_io().unwrap().unwrap();
            assert_eq!(io.unwrap(), want);
            count += 1;
        }
        assert_eq!(count, n);
        assert!(p.next_io().is_none(), "stays exhausted");
        assert_eq!(p.trace_avg_qd(), Some(3.5));
    }

    #[test]
    fn error_arrives_after_the_ios_before_it() {
        let fail_at = (CHUNK_IOS + 5) as u64;
        let mut p = Prefetch::new(Counting {
            n: 10_000,
            next: 0,
            fail_at: Some(fail_at),
        })
        .unwrap();
        for i in 0..fail_at {
            assert_eq!(p.next_io().unwrap().unwrap().offset_bytes, i * 4096);
        }
        assert!(matches!(p.next_io(), Some(Err(SourceError::Invalid(_)))));
        assert!(p.next_io().is_none());
    }

    #[test]
    fn drop_before_the_end_stops_the_helper() {
        // An endless source: the helper blocks on the full channel until dropped.
        let mut p = Prefetch::new(Counting {
            n: u64::MAX,
            next: 0,
            fail_at: None,
        })
        .unwrap();
        assert!(p.next_io().unwrap().is_ok());
        drop(p); // joins the helper; hangs here if it did not stop
    }
}
