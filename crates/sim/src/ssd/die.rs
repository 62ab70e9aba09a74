//! The dies: committed write-side work, reads put ahead of it (suspend), channels,
//! the write buffer's admission, and background work in host idle time.

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
        self.busy_sum += t - self.die_busy[d];
        self.die_busy[d] = t;
    }

    /// When a write whose command the controller finished at `ce` has its data taken
    /// into the write buffer: once the committed work of the dies (each die's from
    /// `ce` on), averaged over them, ends within `buffer_ns` of that time.
    #[inline]
    pub(super) fn admit(&mut self, ce: u64) -> u64 {
        debug_assert_eq!(self.busy_sum, self.die_busy.iter().sum::<u64>());
        // Busy-until times only grow: while their last known minimum is past `ce`,
        // every die is, and the sum needs no clamping (a steady write load).
        let sum = if self.busy_min >= ce {
            self.busy_sum
        } else {
            self.busy_min = self.die_busy.iter().copied().min().unwrap_or(0);
            self.die_busy.iter().map(|&b| b.max(ce)).sum()
        };
        let mean = sum / self.die_busy.len() as u64;
        ce.max(mean.saturating_sub(self.buffer_ns))
    }

    /// Queue the FTL's pending die work (GC, folding, wear levelling) after what each
    /// die has committed, from `from` at the earliest.
    #[inline]
    pub(super) fn apply_pending(&mut self, from: u64) {
        while let Some(d) = self.ftl.pending_dirty.pop() {
            let d = d as usize;
            let pend = std::mem::take(&mut self.ftl.pending_ns[d]);
            let end = self.die_busy[d].max(from) + pend;
            self.set_busy(d, end);
            if std::mem::take(&mut self.ftl.pending_erase[d]) {
                self.erase_end[d] = end;
            }
        }
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

    /// Host idle from `from` to `until`: background GC and SLC folding on idle dies.
    /// Work is started while some die is free before `until`; a step may run past it
    /// (a host I/O arriving then waits, as on a real drive).
    pub(super) fn idle(&mut self, from: u64, until: u64) {
        loop {
            let earliest = self
                .die_busy
                .iter()
                .map(|&b| b.max(from))
                .min()
                .unwrap_or(from);
            if earliest >= until || !self.ftl.background_step() {
                break;
            }
            self.apply_pending(from);
        }
    }
}
