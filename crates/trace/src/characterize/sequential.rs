//! Sequential I/O: a read (write) starting where the previous read (write) on the same
//! device ended.

use crate::model::Op;

/// Device slots of a batch: 0 for no device, else the device id + 1.
#[derive(Clone, Copy)]
pub(super) enum Devices<'a> {
    Same(u32),
    PerRow(&'a [u32]),
}

/// "No previous read / write" in the one-device loop of [`Sequential::push`].
const NONE: u64 = u64::MAX;

#[derive(Clone)]
pub(super) struct Sequential {
    /// End offset of the previous read / write, per device slot. Sequentiality is
    /// judged per device: offsets on different devices are unrelated, so interleaved
    /// devices must not break each other's runs. Grows to the number of distinct
    /// devices in the trace.
    prev_end: Vec<[Option<u64>; 2]>,
    /// Sequential reads, writes.
    pub(super) seq: [u64; 2],
    /// Sequential reads and writes per device slot.
    pub(super) seq_per_slot: Vec<u64>,
}

impl Sequential {
    pub(super) fn new() -> Self {
        Sequential {
            prev_end: vec![[None; 2]],
            seq: [0; 2],
            seq_per_slot: vec![0],
        }
    }

    fn slot(&mut self, slot: u32) -> &mut [Option<u64>; 2] {
        let slot = slot as usize;
        if slot >= self.prev_end.len() {
            self.prev_end.resize(slot + 1, [None; 2]);
            self.seq_per_slot.resize(slot + 1, 0);
        }
        &mut self.prev_end[slot]
    }

    /// [`Sequential::push`] for one device from `start`, with the ends kept as
    /// options: the way for a batch holding an offset of u64::MAX.
    #[cold]
    fn push_exact(
        &mut self,
        slot: u32,
        start: [Option<u64>; 2],
        ops: &[Op],
        offset: &[u64],
        len: &[u64],
    ) {
        let mut prev = start;
        let mut n = 0;
        for ((&op, &off), &l) in ops.iter().zip(offset).zip(len) {
            if op.is_data() {
                let p = &mut prev[op.index()];
                let seq = u64::from(*p == Some(off));
                self.seq[op.index()] += seq;
                n += seq;
                *p = Some(off.saturating_add(l));
            }
        }
        *self.slot(slot) = prev;
        self.seq_per_slot[slot as usize] += n;
    }

    pub(super) fn push(&mut self, ops: &[Op], offset: &[u64], len: &[u64], devices: Devices) {
        let n = ops.len();
        assert!(offset.len() == n && len.len() == n);
        let devices = match devices {
            Devices::PerRow(d) => {
                assert_eq!(d.len(), n);
                // One device in the whole batch (the usual case)? An OR of differences
                // (vectorises; an `all` with its early exit did not).
                match d.first() {
                    Some(&first) if d.iter().fold(0, |a, &x| a | (x ^ first)) == 0 => {
                        Devices::Same(first)
                    }
                    _ => devices,
                }
            }
            same => same,
        };
        match devices {
            // One device: both ends in registers, selects, no branch. "No previous
            // I/O" is the end u64::MAX, which only an offset of u64::MAX could match:
            // a batch holding one is done again the exact way below.
            Devices::Same(slot) => {
                let start = *self.slot(slot);
                let [mut r, mut w] = start.map(|e| e.unwrap_or(NONE));
                let (mut seq_r, mut seq_w) = (0u64, 0u64);
                let mut max_offset = 0;
                for i in 0..n {
                    let (op, off) = (ops[i], offset[i]);
                    let end = off.saturating_add(len[i]);
                    let (is_r, is_w) = (op == Op::Read, op == Op::Write);
                    seq_r += u64::from(is_r & (r == off));
                    seq_w += u64::from(is_w & (w == off));
                    r = if is_r { end } else { r };
                    w = if is_w { end } else { w };
                    max_offset = max_offset.max(off);
                }
                if max_offset == NONE {
                    self.push_exact(slot, start, ops, offset, len);
                    return;
                }
                // An end of u64::MAX is "none" or a saturated end: which, the rows say.
                let end = |e: u64, dir: Op, was: Option<u64>| match e {
                    NONE if !ops.contains(&dir) => was,
                    e => Some(e),
                };
                *self.slot(slot) = [end(r, Op::Read, start[0]), end(w, Op::Write, start[1])];
                self.seq[0] += seq_r;
                self.seq[1] += seq_w;
                self.seq_per_slot[slot as usize] += seq_r + seq_w;
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
                    let slot = slots[i] as usize;
                    let prev = &mut self.prev_end[slot][dir];
                    let off = offset[i];
                    let seq = u64::from(*prev == Some(off));
                    self.seq[dir] += seq;
                    self.seq_per_slot[slot] += seq;
                    *prev = Some(off.saturating_add(len[i]));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition, one record at a time, ends as options.
    fn model(batches: &[Vec<(Op, u64, u64)>]) -> [u64; 2] {
        let (mut prev, mut seq) = ([None::<u64>; 2], [0u64; 2]);
        for &(op, off, len) in batches.iter().flatten() {
            if op.is_data() {
                seq[op.index()] += u64::from(prev[op.index()] == Some(off));
                prev[op.index()] = Some(off.saturating_add(len));
            }
        }
        seq
    }

    #[test]
    fn one_device_loop_matches_the_definition_at_the_edges_of_u64() {
        let mut rng = crate::test_rng::XorShift(0x5E9_u64 << 20 | 7);
        let m = u64::MAX;
        // Offsets and lengths that end at, run into or start at u64::MAX, and batches
        // in which "no read yet" and "a read ended at u64::MAX" must be told apart.
        let edge = [
            (0, 4096),
            (4096, 4096),
            (m - 4096, 4096),
            (m - 10, 4096),
            (m, 0),
            (m, 4096),
        ];
        for round in 0..400 {
            let batches: Vec<Vec<(Op, u64, u64)>> = (0..1 + rng.below(4))
                .map(|_| {
                    (0..rng.below(6))
                        .map(|_| {
                            let op =
                                [Op::Read, Op::Write, Op::Trim, Op::Flush][rng.below(4) as usize];
                            let (off, len) = edge[rng.below(edge.len() as u64) as usize];
                            (op, off, len)
                        })
                        .collect()
                })
                .collect();
            let mut s = Sequential::new();
            for b in &batches {
                let ops: Vec<Op> = b.iter().map(|r| r.0).collect();
                let off: Vec<u64> = b.iter().map(|r| r.1).collect();
                let len: Vec<u64> = b.iter().map(|r| r.2).collect();
                s.push(&ops, &off, &len, Devices::Same(0));
            }
            assert_eq!(s.seq, model(&batches), "round {round}: {batches:?}");
        }
    }
}
