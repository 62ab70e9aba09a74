//! Sequential I/O: a read (write) starting where the previous read (write) on the same
//! device ended.

use crate::model::Op;

/// Device slots of a batch: 0 for no device, else the device id + 1.
#[derive(Clone, Copy)]
pub(super) enum Devices<'a> {
    Same(u32),
    PerRow(&'a [u32]),
}

#[derive(Clone)]
pub(super) struct Sequential {
    /// End offset of the previous read / write, per device slot. Sequentiality is
    /// judged per device: offsets on different devices are unrelated, so interleaved
    /// devices must not break each other's runs. Grows to the number of distinct
    /// devices in the trace.
    prev_end: Vec<[Option<u64>; 2]>,
    /// Sequential reads, writes.
    pub(super) seq: [u64; 2],
}

impl Sequential {
    pub(super) fn new() -> Self {
        Sequential {
            prev_end: vec![[None; 2]],
            seq: [0; 2],
        }
    }

    fn slot(&mut self, slot: u32) -> &mut [Option<u64>; 2] {
        let slot = slot as usize;
        if slot >= self.prev_end.len() {
            self.prev_end.resize(slot + 1, [None; 2]);
        }
        &mut self.prev_end[slot]
    }

    #[inline(never)]
    pub(super) fn push(&mut self, ops: &[Op], offset: &[u64], len: &[u64], devices: Devices) {
        let n = ops.len();
        assert!(offset.len() == n && len.len() == n);
        let devices = match devices {
            Devices::PerRow(d) => {
                assert_eq!(d.len(), n);
                match d.first() {
                    Some(&first) if d.iter().all(|&x| x == first) => Devices::Same(first),
                    _ => devices,
                }
            }
            same => same,
        };
        match devices {
            // One device (the usual case): both ends in registers, selects, no branch.
            Devices::Same(slot) => {
                let [mut r, mut w] = *self.slot(slot);
                let (mut seq_r, mut seq_w) = (0u64, 0u64);
                for i in 0..n {
                    let (op, off) = (ops[i], offset[i]);
                    let end = Some(off.saturating_add(len[i]));
                    let (is_r, is_w) = (op == Op::Read, op == Op::Write);
                    seq_r += u64::from(is_r & (r == Some(off)));
                    seq_w += u64::from(is_w & (w == Some(off)));
                    r = if is_r { end } else { r };
                    w = if is_w { end } else { w };
                }
                *self.slot(slot) = [r, w];
                self.seq[0] += seq_r;
                self.seq[1] += seq_w;
            }
            Devices::PerRow(slots) => {
                if let Some(&max) = slots.iter().max() {
                    self.slot(max);
                }
                for i in 0..n {
                    let op = ops[i];
                    if !op.is_data() {
                        continue;
                    }
                    let dir = op.index();
                    let prev = &mut self.prev_end[slots[i] as usize][dir];
                    let off = offset[i];
                    self.seq[dir] += u64::from(*prev == Some(off));
                    *prev = Some(off.saturating_add(len[i]));
                }
            }
        }
    }
}
