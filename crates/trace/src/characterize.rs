//! `characterize`: the statistics published trace-based benchmarks print, computed in
//! one streaming pass with bounded memory. Definitions: METHODOLOGY section 2, and
//! `docs/trace-format.md` ("characterize") for the choices made here.
//!
//! Input order: records must arrive in non-decreasing `issue_ns` (the order every
//! importer writes). A record issued before its predecessor is counted in
//! [`Characterization::issue_order_violations`] and treated as issued at the
//! predecessor's time, so every figure stays defined.

use crate::error::TraceError;
use crate::model::{IoRecord, Op};
use crate::store::{ColumnBatch, Columns, TraceReader};
use arrow_array::Array;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::fmt::Write as _;
use std::path::Path;

/// Version of the [`Characterization`] JSON; bumped on incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// The sizes of the published size breakdown (bytes); anything else is "other".
pub const SIZE_BUCKETS_BYTES: [u64; 6] = [4096, 8192, 16384, 32768, 65536, 131072];

/// QD histogram buckets: inclusive lower bounds; the last bucket is open.
pub const QD_BUCKET_MIN: [u32; 9] = [1, 2, 3, 4, 5, 9, 17, 33, 65];

/// Above this many disjoint intervals the footprint set coarsens (see [`Footprint`]).
pub const FOOTPRINT_MAX_INTERVALS: usize = 1 << 20;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Characterization {
    pub schema_version: u32,
    /// All I/Os (reads + writes + trims + flushes).
    pub ios_total: u64,
    pub reads: u64,
    pub writes: u64,
    pub trims: u64,
    pub flushes: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub bytes_trimmed: u64,
    /// `bytes_read / 10^9`.
    pub gb_read: f64,
    /// `bytes_written / 10^9`.
    pub gb_written: f64,
    /// Size breakdown over reads and writes (trims and flushes are not data I/O):
    /// exact sizes 4K..128K, then "other".
    pub sizes: Vec<SizeBucket>,
    /// Reads and writes whose offset equals the end of the previous I/O of the same direction.
    pub sequential_ios: u64,
    /// `sequential_ios / (reads + writes) * 100`.
    pub sequential_pct: f64,
    pub sequential_read_pct: f64,
    pub sequential_write_pct: f64,
    /// First issue to last issue or completion, whichever is later.
    pub duration_ns: u64,
    /// I/Os whose completion time is known; the figures below use only these.
    pub ios_with_completion: u64,
    /// Time at least one I/O (any op) was outstanding. None when no completion is known.
    pub busy_ns: Option<u64>,
    pub busy_read_ns: Option<u64>,
    pub busy_write_ns: Option<u64>,
    /// `duration_ns - busy_ns`.
    pub idle_ns: Option<u64>,
    /// Queue-depth statistics; None when no completion is known.
    pub qd: Option<QdStats>,
    /// Service time (completion - issue) of reads and writes, in µs.
    pub service_time_us: Option<Percentiles>,
    /// Distinct bytes touched by reads and writes (union of their byte ranges).
    pub footprint_bytes: u64,
    /// 1 when `footprint_bytes` is exact; otherwise the block size ranges were rounded
    /// out to, to bound memory (an over-estimate by less than one block per range).
    pub footprint_granularity_bytes: u64,
    /// Gaps between consecutive issues (all ops), in µs.
    pub inter_arrival_us: Option<Percentiles>,
    /// Records issued before the record before them (see module docs).
    pub issue_order_violations: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SizeBucket {
    /// "4K", "8K", ..., "128K", "other".
    pub label: String,
    /// The exact size, None for "other".
    pub len_bytes: Option<u64>,
    pub count: u64,
    /// Percentage of reads + writes.
    pub pct: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QdStats {
    /// Time-weighted average QD over busy time: (sum of service times) / busy time.
    pub avg_qd: f64,
    pub max_qd: u32,
    /// I/Os issued when no other I/O was outstanding.
    pub ios_at_qd1: u64,
    /// `ios_at_qd1 / ios_with_completion * 100`.
    pub qd1_pct: f64,
    pub histogram: Vec<QdBucket>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QdBucket {
    pub qd_min: u32,
    /// Inclusive; None for the open last bucket.
    pub qd_max: Option<u32>,
    /// Share of busy time spent at a QD in this bucket (%).
    pub busy_pct: f64,
    /// I/Os whose QD right after their issue (themselves included) is in this bucket.
    pub issued_ios: u64,
    pub issued_pct: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    pub count: u64,
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p99_9: f64,
    pub max: f64,
}

/// Log-linear histogram of u64 values: 2^SUB sub-buckets per power of two, so any
/// reported percentile is within 1/2^SUB (0.8%) of a real sample. Fixed size.
#[derive(Clone)]
struct LogHist {
    counts: Vec<u64>,
    n: u64,
    sum: u128,
    max: u64,
}

const SUB_BITS: u32 = 7;
const SUB: u64 = 1 << SUB_BITS;

impl LogHist {
    fn new() -> Self {
        LogHist {
            counts: vec![0; (65 * SUB) as usize],
            n: 0,
            sum: 0,
            max: 0,
        }
    }

    #[inline]
    fn index(v: u64) -> usize {
        if v < SUB {
            return v as usize;
        }
        let msb = 63 - v.leading_zeros(); // >= SUB_BITS
        let shift = msb - SUB_BITS;
        let sub = (v >> shift) & (SUB - 1);
        ((u64::from(shift) + 1) * SUB + sub) as usize
    }

    /// The smallest value that maps to bucket `i`, plus half the bucket width.
    fn value(i: usize) -> f64 {
        let i = i as u64;
        if i < SUB {
            return i as f64;
        }
        let shift = i / SUB - 1;
        let sub = i % SUB;
        let low = (SUB + sub) << shift;
        low as f64 + ((1u64 << shift) as f64 - 1.0) / 2.0
    }

    #[inline]
    fn add(&mut self, v: u64) {
        self.counts[Self::index(v)] += 1;
        self.n += 1;
        self.sum += u128::from(v);
        self.max = self.max.max(v);
    }

    fn quantile(&self, q: f64) -> f64 {
        assert!(self.n > 0);
        let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Self::value(i).min(self.max as f64);
            }
        }
        self.max as f64
    }

    /// Percentiles in units of `scale` (e.g. 1000.0 turns ns into µs).
    fn percentiles(&self, scale: f64) -> Option<Percentiles> {
        if self.n == 0 {
            return None;
        }
        Some(Percentiles {
            count: self.n,
            mean: self.sum as f64 / self.n as f64 / scale,
            p50: self.quantile(0.50) / scale,
            p90: self.quantile(0.90) / scale,
            p99: self.quantile(0.99) / scale,
            p99_9: self.quantile(0.999) / scale,
            max: self.max as f64 / scale,
        })
    }
}

/// Union of byte ranges with bounded memory: a sorted vector of disjoint, non-touching
/// ranges plus a pending buffer merged in when it grows as large as the set (amortised
/// O(log n) per range). When the set holds more than [`FOOTPRINT_MAX_INTERVALS`] ranges,
/// ranges are rounded out to a granularity (4 KiB first, then doubling) until at most
/// half that many remain; from then on the figure is an upper bound (exact again for
/// I/O aligned to the granularity).
#[derive(Clone, Debug)]
struct IntervalSet {
    set: Vec<(u64, u64)>,
    pending: Vec<(u64, u64)>,
    /// Radix-sort buffer, as large as `pending`.
    scratch: Vec<(u64, u64)>,
    granularity_bytes: u64,
    max_intervals: usize,
}

impl IntervalSet {
    fn with_max_intervals(max_intervals: usize) -> Self {
        assert!(max_intervals >= 4);
        IntervalSet {
            set: Vec::new(),
            pending: Vec::new(),
            scratch: Vec::new(),
            granularity_bytes: 1,
            max_intervals,
        }
    }

    #[inline]
    fn add(&mut self, start: u64, end: u64) {
        debug_assert!(start <= end);
        if start == end {
            return;
        }
        // Fast path: extends the last range added (sequential I/O).
        if let Some(last) = self.pending.last_mut() {
            if start == last.1 {
                last.1 = end;
                return;
            }
        }
        self.pending.push((start, end));
        if self.pending.len() >= self.set.len().max(1 << 16) {
            self.merge();
        }
    }

    fn round(&self, (s, e): (u64, u64)) -> (u64, u64) {
        let g = self.granularity_bytes;
        if g == 1 {
            return (s, e);
        }
        (s / g * g, e.div_ceil(g).saturating_mul(g))
    }

    fn merge(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let mut pending = std::mem::take(&mut self.pending);
        for r in pending.iter_mut() {
            *r = self.round(*r);
        }
        radix_sort_by_start(&mut pending, &mut self.scratch);
        let mut merged = Vec::with_capacity(self.set.len() + pending.len());
        let (mut i, mut j) = (0, 0);
        while i < self.set.len() || j < pending.len() {
            let next =
                if j >= pending.len() || (i < self.set.len() && self.set[i].0 <= pending[j].0) {
                    i += 1;
                    self.set[i - 1]
                } else {
                    j += 1;
                    pending[j - 1]
                };
            match merged.last_mut() {
                Some((_, e)) if next.0 <= *e => *e = (*e).max(next.1),
                _ => merged.push(next),
            }
        }
        self.set = merged;
        pending.clear();
        self.pending = pending;
        while self.set.len() > self.max_intervals {
            self.granularity_bytes = if self.granularity_bytes == 1 {
                4096
            } else {
                self.granularity_bytes * 2
            };
            let mut coarse: Vec<(u64, u64)> = Vec::with_capacity(self.set.len());
            for &r in &self.set {
                let r = self.round(r);
                match coarse.last_mut() {
                    Some((_, e)) if r.0 <= *e => *e = (*e).max(r.1),
                    _ => coarse.push(r),
                }
            }
            self.set = coarse;
            if self.set.len() <= self.max_intervals / 2 {
                break;
            }
        }
    }

    /// Merges what is pending; the disjoint, sorted ranges and the granularity.
    fn finish(&mut self) -> (&[(u64, u64)], u64) {
        self.merge();
        (&self.set, self.granularity_bytes)
    }
}

/// Bits per bitmap page (a page is 32 KiB).
const PAGE_BITS: u32 = 18;
const PAGE_WORDS: usize = 1 << (PAGE_BITS - 6);
/// Bitmap pages held at most (64 MiB); beyond that the unit doubles.
pub const FOOTPRINT_MAX_PAGES: usize = 2048;
/// Page-directory entries at most; ranges past it go to the interval set.
const MAX_DIR: usize = 1 << 16;
/// The finest bitmap unit (512 B sectors) and the one it starts with (4 KiB).
const FINEST_UNIT_SHIFT: u32 = 9;
const START_UNIT_SHIFT: u32 = 12;
/// Ranges longer than this many units go to the interval set (one entry there, where
/// the bitmap would set millions of bits).
const MAX_BITMAP_RANGE_UNITS: u64 = 4 << PAGE_BITS;

/// Distinct bytes touched: a paged bitmap of device units (4 KiB, refined down to
/// 512 B when I/O is only that aligned) for the common case, O(1) per range; ranges the
/// bitmap cannot hold exactly (not 512-byte aligned, very long, or beyond the
/// directory) go to an exact interval set, and the two are combined without double
/// counting at the end. Memory is bounded: at most [`FOOTPRINT_MAX_PAGES`] pages (the
/// unit doubles past that, and the figure becomes an over-estimate by less than one
/// unit per range) plus the interval set's own bound ([`FOOTPRINT_MAX_INTERVALS`]).
#[derive(Clone, Debug)]
pub struct Footprint {
    unit_shift: u32,
    /// False once the bitmap was coarsened (ranges since rounded out to the unit).
    exact: bool,
    dir: Vec<Option<Box<[u64]>>>,
    pages: usize,
    max_pages: usize,
    rest: IntervalSet,
    /// Ranges not yet applied (at most [`FOOTPRINT_BUF_RANGES`]).
    buf: Vec<(u64, u64)>,
    sort_scratch: Vec<(u64, u64)>,
}

/// Ranges buffered before they are sorted and applied (1 MiB, plus as much scratch).
const FOOTPRINT_BUF_RANGES: usize = 1 << 16;

impl Default for Footprint {
    fn default() -> Self {
        Self::with_limits(FOOTPRINT_MAX_PAGES, FOOTPRINT_MAX_INTERVALS)
    }
}

/// Bit i of `x` to bits 2i and 2i+1.
fn spread_bits(x: u32) -> u64 {
    let mut x = u64::from(x);
    x = (x | x << 16) & 0x0000_FFFF_0000_FFFF;
    x = (x | x << 8) & 0x00FF_00FF_00FF_00FF;
    x = (x | x << 4) & 0x0F0F_0F0F_0F0F_0F0F;
    x = (x | x << 2) & 0x3333_3333_3333_3333;
    x = (x | x << 1) & 0x5555_5555_5555_5555;
    x | x << 1
}

/// Bits 2i and 2i+1 of `w`, OR-ed, to bit i.
fn compact_bits(w: u64) -> u32 {
    let mut x = (w | w >> 1) & 0x5555_5555_5555_5555;
    x = (x | x >> 1) & 0x3333_3333_3333_3333;
    x = (x | x >> 2) & 0x0F0F_0F0F_0F0F_0F0F;
    x = (x | x >> 4) & 0x00FF_00FF_00FF_00FF;
    x = (x | x >> 8) & 0x0000_FFFF_0000_FFFF;
    x = (x | x >> 16) & 0x0000_0000_FFFF_FFFF;
    x as u32
}

/// Sets bits [a, b) of a page.
#[inline]
fn set_bit_range(words: &mut [u64], a: usize, b: usize) {
    debug_assert!(a < b && b <= words.len() * 64);
    let (wa, wb) = (a / 64, (b - 1) / 64);
    let ma = !0u64 << (a % 64);
    let mb = !0u64 >> (63 - (b - 1) % 64);
    if wa == wb {
        words[wa] |= ma & mb;
    } else {
        words[wa] |= ma;
        words[wa + 1..wb].fill(!0);
        words[wb] |= mb;
    }
}

/// Counts the set bits [a, b) of a page.
fn count_bit_range(words: &[u64], a: usize, b: usize) -> u64 {
    if a >= b {
        return 0;
    }
    let (wa, wb) = (a / 64, (b - 1) / 64);
    let ma = !0u64 << (a % 64);
    let mb = !0u64 >> (63 - (b - 1) % 64);
    if wa == wb {
        return u64::from((words[wa] & ma & mb).count_ones());
    }
    let mid: u64 = words[wa + 1..wb]
        .iter()
        .map(|w| u64::from(w.count_ones()))
        .sum();
    u64::from((words[wa] & ma).count_ones()) + mid + u64::from((words[wb] & mb).count_ones())
}

impl Footprint {
    /// With explicit bounds (tests use tiny ones).
    pub fn with_limits(max_pages: usize, max_intervals: usize) -> Self {
        assert!(max_pages >= 2);
        Footprint {
            unit_shift: START_UNIT_SHIFT,
            exact: true,
            dir: Vec::new(),
            pages: 0,
            max_pages,
            rest: IntervalSet::with_max_intervals(max_intervals),
            buf: Vec::with_capacity(FOOTPRINT_BUF_RANGES),
            sort_scratch: Vec::new(),
        }
    }

    /// Adds the byte range [start, end). Ranges are buffered, sorted by address and
    /// then applied: applied in arrival order, random ranges miss the cache on their
    /// bitmap word every time. A range continuing the last one extends it.
    #[inline]
    pub fn add(&mut self, start: u64, end: u64) {
        debug_assert!(start <= end);
        if start == end {
            return;
        }
        if let Some(last) = self.buf.last_mut() {
            if start == last.1 {
                last.1 = end;
                return;
            }
        }
        self.buf.push((start, end));
        if self.buf.len() >= FOOTPRINT_BUF_RANGES {
            self.flush();
        }
    }

    fn flush(&mut self) {
        let mut buf = std::mem::take(&mut self.buf);
        // In address order the bitmap is walked front to back (prefetchable) instead
        // of missing the cache on every random range.
        radix_sort_by_start(&mut buf, &mut self.sort_scratch);
        for &(s, e) in &buf {
            self.apply(s, e);
        }
        self.buf = buf;
        self.buf.clear();
    }

    #[inline]
    fn apply(&mut self, start: u64, end: u64) {
        let mut mask = (1u64 << self.unit_shift) - 1;
        if (start | end) & mask != 0 && self.exact {
            // Finer aligned I/O refines the bitmap while memory allows; anything else
            // is kept exactly in the interval set.
            let tz = (start | end).trailing_zeros();
            if tz < FINEST_UNIT_SHIFT || !self.refine_to(tz) {
                self.rest.add(start, end);
                return;
            }
            mask = (1u64 << self.unit_shift) - 1;
        }
        let u0 = start >> self.unit_shift;
        // Rounded out (only ever inexact once coarsened).
        let u1 = (end >> self.unit_shift) + u64::from(end & mask != 0);
        if u1 - u0 > MAX_BITMAP_RANGE_UNITS || ((u1 - 1) >> PAGE_BITS) >= MAX_DIR as u64 {
            self.rest.add(start, end);
            return;
        }
        self.set_units(u0, u1);
        if self.pages > self.max_pages {
            self.coarsen();
        }
    }

    #[inline]
    fn set_units(&mut self, u0: u64, u1: u64) {
        let mut u = u0;
        while u < u1 {
            let p = (u >> PAGE_BITS) as usize;
            let page_start = (p as u64) << PAGE_BITS;
            let stop = (page_start + (1 << PAGE_BITS)).min(u1);
            let page = self.page_mut(p);
            set_bit_range(
                page,
                (u - page_start) as usize,
                (stop - page_start) as usize,
            );
            u = stop;
        }
    }

    #[inline]
    fn page_mut(&mut self, p: usize) -> &mut [u64] {
        debug_assert!(p < MAX_DIR);
        if p >= self.dir.len() {
            self.dir.resize_with(p + 1, || None);
        }
        let slot = &mut self.dir[p];
        if slot.is_none() {
            *slot = Some(vec![0u64; PAGE_WORDS].into_boxed_slice());
            self.pages += 1;
        }
        slot.as_mut().expect("allocated above")
    }

    /// Halves the unit down to `2^shift` bytes (not below 512 B), losslessly; false
    /// (and nothing changes) when the finer bitmap would not fit its bounds.
    fn refine_to(&mut self, shift: u32) -> bool {
        let shift = shift.max(FINEST_UNIT_SHIFT);
        debug_assert!(shift < self.unit_shift && self.exact);
        let k = self.unit_shift - shift;
        if self.pages << k > self.max_pages || self.dir.len() << k > MAX_DIR {
            return false;
        }
        for _ in 0..k {
            let old = std::mem::take(&mut self.dir);
            let mut dir: Vec<Option<Box<[u64]>>> = Vec::new();
            dir.resize_with(old.len() * 2, || None);
            self.pages = 0;
            for (p, page) in old.into_iter().enumerate() {
                let Some(page) = page else { continue };
                for half in 0..2 {
                    let mut new = vec![0u64; PAGE_WORDS].into_boxed_slice();
                    for (j, w) in new.iter_mut().enumerate() {
                        let src = page[half * PAGE_WORDS / 2 + j / 2];
                        *w = spread_bits((src >> (32 * (j % 2))) as u32);
                    }
                    dir[2 * p + half] = Some(new);
                    self.pages += 1;
                }
            }
            self.dir = dir;
            self.unit_shift -= 1;
        }
        true
    }

    /// Doubles the unit (OR-ing unit pairs) until at most half the page budget is used.
    fn coarsen(&mut self) {
        while self.pages > self.max_pages / 2 {
            self.exact = false;
            let old = std::mem::take(&mut self.dir);
            let mut dir: Vec<Option<Box<[u64]>>> = Vec::new();
            dir.resize_with(old.len().div_ceil(2), || None);
            self.pages = 0;
            for (p, page) in old.into_iter().enumerate() {
                let Some(page) = page else { continue };
                let slot = &mut dir[p / 2];
                if slot.is_none() {
                    *slot = Some(vec![0u64; PAGE_WORDS].into_boxed_slice());
                    self.pages += 1;
                }
                let new = slot.as_mut().expect("allocated above");
                let base = (p % 2) * PAGE_WORDS / 2;
                for j in 0..PAGE_WORDS / 2 {
                    new[base + j] |= u64::from(compact_bits(page[2 * j]))
                        | u64::from(compact_bits(page[2 * j + 1])) << 32;
                }
            }
            self.dir = dir;
            self.unit_shift += 1;
        }
    }

    /// Whether unit `u` is set.
    fn unit_set(&self, u: u64) -> bool {
        let p = (u >> PAGE_BITS) as usize;
        let i = (u & ((1 << PAGE_BITS) - 1)) as usize;
        matches!(self.dir.get(p), Some(Some(w)) if w[i / 64] >> (i % 64) & 1 == 1)
    }

    /// Set units in [a, b).
    fn count_units(&self, a: u64, b: u64) -> u64 {
        let mut n = 0;
        let mut u = a;
        while u < b {
            let p = (u >> PAGE_BITS) as usize;
            if p >= self.dir.len() {
                break;
            }
            let page_start = (p as u64) << PAGE_BITS;
            let stop = (page_start + (1 << PAGE_BITS)).min(b);
            if let Some(w) = &self.dir[p] {
                n += count_bit_range(w, (u - page_start) as usize, (stop - page_start) as usize);
            }
            u = stop;
        }
        n
    }

    /// Bytes of [s, e) the bitmap covers.
    fn covered(&self, s: u64, e: u64) -> u64 {
        debug_assert!(s < e);
        let sh = self.unit_shift;
        let (first, last) = (s >> sh, (e - 1) >> sh);
        if first == last {
            return if self.unit_set(first) { e - s } else { 0 };
        }
        let mut c = 0;
        if self.unit_set(first) {
            c += ((first + 1) << sh) - s;
        }
        if self.unit_set(last) {
            c += e - (last << sh);
        }
        c + (self.count_units(first + 1, last) << sh)
    }

    /// (distinct bytes, granularity in bytes: 1 = exact).
    pub fn finish(&mut self) -> (u64, u64) {
        self.flush();
        let bitmap_units: u64 = self
            .dir
            .iter()
            .flatten()
            .map(|w| w.iter().map(|x| u64::from(x.count_ones())).sum::<u64>())
            .sum();
        let mut total = bitmap_units << self.unit_shift;
        let rest = std::mem::replace(&mut self.rest, IntervalSet::with_max_intervals(4));
        let mut rest = rest;
        let (set, rest_g) = rest.finish();
        for &(s, e) in set {
            total += (e - s) - self.covered(s, e);
        }
        let g = if self.exact {
            1
        } else {
            1u64 << self.unit_shift
        };
        self.rest = rest;
        (total, g.max(rest_g))
    }
}

/// Sorts ranges by start (ends in any order: the union merge only needs starts sorted).
/// LSD radix sort, 11-bit digits, skipping digits where no key differs: a few ns per
/// range, where a comparison sort costs tens.
fn radix_sort_by_start(v: &mut Vec<(u64, u64)>, scratch: &mut Vec<(u64, u64)>) {
    const BITS: u32 = 11;
    const BUCKETS: usize = 1 << BITS;
    if v.len() < 512 {
        v.sort_unstable_by_key(|r| r.0);
        return;
    }
    let (mut or, mut and) = (0u64, !0u64);
    for &(s, _) in v.iter() {
        or |= s;
        and &= s;
    }
    let varying = or ^ and;
    if varying == 0 {
        return;
    }
    let top = 64 - varying.leading_zeros();
    let mut shift = varying.trailing_zeros();
    scratch.clear();
    scratch.resize(v.len(), (0, 0));
    let mut counts = vec![0usize; BUCKETS];
    while shift < top {
        counts.fill(0);
        for &(s, _) in v.iter() {
            counts[((s >> shift) as usize) & (BUCKETS - 1)] += 1;
        }
        let mut sum = 0;
        for c in counts.iter_mut() {
            let here = *c;
            *c = sum;
            sum += here;
        }
        for &r in v.iter() {
            let b = ((r.0 >> shift) as usize) & (BUCKETS - 1);
            scratch[counts[b]] = r;
            counts[b] += 1;
        }
        std::mem::swap(v, scratch);
        shift += BITS;
    }
    debug_assert!(v.windows(2).all(|w| w[0].0 <= w[1].0));
}

/// Streaming characterization; feed records in issue order with [`Characterizer::push`].
pub struct Characterizer {
    counts: [u64; 4],
    bytes: [u64; 4],
    sizes: [u64; SIZE_BUCKETS_BYTES.len() + 1],
    /// End offset of the previous read / write, per device (index 0: no device, then
    /// device id + 1). Sequentiality is judged per device: offsets on different devices
    /// are unrelated, so interleaved devices must not break each other's runs. Grows to
    /// the number of distinct devices in the trace.
    prev_end: Vec<[Option<u64>; 2]>,
    seq: [u64; 2],
    first_issue_ns: Option<u64>,
    last_issue_ns: u64,
    last_event_ns: u64,
    order_violations: u64,
    inter_arrival: LogHist,
    // Completion-based figures.
    with_completion: u64,
    /// Running union of [issue, complete) per class: all ops, reads, writes.
    busy: [Busy; 3],
    service_sum_ns: u128,
    service: LogHist,
    /// Completion times of outstanding I/Os (all ops), ascending. Completions mostly
    /// arrive in order, so an insert shifts few entries; bounded by the deepest queue
    /// the trace reaches.
    outstanding: VecDeque<u64>,
    /// Time cursor of the QD sweep.
    sweep_ns: u64,
    /// Busy time per QD bucket; the sum is the busy time, which is at most the trace
    /// duration, so u64 cannot overflow.
    qd_time_ns: [u64; QD_BUCKET_MIN.len()],
    qd_issued: [u64; QD_BUCKET_MIN.len()],
    max_qd: u32,
    at_qd1: u64,
    footprint: Footprint,
}

#[derive(Clone, Copy, Default)]
struct Busy {
    /// Current merged interval [start, end), if any.
    cur: Option<(u64, u64)>,
    total_ns: u64,
}

impl Busy {
    /// Intervals must arrive sorted by start.
    #[inline]
    fn add(&mut self, start: u64, end: u64) {
        match &mut self.cur {
            Some((_, e)) if start <= *e => *e = (*e).max(end),
            cur => {
                if let Some((s, e)) = *cur {
                    self.total_ns += e - s;
                }
                *cur = Some((start, end));
            }
        }
    }

    fn total(&self) -> u64 {
        self.total_ns + self.cur.map_or(0, |(s, e)| e - s)
    }
}

/// QD -> histogram bucket, for QDs below the open last bucket's bound.
const QD_TABLE: [u8; 65] = {
    let mut t = [0u8; 65];
    let mut qd = 1;
    while qd < 65 {
        let mut b = 0;
        while b + 1 < QD_BUCKET_MIN.len() && QD_BUCKET_MIN[b + 1] <= qd as u32 {
            b += 1;
        }
        t[qd] = b as u8;
        qd += 1;
    }
    t
};

#[inline]
fn qd_bucket(qd: u32) -> usize {
    debug_assert!(qd >= 1);
    match QD_TABLE.get(qd as usize) {
        Some(&b) => b as usize,
        None => QD_BUCKET_MIN.len() - 1,
    }
}

/// Index into [`SIZE_BUCKETS_BYTES`] (its length for "other"), without a search.
#[inline]
fn size_bucket(len: u64) -> usize {
    if len.is_power_of_two() && (4096..=131_072).contains(&len) {
        (len.trailing_zeros() - 12) as usize
    } else {
        SIZE_BUCKETS_BYTES.len()
    }
}

impl Default for Characterizer {
    fn default() -> Self {
        Self::new()
    }
}

impl Characterizer {
    pub fn new() -> Self {
        Characterizer {
            counts: [0; 4],
            bytes: [0; 4],
            sizes: [0; SIZE_BUCKETS_BYTES.len() + 1],
            prev_end: vec![[None; 2]],
            seq: [0; 2],
            first_issue_ns: None,
            last_issue_ns: 0,
            last_event_ns: 0,
            order_violations: 0,
            inter_arrival: LogHist::new(),
            with_completion: 0,
            busy: [Busy::default(); 3],
            service_sum_ns: 0,
            service: LogHist::new(),
            outstanding: VecDeque::new(),
            sweep_ns: 0,
            qd_time_ns: [0; QD_BUCKET_MIN.len()],
            qd_issued: [0; QD_BUCKET_MIN.len()],
            max_qd: 0,
            at_qd1: 0,
            footprint: Footprint::default(),
        }
    }

    /// Advances the QD sweep to `t`, retiring completions at or before `t`
    /// (intervals are half-open: an I/O completing at t is not outstanding at t).
    #[inline]
    fn sweep_to(&mut self, t: u64) {
        while let Some(&c) = self.outstanding.front() {
            if c > t {
                break;
            }
            self.account(c);
            self.outstanding.pop_front();
        }
        self.account(t);
    }

    #[inline]
    fn account(&mut self, t: u64) {
        debug_assert!(t >= self.sweep_ns);
        let qd = self.outstanding.len() as u32;
        if qd > 0 {
            self.qd_time_ns[qd_bucket(qd)] += t - self.sweep_ns;
        }
        self.sweep_ns = t;
    }

    /// Inserts a completion keeping `outstanding` ascending.
    #[inline]
    fn insert_outstanding(&mut self, c: u64) {
        let q = &mut self.outstanding;
        match q.back() {
            None => q.push_back(c),
            Some(&last) if last <= c => q.push_back(c),
            Some(_) => {
                let at = q.partition_point(|&x| x <= c);
                q.insert(at, c);
            }
        }
    }

    #[inline]
    pub fn push(&mut self, rec: &IoRecord) {
        self.push_parts(
            rec.op,
            rec.offset_bytes,
            rec.len_bytes,
            rec.issue_ns,
            rec.complete_ns,
            rec.device.map_or(0, |d| d.0 as usize + 1),
        );
    }

    /// [`Characterizer::push`] from the fields of one record; `device_slot` is 0 for
    /// no device, else the device id + 1.
    #[inline]
    pub fn push_parts(
        &mut self,
        op: Op,
        offset_bytes: u64,
        len_bytes: u64,
        issue_ns: u64,
        complete_ns: Option<u64>,
        device_slot: usize,
    ) {
        let mut issue = issue_ns;
        match self.first_issue_ns {
            None => self.first_issue_ns = Some(issue),
            Some(_) => {
                if issue < self.last_issue_ns {
                    self.order_violations += 1;
                    issue = self.last_issue_ns;
                }
                self.inter_arrival.add(issue - self.last_issue_ns);
            }
        }
        self.last_issue_ns = issue;
        self.last_event_ns = self.last_event_ns.max(issue);

        self.counts[op.index()] += 1;
        self.bytes[op.index()] += len_bytes;
        if op.is_data() {
            self.sizes[size_bucket(len_bytes)] += 1;
            let dir = op.index();
            if device_slot >= self.prev_end.len() {
                self.prev_end.resize(device_slot + 1, [None; 2]);
            }
            let prev = &mut self.prev_end[device_slot][dir];
            let end = offset_bytes.saturating_add(len_bytes);
            if *prev == Some(offset_bytes) {
                self.seq[dir] += 1;
            }
            *prev = Some(end);
            self.footprint.add(offset_bytes, end);
        }

        if let Some(c) = complete_ns {
            // A clamped issue (order violation) keeps its recorded service time.
            let svc = c.saturating_sub(issue_ns);
            let complete = issue.saturating_add(svc);
            self.last_event_ns = self.last_event_ns.max(complete);
            self.with_completion += 1;
            let svc = complete - issue;
            self.service_sum_ns += u128::from(svc);
            if op.is_data() {
                self.service.add(svc);
            }
            self.busy[0].add(issue, complete);
            match op {
                Op::Read => self.busy[1].add(issue, complete),
                Op::Write => self.busy[2].add(issue, complete),
                _ => {}
            }
            self.sweep_to(issue);
            if self.outstanding.is_empty() {
                self.at_qd1 += 1;
            }
            if complete > issue {
                self.insert_outstanding(complete);
            }
            // QD right after this issue, this I/O included (a zero-time I/O is not
            // in the queue but still counts for its own issue).
            let qd = if complete > issue {
                self.outstanding.len()
            } else {
                self.outstanding.len() + 1
            } as u32;
            self.max_qd = self.max_qd.max(qd);
            self.qd_issued[qd_bucket(qd)] += 1;
        }
    }

    pub fn finish(mut self) -> Characterization {
        // Drain the QD sweep.
        while let Some(c) = self.outstanding.pop_front() {
            let qd = self.outstanding.len() as u32 + 1;
            self.qd_time_ns[qd_bucket(qd)] += c - self.sweep_ns;
            self.sweep_ns = c;
        }
        let total: u64 = self.counts.iter().sum();
        let data = self.counts[0] + self.counts[1];
        let pct = |n: u64, d: u64| {
            if d == 0 {
                0.0
            } else {
                n as f64 * 100.0 / d as f64
            }
        };
        let mut sizes = Vec::new();
        for (i, &c) in self.sizes.iter().enumerate() {
            let len = SIZE_BUCKETS_BYTES.get(i).copied();
            sizes.push(SizeBucket {
                label: len.map_or("other".to_owned(), |l| format!("{}K", l / 1024)),
                len_bytes: len,
                count: c,
                pct: pct(c, data),
            });
        }
        let duration_ns = self.first_issue_ns.map_or(0, |f| self.last_event_ns - f);
        let have = self.with_completion > 0;
        let busy_ns = have.then(|| self.busy[0].total());
        let busy_time_total: u64 = self.qd_time_ns.iter().sum();
        if let Some(b) = busy_ns {
            assert_eq!(busy_time_total, b, "QD sweep and interval union disagree");
        }
        let qd = have.then(|| {
            let busy = busy_ns.unwrap_or(0);
            let mut histogram = Vec::new();
            for (i, &lo) in QD_BUCKET_MIN.iter().enumerate() {
                histogram.push(QdBucket {
                    qd_min: lo,
                    qd_max: QD_BUCKET_MIN.get(i + 1).map(|n| n - 1),
                    busy_pct: if busy == 0 {
                        0.0
                    } else {
                        self.qd_time_ns[i] as f64 * 100.0 / busy as f64
                    },
                    issued_ios: self.qd_issued[i],
                    issued_pct: pct(self.qd_issued[i], self.with_completion),
                });
            }
            QdStats {
                avg_qd: if busy == 0 {
                    0.0
                } else {
                    self.service_sum_ns as f64 / busy as f64
                },
                max_qd: self.max_qd,
                ios_at_qd1: self.at_qd1,
                qd1_pct: pct(self.at_qd1, self.with_completion),
                histogram,
            }
        });
        let (footprint_bytes, footprint_granularity_bytes) = self.footprint.finish();
        Characterization {
            schema_version: SCHEMA_VERSION,
            ios_total: total,
            reads: self.counts[0],
            writes: self.counts[1],
            trims: self.counts[2],
            flushes: self.counts[3],
            bytes_read: self.bytes[0],
            bytes_written: self.bytes[1],
            bytes_trimmed: self.bytes[2],
            gb_read: self.bytes[0] as f64 / 1e9,
            gb_written: self.bytes[1] as f64 / 1e9,
            sizes,
            sequential_ios: self.seq[0] + self.seq[1],
            sequential_pct: pct(self.seq[0] + self.seq[1], data),
            sequential_read_pct: pct(self.seq[0], self.counts[0]),
            sequential_write_pct: pct(self.seq[1], self.counts[1]),
            duration_ns,
            ios_with_completion: self.with_completion,
            busy_ns,
            busy_read_ns: have.then(|| self.busy[1].total()),
            busy_write_ns: have.then(|| self.busy[2].total()),
            idle_ns: busy_ns.map(|b| duration_ns.saturating_sub(b)),
            qd,
            service_time_us: self.service.percentiles(1000.0),
            footprint_bytes,
            footprint_granularity_bytes,
            inter_arrival_us: self.inter_arrival.percentiles(1000.0),
            issue_order_violations: self.order_violations,
        }
    }
}

/// Characterizes a Parquet trace, decoding only the columns needed.
pub fn characterize_file(path: &Path) -> Result<Characterization, TraceError> {
    characterize_file_with_progress(path, &mut |_, _| {})
}

/// As [`characterize_file`], calling `progress(rows_done, rows_total)` after each batch.
pub fn characterize_file_with_progress(
    path: &Path,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Characterization, TraceError> {
    let mut reader = TraceReader::open_columns(path, Columns::NoStream)?;
    let total = reader.num_rows();
    let mut c = Characterizer::new();
    let mut done = 0u64;
    while let Some(b) = reader.next_columns()? {
        c.push_columns(&b);
        done += b.len() as u64;
        progress(done, total);
    }
    Ok(c.finish())
}

impl Characterizer {
    /// Pushes every row of a checked batch (the reader guarantees non-negative values),
    /// in one tight loop per completion layout.
    pub fn push_columns(&mut self, b: &ColumnBatch) {
        let n = b.len();
        let (issue, off, len, ops) = (
            &b.issue_ns[..n],
            &b.offset_bytes[..n],
            &b.len_bytes[..n],
            &b.ops[..n],
        );
        let zeros;
        let dev: &[u32] = match &b.device_slots {
            Some(d) => &d[..n],
            None => {
                zeros = vec![0u32; n];
                &zeros
            }
        };
        match &b.complete_ns {
            None => {
                for i in 0..n {
                    self.push_parts(
                        ops[i],
                        off[i] as u64,
                        len[i] as u64,
                        issue[i] as u64,
                        None,
                        dev[i] as usize,
                    );
                }
            }
            Some(c) if c.null_count() == 0 => {
                let cv = &c.values()[..n];
                for i in 0..n {
                    self.push_parts(
                        ops[i],
                        off[i] as u64,
                        len[i] as u64,
                        issue[i] as u64,
                        Some(cv[i] as u64),
                        dev[i] as usize,
                    );
                }
            }
            Some(_) => {
                for i in 0..n {
                    self.push_parts(
                        ops[i],
                        off[i] as u64,
                        len[i] as u64,
                        issue[i] as u64,
                        b.complete_at(i),
                        dev[i] as usize,
                    );
                }
            }
        }
    }
}

fn secs(ns: u64) -> String {
    format!("{:.3} s", ns as f64 / 1e9)
}

impl Characterization {
    /// A plain-text table, as published benchmarks print it.
    pub fn to_table(&self) -> String {
        let mut s = String::new();
        let mut row = |k: &str, v: String| {
            let _ = writeln!(s, "{k:<28} {v}");
        };
        row("reads", self.reads.to_string());
        row("writes", self.writes.to_string());
        row("trims", self.trims.to_string());
        row("flushes", self.flushes.to_string());
        row("total I/Os", self.ios_total.to_string());
        row("GB read", format!("{:.2}", self.gb_read));
        row("GB written", format!("{:.2}", self.gb_written));
        for b in &self.sizes {
            row(
                &format!("I/O size {}", b.label),
                format!("{:.1}% ({})", b.pct, b.count),
            );
        }
        row(
            "sequential",
            format!(
                "{:.1}% (reads {:.1}%, writes {:.1}%)",
                self.sequential_pct, self.sequential_read_pct, self.sequential_write_pct
            ),
        );
        match &self.qd {
            Some(q) => {
                row("average QD (busy time)", format!("{:.3}", q.avg_qd));
                row("max QD", q.max_qd.to_string());
                row(
                    "I/Os issued at QD1",
                    format!("{:.1}% ({})", q.qd1_pct, q.ios_at_qd1),
                );
                for b in &q.histogram {
                    let label = match b.qd_max {
                        Some(m) if m == b.qd_min => format!("QD {}", b.qd_min),
                        Some(m) => format!("QD {}-{}", b.qd_min, m),
                        None => format!("QD {}+", b.qd_min),
                    };
                    row(
                        &label,
                        format!(
                            "{:5.1}% of busy time, {:5.1}% of issues",
                            b.busy_pct, b.issued_pct
                        ),
                    );
                }
            }
            None => row("queue depth", "n/a (no completion times in trace)".into()),
        }
        row("duration", secs(self.duration_ns));
        match (self.busy_ns, self.idle_ns) {
            (Some(b), Some(i)) => {
                row("busy time", secs(b));
                row("idle time", secs(i));
            }
            _ => row("busy time", "n/a (no completion times in trace)".into()),
        }
        if let Some(p) = &self.service_time_us {
            row(
                "service time r+w (us)",
                format!(
                    "mean {:.1}, p50 {:.1}, p99 {:.1}, p99.9 {:.1}, max {:.1}",
                    p.mean, p.p50, p.p99, p.p99_9, p.max
                ),
            );
        }
        let fp = format!(
            "{:.3} GB ({} bytes)",
            self.footprint_bytes as f64 / 1e9,
            self.footprint_bytes
        );
        row(
            "footprint",
            if self.footprint_granularity_bytes == 1 {
                fp
            } else {
                format!(
                    "{fp}, rounded to {} B blocks",
                    self.footprint_granularity_bytes
                )
            },
        );
        if let Some(p) = &self.inter_arrival_us {
            row(
                "inter-arrival (us)",
                format!(
                    "p50 {:.1}, p90 {:.1}, p99 {:.1}, p99.9 {:.1}, max {:.1}",
                    p.p50, p.p90, p.p99, p.p99_9, p.max
                ),
            );
        }
        if self.issue_order_violations > 0 {
            row(
                "out-of-order issues",
                format!(
                    "{} (treated as issued at the previous time)",
                    self.issue_order_violations
                ),
            );
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io(op: Op, off: u64, len: u64, issue: u64, complete: Option<u64>) -> IoRecord {
        IoRecord {
            complete_ns: complete,
            ..IoRecord::new(op, off, len, issue)
        }
    }

    fn run(recs: &[IoRecord]) -> Characterization {
        let mut c = Characterizer::new();
        for r in recs {
            c.push(r);
        }
        c.finish()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn overlapping_and_disjoint_intervals_give_busy_time_and_qd() {
        // A [0,100) and B [50,150) overlap; C [300,400) is alone.
        let c = run(&[
            io(Op::Read, 0, 4096, 0, Some(100)),
            io(Op::Write, 1 << 20, 4096, 50, Some(150)),
            io(Op::Read, 8192, 4096, 300, Some(400)),
        ]);
        assert_eq!(c.busy_ns, Some(250));
        assert_eq!(c.busy_read_ns, Some(200));
        assert_eq!(c.busy_write_ns, Some(100));
        assert_eq!(c.duration_ns, 400);
        assert_eq!(c.idle_ns, Some(150));
        let q = c.qd.unwrap();
        assert!(close(q.avg_qd, 300.0 / 250.0), "{}", q.avg_qd);
        assert_eq!(q.max_qd, 2);
        assert_eq!(q.ios_at_qd1, 2);
        assert!(close(q.qd1_pct, 200.0 / 3.0));
        // QD1 during [0,50) [100,150) [300,400) = 200 ns; QD2 during [50,100) = 50 ns.
        assert!(close(q.histogram[0].busy_pct, 80.0));
        assert!(close(q.histogram[1].busy_pct, 20.0));
        assert_eq!(q.histogram[0].issued_ios, 2);
        assert_eq!(q.histogram[1].issued_ios, 1);
        let sum: f64 = q.histogram.iter().map(|b| b.busy_pct).sum();
        assert!(close(sum, 100.0));
    }

    #[test]
    fn completion_at_issue_instant_is_not_outstanding() {
        let c = run(&[
            io(Op::Read, 0, 4096, 0, Some(100)),
            io(Op::Read, 4096, 4096, 100, Some(200)),
            io(Op::Read, 8192, 4096, 150, Some(160)),
        ]);
        let q = c.qd.unwrap();
        assert_eq!(
            q.ios_at_qd1, 2,
            "second I/O issued as first completes is at QD1"
        );
        assert_eq!(c.busy_ns, Some(200));
        assert!(close(q.avg_qd, 210.0 / 200.0));
        assert_eq!(q.histogram[1].issued_ios, 1);
    }

    #[test]
    fn deep_queue_histogram_buckets() {
        // 40 I/Os issued at t=0..39, all completing at 1000: QD climbs to 40.
        let recs: Vec<_> = (0..40)
            .map(|i| io(Op::Write, i * 4096, 4096, i, Some(1000)))
            .collect();
        let c = run(&recs);
        let q = c.qd.unwrap();
        assert_eq!(q.max_qd, 40);
        assert_eq!(c.busy_ns, Some(1000));
        let svc: u64 = (0..40).map(|i| 1000 - i).sum();
        assert!(close(q.avg_qd, svc as f64 / 1000.0));
        // Issued QDs 1..=40: buckets 1,2,3,4,5-8,9-16,17-32,33-64.
        let issued: Vec<u64> = q.histogram.iter().map(|b| b.issued_ios).collect();
        assert_eq!(issued, vec![1, 1, 1, 1, 4, 8, 16, 8, 0]);
        // At QD 40 from t=39 to t=1000 = 961 of 1000 ns.
        assert!(close(q.histogram[7].busy_pct, (961.0 + 7.0) / 10.0));
    }

    #[test]
    fn sequential_is_per_direction() {
        let c = run(&[
            io(Op::Read, 0, 4096, 0, None),
            io(Op::Read, 4096, 4096, 1, None),   // seq (read)
            io(Op::Write, 8192, 4096, 2, None),  // first write: not seq
            io(Op::Read, 8192, 4096, 3, None),   // seq: previous read ended at 8192
            io(Op::Write, 12288, 8192, 4, None), // seq (write)
            io(Op::Trim, 20480, 4096, 5, None),  // not data
            io(Op::Write, 20480, 4096, 6, None), // seq: trim in between does not count
            io(Op::Read, 0, 4096, 7, None),      // not seq
        ]);
        assert_eq!(c.sequential_ios, 4);
        assert!(close(c.sequential_pct, 4.0 * 100.0 / 7.0));
        assert!(close(c.sequential_read_pct, 50.0));
        assert!(close(c.sequential_write_pct, 200.0 / 3.0));
        assert!(c.qd.is_none() && c.busy_ns.is_none() && c.idle_ns.is_none());
        assert_eq!(c.duration_ns, 7);
    }

    #[test]
    fn sequential_is_per_device() {
        use crate::model::DeviceId;
        let on = |d: u32, op, off, t| IoRecord {
            device: Some(DeviceId(d)),
            ..io(op, off, 4096, t, None)
        };
        // Two devices interleaved, each reading sequentially: every I/O after each
        // device's first is sequential. Across devices the offsets are unrelated.
        let c = run(&[
            on(0, Op::Read, 0, 0),
            on(1, Op::Read, 1 << 30, 1),
            on(0, Op::Read, 4096, 2),
            on(1, Op::Read, (1 << 30) + 4096, 3),
            io(Op::Read, 8192, 4096, 4, None), // no device: its own sequence
            on(0, Op::Read, 8192, 5),
            on(1, Op::Write, 0, 6),
            on(0, Op::Write, 4096, 7), // first write on device 0
        ]);
        assert_eq!(c.sequential_ios, 3);
        assert!(close(c.sequential_read_pct, 50.0));
        assert!(close(c.sequential_write_pct, 0.0));
    }

    #[test]
    fn counts_bytes_sizes_and_footprint() {
        let c = run(&[
            io(Op::Read, 0, 4096, 0, None),
            io(Op::Read, 2048, 4096, 1, None),
            io(Op::Write, 10_000, 1, 2, None),
            io(Op::Write, 1 << 30, 131072, 3, None),
            io(Op::Write, 0, 16384, 4, None),
            io(Op::Trim, 1 << 40, 1 << 30, 5, None),
            io(Op::Flush, 0, 0, 6, None),
        ]);
        assert_eq!(
            (c.reads, c.writes, c.trims, c.flushes, c.ios_total),
            (2, 3, 1, 1, 7)
        );
        assert_eq!(c.bytes_read, 8192);
        assert_eq!(c.bytes_written, 1 + 131072 + 16384);
        assert_eq!(c.bytes_trimmed, 1 << 30);
        assert!(close(c.gb_written, (1.0 + 131072.0 + 16384.0) / 1e9));
        let counts: Vec<u64> = c.sizes.iter().map(|b| b.count).collect();
        assert_eq!(counts, vec![2, 0, 1, 0, 0, 1, 1]);
        assert!(close(c.sizes[0].pct, 40.0));
        assert_eq!(c.sizes[6].label, "other");
        // [0,16384) covers the reads; plus 1 byte at 10000 (inside) and 128K at 1 GiB.
        assert_eq!(c.footprint_bytes, 16384 + 131072);
        assert_eq!(c.footprint_granularity_bytes, 1);
    }

    #[test]
    fn footprint_matches_naive_union_across_merges() {
        let mut f = IntervalSet::with_max_intervals(FOOTPRINT_MAX_INTERVALS);
        let mut naive = vec![false; 1 << 20];
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let s = x % ((1 << 20) - 300);
            let l = (x >> 40) % 300;
            f.add(s, s + l);
            naive[s as usize..(s + l) as usize]
                .iter_mut()
                .for_each(|b| *b = true);
        }
        let want = naive.iter().filter(|&&b| b).count() as u64;
        let (set, g) = f.finish();
        assert_eq!((set.iter().map(|(s, e)| e - s).sum::<u64>(), g), (want, 1));
    }

    #[test]
    fn radix_sort_sorts_by_start() {
        let mut x: u64 = 12345;
        let mut v: Vec<(u64, u64)> = (0..5000)
            .map(|i| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((x >> 20) % (1 << 44), i)
            })
            .collect();
        let mut want: Vec<u64> = v.iter().map(|r| r.0).collect();
        want.sort_unstable();
        radix_sort_by_start(&mut v, &mut Vec::new());
        assert_eq!(v.iter().map(|r| r.0).collect::<Vec<_>>(), want);
    }

    #[test]
    fn interval_set_coarsens_to_bound_memory() {
        let mut f = IntervalSet::with_max_intervals(4);
        for i in 0..100u64 {
            f.add(i * 8192, i * 8192 + 4096);
        }
        let (set, g) = f.finish();
        // 100 disjoint 4K ranges 4K apart: at 4K granularity still 100 ranges; at 8K
        // they merge into one.
        assert_eq!(g, 8192);
        assert!(set.len() <= 4);
        assert_eq!(set.iter().map(|(s, e)| e - s).sum::<u64>(), 100 * 8192);
    }

    /// Naive union over a byte array, for ranges below 4 MiB.
    fn naive_union(ranges: &[(u64, u64)]) -> u64 {
        let mut bytes = vec![false; 4 << 20];
        for &(s, e) in ranges {
            bytes[s as usize..e as usize]
                .iter_mut()
                .for_each(|b| *b = true);
        }
        bytes.iter().filter(|&&b| b).count() as u64
    }

    #[test]
    fn footprint_bitmap_and_interval_set_combine_exactly() {
        // Mixed alignment: 4K-aligned (bitmap), 512-aligned (refines the bitmap),
        // byte-granular (interval set), overlapping each other.
        for (max_pages, seed) in [
            (FOOTPRINT_MAX_PAGES, 7u64),
            (2, 11),
            (FOOTPRINT_MAX_PAGES, 13),
        ] {
            let mut f = Footprint::with_limits(max_pages, FOOTPRINT_MAX_INTERVALS);
            let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            let mut ranges = Vec::new();
            for i in 0..20_000u64 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let (s, l) = match (i + seed) % 3 {
                    0 => ((x % 1000) * 4096, ((x >> 20) % 8 + 1) * 4096),
                    // Only late in the run for one seed: refinement after many 4K ranges.
                    1 if seed != 13 || i > 15_000 => ((x % 8000) * 512, ((x >> 20) % 16 + 1) * 512),
                    _ => (x % 4_000_000, (x >> 30) % 5000),
                };
                f.add(s, s + l);
                ranges.push((s, s + l));
            }
            // Max page budget 2: refinement to 512 B would need 8 pages, so the
            // 512-aligned ranges stay exact in the interval set instead.
            assert_eq!(
                f.finish(),
                (naive_union(&ranges), 1),
                "max_pages {max_pages}"
            );
        }
    }

    #[test]
    fn footprint_refines_losslessly_and_handles_far_ranges() {
        let mut f = Footprint::default();
        f.add(0, 4096);
        f.add(8192, 12288);
        f.flush();
        assert_eq!(f.unit_shift, 12);
        f.add(3584, 8704); // 512-aligned: unit becomes 512 B
        f.flush();
        assert_eq!(f.unit_shift, 9);
        f.add(100, 9000); // unaligned, inside
        f.add(1 << 62, (1 << 62) + 4096); // past the page directory
        f.add(1 << 40, (1 << 40) + (1 << 35)); // longer than a bitmap range
        assert_eq!(f.finish(), (12288 + 4096 + (1 << 35), 1));
    }

    #[test]
    fn footprint_bitmap_coarsens_past_its_page_budget() {
        let mut f = Footprint::with_limits(2, FOOTPRINT_MAX_INTERVALS);
        // A 4K-unit page covers 1 GiB: three pages exceed the budget of 2.
        for g in 0..3u64 {
            f.add(g << 30, (g << 30) + 4096);
        }
        let (bytes, gran) = f.finish();
        // 8K units: pages of 2 GiB, still 2 > 1; 16K units: one page.
        assert_eq!(gran, 16384);
        assert_eq!(bytes, 3 * 16384);
        assert!(f.pages <= 1);
    }

    #[test]
    fn bit_spread_and_compact_are_inverse() {
        for x in [0u32, 1, 0x8000_0001, 0xDEAD_BEEF, u32::MAX] {
            assert_eq!(compact_bits(spread_bits(x)), x);
            assert_eq!(spread_bits(x).count_ones(), 2 * x.count_ones());
        }
        assert_eq!(compact_bits(0b0110), 0b11);
    }

    #[test]
    fn inter_arrival_and_service_percentiles() {
        let recs: Vec<_> = (0..1000u64)
            .map(|i| {
                io(
                    Op::Read,
                    i * 4096,
                    4096,
                    i * 10_000,
                    Some(i * 10_000 + 1000 + i),
                )
            })
            .collect();
        let c = run(&recs);
        let ia = c.inter_arrival_us.unwrap();
        assert_eq!(ia.count, 999);
        assert!(
            (ia.p50 - 10.0).abs() < 0.1 && (ia.p99 - 10.0).abs() < 0.1,
            "{ia:?}"
        );
        let s = c.service_time_us.unwrap();
        // Service 1000..1999 ns: p50 ~ 1.5 us, max 1.999 us, within the 0.8% bucket error.
        assert!((s.p50 - 1.4995).abs() < 0.015, "{s:?}");
        assert!((s.max - 1.999).abs() < 1e-9);
        assert!((s.mean - 1.4995).abs() < 1e-9);
        assert!(close(c.sequential_read_pct, 99.9));
    }

    #[test]
    fn out_of_order_issue_is_counted_and_clamped() {
        let c = run(&[
            io(Op::Read, 0, 4096, 100, Some(200)),
            io(Op::Read, 0, 4096, 50, Some(120)),
        ]);
        assert_eq!(c.issue_order_violations, 1);
        // Second treated as issued at 100, complete at 170 (service kept at 70).
        assert_eq!(c.busy_ns, Some(100));
        assert_eq!(c.qd.unwrap().max_qd, 2);
    }

    #[test]
    fn log_hist_is_within_bucket_error() {
        let mut h = LogHist::new();
        for v in [0u64, 1, 127, 128, 129, 1000, 123_456_789, u64::MAX] {
            h.add(v);
            let i = LogHist::index(v);
            let rep = LogHist::value(i);
            assert!(
                (rep - v as f64).abs() <= v as f64 / 128.0 + 0.5,
                "{v} -> {rep}"
            );
        }
    }

    #[test]
    fn json_round_trip_has_schema_version() {
        let c = run(&[io(Op::Read, 0, 4096, 0, Some(10))]);
        let j = serde_json::to_string(&c).unwrap();
        assert!(j.contains("\"schema_version\":1"));
        let back: Characterization = serde_json::from_str(&j).unwrap();
        assert_eq!(back, c);
        assert!(c.to_table().contains("average QD"));
    }
}
