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
use crate::store::{Columns, TraceReader};
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
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
pub struct Footprint {
    set: Vec<(u64, u64)>,
    pending: Vec<(u64, u64)>,
    /// Radix-sort buffer, as large as `pending`.
    scratch: Vec<(u64, u64)>,
    granularity_bytes: u64,
    max_intervals: usize,
}

impl Default for Footprint {
    fn default() -> Self {
        Self::with_max_intervals(FOOTPRINT_MAX_INTERVALS)
    }
}

impl Footprint {
    pub fn with_max_intervals(max_intervals: usize) -> Self {
        assert!(max_intervals >= 4);
        Footprint {
            set: Vec::new(),
            pending: Vec::new(),
            scratch: Vec::new(),
            granularity_bytes: 1,
            max_intervals,
        }
    }

    #[inline]
    pub fn add(&mut self, start: u64, end: u64) {
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

    /// (distinct bytes, granularity in bytes: 1 = exact).
    pub fn finish(&mut self) -> (u64, u64) {
        self.merge();
        let total = self.set.iter().map(|(s, e)| e - s).sum();
        (total, self.granularity_bytes)
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
    /// End offset of the previous read / write (None before the first).
    prev_end: [Option<u64>; 2],
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
    /// Completion times of outstanding I/Os (all ops), min first.
    outstanding: BinaryHeap<Reverse<u64>>,
    /// Time cursor of the QD sweep.
    sweep_ns: u64,
    qd_time_ns: [u128; QD_BUCKET_MIN.len()],
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

#[inline]
fn qd_bucket(qd: u32) -> usize {
    debug_assert!(qd >= 1);
    QD_BUCKET_MIN
        .iter()
        .rposition(|&m| qd >= m)
        .expect("qd >= 1")
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
            prev_end: [None; 2],
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
            outstanding: BinaryHeap::new(),
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
        while let Some(&Reverse(c)) = self.outstanding.peek() {
            if c > t {
                break;
            }
            self.account(c);
            self.outstanding.pop();
        }
        self.account(t);
    }

    #[inline]
    fn account(&mut self, t: u64) {
        debug_assert!(t >= self.sweep_ns);
        let qd = self.outstanding.len() as u32;
        if qd > 0 {
            self.qd_time_ns[qd_bucket(qd)] += u128::from(t - self.sweep_ns);
        }
        self.sweep_ns = t;
    }

    #[inline]
    pub fn push(&mut self, rec: &IoRecord) {
        let mut issue = rec.issue_ns;
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

        let op = rec.op;
        self.counts[op.index()] += 1;
        self.bytes[op.index()] += rec.len_bytes;
        if op.is_data() {
            let b = SIZE_BUCKETS_BYTES
                .iter()
                .position(|&s| s == rec.len_bytes)
                .unwrap_or(SIZE_BUCKETS_BYTES.len());
            self.sizes[b] += 1;
            let dir = op.index();
            if self.prev_end[dir] == Some(rec.offset_bytes) {
                self.seq[dir] += 1;
            }
            self.prev_end[dir] = Some(rec.end_bytes());
            self.footprint.add(rec.offset_bytes, rec.end_bytes());
        }

        if let Some(c) = rec.complete_ns {
            // A clamped issue (order violation) keeps its recorded service time.
            let complete = issue + c.saturating_sub(rec.issue_ns);
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
                self.outstanding.push(Reverse(complete));
            }
            // QD right after this issue, this I/O included (a zero-time I/O is not
            // in the heap but still counts for its own issue).
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
        while let Some(Reverse(c)) = self.outstanding.pop() {
            let qd = self.outstanding.len() as u32 + 1;
            self.qd_time_ns[qd_bucket(qd)] += u128::from(c - self.sweep_ns);
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
        let busy_time_total: u128 = self.qd_time_ns.iter().sum();
        if let Some(b) = busy_ns {
            assert_eq!(
                busy_time_total,
                u128::from(b),
                "QD sweep and interval union disagree"
            );
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
    let mut reader = TraceReader::open_columns(path, Columns::NoNames)?;
    let total = reader.num_rows();
    let mut c = Characterizer::new();
    let mut batch = Vec::new();
    let mut done = 0u64;
    while reader.next_batch(&mut batch)? {
        for r in &batch {
            c.push(r);
        }
        done += batch.len() as u64;
        progress(done, total);
    }
    Ok(c.finish())
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
        let mut f = Footprint::default();
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
        assert_eq!(f.finish(), (want, 1));
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
    fn footprint_coarsens_to_bound_memory() {
        let mut f = Footprint::with_max_intervals(4);
        for i in 0..100u64 {
            f.add(i * 8192, i * 8192 + 4096);
        }
        let (bytes, g) = f.finish();
        // 100 disjoint 4K ranges 4K apart: at 4K granularity still 100 ranges; at 8K
        // they merge into one.
        assert_eq!(g, 8192);
        assert_eq!(bytes, 100 * 8192);
        assert!(f.set.len() <= 4);
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
