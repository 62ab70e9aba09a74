//! I/O backends for real targets: io_uring ([`uring`]) and a portable thread pool
//! doing pread/pwrite ([`threads`]), plus what both share: the aligned buffer pool,
//! the monotonic clock and the low-level operations.

pub mod threads;
pub mod uring;

use crate::target::{IoRequest, TargetError};
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::os::fd::RawFd;
use storbench_trace::Op;

/// Alignment of every slot buffer (O_DIRECT needs the logical block size; 4096 covers
/// every device we meet).
pub const BUFFER_ALIGN: usize = 4096;

/// Default cap of a real target's buffer memory (every slot's buffer together).
pub const DEFAULT_BUFFER_MEMORY_BYTES: u64 = 512 << 20;

/// How many slot buffers a real target gets, and how big, for I/Os of at most
/// `max_io_bytes` with `want_slots` in flight, within a cap on their total memory.
/// When the cap is hit the target gets fewer slots (a lower queue depth; `capped_from`
/// says how many were wanted, for the result's notes); when not even one I/O fits,
/// [`BufferPlan::new`] is an error saying how much is needed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferPlan {
    pub slots: usize,
    pub slot_bytes: usize,
    pub capped_from: Option<usize>,
}

/// An I/O larger than the buffer memory allowed (`--buffer-memory`) can hold.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("an I/O of {io_bytes} bytes needs a {slot_bytes}-byte buffer, more than the {cap_bytes} bytes of buffer memory allowed (--buffer-memory)")]
pub struct BufferTooSmall {
    pub io_bytes: u64,
    pub slot_bytes: u64,
    pub cap_bytes: u64,
}

impl BufferPlan {
    /// One page-sized buffer: a target opened only to learn its size and identity
    /// before the buffers its run needs are allocated.
    pub fn probe() -> BufferPlan {
        BufferPlan {
            slots: 1,
            slot_bytes: BUFFER_ALIGN,
            capped_from: None,
        }
    }

    pub fn new(
        want_slots: usize,
        max_io_bytes: u64,
        cap_bytes: u64,
    ) -> Result<BufferPlan, BufferTooSmall> {
        let slot_bytes = max_io_bytes.max(1).div_ceil(BUFFER_ALIGN as u64) * BUFFER_ALIGN as u64;
        if slot_bytes > cap_bytes {
            return Err(BufferTooSmall {
                io_bytes: max_io_bytes,
                slot_bytes,
                cap_bytes,
            });
        }
        let want = want_slots.clamp(1, 4096);
        let fit = usize::try_from(cap_bytes / slot_bytes).unwrap_or(usize::MAX);
        let slots = want.min(fit).max(1);
        Ok(BufferPlan {
            slots,
            slot_bytes: slot_bytes as usize,
            capped_from: (slots < want).then_some(want),
        })
    }
}

/// One contiguous, page-aligned allocation cut into equal slot buffers. Bounded: its
/// size is fixed at creation (`slots * slot_bytes`).
pub struct BufferPool {
    ptr: *mut u8,
    layout: Layout,
    slots: usize,
    slot_bytes: usize,
}

// SAFETY: the pool is plain memory owned by one target; the target hands a slot's
// memory to the kernel or a worker thread only while that slot is in flight, and the
// engine does not touch a slot's buffer while it is in flight.
unsafe impl Send for BufferPool {}

impl BufferPool {
    /// A pool the caller knows is small (a probe's one buffer); aborts as any failed
    /// allocation does.
    pub fn new(slots: usize, slot_bytes: usize) -> BufferPool {
        BufferPool::try_new(slots, slot_bytes).unwrap_or_else(|| {
            let layout =
                Layout::from_size_align(slots * slot_bytes, BUFFER_ALIGN).expect("valid layout");
            std::alloc::handle_alloc_error(layout)
        })
    }

    /// `slots` buffers of `slot_bytes`, or `None` when the memory cannot be had (a
    /// target's buffers are sized from the user's options and input: issue 30's 2 TiB
    /// for two 1 TiB reads aborted the process).
    pub fn try_new(slots: usize, slot_bytes: usize) -> Option<BufferPool> {
        assert!(slots > 0 && slot_bytes > 0 && slot_bytes.is_multiple_of(BUFFER_ALIGN));
        let size = slots.checked_mul(slot_bytes)?;
        let layout = Layout::from_size_align(size, BUFFER_ALIGN).ok()?;
        // SAFETY: layout has non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            return None;
        }
        Some(BufferPool {
            ptr,
            layout,
            slots,
            slot_bytes,
        })
    }

    pub fn slots(&self) -> usize {
        self.slots
    }

    pub fn slot_bytes(&self) -> usize {
        self.slot_bytes
    }

    pub fn slot_ptr(&self, slot: u32) -> *mut u8 {
        assert!((slot as usize) < self.slots, "slot {slot} out of range");
        // SAFETY: in bounds of the allocation (checked above).
        unsafe { self.ptr.add(slot as usize * self.slot_bytes) }
    }

    pub fn slot_mut(&mut self, slot: u32) -> &mut [u8] {
        let p = self.slot_ptr(slot);
        // SAFETY: p points to slot_bytes bytes inside our allocation, and &mut self
        // guarantees no other reference from us; the kernel does not use a slot that
        // is not in flight (engine contract).
        unsafe { std::slice::from_raw_parts_mut(p, self.slot_bytes) }
    }

    /// iovecs of every slot, for io_uring buffer registration.
    pub fn iovecs(&self) -> Vec<libc::iovec> {
        (0..self.slots as u32)
            .map(|s| libc::iovec {
                iov_base: self.slot_ptr(s).cast(),
                iov_len: self.slot_bytes,
            })
            .collect()
    }
}

impl Drop for BufferPool {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { dealloc(self.ptr, self.layout) }
    }
}

/// CLOCK_MONOTONIC in ns since `origin`.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    origin_ns: u64,
}

impl Clock {
    pub fn new() -> Clock {
        Clock {
            origin_ns: monotonic_ns(),
        }
    }

    #[inline]
    pub fn now_ns(&self) -> u64 {
        monotonic_ns() - self.origin_ns
    }
}

impl Default for Clock {
    fn default() -> Self {
        Clock::new()
    }
}

#[inline]
pub fn monotonic_ns() -> u64 {
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// How TRIM is done on this target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrimMode {
    /// ioctl(BLKDISCARD) on a block device.
    BlkDiscard,
    /// fallocate(PUNCH_HOLE | KEEP_SIZE) on a regular file.
    PunchHole,
}

/// `_IO(0x12, 119)`
const BLKDISCARD: libc::c_ulong = 0x1277;

/// One synchronous operation, as the thread backend and the TRIM helper do them.
/// Returns bytes transferred (the length for trim) or a negative errno.
///
/// # Safety
/// `buf` must point to at least `req.len_bytes` bytes that nobody else touches until
/// this returns (for reads and writes).
pub unsafe fn do_sync(
    fd: RawFd,
    req: &IoRequest,
    buf: *mut u8,
    trim: TrimMode,
) -> Result<u64, i32> {
    let errno = || {
        -std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO)
    };
    match req.op {
        Op::Read | Op::Write => {
            let mut done = 0u64;
            while done < req.len_bytes {
                let off = (req.offset_bytes + done) as libc::off_t;
                let n = (req.len_bytes - done) as usize;
                // SAFETY: caller guarantees buf..buf+len is ours for this call.
                let r = unsafe {
                    let p = buf.add(done as usize);
                    if req.op == Op::Read {
                        libc::pread(fd, p.cast(), n, off)
                    } else {
                        libc::pwrite(fd, p.cast::<libc::c_void>().cast_const(), n, off)
                    }
                };
                if r < 0 {
                    let e = errno();
                    if e == -libc::EINTR {
                        continue;
                    }
                    return Err(-e);
                }
                if r == 0 {
                    break; // end of file: a short transfer
                }
                done += r as u64;
            }
            Ok(done)
        }
        Op::Flush => {
            // SAFETY: plain syscall on an fd we own.
            if unsafe { libc::fdatasync(fd) } < 0 {
                Err(-errno())
            } else {
                Ok(0)
            }
        }
        Op::Trim => {
            if req.len_bytes == 0 {
                return Ok(0);
            }
            let r = match trim {
                TrimMode::BlkDiscard => {
                    let range: [u64; 2] = [req.offset_bytes, req.len_bytes];
                    // SAFETY: BLKDISCARD reads a [u64; 2] from the pointer.
                    unsafe { libc::ioctl(fd, BLKDISCARD as _, range.as_ptr()) }
                }
                TrimMode::PunchHole => {
                    // SAFETY: plain syscall on an fd we own.
                    unsafe {
                        libc::fallocate(
                            fd,
                            libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                            req.offset_bytes as libc::off_t,
                            req.len_bytes as libc::off_t,
                        )
                    }
                }
            };
            if r < 0 {
                Err(-errno())
            } else {
                Ok(req.len_bytes)
            }
        }
    }
}

/// How long [`Backend::enter`] may block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// Hand queued I/O to the kernel and let finished work post its completions;
    /// never block.
    No,
    /// As [`Wait::No`], then block until at least `nr` completions are available or
    /// `timeout_ns` has passed (`None`: no time limit).
    For { nr: usize, timeout_ns: Option<u64> },
}

/// What a non-blocking [`Backend::enter`] would do beyond [`Backend::harvest`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EnterWork {
    /// I/O is queued that only an enter hands to the kernel.
    pub submit: bool,
    /// Completions are held back until the thread enters the kernel (io_uring's
    /// DEFER_TASKRUN or COOP_TASKRUN work). May be `true` when unknown.
    pub reap: bool,
}

/// What a backend does; [`crate::real::RealTarget`] adds the clock and the stamping.
///
/// The hot path is one [`Backend::enter`] (one system call: submission and waiting
/// together) followed by one [`Backend::harvest`] (no system call) per engine step.
pub trait Backend: Send {
    /// Queue a batch. It reaches the kernel at the next `enter` (sooner only when the
    /// queue is full).
    fn submit(&mut self, reqs: &[IoRequest], pool: &BufferPool) -> Result<(), TargetError>;
    /// Submit what is queued and wait as `wait` says, in one system call where the
    /// backend can. Spurious early returns are allowed (the caller loops).
    fn enter(&mut self, wait: Wait) -> Result<(), TargetError>;
    /// Push every completion already posted (no system call): (slot, result).
    fn harvest(&mut self, out: &mut Vec<(u32, Result<u64, i32>)>) -> Result<(), TargetError>;
    /// I/Os submitted and not yet returned by `harvest`.
    fn in_flight(&self) -> usize;
    /// What a non-blocking `enter` would do that `harvest` alone does not, so a caller
    /// that polls can skip the system call when it would do nothing.
    fn enter_work(&mut self) -> EnterWork {
        EnterWork {
            submit: true,
            reap: true,
        }
    }
    /// `io_uring` or `threads`.
    fn name(&self) -> &'static str;
    /// Setup details for the report (ring flags, thread count).
    fn details(&self) -> Vec<(String, String)>;
}

pub(crate) fn io_err(context: impl Into<String>, source: std::io::Error) -> TargetError {
    TargetError::Io {
        context: context.into(),
        source,
    }
}

/// What `--backend auto` finds of a block device (`None` for other targets): whether it
/// takes non-blocking I/O (a `RWF_NOWAIT` read gets EOPNOTSUPP on zram; loop devices,
/// NVMe and every blk-mq device take it), and a note for the result's details. Such a
/// device's I/O always goes to io_uring's io-wq workers, and io-wq runs it all on one
/// worker; auto then polls before it sleeps
/// ([`uring::Uring::set_poll_before_sleep`]).
/// IOSQE_ASYNC (`--backend io_uring-async`) lets io-wq start more workers; auto keeps
/// the plain ring: on a quiet machine the flag was no faster.
///
/// Measured against fio on zram, and the alternatives tried and rejected (IOSQE_ASYNC as
/// the default, the threads backend, io-wq capped at 2 workers): docs/benchmarks.md,
/// "Engine against fio".
pub fn probe_block_device(
    fd: std::os::fd::BorrowedFd<'_>,
    info: &crate::target::TargetInfo,
) -> Option<(crate::target::blockdev::Nowait, String)> {
    use crate::target::blockdev::{probe_nowait, Nowait};
    if info.kind != crate::target::TargetKind::BlockDevice {
        return None;
    }
    let nowait = probe_nowait(fd, info.logical_block_bytes, info.capacity_bytes);
    let reason = match &nowait {
        Nowait::Unsupported => format!(
            "io_uring: {} does not take non-blocking I/O (a RWF_NOWAIT read got \
             EOPNOTSUPP), so io_uring hands every I/O to its io-wq worker; waits poll \
             up to {} us before they sleep; --backend io_uring-async marks the I/Os \
             IOSQE_ASYNC (more workers), not chosen: no faster on a quiet machine",
            info.name,
            uring::IO_WQ_POLL_NS / 1000
        ),
        Nowait::Supported => format!(
            "io_uring: {} takes non-blocking I/O (RWF_NOWAIT)",
            info.name
        ),
        Nowait::Unknown(why) => format!(
            "io_uring: whether {} takes non-blocking I/O is unknown ({why})",
            info.name
        ),
    };
    Some((nowait, reason))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 19: replay buffers took 256 x the largest I/O (16 MiB reads: 4.2 GB).
    /// Sized from what is in flight and capped: fewer slots, or an error when one
    /// I/O alone is over the cap.
    #[test]
    fn buffer_plan_is_sized_from_the_trace_and_capped() {
        let p = BufferPlan::new(8, 16 << 20, DEFAULT_BUFFER_MEMORY_BYTES).unwrap();
        assert_eq!((p.slots, p.slot_bytes, p.capped_from), (8, 16 << 20, None));
        let p = BufferPlan::new(256, 16 << 20, DEFAULT_BUFFER_MEMORY_BYTES).unwrap();
        assert_eq!((p.slots, p.capped_from), (32, Some(256)));
        assert!(p.slots * p.slot_bytes <= DEFAULT_BUFFER_MEMORY_BYTES as usize);
        let e = BufferPlan::new(1, 1 << 40, DEFAULT_BUFFER_MEMORY_BYTES).unwrap_err();
        assert_eq!((e.io_bytes, e.slot_bytes), (1 << 40, 1 << 40));
        assert!(e.to_string().contains("--buffer-memory"), "{e}");
        let p = BufferPlan::new(0, 512, 1 << 20).unwrap();
        assert_eq!((p.slots, p.slot_bytes), (1, 4096));
    }

    /// Issue 30: two 1 TiB buffers aborted the process in the allocator; a pool that
    /// cannot be had (or whose size overflows) is `None`, for a typed refusal.
    #[test]
    fn a_pool_that_cannot_be_allocated_is_none_not_an_abort() {
        assert!(BufferPool::try_new(usize::MAX / BUFFER_ALIGN, 2 * BUFFER_ALIGN).is_none());
        let strict = std::fs::read_to_string("/proc/sys/vm/overcommit_memory")
            .is_ok_and(|m| m.trim() != "1");
        if strict {
            assert!(BufferPool::try_new(2, 1 << 40).is_none());
        }
        let p = BufferPool::try_new(2, BUFFER_ALIGN).unwrap();
        assert_eq!((p.slots(), p.slot_bytes()), (2, BUFFER_ALIGN));
    }
}
