//! [`RealTarget`]: a file or block device driven through a [`Backend`], on
//! CLOCK_MONOTONIC. Completions are stamped when reaped, so events reach the metrics
//! in time order; waits sleep until just before a deadline, then spin.

use crate::backend::threads::Threads;
use crate::backend::uring::Uring;
use crate::backend::{Backend, BufferPool, Clock, TrimMode, Wait, BUFFER_ALIGN};
use crate::safety::identity::TargetIdentity;
use crate::safety::WriteGate;
use crate::target::{Completion, IoRequest, Target, TargetError, TargetInfo};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use storbench_trace::Op;

/// Before a deadline, sleep until the spin margin before it, then spin. The margin
/// starts at (and never goes below) this: timed waits with a 1 ns timer slack wake
/// 8 us late at p50 and 11 us at p90 on a loaded 2-CPU VM (measured with
/// clock_nanosleep), and at 50,000 IOPS the mean gap is 20 us, so the spin share of
/// the CPU matters.
pub const SPIN_NS: u64 = 25_000;
/// Ceiling of the adaptive spin margin ([`SpinMargin`]). Kept low: spinning longer
/// burns the CPU share a loaded host gives the engine thread, and later overshoots are
/// the thread not being scheduled, which spinning does not fix.
pub const SPIN_MAX_NS: u64 = 60_000;
/// In the last this much before a deadline the spin enters the kernel only to submit,
/// not to reap: an enter that posts completions takes about 2 µs at the median and
/// 5 µs at p90 here (measured in `timed` replay at 50,000 IOPS), and the deadline comes
/// first. Completions posted meanwhile are reaped by the enter that submits the I/O
/// due, so their stamps are late by about this at most.
pub const REAP_GUARD_NS: u64 = 4_000;

/// The spin margin, adapted to how late this host wakes a sleeping thread. The tail
/// of the wake-up delay, not its median, makes the tail of the issue error: here
/// clock_nanosleep wakes 23 to 36 us late at p99 under load, beyond a fixed 25 us.
/// Each timed wait that ends past its wake-up time reports how far past; the margin
/// jumps to that plus [`SpinMargin::PAD_NS`] when larger, and otherwise decays towards
/// [`SPIN_NS`] by 1/64 of the excess per wait (it follows the largest recent
/// overshoots, about the p99 of the last few hundred waits). Overshoots beyond
/// [`SPIN_MAX_NS`] are taken as the thread not being scheduled, which no spinning
/// fixes: they are ignored.
#[derive(Clone, Copy, Debug)]
pub struct SpinMargin {
    margin_ns: u64,
}

impl SpinMargin {
    pub const PAD_NS: u64 = 2_000;

    pub fn new() -> SpinMargin {
        SpinMargin { margin_ns: SPIN_NS }
    }

    pub fn margin_ns(&self) -> u64 {
        self.margin_ns
    }

    /// A timed wait ended `overshoot_ns` after the time it was asked to end.
    pub fn observe(&mut self, overshoot_ns: u64) {
        if overshoot_ns > SPIN_MAX_NS {
            return;
        }
        let want = (overshoot_ns + Self::PAD_NS).min(SPIN_MAX_NS);
        if want > self.margin_ns {
            self.margin_ns = want;
        } else {
            self.margin_ns -= (self.margin_ns - SPIN_NS) / 64;
        }
        assert!((SPIN_NS..=SPIN_MAX_NS).contains(&self.margin_ns));
    }
}

impl Default for SpinMargin {
    fn default() -> Self {
        SpinMargin::new()
    }
}

/// Which backend to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum BackendChoice {
    /// io_uring when the kernel allows it, threads otherwise. On a block device the
    /// details say whether it takes non-blocking I/O (`backend::probe_block_device`).
    #[default]
    Auto,
    Uring,
    /// io_uring with every read and write marked IOSQE_ASYNC (always handed to io-wq
    /// workers, which may then run on more than one): for devices that do not take
    /// non-blocking I/O (zram), where it is measured beside the plain ring.
    UringAsync,
    Threads,
}

impl BackendChoice {
    pub fn parse(s: &str) -> Option<BackendChoice> {
        match s {
            "auto" => Some(BackendChoice::Auto),
            "io_uring" | "uring" | "io-uring" => Some(BackendChoice::Uring),
            "io_uring-async" | "io-uring-async" => Some(BackendChoice::UringAsync),
            "threads" => Some(BackendChoice::Threads),
            _ => None,
        }
    }
}

/// A real target. Field order matters: the backend (kernel ring, worker threads) is
/// dropped before the buffer pool it writes into, and both before the file.
pub struct RealTarget {
    backend: Box<dyn Backend>,
    pool: BufferPool,
    /// Kept open for as long as the backend uses its raw fd.
    _fd: OwnedFd,
    info: TargetInfo,
    clock: Clock,
    max_in_flight: usize,
    gate: WriteGate,
    scratch: Vec<(u32, Result<u64, i32>)>,
    /// The driving thread's timer slack was lowered (sleeps end when asked).
    slack_set: bool,
    spin: SpinMargin,
    /// Who the target is (set by `spec::open_real_as`): recorded by a run at its start,
    /// compared on resume.
    identity: Option<TargetIdentity>,
    /// How it was opened, for [`RealTarget::job_target`].
    choice: BackendChoice,
    trim: TrimMode,
}

impl RealTarget {
    /// Wrap an open file descriptor. `info.backend` is filled here. Crate-private: a
    /// target is made by `spec::open_real_as`, a block device for writing only from the
    /// guard's [`crate::safety::GuardedDevice`].
    pub(crate) fn new(
        fd: OwnedFd,
        mut info: TargetInfo,
        max_in_flight: usize,
        buffer_bytes: usize,
        choice: BackendChoice,
        trim: TrimMode,
        gate: WriteGate,
    ) -> Result<RealTarget, TargetError> {
        if max_in_flight == 0 || max_in_flight > 4096 {
            return Err(TargetError::Invalid(format!(
                "{max_in_flight} I/Os in flight: a real target takes 1 to 4096"
            )));
        }
        let buffer_bytes = buffer_bytes.max(BUFFER_ALIGN).div_ceil(BUFFER_ALIGN) * BUFFER_ALIGN;
        let pool = BufferPool::try_new(max_in_flight, buffer_bytes).ok_or_else(|| {
            TargetError::Refused {
                message: format!(
                    "{}: cannot allocate {max_in_flight} I/O buffers of {buffer_bytes} bytes ({} bytes in all)",
                    info.name,
                    max_in_flight as u128 * buffer_bytes as u128
                ),
                hint: "lower the queue depth (--qd), the block size (--bs) or --buffer-memory".into(),
            }
        })?;
        let raw = fd.as_raw_fd();
        let choice_asked = choice;
        let backend: Box<dyn Backend> = match choice {
            BackendChoice::Threads => Box::new(Threads::new(raw, max_in_flight, trim)?),
            BackendChoice::Uring => Box::new(Uring::new(raw, max_in_flight as u32, &pool, trim)?),
            BackendChoice::UringAsync => {
                let mut u = Uring::new(raw, max_in_flight as u32, &pool, trim)?;
                u.set_sqe_async(true);
                Box::new(u)
            }
            BackendChoice::Auto => match Uring::new(raw, max_in_flight as u32, &pool, trim) {
                Ok(mut u) => {
                    // Block devices: whether the device takes non-blocking I/O, in
                    // the details; see backend::probe_block_device.
                    if let Some((nowait, reason)) =
                        crate::backend::probe_block_device(fd.as_fd(), &info)
                    {
                        if nowait == crate::target::blockdev::Nowait::Unsupported {
                            u.set_poll_before_sleep(crate::backend::uring::IO_WQ_POLL_NS);
                        }
                        info.details.insert("backend_reason".into(), reason);
                    }
                    Box::new(u)
                }
                Err(e) => {
                    info.details
                        .insert("io_uring_unavailable".into(), e.to_string());
                    Box::new(Threads::new(raw, max_in_flight, trim)?)
                }
            },
        };
        info.backend = backend.name().to_string();
        for (k, v) in backend.details() {
            info.details.insert(k, v);
        }
        Ok(RealTarget {
            backend,
            pool,
            _fd: fd,
            info,
            clock: Clock::new(),
            max_in_flight,
            gate,
            scratch: Vec::with_capacity(max_in_flight),
            slack_set: false,
            spin: SpinMargin::new(),
            identity: None,
            choice: choice_asked,
            trim,
        })
    }

    /// Another target on this one's open file or device, for one more job of a phase
    /// (`--jobs`): its own descriptor (a duplicate of this one's: the same open file,
    /// the one the guard passed, never reopened by name), its own backend (ring) and
    /// `slots` buffers of `slot_bytes`, the same write gate and identity, and this
    /// target's clock, so the jobs' times are on one timeline. The one place a job's
    /// target is made.
    pub fn job_target(&self, slots: usize, slot_bytes: usize) -> Result<RealTarget, TargetError> {
        let fd = rustix::io::fcntl_dupfd_cloexec(&self._fd, 0).map_err(|e| {
            crate::backend::io_err(
                format!("duplicating the descriptor of {}", self.info.name),
                e.into(),
            )
        })?;
        let gate = match &self.gate {
            WriteGate::Allowed => WriteGate::Allowed,
            WriteGate::ReadOnly { name } => WriteGate::ReadOnly { name: name.clone() },
        };
        let mut t = RealTarget::new(
            fd,
            self.info.clone(),
            slots,
            slot_bytes,
            self.choice,
            self.trim,
            gate,
        )?;
        t.clock = self.clock;
        t.identity = self.identity.clone();
        Ok(t)
    }

    pub fn buffer_bytes(&self) -> usize {
        self.pool.slot_bytes()
    }

    /// Opened for writing (a block device: through the guard).
    pub fn writable(&self) -> bool {
        matches!(self.gate, WriteGate::Allowed)
    }

    /// Who the target is, when opened through `spec::open_real_as`.
    pub fn identity(&self) -> Option<&TargetIdentity> {
        self.identity.as_ref()
    }

    pub(crate) fn set_identity(&mut self, id: TargetIdentity) {
        self.identity = Some(id);
    }

    /// The open file or device, for work outside the engine loop on the very target
    /// the guard passed (the suite's purge), never reopened by name.
    pub fn fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self._fd.as_fd()
    }

    /// Stamp and push what the backend has posted (no system call).
    fn harvest(&mut self, out: &mut Vec<Completion>) -> Result<usize, TargetError> {
        self.scratch.clear();
        self.backend.harvest(&mut self.scratch)?;
        if self.scratch.is_empty() {
            return Ok(0);
        }
        let t = self.clock.now_ns();
        for &(slot, result) in &self.scratch {
            out.push(Completion {
                slot,
                complete_ns: t,
                result,
            });
        }
        Ok(self.scratch.len())
    }
}

impl Target for RealTarget {
    fn info(&self) -> &TargetInfo {
        &self.info
    }

    fn now_ns(&self) -> u64 {
        self.clock.now_ns()
    }

    fn max_in_flight(&self) -> usize {
        self.max_in_flight
    }

    fn buffer(&mut self, slot: u32) -> Option<&mut [u8]> {
        Some(self.pool.slot_mut(slot))
    }

    fn submit(&mut self, reqs: &[IoRequest]) -> Result<(), TargetError> {
        if reqs.iter().any(|r| matches!(r.op, Op::Write | Op::Trim)) {
            self.gate.check_before_write()?;
        }
        for r in reqs {
            assert!(
                r.offset_bytes + r.len_bytes <= self.info.capacity_bytes,
                "I/O past the end of {}",
                self.info.name
            );
            assert!(!r.op.is_data() || r.len_bytes as usize <= self.pool.slot_bytes());
        }
        assert!(self.backend.in_flight() + reqs.len() <= self.max_in_flight);
        self.backend.submit(reqs, &self.pool)
    }

    /// Far from a deadline each step is one `enter` (submission of what is queued and
    /// the wait, one system call) and one harvest: the wait sleeps in the kernel until
    /// a completion or until the spin margin before the deadline ([`Self::wait_step`]).
    /// Closer than that it polls (spins) and enters the kernel only when there is I/O
    /// to hand over or the kernel holds completions back (IORING_SQ_TASKRUN), and in
    /// the last REAP_GUARD_NS not even for those: the deadline comes first
    /// ([`Self::spin_step`]). Once the deadline has passed it returns with what is
    /// already posted; the caller has I/O due, and the enter that submits it reaps in
    /// the same system call ([`Self::advance_now`]).
    ///
    /// Polling before a wait that would sleep is the backend's choice, made only where
    /// it pays (zram's io-wq: `Uring::set_poll_before_sleep`); on a loop device it was
    /// tried and rejected, because the loop's kworker needs the CPU the poll takes
    /// (docs/benchmarks.md, "Engine against fio: tried and rejected").
    fn advance(
        &mut self,
        min_complete: usize,
        deadline_ns: Option<u64>,
        out: &mut Vec<Completion>,
    ) -> Result<(), TargetError> {
        self.set_timer_slack();
        let mut got = 0usize;
        loop {
            let now = self.clock.now_ns();
            let remaining = deadline_ns.map(|d| d.saturating_sub(now));
            if remaining == Some(0) || (min_complete == 0 && deadline_ns.is_none()) {
                return self.advance_now(deadline_ns.is_none(), out);
            }
            let need = min_complete.saturating_sub(got);
            assert!(need > 0 || deadline_ns.is_some());
            let margin = self.spin.margin_ns();
            match remaining {
                Some(r) if r <= margin => self.spin_step(r)?,
                _ => {
                    let timeout_ns = remaining.map(|r| r - margin);
                    if !self.wait_step(now, timeout_ns, need, min_complete)? {
                        continue;
                    }
                }
            }
            got += self.harvest(out)?;
            if min_complete > 0 && got >= min_complete {
                return Ok(());
            }
        }
    }
}

impl RealTarget {
    /// The default 50 µs timer slack would make sleeps overshoot deadlines; 1 ns lets
    /// the sleep-then-spin wait land on time. Per thread, so done on the first
    /// `advance`, on the thread that drives the target.
    #[inline]
    fn set_timer_slack(&mut self) {
        if !self.slack_set {
            // SAFETY: prctl(PR_SET_TIMERSLACK) takes an integer and touches no memory.
            unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
            self.slack_set = true;
        }
    }

    /// No wait (the deadline has passed, or none asked): hand over queued I/O (and,
    /// with no deadline, reap what the kernel holds back), then harvest what is posted.
    #[inline]
    fn advance_now(
        &mut self,
        no_deadline: bool,
        out: &mut Vec<Completion>,
    ) -> Result<(), TargetError> {
        let work = self.backend.enter_work();
        if work.submit || (no_deadline && work.reap) {
            self.backend.enter(Wait::No)?;
        }
        self.harvest(out)?;
        Ok(())
    }

    /// Within the spin margin of the deadline, `r` ns away: enter only to hand over
    /// I/O, or to reap outside the last REAP_GUARD_NS; otherwise spin.
    #[inline]
    fn spin_step(&mut self, r: u64) -> Result<(), TargetError> {
        let work = self.backend.enter_work();
        if work.submit || (work.reap && r > REAP_GUARD_NS) {
            self.backend.enter(Wait::No)?;
        } else {
            // Tried and rejected: sched_yield instead (a yield can give the CPU away
            // for a slice: a worse p99.9; docs/benchmarks.md, "tried and rejected").
            std::hint::spin_loop();
        }
        Ok(())
    }

    /// Far from the deadline: wait in the kernel for `need` completions, at most
    /// `timeout_ns` (to the spin margin before the deadline), learning from how late
    /// the wake-up is. With nothing in flight, sleeps towards the deadline instead and
    /// returns false (nothing to harvest).
    #[inline]
    fn wait_step(
        &mut self,
        now: u64,
        timeout_ns: Option<u64>,
        need: usize,
        min_complete: usize,
    ) -> Result<bool, TargetError> {
        // When the wait sleeps towards the deadline: the time it should wake up.
        let wake_at = timeout_ns.map(|t| now + t);
        if self.backend.in_flight() == 0 {
            // Nothing can complete: sleep towards the deadline.
            let (Some(t), Some(wake_at)) = (timeout_ns, wake_at) else {
                panic!("advance({min_complete}, None) with nothing in flight would wait forever");
            };
            std::thread::sleep(std::time::Duration::from_nanos(t));
            let woke = self.clock.now_ns();
            self.spin.observe(woke.saturating_sub(wake_at));
            return Ok(false);
        }
        self.backend.enter(Wait::For {
            nr: need.max(1),
            timeout_ns,
        })?;
        if let Some(w) = wake_at {
            // Ended at or past its wake-up time: a timeout (or a completion just then),
            // so it tells how late waits end. Earlier: a completion.
            let woke = self.clock.now_ns();
            if woke >= w {
                self.spin.observe(woke - w);
            }
        }
        Ok(true)
    }
}

impl Drop for RealTarget {
    fn drop(&mut self) {
        // Never free buffers the kernel may still write: drain what is in flight.
        let mut sink = Vec::new();
        while self.backend.in_flight() > 0 {
            sink.clear();
            if self
                .backend
                .enter(Wait::For {
                    nr: 1,
                    timeout_ns: Some(100_000_000),
                })
                .is_err()
                || self.backend.harvest(&mut sink).is_err()
            {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spin_margin_follows_recent_overshoots_within_bounds() {
        let mut m = SpinMargin::new();
        assert_eq!(m.margin_ns(), SPIN_NS);
        // Small overshoots never lower it below the floor.
        m.observe(3_000);
        assert_eq!(m.margin_ns(), SPIN_NS);
        // A larger one raises it to that plus the pad at once.
        m.observe(40_000);
        assert_eq!(m.margin_ns(), 40_000 + SpinMargin::PAD_NS);
        // Ordinary waits decay it by 1/64 of the excess each.
        m.observe(5_000);
        assert_eq!(m.margin_ns(), 42_000 - (42_000 - SPIN_NS) / 64);
        for _ in 0..1000 {
            m.observe(5_000);
        }
        assert!(m.margin_ns() < SPIN_NS + 1_000, "{}", m.margin_ns());
        assert!(m.margin_ns() >= SPIN_NS);
        // The thread not being scheduled (beyond the ceiling) is ignored.
        let before = m.margin_ns();
        m.observe(5_000_000);
        assert_eq!(m.margin_ns(), before);
        // Just under the ceiling: capped at it.
        m.observe(SPIN_MAX_NS - 1);
        assert_eq!(m.margin_ns(), SPIN_MAX_NS);
    }
}
