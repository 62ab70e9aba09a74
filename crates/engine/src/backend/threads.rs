//! Portable backend: a fixed pool of worker threads doing pread/pwrite/fdatasync/
//! discard, chosen when io_uring is unavailable. Also used by the io_uring backend as
//! its TRIM helper on block devices (one thread), so a BLKDISCARD never stalls the loop.
//!
//! Bounds: the job queue holds at most the target's `max_in_flight` jobs (the engine
//! never has more in flight); the completion queue likewise.

use super::{do_sync, io_err, Backend, BufferPool, EnterWork, TrimMode, Wait};
use crate::target::{IoRequest, TargetError};
use std::os::fd::RawFd;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// Largest worker pool.
pub const MAX_THREADS: usize = 64;

struct Job {
    req: IoRequest,
    buf: SendPtr,
}

#[derive(Clone, Copy)]
struct SendPtr(*mut u8);
// SAFETY: the pointer is a slot buffer of the target's pool, used only by the one
// worker doing that slot's I/O until its completion is reported back.
unsafe impl Send for SendPtr {}

pub struct Threads {
    jobs: Option<Sender<Job>>,
    done: Receiver<(u32, Result<u64, i32>)>,
    /// A completion taken by `enter` and not yet handed out by `harvest`.
    stash: Option<(u32, Result<u64, i32>)>,
    workers: Vec<JoinHandle<()>>,
    in_flight: usize,
}

impl Threads {
    pub fn new(fd: RawFd, threads: usize, trim: TrimMode) -> Result<Threads, TargetError> {
        let threads = threads.clamp(1, MAX_THREADS);
        let (jtx, jrx) = mpsc::channel::<Job>();
        let (dtx, drx) = mpsc::channel();
        let jrx = Arc::new(Mutex::new(jrx));
        let mut workers = Vec::with_capacity(threads);
        for i in 0..threads {
            let jrx = Arc::clone(&jrx);
            let dtx = dtx.clone();
            let h = std::thread::Builder::new()
                .name(format!("storbench-io-{i}"))
                .spawn(move || loop {
                    let job = {
                        let guard = jrx.lock().expect("job queue lock poisoned");
                        guard.recv()
                    };
                    let Ok(job) = job else { return };
                    // SAFETY: the slot buffer is ours until we report completion, and
                    // it holds at least len bytes (checked by the engine).
                    let r = unsafe { do_sync(fd, &job.req, job.buf.0, trim) };
                    if dtx.send((job.req.slot, r)).is_err() {
                        return;
                    }
                })
                .map_err(|e| io_err("spawning an I/O worker thread", e))?;
            workers.push(h);
        }
        Ok(Threads {
            jobs: Some(jtx),
            done: drx,
            stash: None,
            workers,
            in_flight: 0,
        })
    }

    pub fn threads(&self) -> usize {
        self.workers.len()
    }
}

impl Backend for Threads {
    fn submit(&mut self, reqs: &[IoRequest], pool: &BufferPool) -> Result<(), TargetError> {
        let tx = self.jobs.as_ref().expect("backend shut down");
        for r in reqs {
            let buf = SendPtr(pool.slot_ptr(r.slot));
            tx.send(Job { req: *r, buf })
                .map_err(|_| TargetError::Invalid("I/O worker threads exited".into()))?;
            self.in_flight += 1;
        }
        Ok(())
    }

    fn harvest(&mut self, out: &mut Vec<(u32, Result<u64, i32>)>) -> Result<(), TargetError> {
        if let Some(c) = self.stash.take() {
            out.push(c);
            self.in_flight -= 1;
        }
        loop {
            match self.done.try_recv() {
                Ok(c) => {
                    out.push(c);
                    self.in_flight -= 1;
                }
                Err(TryRecvError::Empty) => return Ok(()),
                Err(TryRecvError::Disconnected) => {
                    return Err(TargetError::Invalid("I/O worker threads exited".into()))
                }
            }
        }
    }

    fn enter_work(&mut self) -> EnterWork {
        // Jobs reach the workers when submitted and completions arrive in the channel:
        // `enter` only waits.
        EnterWork {
            submit: false,
            reap: false,
        }
    }

    fn enter(&mut self, wait: Wait) -> Result<(), TargetError> {
        // Jobs reach the workers when submitted; only waiting is left to do here.
        let Wait::For { timeout_ns, .. } = wait else {
            return Ok(());
        };
        if self.stash.is_some() {
            return Ok(());
        }
        let r = match timeout_ns {
            Some(t) => self.done.recv_timeout(Duration::from_nanos(t)),
            None => self.done.recv().map_err(|_| RecvTimeoutError::Disconnected),
        };
        match r {
            Ok(c) => {
                self.stash = Some(c);
                Ok(())
            }
            Err(RecvTimeoutError::Timeout) => Ok(()),
            Err(RecvTimeoutError::Disconnected) => {
                Err(TargetError::Invalid("I/O worker threads exited".into()))
            }
        }
    }

    fn in_flight(&self) -> usize {
        self.in_flight
    }

    fn name(&self) -> &'static str {
        "threads"
    }

    fn details(&self) -> Vec<(String, String)> {
        vec![("threads".into(), self.workers.len().to_string())]
    }
}

impl Drop for Threads {
    fn drop(&mut self) {
        // Closing the job queue ends the workers once they finish what they hold, so
        // no worker touches a buffer after the pool is freed.
        self.jobs.take();
        for h in self.workers.drain(..) {
            let _ = h.join();
        }
    }
}
