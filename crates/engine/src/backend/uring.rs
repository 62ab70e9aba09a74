//! io_uring backend: registered (fixed) buffers with READ_FIXED/WRITE_FIXED, a
//! registered file, batched submission and reaping (the SQEs of a batch enter the
//! kernel with the next [`Backend::enter`], which also waits: one `io_uring_enter` per
//! engine step), and the setup flags that lower per-I/O cost where the kernel has them
//! (SINGLE_ISSUER, DEFER_TASKRUN, COOP_TASKRUN), falling back step by step when it
//! refuses them.
//!
//! The ring's own fd is registered with the driving thread (IORING_REGISTER_RING_FDS,
//! SINGLE_ISSUER rings only, which one thread drives anyway), so each enter skips the
//! kernel's fd lookup (`fget`/`fput`: about 1% of the CPU time of a 4 KB random-read
//! run).
//!
//! TRIM on a block device goes to a one-thread helper (BLKDISCARD is synchronous); on
//! a file it is an io_uring fallocate(PUNCH_HOLE). Flush is an io_uring fdatasync.

use super::threads::Threads;
use super::{io_err, Backend, BufferPool, EnterWork, TrimMode, Wait};
use crate::target::{IoRequest, TargetError};
use io_uring::{opcode, squeue, types, EnterFlags, IoUring};
use std::os::fd::{AsRawFd, RawFd};
use storbench_trace::Op;

/// While a TRIM is on the helper thread, ring waits time out this often to look at it.
const HELPER_POLL_NS: u64 = 100_000;

/// How long a wait polls for a completion before it sleeps, when the I/O runs on
/// io_uring's io-wq workers ([`Uring::set_poll_before_sleep`]). A zram read takes the
/// one worker about 3 us, so with I/Os queued a completion comes well within this.
pub const IO_WQ_POLL_NS: u64 = 10_000;

pub struct Uring {
    ring: IoUring,
    fixed_buffers: bool,
    fixed_file: bool,
    fd: RawFd,
    enabled: bool,
    /// DEFER_TASKRUN or COOP_TASKRUN: reaping needs an enter into the kernel. Both are
    /// set up with TASKRUN_FLAG, so the SQ ring's IORING_SQ_TASKRUN flag says when
    /// completions are waiting for one (a polling caller skips the enter otherwise).
    enter_to_reap: bool,
    flags: &'static str,
    trim: TrimMode,
    /// BLKDISCARD helper (block devices only), created on the first TRIM.
    helper: Option<Threads>,
    /// I/Os pushed to the ring (handed to the kernel or still queued) and not yet
    /// harvested. Bounded by the ring size.
    in_ring: usize,
    /// SINGLE_ISSUER: register the ring fd with the driving thread on the first enter.
    register_ring_fd: bool,
    /// Index of the ring fd registered with the driving thread.
    ring_index: Option<u32>,
    /// Reads and writes carry IOSQE_ASYNC (see [`Uring::set_sqe_async`]).
    sqe_async: bool,
    /// Before a wait would sleep, poll this long for a completion (see
    /// [`Uring::set_poll_before_sleep`]); 0: sleep at once.
    poll_before_sleep_ns: u64,
    /// Waits that found a completion by polling and did not sleep.
    polls_won: u64,
}

/// `IORING_REGISTER_RING_FDS` and `IORING_UNREGISTER_RING_FDS` (Linux 5.18).
const REGISTER_RING_FDS: libc::c_uint = 20;
const UNREGISTER_RING_FDS: libc::c_uint = 21;
/// `IORING_ENTER_REGISTERED_RING`: the fd argument of io_uring_enter is an index.
const ENTER_REGISTERED_RING: u32 = 1 << 4;

/// `struct io_uring_rsrc_update`.
#[repr(C)]
struct RsrcUpdate {
    offset: u32,
    resv: u32,
    data: u64,
}

/// `struct __kernel_timespec`.
#[repr(C)]
struct KernelTimespec {
    tv_sec: i64,
    tv_nsec: i64,
}

/// `struct io_uring_getevents_arg` (EXT_ARG).
#[repr(C)]
struct GeteventsArg {
    sigmask: u64,
    sigmask_sz: u32,
    min_wait_usec: u32,
    ts: u64,
}

/// Setup flag sets tried in order; the first the kernel accepts wins.
const SETUPS: [(&str, bool, bool, bool, bool); 6] = [
    // (name, single_issuer, defer_taskrun, coop_taskrun, r_disabled)
    ("SINGLE_ISSUER|DEFER_TASKRUN", true, true, false, true),
    ("SINGLE_ISSUER|COOP_TASKRUN", true, false, true, true),
    ("COOP_TASKRUN", false, false, true, false),
    ("SINGLE_ISSUER|DEFER_TASKRUN", true, true, false, false),
    ("SINGLE_ISSUER", true, false, false, false),
    ("none", false, false, false, false),
];

impl Uring {
    /// A ring for `entries` I/Os in flight on `fd`, with `pool` registered.
    pub fn new(
        fd: RawFd,
        entries: u32,
        pool: &BufferPool,
        trim: TrimMode,
    ) -> Result<Uring, TargetError> {
        let entries = entries.max(1).next_power_of_two();
        let mut last_err = None;
        let mut chosen = None;
        for (name, si, dt, coop, rdis) in SETUPS {
            let mut b = IoUring::builder();
            b.setup_cqsize(entries * 2);
            if si {
                b.setup_single_issuer();
            }
            if dt {
                b.setup_defer_taskrun();
                // IORING_SQ_TASKRUN tells when completions wait for an enter (5.19;
                // every kernel with DEFER_TASKRUN, 6.1, has it).
                b.setup_taskrun_flag();
            }
            if coop {
                b.setup_coop_taskrun();
                b.setup_taskrun_flag();
            }
            if rdis {
                b.setup_r_disabled();
            }
            match b.build(entries) {
                Ok(r) => {
                    chosen = Some((r, name, dt || coop, rdis, si));
                    break;
                }
                Err(e) => last_err = Some(e),
            }
        }
        let Some((ring, flags, enter_to_reap, r_disabled, single_issuer)) = chosen else {
            return Err(io_err(
                "io_uring_setup",
                last_err.unwrap_or_else(|| std::io::Error::other("no setup accepted")),
            ));
        };
        let iov = pool.iovecs();
        // SAFETY: the iovecs point into `pool`, which the owning target keeps alive
        // (and drops after the ring, see RealTarget's field order).
        let fixed_buffers = unsafe { ring.submitter().register_buffers(&iov) }.is_ok();
        let fixed_file = ring.submitter().register_files(&[fd]).is_ok();
        Ok(Uring {
            ring,
            fixed_buffers,
            fixed_file,
            fd,
            enabled: !r_disabled,
            enter_to_reap,
            flags,
            trim,
            helper: None,
            in_ring: 0,
            register_ring_fd: single_issuer,
            ring_index: None,
            sqe_async: false,
            poll_before_sleep_ns: 0,
            polls_won: 0,
        })
    }

    /// Mark every read and write IOSQE_ASYNC: io_uring queues it to its io-wq workers
    /// at once instead of first trying it inline. For a device that does not take
    /// non-blocking I/O ([`crate::target::blockdev::Nowait::Unsupported`], zram): each
    /// I/O goes to io-wq anyway, and without the flag io-wq runs them on one worker
    /// (it adds a worker only when one blocks, and a zram read never blocks), while
    /// IOSQE_ASYNC work may start a new worker whenever none is free (the kernel's
    /// IO_WQ_WORK_CONCURRENT), up to io-wq's cap of 4 per CPU: 8 iou-wrk threads at
    /// QD32 on zram on 2 CPUs, against 1 without. Figures in [`super::probe_block_device`].
    pub fn set_sqe_async(&mut self, on: bool) {
        self.sqe_async = on;
    }

    /// Before a wait for completions would sleep, hand the queued I/O to the kernel and
    /// poll (no system call) up to `ns` for a completion. For a device whose I/O runs
    /// on io-wq workers (zram: [`crate::target::blockdev::Nowait::Unsupported`]): there
    /// the worker that does the reads also wakes the sleeping thread, one wake-up per
    /// completion at a low queue depth of completions, and the woken thread is often
    /// placed on the worker's CPU, so the two take turns on one CPU while the other
    /// idles. Polling keeps the driving thread awake on its own CPU; the worker posts
    /// completions without waking anyone. Not for devices with a kernel thread of
    /// their own (the loop device's kworker): there the poll takes the CPU that thread
    /// needs (see `RealTarget::advance`). Figures in [`super::probe_block_device`].
    pub fn set_poll_before_sleep(&mut self, ns: u64) {
        self.poll_before_sleep_ns = ns;
    }

    /// Completions posted, or held back as task work for the next enter: a wait for
    /// one would not sleep.
    fn completion_ready(&mut self) -> bool {
        !self.ring.completion().is_empty() || self.ring.submission().taskrun()
    }

    /// Poll up to `limit_ns` for a completion (counted in `polls_won` when one came). I/Os queued in the SQ
    /// stay there while most of what is in the ring is already in the kernel, so the
    /// enter that reaps also submits them (one system call per step, as without the
    /// poll); with fewer in the kernel than queued, they are handed over first.
    fn poll_for_completion(&mut self, limit_ns: u64) -> Result<(), TargetError> {
        let queued = self.ring.submission().len();
        if queued > 0 && self.in_ring - queued < queued {
            self.enter_ring(0, None)?;
        }
        let start = std::time::Instant::now();
        loop {
            if self.completion_ready() {
                self.polls_won += 1;
                return Ok(());
            }
            if start.elapsed().as_nanos() >= u128::from(limit_ns) {
                return Ok(());
            }
            std::hint::spin_loop();
        }
    }

    /// Enable a ring set up disabled: the thread that does this becomes the single
    /// issuer, so the target may be opened on one thread and driven on another.
    fn ensure_enabled(&mut self) -> Result<(), TargetError> {
        if !self.enabled {
            self.ring
                .submitter()
                .register_enable_rings()
                .map_err(|e| io_err("io_uring enable rings", e))?;
            self.enabled = true;
        }
        if self.register_ring_fd {
            // Once, on the thread that drives the ring (the registration is per thread).
            self.register_ring_fd = false;
            let fd = self.ring.as_raw_fd();
            let mut up = RsrcUpdate {
                offset: u32::MAX, // any free slot
                resv: 0,
                data: fd as u64,
            };
            // SAFETY: io_uring_register(RING_FDS) reads and writes the one
            // io_uring_rsrc_update `up` points to, alive for the call.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_io_uring_register,
                    fd,
                    REGISTER_RING_FDS,
                    &mut up as *mut RsrcUpdate,
                    1 as libc::c_uint,
                )
            };
            // Refused (a kernel before 5.18): enter with the plain fd.
            if r == 1 {
                self.ring_index = Some(up.offset);
            }
        }
        Ok(())
    }

    fn sqe(&self, r: &IoRequest, pool: &BufferPool) -> squeue::Entry {
        // Trim lengths can exceed u32; only reads and writes use `len`.
        let len = u32::try_from(r.len_bytes.min(u64::from(u32::MAX))).expect("clamped");
        let ptr = pool.slot_ptr(r.slot);
        let (fixed, fd) = (self.fixed_file, self.fd);
        // The same opcode with a registered file or a plain fd (different types).
        macro_rules! on_fd {
            ($f:ident => $e:expr) => {
                if fixed {
                    let $f = types::Fixed(0);
                    $e
                } else {
                    let $f = types::Fd(fd);
                    $e
                }
            };
        }
        let off = r.offset_bytes;
        let e = match (r.op, self.fixed_buffers) {
            (Op::Read, true) => {
                on_fd!(f => opcode::ReadFixed::new(f, ptr, len, r.slot as u16).offset(off).build())
            }
            (Op::Read, false) => on_fd!(f => opcode::Read::new(f, ptr, len).offset(off).build()),
            (Op::Write, true) => {
                on_fd!(f => opcode::WriteFixed::new(f, ptr, len, r.slot as u16).offset(off).build())
            }
            (Op::Write, false) => on_fd!(f => opcode::Write::new(f, ptr, len).offset(off).build()),
            (Op::Flush, _) => {
                on_fd!(f => opcode::Fsync::new(f).flags(types::FsyncFlags::DATASYNC).build())
            }
            (Op::Trim, _) => {
                assert_eq!(self.trim, TrimMode::PunchHole);
                on_fd!(f => opcode::Fallocate::new(f, r.len_bytes)
                    .offset(off)
                    .mode(libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE)
                    .build())
            }
        };
        let e = if self.sqe_async && r.op.is_data() {
            e.flags(squeue::Flags::ASYNC)
        } else {
            e
        };
        e.user_data(u64::from(r.slot))
    }

    /// One `io_uring_enter`: submit every queued SQE and, when `want > 0`, wait until
    /// `want` completions are posted or `timeout_ns` passes. GETEVENTS also runs the
    /// deferred completion work (DEFER_TASKRUN, COOP_TASKRUN), so it is set whenever
    /// something is in the ring.
    fn enter_ring(&mut self, want: usize, timeout_ns: Option<u64>) -> Result<(), TargetError> {
        self.ensure_enabled()?;
        let to_submit = self.ring.submission().len();
        let mut flags = EnterFlags::empty();
        if want > 0 || (self.enter_to_reap && self.in_ring > 0) {
            flags |= EnterFlags::GETEVENTS;
        }
        if to_submit == 0 && flags.is_empty() {
            return Ok(());
        }
        let want = u32::try_from(want).expect("want is bounded by the ring size");
        let to_submit = u32::try_from(to_submit).expect("SQ length fits u32");
        let ts;
        let arg;
        let (argp, argsz): (*const libc::c_void, usize) = match timeout_ns {
            Some(t) if want > 0 => {
                ts = KernelTimespec {
                    tv_sec: (t / 1_000_000_000) as i64,
                    tv_nsec: (t % 1_000_000_000) as i64,
                };
                arg = GeteventsArg {
                    sigmask: 0,
                    sigmask_sz: 0,
                    min_wait_usec: 0,
                    ts: &ts as *const KernelTimespec as u64,
                };
                flags |= EnterFlags::EXT_ARG;
                (
                    (&arg as *const GeteventsArg).cast(),
                    std::mem::size_of::<GeteventsArg>(),
                )
            }
            // No signal mask.
            _ => (std::ptr::null(), std::mem::size_of::<libc::sigset_t>()),
        };
        let (fd, registered) = match self.ring_index {
            Some(i) => (i as libc::c_int, ENTER_REGISTERED_RING),
            None => (self.ring.as_raw_fd(), 0),
        };
        // SAFETY: with EXT_ARG, `argp` is the io_uring_getevents_arg the kernel expects
        // (its timespec and it alive for the call), else null; the SQEs being
        // submitted reference slot buffers and the registered file, alive until their
        // completions are harvested.
        let r = unsafe {
            libc::syscall(
                libc::SYS_io_uring_enter,
                fd,
                to_submit,
                want,
                flags.bits() | registered,
                argp,
                argsz,
            )
        };
        let res = if r < 0 {
            Err(std::io::Error::last_os_error())
        } else {
            Ok(r)
        };
        match res {
            Ok(_) => Ok(()),
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ETIME) | Some(libc::EINTR) | Some(libc::EBUSY) | Some(libc::EAGAIN)
                ) =>
            {
                // Timed out, interrupted, or the CQ needs reaping first: the caller
                // harvests and enters again; unsubmitted SQEs stay queued.
                Ok(())
            }
            Err(e) => Err(io_err("io_uring_enter", e)),
        }
    }
}

impl Backend for Uring {
    fn submit(&mut self, reqs: &[IoRequest], pool: &BufferPool) -> Result<(), TargetError> {
        for r in reqs {
            if r.op == Op::Trim && self.trim == TrimMode::BlkDiscard {
                if self.helper.is_none() {
                    self.helper = Some(Threads::new(self.fd, 1, TrimMode::BlkDiscard)?);
                }
                let h = self.helper.as_mut().expect("just created");
                h.submit(std::slice::from_ref(r), pool)?;
                continue;
            }
            let e = self.sqe(r, pool);
            loop {
                // SAFETY: the SQE references a slot buffer and the registered file,
                // both alive until this slot's completion is harvested.
                let pushed = unsafe { self.ring.submission().push(&e) }.is_ok();
                if pushed {
                    break;
                }
                // SQ full (a batch larger than the ring): hand it to the kernel.
                self.enter_ring(0, None)?;
            }
            self.in_ring += 1;
        }
        Ok(())
    }

    fn enter(&mut self, wait: Wait) -> Result<(), TargetError> {
        let helper_busy = self.helper.as_ref().is_some_and(|h| h.in_flight() > 0);
        match wait {
            Wait::No => {
                if let Some(h) = self.helper.as_mut() {
                    h.enter(Wait::No)?;
                }
                self.enter_ring(0, None)
            }
            Wait::For { nr, timeout_ns } => {
                if self.in_ring == 0 {
                    if helper_busy {
                        let h = self.helper.as_mut().expect("helper is busy");
                        return h.enter(wait);
                    }
                    if let Some(t) = timeout_ns {
                        std::thread::sleep(std::time::Duration::from_nanos(t));
                    }
                    return Ok(());
                }
                // While a TRIM is on the helper thread, wake up often to look at it.
                let timeout = if helper_busy {
                    Some(timeout_ns.map_or(HELPER_POLL_NS, |t| t.min(HELPER_POLL_NS)))
                } else {
                    timeout_ns
                };
                if self.poll_before_sleep_ns > 0 && nr <= 1 && !self.completion_ready() {
                    let limit = timeout.map_or(self.poll_before_sleep_ns, |t| {
                        t.min(self.poll_before_sleep_ns)
                    });
                    self.poll_for_completion(limit)?;
                }
                self.enter_ring(nr.clamp(1, self.in_ring), timeout)
            }
        }
    }

    fn harvest(&mut self, out: &mut Vec<(u32, Result<u64, i32>)>) -> Result<(), TargetError> {
        let mut cq = self.ring.completion();
        for cqe in &mut cq {
            let slot = u32::try_from(cqe.user_data()).expect("user_data is a slot");
            let r = cqe.result();
            out.push((slot, if r < 0 { Err(-r) } else { Ok(r as u64) }));
            assert!(self.in_ring > 0, "completion with nothing in the ring");
            self.in_ring -= 1;
        }
        drop(cq);
        if let Some(h) = self.helper.as_mut() {
            h.harvest(out)?;
        }
        Ok(())
    }

    fn in_flight(&self) -> usize {
        self.in_ring + self.helper.as_ref().map_or(0, |h| h.in_flight())
    }

    fn enter_work(&mut self) -> EnterWork {
        let sq = self.ring.submission();
        let submit = !sq.is_empty();
        // Without DEFER_TASKRUN or COOP_TASKRUN, completions are posted by task work
        // that runs on the way back to user mode: no enter needed to see them. The TRIM
        // helper's completions arrive on its channel.
        let reap = self.in_ring > 0 && self.enter_to_reap && (sq.taskrun() || sq.cq_overflow());
        EnterWork { submit, reap }
    }

    fn name(&self) -> &'static str {
        "io_uring"
    }

    fn details(&self) -> Vec<(String, String)> {
        vec![
            ("io_uring_setup".into(), self.flags.to_string()),
            (
                "io_uring_fixed_buffers".into(),
                self.fixed_buffers.to_string(),
            ),
            ("io_uring_fixed_file".into(), self.fixed_file.to_string()),
            ("io_uring_sqe_async".into(), self.sqe_async.to_string()),
            (
                "io_uring_poll_before_sleep_us".into(),
                (self.poll_before_sleep_ns / 1000).to_string(),
            ),
        ]
    }
}

impl Drop for Uring {
    fn drop(&mut self) {
        // The ring holds references to the registered file and buffers, released
        // asynchronously after the ring fd closes; that would keep a block device's
        // O_EXCL claim (EBUSY for the next opener) for a moment. Unregistering now
        // drops them synchronously, also on a ring never enabled (a target opened,
        // then the run refused before its first I/O). Errors are moot at this point.
        let _ = self.ring.submitter().unregister_files();
        let _ = self.ring.submitter().unregister_buffers();
        if let Some(i) = self.ring_index {
            // The registration holds a reference to the ring until the driving thread
            // exits. Dropped on another thread this fails, and the ring (its files
            // already unregistered above) is freed when that thread exits.
            let up = RsrcUpdate {
                offset: i,
                resv: 0,
                data: 0,
            };
            // SAFETY: io_uring_register(UNREGISTER_RING_FDS) reads the one
            // io_uring_rsrc_update `up` points to, alive for the call.
            unsafe {
                libc::syscall(
                    libc::SYS_io_uring_register,
                    self.ring.as_raw_fd(),
                    UNREGISTER_RING_FDS,
                    &up as *const RsrcUpdate,
                    1 as libc::c_uint,
                )
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::DataKind;
    use std::os::fd::AsRawFd;
    use std::time::{Duration, Instant};

    /// The spin in `RealTarget::advance` skips the system call when `enter_work` says
    /// nothing waits: that must be true of this kernel's DEFER_TASKRUN ring, where a
    /// completion stays invisible to `harvest` until an enter runs its task work.
    #[test]
    fn taskrun_flag_says_when_completions_wait_for_an_enter() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![7u8; 4096]).unwrap();
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        let pool = BufferPool::new(1, 4096);
        let mut u = match Uring::new(file.as_raw_fd(), 1, &pool, TrimMode::PunchHole) {
            Ok(u) => u,
            Err(e) => {
                eprintln!("skipped: io_uring unavailable: {e}");
                return;
            }
        };
        if !u.flags.contains("DEFER_TASKRUN") {
            eprintln!("skipped: the kernel refused DEFER_TASKRUN ({})", u.flags);
            return;
        }
        let none = EnterWork {
            submit: false,
            reap: false,
        };
        assert_eq!(u.enter_work(), none);
        // A flush always completes on an io-wq worker, so its completion is task work
        // for this thread.
        let flush = IoRequest {
            slot: 0,
            op: Op::Flush,
            offset_bytes: 0,
            len_bytes: 0,
            data: DataKind::Random,
        };
        u.submit(&[flush], &pool).unwrap();
        assert!(u.enter_work().submit);
        u.enter(Wait::No).unwrap();
        assert!(!u.enter_work().submit);
        let t0 = Instant::now();
        while !u.enter_work().reap {
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "the flush never signalled a pending completion"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        let mut out = Vec::new();
        u.harvest(&mut out).unwrap();
        assert!(out.is_empty(), "posted before any enter: {out:?}");
        u.enter(Wait::No).unwrap();
        u.harvest(&mut out).unwrap();
        assert_eq!(out, vec![(0, Ok(0))]);
        assert_eq!(u.enter_work(), none);
        assert_eq!(u.in_flight(), 0);
    }

    /// Issue 22: on zram every read runs on an io-wq worker, and a wait that slept for
    /// each completion made that worker wake the driving thread each time (0.80x fio's
    /// IOPS). With polling on, a wait finds an io-wq completion without sleeping, and
    /// every I/O still completes exactly once.
    #[test]
    fn zram_wait_polls_for_io_wq_completions_before_it_sleeps() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![7u8; 4096]).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let pool = BufferPool::new(4, 4096);
        let mut u = match Uring::new(file.as_raw_fd(), 4, &pool, TrimMode::PunchHole) {
            Ok(u) => u,
            Err(e) => {
                eprintln!("skipped: io_uring unavailable: {e}");
                return;
            }
        };
        // A whole second: the flush's worker finishes long before, even on a busy host.
        u.set_poll_before_sleep(1_000_000_000);
        let flush = |slot| IoRequest {
            slot,
            op: Op::Flush,
            offset_bytes: 0,
            len_bytes: 0,
            data: DataKind::Random,
        };
        let mut out = Vec::new();
        for round in 0..50 {
            // Flushes always run on an io-wq worker, as zram's reads do.
            u.submit(&[flush(0), flush(1)], &pool).unwrap();
            while out.len() < 2 * (round + 1) {
                u.enter(Wait::For {
                    nr: 1,
                    timeout_ns: None,
                })
                .unwrap();
                u.harvest(&mut out).unwrap();
            }
        }
        assert_eq!(out.len(), 100);
        assert!(
            out.iter().all(|&(slot, r)| slot < 2 && r == Ok(0)),
            "{out:?}"
        );
        assert_eq!(u.in_flight(), 0);
        assert!(u.polls_won > 0, "no wait found its completion by polling");
        let details = u.details();
        assert!(details.contains(&("io_uring_poll_before_sleep_us".into(), "1000000".into())));
    }
}
