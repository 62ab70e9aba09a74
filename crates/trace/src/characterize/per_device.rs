//! Footprint per device: distinct bytes touched by reads and writes on each device, and
//! their sum (a byte of two devices counts twice: each device stores it), in the same
//! bounded memory as one [`Footprint`].
//!
//! While every read and write went to one device (almost every trace), offsets go into
//! the footprint as they are: the single-device path is the footprint's own, at no
//! extra cost. When a second device shows up, the footprint so far is moved into a
//! layout of segments: each (device, GiB of that device) touched gets the next free
//! GiB of one address space, so the devices' ranges never meet and the bitmap stays as
//! dense as the devices' own footprints. At the end each segment's distinct bytes go
//! to its device. The segment map holds one entry per GiB of a device touched (a few
//! bytes each: 16 K entries for 16 TiB touched).

use super::footprint::Footprint;
use super::sequential::Devices;
use crate::formats::pair::PairMap;
use crate::model::Op;

/// Segment size: one bitmap page at the starting 4 KiB unit.
const SEG_SHIFT: u32 = 30;
const SEG_MASK: u64 = (1 << SEG_SHIFT) - 1;

pub(super) struct Footprints {
    fp: Footprint,
    mode: Mode,
    /// Remapped ranges of a chunk (several devices).
    ops: Vec<Op>,
    offset: Vec<u64>,
    len: Vec<u64>,
}

enum Mode {
    /// Every read and write so far was on this device slot (None: none yet).
    One(Option<u32>),
    Many(Segments),
}

/// (device slot, GiB of the device) -> segment, and segment -> slot.
#[derive(Default)]
struct Segments {
    index: PairMap<u64>,
    slots: Vec<u32>,
    /// The last lookup: (slot, GiB, segment base address).
    last: Option<(u32, u64, u64)>,
}

impl Segments {
    #[inline]
    fn base(&mut self, slot: u32, gib: u64) -> u64 {
        if let Some((s, g, b)) = self.last {
            if s == slot && g == gib {
                return b;
            }
        }
        let next = self.slots.len() as u64;
        let seg = *self.index.entry((u64::from(slot), gib)).or_insert(next);
        if seg == next {
            self.slots.push(slot);
        }
        let b = seg << SEG_SHIFT;
        self.last = Some((slot, gib, b));
        b
    }

    /// Pushes `[s, e)` of device `slot`, split at GiB boundaries, remapped.
    #[inline]
    fn remap(&mut self, slot: u32, s: u64, e: u64, out: &mut dyn FnMut(u64, u64)) {
        let mut a = s;
        while a < e {
            let gib = a >> SEG_SHIFT;
            let b = match (gib + 1).checked_shl(SEG_SHIFT) {
                Some(end) if end > a => end.min(e),
                _ => e,
            };
            let base = self.base(slot, gib);
            let at = base | (a & SEG_MASK);
            out(at, at + (b - a));
            a = b;
        }
    }
}

#[inline]
fn slot_of(devices: Devices, i: usize) -> u32 {
    match devices {
        Devices::Same(d) => d,
        Devices::PerRow(d) => d[i],
    }
}

impl Footprints {
    pub(super) fn new() -> Self {
        Self::with(Footprint::default())
    }

    fn with(fp: Footprint) -> Self {
        Footprints {
            fp,
            mode: Mode::One(None),
            ops: Vec::new(),
            offset: Vec::new(),
            len: Vec::new(),
        }
    }

    /// Adds the reads and writes of a chunk.
    pub(super) fn add_data(&mut self, ops: &[Op], offset: &[u64], len: &[u64], devices: Devices) {
        if let Mode::One(cur) = self.mode {
            match self.other_device(cur, ops, len, devices) {
                Ok(one) => {
                    self.mode = Mode::One(one);
                    self.fp.add_data(ops, offset, len);
                    return;
                }
                Err(first) => self.split_by_device(first),
            }
        }
        let Mode::Many(segs) = &mut self.mode else {
            unreachable!("moved to segments above")
        };
        self.offset.clear();
        self.len.clear();
        for i in 0..ops.len() {
            let (s, e) = (offset[i], offset[i].saturating_add(len[i]));
            if !ops[i].is_data() || s == e {
                continue;
            }
            let (o, l) = (&mut self.offset, &mut self.len);
            segs.remap(slot_of(devices, i), s, e, &mut |a, b| {
                o.push(a);
                l.push(b - a);
            });
        }
        self.ops.resize(self.offset.len(), Op::Read);
        self.fp.add_data(&self.ops, &self.offset, &self.len);
    }

    /// The one device of the chunk's reads and writes together with `cur`
    /// (Ok(None): no read or write yet), or Err with the first device: they differ.
    fn other_device(
        &self,
        cur: Option<u32>,
        ops: &[Op],
        len: &[u64],
        devices: Devices,
    ) -> Result<Option<u32>, u32> {
        let data = |i: usize| ops[i].is_data() && len[i] > 0;
        let first = match cur {
            Some(c) => c,
            None => match (0..ops.len()).find(|&i| data(i)) {
                Some(i) => slot_of(devices, i),
                None => return Ok(None),
            },
        };
        let all_same = match devices {
            Devices::Same(d) => d == first,
            // Usually every row is on the one device: one vectorised pass.
            Devices::PerRow(d) => d.iter().all(|&x| x == first),
        };
        if all_same || (0..ops.len()).all(|i| !data(i) || slot_of(devices, i) == first) {
            Ok(Some(first))
        } else {
            Err(first)
        }
    }

    /// Moves the footprint of device `first` (all so far) into the segment layout.
    #[cold]
    fn split_by_device(&mut self, first: u32) {
        let mut segs = Segments::default();
        let mut next = Footprint::default();
        self.fp.for_each_range(&mut |s, e| {
            segs.remap(first, s, e, &mut |a, b| next.add(a, b));
        });
        self.fp = next;
        self.mode = Mode::Many(segs);
    }

    /// (distinct bytes over all devices, granularity, distinct bytes per device slot
    /// in slot order).
    pub(super) fn finish(&mut self) -> (u64, u64, Vec<(u32, u64)>) {
        match &self.mode {
            Mode::One(cur) => {
                let (total, g) = self.fp.finish();
                let per = cur.map(|d| vec![(d, total)]).unwrap_or_default();
                (total, g, per)
            }
            Mode::Many(segs) => {
                let (bytes, g) = self.fp.finish_segments(SEG_SHIFT);
                let mut per: Vec<(u32, u64)> = Vec::new();
                let mut by_slot: Vec<u64> = Vec::new();
                for (seg, &b) in bytes.iter().enumerate() {
                    let slot = segs.slots[seg] as usize;
                    if by_slot.len() <= slot {
                        by_slot.resize(slot + 1, 0);
                    }
                    by_slot[slot] += b;
                }
                let mut seen = vec![false; by_slot.len()];
                for &s in &segs.slots {
                    seen[s as usize] = true;
                }
                for (slot, &b) in by_slot.iter().enumerate() {
                    if seen[slot] {
                        per.push((slot as u32, b));
                    }
                }
                let total = per.iter().map(|&(_, b)| b).sum();
                (total, g, per)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Distinct bytes per device, naively.
    fn naive(rows: &[(u32, u64, u64)]) -> std::collections::BTreeMap<u32, u64> {
        let mut by: std::collections::BTreeMap<u32, Vec<(u64, u64)>> = Default::default();
        for &(d, s, l) in rows {
            by.entry(d).or_default().push((s, s + l));
        }
        by.into_iter()
            .map(|(d, mut r)| {
                r.sort();
                let (mut total, mut end) = (0u64, 0u64);
                for (s, e) in r {
                    let s = s.max(end);
                    if e > s {
                        total += e - s;
                        end = e;
                    }
                }
                (d, total)
            })
            .collect()
    }

    fn run(rows: &[(u32, u64, u64)], chunk: usize) -> (u64, Vec<(u32, u64)>) {
        let mut f = Footprints::new();
        for c in rows.chunks(chunk) {
            let ops = vec![Op::Write; c.len()];
            let off: Vec<u64> = c.iter().map(|r| r.1).collect();
            let len: Vec<u64> = c.iter().map(|r| r.2).collect();
            let dev: Vec<u32> = c.iter().map(|r| r.0).collect();
            f.add_data(&ops, &off, &len, Devices::PerRow(&dev));
        }
        let (total, g, per) = f.finish();
        assert_eq!(g, 1);
        (total, per)
    }

    #[test]
    fn same_offsets_on_three_devices_count_three_times() {
        let mut rows = Vec::new();
        for d in 1..=3u32 {
            for i in 0..1000u64 {
                rows.push((d, i * 8192, 4096));
            }
        }
        let (total, per) = run(&rows, 700);
        assert_eq!(
            per,
            vec![(1, 4096 * 1000), (2, 4096 * 1000), (3, 4096 * 1000)]
        );
        assert_eq!(total, 3 * 4096 * 1000);
    }

    #[test]
    fn matches_a_naive_union_per_device_across_the_switch_and_gib_edges() {
        let mut rng = crate::test_rng::XorShift(7);
        let mut rows = Vec::new();
        // One device first (the footprint starts in its single-device layout) ...
        for _ in 0..5000 {
            let s = rng.below(1 << 36) / 512 * 512;
            rows.push((1, s, 512 * (1 + rng.below(64))));
        }
        // ... ranges across GiB boundaries, unaligned ones, then four devices mixed.
        rows.push((1, (3 << 30) - 1000, 5000));
        rows.push((1, (7 << 30) - 4096, 3 << 30));
        for _ in 0..20_000 {
            let d = rng.below(4) as u32;
            let s = rng.below(1 << 34) + if rng.below(3) == 0 { 1 } else { 0 };
            rows.push((d, s, 1 + rng.below(1 << 17)));
        }
        let (total, per) = run(&rows, 997);
        let want = naive(&rows);
        let want_per: Vec<(u32, u64)> = want.iter().map(|(&d, &b)| (d, b)).collect();
        assert_eq!(per, want_per);
        assert_eq!(total, want.values().sum::<u64>());
    }

    #[test]
    fn one_device_is_the_plain_footprint() {
        let rows: Vec<(u32, u64, u64)> = (0..100u64).map(|i| (5, i * 4096, 4096)).collect();
        let (total, per) = run(&rows, 30);
        assert_eq!((total, per), (409_600, vec![(5, 409_600)]));
        assert!(matches!(
            {
                let mut f = Footprints::new();
                f.add_data(&[Op::Read], &[0], &[4096], Devices::Same(2));
                f.mode
            },
            Mode::One(Some(2))
        ));
    }
}
