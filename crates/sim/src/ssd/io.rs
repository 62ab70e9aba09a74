//! One host command through the drive: writes (the write buffer, programs, partial
//! units read first), reads (read-ahead, multi-plane page reads, channel, link), TRIM
//! and flush.

use super::host::xfer_ns;
use super::readahead::CHUNK_UNITS;
use super::{SimSsd, EINVAL};
use crate::config::{SECTOR_BYTES, UNIT_BYTES};
use storbench_core::{IoRequest, Op};

impl SimSsd {
    /// Schedule `r` submitted now; returns when it completes, or an errno.
    pub(super) fn schedule(&mut self, r: &IoRequest) -> Result<u64, i32> {
        let cfg = &self.ftl.cfg;
        let end = r.offset_bytes.checked_add(r.len_bytes).ok_or(-EINVAL)?;
        if end > cfg.capacity_bytes
            || !r.offset_bytes.is_multiple_of(SECTOR_BYTES)
            || !r.len_bytes.is_multiple_of(SECTOR_BYTES)
        {
            return Err(-EINVAL);
        }
        self.background_when_idle(self.now_ns);
        Ok(match r.op {
            Op::Write => self.write(r, end),
            Op::Read => self.read(r, end),
            Op::Trim => self.trim(r, end),
            Op::Flush => self.flush(),
        })
    }

    /// A write: link, controller, the write buffer, then each unit to its die (GC it
    /// triggers queued there first). Completes once its data is in the buffer.
    fn write(&mut self, r: &IoRequest, end: u64) -> u64 {
        self.ftl.c.host_write_ios += 1;
        self.ftl.c.host_write_bytes += r.len_bytes;
        let t = self.now_ns;
        let (arrive, link_end) = self.link(t, r.len_bytes, false);
        let cfg = &self.ftl.cfg;
        let (occ, lat, link_mbps) = (cfg.write_cmd_ns, cfg.write_latency_ns, cfg.link_mbps);
        let ce = self.controller(arrive, occ, lat);
        if r.len_bytes == 0 {
            return ce.max(link_end);
        }
        let first = r.offset_bytes / UNIT_BYTES;
        let last = (end - 1) / UNIT_BYTES;
        let a = self.buffer.admit(ce, last - first + 1);
        let data_in = a + xfer_ns(r.len_bytes, link_mbps);
        let slots = self.ftl.slots_for(r.data);
        let wpath_ns = match self.ftl.cfg.write_path_mbps {
            0 => 0,
            mbps => xfer_ns(UNIT_BYTES, mbps),
        };
        self.ftl
            .set_host_io((last - first + 1).min(u32::MAX as u64) as u32);
        for lba in first..=last {
            let partial = r.offset_bytes > lba * UNIT_BYTES || end < (lba + 1) * UNIT_BYTES;
            let mut ready = if partial {
                self.read_modify(lba, a, data_in)
            } else {
                data_in
            };
            if wpath_ns > 0 {
                self.wpath_busy = self.wpath_busy.max(ready) + wpath_ns;
                ready = self.wpath_busy;
            }
            let p = self.ftl.write_unit(lba as u32, slots);
            self.apply_pending(a);
            let x = p.slots as u64 * self.ftl.xfer_slot_ns;
            let pe = self.host_program(p.die as usize, ready, x + self.prog_ns(p.slots, p.slc));
            self.buffer.push(pe);
            self.last_prog_done = self.last_prog_done.max(pe);
        }
        data_in.max(link_end)
    }

    /// A read: link, controller, then the units' data, from read-ahead or from the
    /// dies, then the link back.
    fn read(&mut self, r: &IoRequest, end: u64) -> u64 {
        self.ftl.c.host_read_ios += 1;
        self.ftl.c.host_read_bytes += r.len_bytes;
        let t = self.now_ns;
        let (arrive, link_end) = self.link(t, r.len_bytes, true);
        let cfg = &self.ftl.cfg;
        let (occ, lat, link_mbps) = (cfg.read_cmd_ns, cfg.read_latency_ns, cfg.link_mbps);
        let ce = self.controller(arrive, occ, lat);
        let mut done = ce;
        if r.len_bytes > 0 {
            let first = r.offset_bytes / UNIT_BYTES;
            let last = (end - 1) / UNIT_BYTES;
            let window = self.ftl.cfg.read_ahead_units as u64;
            let seq = window > 0 && self.read_ahead.begin(first, last);
            let (mut from, mut to) = (first, first);
            for lba in first..=last {
                let ahead = if seq {
                    self.read_ahead.ready(lba)
                } else {
                    None
                };
                match ahead {
                    Some(ready) => done = done.max(ready),
                    None if to == lba => to = lba + 1,
                    None => {
                        done = done.max(self.read_units(from, to, ce, r.offset_bytes, end));
                        (from, to) = (lba, lba + 1);
                    }
                }
            }
            if from < to {
                done = done.max(self.read_units(from, to, ce, r.offset_bytes, end));
            }
            if seq {
                self.read_on(ce, window);
            }
        }
        link_end.max(done + xfer_ns(r.len_bytes, link_mbps))
    }

    /// Read units `from..to` from the dies for a read of bytes `lo..hi`, its NAND work
    /// starting at `t`; returns when the last byte is off its channel. Units of one
    /// stripe (written together) are read by one multi-plane page read; each moves its
    /// own bytes on the channel. Unmapped units cost no NAND.
    fn read_units(&mut self, from: u64, to: u64, t: u64, lo: u64, hi: u64) -> u64 {
        let cfg = &self.ftl.cfg;
        let (read_ns, slc_read_ns) = (cfg.timing.read_ns, cfg.slc_timing.read_ns);
        let mut done = t;
        let mut last_stripe = u32::MAX;
        for lba in from..to {
            if let Some((d, slc, stripe)) = self.ftl.locate_stripe(lba) {
                let a = lo.max(lba * UNIT_BYTES);
                let b = hi.min((lba + 1) * UNIT_BYTES);
                let x = if stripe == last_stripe {
                    self.channel_only(d as usize, t, b - a)
                } else {
                    let rn = if slc { slc_read_ns } else { read_ns };
                    self.read_unit(d as usize, t, rn, b - a)
                };
                last_stripe = stripe;
                done = done.max(x);
            }
        }
        done
    }

    /// Keep the stream's read-ahead window full: read on from where it stops, a chunk
    /// at a time, starting at `t`.
    fn read_on(&mut self, t: u64, window: u64) {
        let units = self.ftl.user_units();
        while let Some((start, stop)) = self.read_ahead.want(window, units) {
            debug_assert!(stop - start <= CHUNK_UNITS);
            let lo = start * UNIT_BYTES;
            let ready = self.read_units(start, stop, t, lo, stop * UNIT_BYTES);
            self.read_ahead.add(start, stop, ready);
        }
    }

    /// TRIM: whole units are unmapped.
    fn trim(&mut self, r: &IoRequest, end: u64) -> u64 {
        self.ftl.c.host_trim_ios += 1;
        self.ftl.c.host_trim_bytes += r.len_bytes;
        let (arrive, link_end) = self.link(self.now_ns, 0, false);
        let cfg = &self.ftl.cfg;
        let ce = self.controller(arrive, cfg.read_cmd_ns, cfg.read_latency_ns);
        let first = r.offset_bytes.div_ceil(UNIT_BYTES);
        let last = end / UNIT_BYTES;
        for lba in first..last {
            self.ftl.trim_unit(lba as u32);
        }
        ce.max(link_end)
    }

    /// Flush: the part-filled stripe is programmed, and the flush waits for the last
    /// host program.
    fn flush(&mut self) -> u64 {
        self.ftl.c.host_flush_ios += 1;
        let (arrive, link_end) = self.link(self.now_ns, 0, false);
        let cfg = &self.ftl.cfg;
        let ce = self.controller(arrive, cfg.read_cmd_ns, cfg.read_latency_ns);
        self.program_partial(ce);
        ce.max(link_end).max(self.last_prog_done)
    }

    /// A write covers part of unit `lba`: if the unit holds data, its old content is
    /// read first (write-side work on the die that holds it, from the write's
    /// admission `a`). Returns when the merged unit is ready to program.
    fn read_modify(&mut self, lba: u64, a: u64, data_in: u64) -> u64 {
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
        let e = self.host_program(d, a, rn + self.ftl.xfer_slot_ns * self.ftl.spu as u64);
        self.ftl.c.nand_page_reads += 1;
        self.ftl.c.rmw_reads += 1;
        data_in.max(e)
    }
}
