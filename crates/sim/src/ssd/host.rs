//! The host interface and the controller: link budgets and controller cores.

use super::SimSsd;

impl SimSsd {
    /// Take the link time of a command at `t` moving `bytes` of data to the drive
    /// (`to_host` false) or to the host. The link is a budget taken in submission
    /// order: each command adds its time after the budget taken so far, and cannot
    /// complete before that end. Returns (when the command reaches the controller, end
    /// of its link budget). SATA: one half-duplex link, and the command FIS itself
    /// waits for it. NVMe: a link per direction; commands are fetched at once.
    #[inline]
    pub(super) fn link(&mut self, t: u64, bytes: u64, to_host: bool) -> (u64, u64) {
        let cfg = &self.ftl.cfg;
        let half = cfg.interface.half_duplex();
        let i = usize::from(to_host && !half);
        let ls = t.max(self.link_busy[i]);
        let end = ls + cfg.link_cmd_ns + xfer_ns(bytes, cfg.link_mbps);
        self.link_busy[i] = end;
        let arrive = if half { ls } else { t } + cfg.link_cmd_ns;
        (arrive, end)
    }

    /// A command reaching the controller at `t` holds the first free core for
    /// `occupancy_ns` (the controller's throughput: cores / occupancy) and is done
    /// `latency_ns` after it started there, or `occupancy_ns` if that is longer: a
    /// pipelined controller hands a command on (to the flash, to the write buffer)
    /// later than it frees the core for the next one. Returns when it is done.
    #[inline]
    pub(super) fn controller(&mut self, t: u64, occupancy_ns: u64, latency_ns: u64) -> u64 {
        let mut k = 0;
        for i in 1..self.core_busy.len() {
            if self.core_busy[i] < self.core_busy[k] {
                k = i;
            }
        }
        let start = t.max(self.core_busy[k]);
        self.core_busy[k] = start + occupancy_ns;
        start + occupancy_ns.max(latency_ns)
    }
}

/// Time to move `bytes` at `mbps` MB/s (10^6 bytes/s), ns.
#[inline]
pub(super) fn xfer_ns(bytes: u64, mbps: u32) -> u64 {
    // 1 MB/s = 1 byte/us.
    bytes * 1000 / mbps as u64
}
