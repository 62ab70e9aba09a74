//! The dies: committed write-side work, queued GC work sharing the die with host
//! programs, reads put ahead of write-side work (suspend), channels, part-filled
//! stripes, and background work in host idle time.

use super::host::xfer_ns;
use super::SimSsd;

impl SimSsd {
    /// Die-time cost of a program of `slots` slots.
    #[inline]
    pub(super) fn prog_ns(&self, slots: u32, slc: bool) -> u64 {
        slots as u64
            * if slc {
                self.ftl.prog_slot_slc_ns
            } else {
                self.ftl.prog_slot_ns
            }
    }

    /// Die `d` has committed work until `t` (never earlier than before).
    #[inline]
    pub(super) fn set_busy(&mut self, d: usize, t: u64) {
        debug_assert!(t >= self.die_busy[d]);
        self.die_busy[d] = t;
        self.busy_max = self.busy_max.max(t);
    }

    /// A host program of `dur_ns` on die `d`, its data ready at `ready_ns`; returns
    /// when it ends. Queued GC work (`gc_backlog`) runs first in the die's idle time
    /// before the data is ready, then takes its share (`gc_share`) of the die before
    /// this program: up to `dur_ns x share / (1 - share)` of it (all of it at share 1).
    #[inline]
    pub(super) fn host_program(&mut self, d: usize, ready_ns: u64, dur_ns: u64) -> u64 {
        let mut busy = self.die_busy[d];
        let backlog = self.gc_backlog[d];
        if backlog > 0 {
            // GC cannot start before the write that queued it.
            busy = busy.max(self.gc_start[d]);
            let idle = backlog.min(ready_ns.saturating_sub(busy));
            let rest = backlog - idle;
            let share = match (self.gc_background, self.gc_share_milli) {
                (true, _) => 0,
                (false, None) => rest,
                (false, Some(k)) => rest.min(dur_ns.saturating_mul(k) / 1000),
            };
            busy = (busy + idle).max(ready_ns) + share;
            self.consume_backlog(d, idle + share);
            let end = busy + dur_ns;
            self.set_busy(d, end);
            return end;
        }
        let end = busy.max(ready_ns) + dur_ns;
        self.set_busy(d, end);
        end
    }

    /// `ns` of die `d`'s queued GC work is done, oldest first.
    #[inline]
    fn consume_backlog(&mut self, d: usize, mut ns: u64) {
        self.gc_backlog[d] -= ns;
        self.backlog_ns -= ns;
        let q = &mut self.gc_chunks[d];
        while ns > 0 {
            let front = q.front_mut().expect("queued GC work has its chunks");
            let take = ns.min(*front);
            *front -= take;
            ns -= take;
            if *front == 0 {
                q.pop_front();
            }
        }
    }

    /// Queue the FTL's pending die work (GC, folding, wear levelling): it joins the
    /// die's GC backlog, which host programs share the die with. At most
    /// `gc_free_blocks - 1` victims' work is queued on a die: the frontier writes into
    /// the free blocks the FTL counts, and a block whose victim's work is not done is
    /// not free yet, so older work goes on the die first, from `from` at the earliest
    /// (the host write that needs the next victim waits for it).
    #[inline]
    pub(super) fn apply_pending(&mut self, from: u64) {
        if self.ftl.pending_dirty.is_empty() {
            return;
        }
        self.gc_background = false;
        let keep = (self.ftl.cfg.gc_free_blocks as usize).saturating_sub(2);
        while let Some(d) = self.ftl.pending_dirty.pop() {
            let d = d as usize;
            let pend = std::mem::take(&mut self.ftl.pending_ns[d]);
            let mut old = 0;
            while self.gc_chunks[d].len() > keep {
                old += self.gc_chunks[d].pop_front().unwrap_or(0);
            }
            if old > 0 {
                self.gc_backlog[d] -= old;
                self.backlog_ns -= old;
                // It ran in the die's idle time as far as it could.
                let end = self.die_busy[d].max(self.gc_start[d]) + old;
                self.set_busy(d, end);
            }
            if self.gc_chunks[d].is_empty() {
                self.gc_start[d] = from;
            }
            if std::mem::take(&mut self.ftl.pending_erase[d]) {
                // The erase ends the queued work; reads cannot pass it (an estimate:
                // the work may be spread between host programs).
                self.erase_end[d] = self.die_busy[d].max(from) + self.gc_backlog[d] + pend;
            }
            self.gc_backlog[d] += pend;
            self.backlog_ns += pend;
            self.gc_chunks[d].push_back(pend);
        }
    }

    /// Background GC while the host is busy but the dies are not: when no die has
    /// more than two page programs of work left at `t`, no GC work is queued and fewer than `bg_gc_free_blocks` blocks are
    /// free, one victim is collected (or an SLC block folded). Its work runs only in
    /// the dies' idle time; a write that needs a victim before it is done waits for it.
    pub(super) fn background_when_idle(&mut self, t: u64) {
        if t < self.bg_check_ns {
            return;
        }
        // Looked at once per page program's time at most (it walks the dies).
        self.bg_check_ns = t + self.ftl.cfg.timing.program_ns;
        if self.ftl.free_native_blocks() >= self.ftl.cfg.bg_gc_free_blocks as usize
            && !self.ftl.has_slc_to_fold()
        {
            return;
        }
        self.settle_backlog(t);
        if self.backlog_ns > 0 || self.busy_max > t + 2 * self.ftl.cfg.timing.program_ns {
            return;
        }
        if self.ftl.background_step() {
            self.apply_pending(t);
            self.gc_background = true;
        }
    }

    /// Queued GC work that the dies have finished by `t` (in their idle time) goes on
    /// their timelines.
    fn settle_backlog(&mut self, t: u64) {
        if self.backlog_ns == 0 {
            return;
        }
        for d in 0..self.die_busy.len() {
            let b = self.gc_backlog[d];
            let end = self.die_busy[d].max(self.gc_start[d]) + b;
            if b > 0 && end <= t {
                self.gc_backlog[d] = 0;
                self.gc_chunks[d].clear();
                self.backlog_ns -= b;
                self.set_busy(d, end);
            }
        }
    }

    /// All queued GC work goes on the dies from `from` at the earliest (host idle, or
    /// untimed work that must be done first).
    pub(super) fn drain_backlog(&mut self, from: u64) {
        for d in 0..self.die_busy.len() {
            let b = std::mem::take(&mut self.gc_backlog[d]);
            self.gc_chunks[d].clear();
            self.backlog_ns -= b;
            if b > 0 {
                let end = self.die_busy[d].max(from).max(self.gc_start[d]) + b;
                self.set_busy(d, end);
            }
        }
    }

    /// The frontier's last stripe, if the host left it part-filled, is programmed now
    /// (a flush, or the host going idle): the units written into it since it was last
    /// programmed take one single-plane (or part multi-plane) program, which costs the
    /// die a whole page program for fewer units. Units written into its rest later are
    /// programmed again.
    pub(super) fn program_partial(&mut self, from: u64) -> u64 {
        let Some(s) = self.ftl.frontier_slot() else {
            return from;
        };
        let Some(last) = s.checked_sub(1) else {
            return from;
        };
        // The stripe of the last unit written, and how many of its slots are.
        let ss = self.ftl.stripe_slots();
        let (stripe, fill) = (last / ss, last % ss + 1);
        let done = if stripe == self.padded_stripe {
            self.padded_fill
        } else {
            0
        };
        if fill <= done {
            return from;
        }
        (self.padded_stripe, self.padded_fill) = (stripe, fill);
        if fill - done == ss {
            // A whole stripe: the multi-plane program its units already paid for.
            return from;
        }
        let d = self.ftl.phys_die(last) as usize;
        let waste = (ss - (fill - done)) as u64 * self.ftl.prog_slot_ns;
        let end = self.host_program(d, from, waste);
        self.last_prog_done = self.last_prog_done.max(end);
        end
    }

    /// When die `d` starts a read that reaches it at `t`, and the time that suspending
    /// the operation in progress adds to the die's write-side work. Reads go first:
    /// after the reads queued before it, else after the operation in progress (the
    /// erase `t` falls in, or what is left of a page program: write-side work is taken
    /// as page programs back to back, ending when the die's committed work ends), or,
    /// if that would take longer than suspending it, after the suspend latency (the
    /// suspended operation then resumes after the read and takes that much longer).
    #[inline]
    pub(super) fn read_start(&self, d: usize, t: u64) -> (u64, u64) {
        if self.die_read[d] > t {
            return (self.die_read[d], 0);
        }
        let busy = self.die_busy[d];
        if busy <= t {
            return (t, 0);
        }
        let cfg = &self.ftl.cfg;
        let ee = self.erase_end[d];
        let (left, suspend) = if ee > t && ee.saturating_sub(cfg.timing.erase_ns) <= t {
            (ee - t, cfg.erase_suspend_ns)
        } else {
            ((busy - t) % cfg.timing.program_ns, cfg.program_suspend_ns)
        };
        if suspend > 0 && left > suspend {
            (t + suspend, suspend)
        } else {
            (t + left, 0)
        }
    }

    /// Read one unit on die `d`, reaching it at `t`, and move `bytes` of it over the
    /// channel; returns when the data is off the channel. The channel, like the link,
    /// is a budget taken in order (it is never the bottleneck of these drives).
    #[inline]
    pub(super) fn read_unit(&mut self, d: usize, t: u64, read_ns: u64, bytes: u64) -> u64 {
        let (s, suspend_ns) = self.read_start(d, t);
        let e = s + read_ns;
        if s < self.die_busy[d] {
            // Ahead of queued write-side work, which moves back by the read's time
            // (and the suspend's, if it interrupted an operation).
            let shift = read_ns + suspend_ns;
            self.set_busy(d, self.die_busy[d] + shift);
            if self.erase_end[d] > s {
                self.erase_end[d] += shift;
            }
        } else {
            self.set_busy(d, e);
        }
        self.die_read[d] = e;
        let cfg = &self.ftl.cfg;
        let x = xfer_ns(bytes, cfg.channel_mbps);
        let ch = d % cfg.channels as usize;
        let cb = t.max(self.ch_busy[ch]) + x;
        self.ch_busy[ch] = cb;
        self.ftl.c.nand_page_reads += 1;
        cb.max(e + x)
    }

    /// Move `bytes` more of the page die `d` has just read (for a read that reached
    /// it at `t`) over the channel; returns when they are off it.
    #[inline]
    pub(super) fn channel_only(&mut self, d: usize, t: u64, bytes: u64) -> u64 {
        let cfg = &self.ftl.cfg;
        let x = xfer_ns(bytes, cfg.channel_mbps);
        let ch = d % cfg.channels as usize;
        let cb = t.max(self.ch_busy[ch]) + x;
        self.ch_busy[ch] = cb;
        cb.max(self.die_read[d] + x)
    }

    /// Host idle from `from` to `until`: the part-filled stripe is programmed and the
    /// queued GC work runs; after `idle_gc_delay` of idleness, background GC and SLC
    /// folding on idle dies. Work is started while some die is free before `until`; a
    /// step may run past it (a host I/O arriving then waits, as on a real drive).
    pub(super) fn idle(&mut self, from: u64, until: u64) {
        self.program_partial(from);
        self.drain_backlog(from);
        let start = from.max(self.idle_since_ns + self.ftl.cfg.idle_gc_delay_ns);
        loop {
            let earliest = self
                .die_busy
                .iter()
                .map(|&b| b.max(start))
                .min()
                .unwrap_or(start);
            if earliest >= until || !self.ftl.background_step() {
                break;
            }
            self.apply_pending(start);
            self.drain_backlog(start);
        }
    }
}
