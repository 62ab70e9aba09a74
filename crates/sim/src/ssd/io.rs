//! One host command through the drive: writes (the write buffer, programs, partial
//! units read first), reads (multi-plane page reads, channel, link), TRIM and flush.

use super::host::xfer_ns;
use super::{SimSsd, EINVAL};
use crate::config::{SECTOR_BYTES, UNIT_BYTES};
use storbench_core::{IoRequest, Op};

impl SimSsd {
    pub(super) fn schedule(&mut self, r: &IoRequest) -> Result<u64, i32> {
        let t = self.now_ns;
        let cfg = &self.ftl.cfg;
        let end = r.offset_bytes.checked_add(r.len_bytes).ok_or(-EINVAL)?;
        if end > cfg.capacity_bytes
            || !r.offset_bytes.is_multiple_of(SECTOR_BYTES)
            || !r.len_bytes.is_multiple_of(SECTOR_BYTES)
        {
            return Err(-EINVAL);
        }
        let (read_cmd_ns, write_cmd_ns) = (cfg.read_cmd_ns, cfg.write_cmd_ns);
        match r.op {
            Op::Write => {
                self.ftl.c.host_write_ios += 1;
                self.ftl.c.host_write_bytes += r.len_bytes;
                let (arrive, link_end) = self.link(t, r.len_bytes, false);
                let ce = self.controller(arrive, write_cmd_ns);
                let a = self.admit(ce);
                let data_in = a + xfer_ns(r.len_bytes, self.ftl.cfg.link_mbps);
                if r.len_bytes > 0 {
                    let first = r.offset_bytes / UNIT_BYTES;
                    let last = (end - 1) / UNIT_BYTES;
                    let slots = self.ftl.slots_for(r.data);
                    for lba in first..=last {
                        let partial =
                            r.offset_bytes > lba * UNIT_BYTES || end < (lba + 1) * UNIT_BYTES;
                        let ready = if partial {
                            self.read_modify(lba, a, data_in)
                        } else {
                            data_in
                        };
                        let p = self.ftl.write_unit(lba as u32, slots);
                        // GC work this write triggered goes on its dies first.
                        self.apply_pending(a);
                        let d = p.die as usize;
                        let x = p.slots as u64 * self.ftl.xfer_slot_ns;
                        let pe = ready.max(self.die_busy[d]) + x + self.prog_ns(p.slots, p.slc);
                        self.set_busy(d, pe);
                        self.last_prog_done = self.last_prog_done.max(pe);
                    }
                }
                Ok(data_in.max(link_end))
            }
            Op::Read => {
                self.ftl.c.host_read_ios += 1;
                self.ftl.c.host_read_bytes += r.len_bytes;
                let (arrive, link_end) = self.link(t, r.len_bytes, true);
                let ce = self.controller(arrive, read_cmd_ns);
                let mut done = ce;
                if r.len_bytes > 0 {
                    let cfg = &self.ftl.cfg;
                    let (read_ns, slc_read_ns) = (cfg.timing.read_ns, cfg.slc_timing.read_ns);
                    let first = r.offset_bytes / UNIT_BYTES;
                    let last = (end - 1) / UNIT_BYTES;
                    // Units of one stripe (written together) are read by one
                    // multi-plane page read; each moves its own bytes on the channel.
                    let mut last_stripe = u32::MAX;
                    for lba in first..=last {
                        if let Some((d, slc, stripe)) = self.ftl.locate_stripe(lba) {
                            let lo = r.offset_bytes.max(lba * UNIT_BYTES);
                            let hi = end.min((lba + 1) * UNIT_BYTES);
                            let x = if stripe == last_stripe {
                                self.channel_only(d as usize, ce, hi - lo)
                            } else {
                                let rn = if slc { slc_read_ns } else { read_ns };
                                self.read_unit(d as usize, ce, rn, hi - lo)
                            };
                            last_stripe = stripe;
                            done = done.max(x);
                        }
                    }
                }
                Ok(link_end.max(done + xfer_ns(r.len_bytes, self.ftl.cfg.link_mbps)))
            }
            Op::Trim => {
                self.ftl.c.host_trim_ios += 1;
                self.ftl.c.host_trim_bytes += r.len_bytes;
                let (arrive, link_end) = self.link(t, 0, false);
                let ce = self.controller(arrive, read_cmd_ns);
                // Only whole units are unmapped.
                let first = r.offset_bytes.div_ceil(UNIT_BYTES);
                let last = end / UNIT_BYTES;
                for lba in first..last {
                    self.ftl.trim_unit(lba as u32);
                }
                Ok(ce.max(link_end))
            }
            Op::Flush => {
                self.ftl.c.host_flush_ios += 1;
                let (arrive, link_end) = self.link(t, 0, false);
                let ce = self.controller(arrive, read_cmd_ns);
                Ok(ce.max(link_end).max(self.last_prog_done))
            }
        }
    }

    /// A write covers part of unit `lba`: if the unit holds data, its old content is
    /// read first (write-side work on the die that holds it, from the write's
    /// admission `a`). Returns when the merged unit is ready to program.
    pub(super) fn read_modify(&mut self, lba: u64, a: u64, data_in: u64) -> u64 {
        self.ftl.c.host_partial_units += 1;
        let Some((d, slc)) = self.ftl.locate(lba) else {
            return data_in;
        };
        let cfg = &self.ftl.cfg;
        let rn = if slc {
            cfg.slc_timing.read_ns
        } else {
            cfg.timing.read_ns
        };
        let d = d as usize;
        let e = self.die_busy[d].max(a) + rn + self.ftl.xfer_slot_ns * self.ftl.spu as u64;
        self.set_busy(d, e);
        self.ftl.c.nand_page_reads += 1;
        self.ftl.c.rmw_reads += 1;
        data_in.max(e)
    }
}
