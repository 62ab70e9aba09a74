//! `characterize`: the statistics published trace-based benchmarks print, computed in
//! one streaming pass with bounded memory. Definitions: METHODOLOGY section 2, and
//! `docs/trace-format.md` ("characterize") for the choices made here.
//!
//! Input order: records must arrive in non-decreasing `issue_ns` (the order every
//! importer writes). A record issued before its predecessor is counted in
//! [`Characterization::issue_order_violations`] and treated as issued at the
//! predecessor's time, so every figure stays defined.
//!
//! The work is columnar: each chunk of rows (8K) goes through one tight loop per
//! concern, one module each, over plain slices, with no record built per row:
//! `sizes` (counts, bytes, size mix), `sequential`, `interarrival` (issue order,
//! gaps), `qd` (busy time, service time, queue depth) and `footprint`. Each loop is
//! kept out of line (`#[inline(never)]`), so a profile shows one entry per concern.

mod devices;
mod footprint;
mod hist;
mod interarrival;
mod per_device;
mod qd;
mod sequential;
mod sizes;
#[cfg(test)]
mod tests;
mod union;

pub use footprint::{Footprint, FOOTPRINT_MAX_PAGES};
pub use union::FOOTPRINT_MAX_RANGES;

use crate::error::TraceError;
use crate::model::Names;
use crate::model::{IoRecord, Op};
use crate::store::{ColumnBatch, Columns, TraceReader};
use arrow_array::Array;
use arrow_buffer::ScalarBuffer;
use interarrival::Arrivals;
use per_device::Footprints;
use qd::Completions;
use sequential::{Devices, Sequential};
use serde::{Deserialize, Serialize};
use sizes::Mix;
use std::fmt::Write as _;
use std::path::Path;

/// Version of the [`Characterization`] JSON; bumped on incompatible change (2:
/// `footprint_bytes` is the sum over devices, `footprint_per_device` added, QD and
/// busy figures null when every service time is 0; 3: `per_device` added, the
/// footprint always exact).
pub const SCHEMA_VERSION: u32 = 3;

/// The sizes of the published size breakdown (bytes); anything else is "other".
pub const SIZE_BUCKETS_BYTES: [u64; 6] = [4096, 8192, 16384, 32768, 65536, 131072];

/// QD histogram buckets: inclusive lower bounds; the last bucket is open.
pub const QD_BUCKET_MIN: [u32; 9] = [1, 2, 3, 4, 5, 9, 17, 33, 65];

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
    /// Time at least one I/O (any op) was outstanding. None when no completion is
    /// known, or every known one equals its issue (service times all 0: nothing says
    /// how long the I/Os took).
    pub busy_ns: Option<u64>,
    pub busy_read_ns: Option<u64>,
    pub busy_write_ns: Option<u64>,
    /// `duration_ns - busy_ns`.
    pub idle_ns: Option<u64>,
    /// Queue-depth statistics; None when no completion is known.
    pub qd: Option<QdStats>,
    /// Service time (completion - issue) of reads and writes, in µs; None as `busy_ns`.
    pub service_time_us: Option<Percentiles>,
    /// Distinct bytes touched by reads and writes: the union of their byte ranges on
    /// each device, summed over devices (the same offset on two devices counts twice).
    pub footprint_bytes: u64,
    /// The footprint of each device with reads or writes, by device name (rows
    /// without a device form one device, named null, first).
    #[serde(default)]
    pub footprint_per_device: Vec<DeviceFootprint>,
    /// Always 1 since issue 34: the footprint is exact at any size (kept for readers of
    /// schema 2, where a larger value meant ranges rounded out to that block size).
    pub footprint_granularity_bytes: u64,
    /// Gaps between consecutive issues (all ops), in µs.
    pub inter_arrival_us: Option<Percentiles>,
    /// Records issued before a record above them. A trace file in another order is
    /// sorted before it is measured ([`characterize_file`]); records pushed out of
    /// order into a [`Characterizer`] are treated as issued at the previous time.
    pub issue_order_violations: u64,
    /// Each device's own figures, by device name (rows without a device form one
    /// device, named null, first): the busy time, idle time, average QD and QD1 share
    /// with only that device's I/Os outstanding. The trace-wide figures above count
    /// every device together (busy: any device busy; QD: all devices' I/Os).
    #[serde(default)]
    pub per_device: Vec<DeviceStats>,
}

/// One device's figures (see [`Characterization::per_device`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceStats {
    /// The device's name in the trace (None: rows without a device).
    pub device: Option<String>,
    /// All its I/Os (reads, writes, trims, flushes).
    pub ios: u64,
    pub reads: u64,
    pub writes: u64,
    /// Its sequential reads and writes, in percent of its reads and writes.
    pub sequential_pct: f64,
    pub footprint_bytes: u64,
    /// Its first issue to its last issue or completion.
    pub duration_ns: u64,
    pub ios_with_completion: u64,
    /// Time at least one of its I/Os was outstanding (None as the trace's `busy_ns`).
    pub busy_ns: Option<u64>,
    /// `duration_ns - busy_ns`.
    pub idle_ns: Option<u64>,
    /// Sum of its service times over its busy time.
    pub avg_qd: Option<f64>,
    /// Its I/Os issued when none of its other I/Os was outstanding, in percent of its
    /// I/Os with a completion.
    pub qd1_pct: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceFootprint {
    /// The device's name in the trace (None: rows without a device).
    pub device: Option<String>,
    pub footprint_bytes: u64,
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

/// Rows per pass of the per-concern loops: each loop's columns stay in L2.
const CHUNK_ROWS: usize = 8192;
/// Records buffered by [`Characterizer::push`] before they go through the loops.
const PUSH_BUF_ROWS: usize = 4096;

/// Streaming characterization; feed records in issue order with
/// [`Characterizer::push`] or, column by column, [`Characterizer::push_columns`].
pub struct Characterizer {
    mix: Mix,
    sequential: Sequential,
    arrivals: Arrivals,
    completions: Completions,
    footprint: Footprints,
    devices: devices::PerDevice,
    /// Device names by id (for the per-device footprint; ids shown when absent).
    device_names: Option<Names>,
    /// Records from [`Characterizer::push`] not yet characterized (bounded by
    /// [`PUSH_BUF_ROWS`]).
    pending: Pending,
    /// Clamped issue times of a chunk, when out of order.
    issue_scratch: Vec<u64>,
    /// Which rows of a chunk have a completion, when only some do.
    valid_scratch: Vec<bool>,
}

/// Buffered records, as columns.
#[derive(Default)]
struct Pending {
    issue: Vec<u64>,
    complete: Vec<u64>,
    has_complete: Vec<bool>,
    offset: Vec<u64>,
    len: Vec<u64>,
    ops: Vec<Op>,
    devices: Vec<u32>,
}

/// Completion times of a chunk.
#[derive(Clone, Copy)]
enum Complete<'a> {
    None,
    All(&'a [u64]),
    /// Values and which are known (unknown slots hold anything).
    Some(&'a [u64], &'a [bool]),
}

/// One chunk of rows, column by column.
#[derive(Clone, Copy)]
struct Chunk<'a> {
    issue: &'a [u64],
    complete: Complete<'a>,
    offset: &'a [u64],
    len: &'a [u64],
    ops: &'a [Op],
    devices: Devices<'a>,
}

impl<'a> Chunk<'a> {
    fn len(&self) -> usize {
        self.issue.len()
    }

    /// Rows [a, b).
    fn slice(&self, a: usize, b: usize) -> Chunk<'a> {
        Chunk {
            issue: &self.issue[a..b],
            complete: match self.complete {
                Complete::None => Complete::None,
                Complete::All(c) => Complete::All(&c[a..b]),
                Complete::Some(c, v) => Complete::Some(&c[a..b], &v[a..b]),
            },
            offset: &self.offset[a..b],
            len: &self.len[a..b],
            ops: &self.ops[a..b],
            devices: match self.devices {
                Devices::Same(d) => Devices::Same(d),
                Devices::PerRow(d) => Devices::PerRow(&d[a..b]),
            },
        }
    }
}

/// The values of a checked (non-negative) Int64 column as u64.
fn as_u64(b: &ScalarBuffer<i64>) -> &[u64] {
    let v: &[u64] = b.inner().typed_data::<u64>();
    assert_eq!(v.len(), b.len());
    v
}

impl Default for Characterizer {
    fn default() -> Self {
        Self::new()
    }
}

impl Characterizer {
    pub fn new() -> Self {
        Characterizer {
            mix: Mix::default(),
            sequential: Sequential::new(),
            arrivals: Arrivals::new(),
            completions: Completions::new(),
            footprint: Footprints::new(),
            devices: devices::PerDevice::default(),
            device_names: None,
            pending: Pending::default(),
            issue_scratch: Vec::new(),
            valid_scratch: Vec::new(),
        }
    }

    /// Names the devices of the records' [`crate::model::DeviceId`]s (a reader's or
    /// writer's names), for the per-device footprint.
    pub fn set_device_names(&mut self, names: &Names) {
        self.device_names = Some(names.clone());
    }

    /// Adds one record (buffered; characterized in bulk).
    pub fn push(&mut self, rec: &IoRecord) {
        let p = &mut self.pending;
        p.issue.push(rec.issue_ns);
        p.complete.push(rec.complete_ns.unwrap_or(0));
        p.has_complete.push(rec.complete_ns.is_some());
        p.offset.push(rec.offset_bytes);
        p.len.push(rec.len_bytes);
        p.ops.push(rec.op);
        p.devices.push(rec.device.map_or(0, |d| d.0 + 1));
        if p.issue.len() >= PUSH_BUF_ROWS {
            self.flush_pending();
        }
    }

    fn flush_pending(&mut self) {
        let p = std::mem::take(&mut self.pending);
        if !p.issue.is_empty() {
            let complete = if p.has_complete.iter().all(|&v| v) {
                Complete::All(&p.complete)
            } else if p.has_complete.iter().any(|&v| v) {
                Complete::Some(&p.complete, &p.has_complete)
            } else {
                Complete::None
            };
            self.push_chunk(Chunk {
                issue: &p.issue,
                complete,
                offset: &p.offset,
                len: &p.len,
                ops: &p.ops,
                devices: Devices::PerRow(&p.devices),
            });
        }
        self.pending = p;
        let p = &mut self.pending;
        p.issue.clear();
        p.complete.clear();
        p.has_complete.clear();
        p.offset.clear();
        p.len.clear();
        p.ops.clear();
        p.devices.clear();
    }

    /// Pushes every row of a checked batch (the reader guarantees non-negative values
    /// and `offset + len` in range).
    pub fn push_columns(&mut self, b: &ColumnBatch) {
        self.flush_pending();
        let n = b.len();
        let complete = b
            .complete_ns
            .as_ref()
            .map(|c| (as_u64(c.values()), c.nulls()));
        let chunk = Chunk {
            issue: as_u64(&b.issue_ns),
            complete: Complete::None,
            offset: as_u64(&b.offset_bytes),
            len: as_u64(&b.len_bytes),
            ops: &b.ops,
            devices: match &b.device_slots {
                Some(d) => Devices::PerRow(d),
                None => Devices::Same(0),
            },
        };
        assert!(chunk.offset.len() == n && chunk.len.len() == n && chunk.ops.len() == n);
        let mut valid = std::mem::take(&mut self.valid_scratch);
        let mut a = 0;
        while a < n {
            let b = (a + CHUNK_ROWS).min(n);
            let complete = match complete {
                None => Complete::None,
                Some((c, None)) => Complete::All(&c[a..b]),
                Some((c, Some(nb))) => {
                    valid.clear();
                    valid.extend((a..b).map(|i| nb.is_valid(i)));
                    if valid.iter().all(|&v| v) {
                        Complete::All(&c[a..b])
                    } else if valid.iter().any(|&v| v) {
                        Complete::Some(&c[a..b], &valid)
                    } else {
                        Complete::None
                    }
                }
            };
            self.push_chunk(Chunk {
                complete,
                ..chunk.slice(a, b)
            });
            a = b;
        }
        self.valid_scratch = valid;
    }

    /// Runs every concern's loop over one chunk.
    fn push_chunk(&mut self, c: Chunk) {
        if c.len() > CHUNK_ROWS {
            let mut a = 0;
            while a < c.len() {
                let b = (a + CHUNK_ROWS).min(c.len());
                self.push_chunk(c.slice(a, b));
                a = b;
            }
            return;
        }
        let issue = self.arrivals.push(c.issue, &mut self.issue_scratch);
        self.mix.push(c.ops, c.len);
        self.sequential.push(c.ops, c.offset, c.len, c.devices);
        self.footprint.add_data(c.ops, c.offset, c.len, c.devices);
        let complete = match c.complete {
            Complete::None => None,
            Complete::All(v) => Some((v, None)),
            Complete::Some(v, b) => Some((v, Some(b))),
        };
        self.devices.push(devices::Rows {
            issue,
            recorded_issue: c.issue,
            complete,
            ops: c.ops,
            devices: c.devices,
        });
        let Some((complete, valid)) = complete else {
            return;
        };
        self.completions.push(qd::Rows {
            issue,
            recorded_issue: c.issue,
            complete,
            ops: c.ops,
            valid,
        });
    }

    pub fn finish(mut self) -> Characterization {
        self.flush_pending();
        let (busy, qd_time_ns, qd_issued) = self.completions.finish();
        let counts = self.mix.counts;
        let bytes = self.mix.bytes;
        let seq = self.sequential.seq;
        let data = counts[0] + counts[1];
        let with_completion = self.completions.with_completion;
        let last_event_ns = self
            .arrivals
            .last_issue_ns
            .max(self.completions.last_complete_ns);
        let duration_ns = self
            .arrivals
            .first_issue_ns
            .map_or(0, |f| last_event_ns - f);
        // With every service time 0 nothing says how long I/Os took: busy time, QD and
        // service times are unknown, as without completions.
        let have = with_completion > 0 && busy[0] > 0;
        // busy[0] is the sweep's time at QD >= 1, the sum of the QD buckets' times by
        // construction; debug builds check it against the interval union (qd.rs).
        let busy_ns = have.then_some(busy[0]);
        let c = &self.completions;
        let qd = have.then(|| qd_stats(c, busy[0], &qd_time_ns, &qd_issued));
        let service_time_us = if have {
            c.service.percentiles(1000.0)
        } else {
            None
        };
        let (footprint_bytes, granularity, per) = self.footprint.finish();
        assert_eq!(granularity, 1, "the footprint is exact");
        let per_device = device_stats(
            &self.devices,
            &self.sequential.seq_per_slot,
            &per,
            self.device_names.as_ref(),
        );
        Characterization {
            schema_version: SCHEMA_VERSION,
            ios_total: counts.iter().sum(),
            reads: counts[0],
            writes: counts[1],
            trims: counts[2],
            flushes: counts[3],
            bytes_read: bytes[0],
            bytes_written: bytes[1],
            bytes_trimmed: bytes[2],
            gb_read: bytes[0] as f64 / 1e9,
            gb_written: bytes[1] as f64 / 1e9,
            sizes: size_buckets(&self.mix.sizes, data),
            sequential_ios: seq[0] + seq[1],
            sequential_pct: pct(seq[0] + seq[1], data),
            sequential_read_pct: pct(seq[0], counts[0]),
            sequential_write_pct: pct(seq[1], counts[1]),
            duration_ns,
            ios_with_completion: with_completion,
            busy_ns,
            busy_read_ns: have.then_some(busy[1]),
            busy_write_ns: have.then_some(busy[2]),
            idle_ns: busy_ns.map(|b| duration_ns.saturating_sub(b)),
            qd,
            service_time_us,
            footprint_bytes,
            footprint_per_device: device_footprints(per, self.device_names.as_ref()),
            footprint_granularity_bytes: 1,
            inter_arrival_us: self.arrivals.inter_arrival.percentiles(1000.0),
            issue_order_violations: self.arrivals.order_violations,
            per_device,
        }
    }
}

/// Each device's figures, in name order (see [`DeviceStats`]).
fn device_stats(
    devs: &devices::PerDevice,
    seq_per_slot: &[u64],
    footprints: &[(u32, u64)],
    names: Option<&Names>,
) -> Vec<DeviceStats> {
    let mut out: Vec<DeviceStats> = devs
        .devs
        .iter()
        .enumerate()
        .filter(|(_, d)| d.ios > 0)
        .map(|(slot, d)| {
            let duration_ns = d.first_issue_ns.map_or(0, |f| d.last_event_ns - f);
            let have = d.with_completion > 0 && d.busy_ns > 0;
            let busy_ns = have.then_some(d.busy_ns);
            DeviceStats {
                device: device_name(slot as u32, names),
                ios: d.ios,
                reads: d.reads,
                writes: d.writes,
                sequential_pct: pct(
                    seq_per_slot.get(slot).copied().unwrap_or(0),
                    d.reads + d.writes,
                ),
                footprint_bytes: footprints
                    .iter()
                    .find(|&&(s, _)| s as usize == slot)
                    .map_or(0, |&(_, b)| b),
                duration_ns,
                ios_with_completion: d.with_completion,
                busy_ns,
                idle_ns: busy_ns.map(|b| duration_ns.saturating_sub(b)),
                avg_qd: have.then(|| d.service_sum_ns as f64 / d.busy_ns as f64),
                qd1_pct: have.then(|| pct(d.at_qd1, d.with_completion)),
            }
        })
        .collect();
    out.sort_by(|a, b| a.device.cmp(&b.device));
    out
}

/// The name of device slot `slot` (0: rows without a device).
fn device_name(slot: u32, names: Option<&Names>) -> Option<String> {
    slot.checked_sub(1).map(|id| {
        names
            .and_then(|n| n.get(id))
            .map_or_else(|| format!("device {id}"), str::to_owned)
    })
}

/// `n` in percent of `d` (0 when `d` is 0).
fn pct(n: u64, d: u64) -> f64 {
    if d == 0 {
        0.0
    } else {
        n as f64 * 100.0 / d as f64
    }
}

/// The size buckets, counted among the `data` reads and writes.
fn size_buckets(counts: &[u64], data: u64) -> Vec<SizeBucket> {
    let mut sizes = Vec::new();
    for (i, &c) in counts.iter().enumerate() {
        let len = SIZE_BUCKETS_BYTES.get(i).copied();
        sizes.push(SizeBucket {
            label: len.map_or("other".to_owned(), |l| format!("{}K", l / 1024)),
            len_bytes: len,
            count: c,
            pct: pct(c, data),
        });
    }
    sizes
}

/// The QD figures of the sweep: `busy_ns` at QD >= 1, and per QD bucket the time
/// spent and the I/Os issued.
fn qd_stats(c: &Completions, busy_ns: u64, qd_time_ns: &[u64], qd_issued: &[u64]) -> QdStats {
    let with_completion = c.with_completion;
    let mut histogram = Vec::new();
    for (i, &lo) in QD_BUCKET_MIN.iter().enumerate() {
        histogram.push(QdBucket {
            qd_min: lo,
            qd_max: QD_BUCKET_MIN.get(i + 1).map(|n| n - 1),
            busy_pct: if busy_ns == 0 {
                0.0
            } else {
                qd_time_ns[i] as f64 * 100.0 / busy_ns as f64
            },
            issued_ios: qd_issued[i],
            issued_pct: pct(qd_issued[i], with_completion),
        });
    }
    QdStats {
        avg_qd: if busy_ns == 0 {
            0.0
        } else {
            c.service_sum_ns as f64 / busy_ns as f64
        },
        max_qd: c.max_qd,
        ios_at_qd1: c.at_qd1,
        qd1_pct: pct(c.at_qd1, with_completion),
        histogram,
    }
}

/// Per device slot (0: no device) its footprint, named, in name order: the same order
/// whatever ids a reader or writer gave the devices.
fn device_footprints(per: Vec<(u32, u64)>, names: Option<&Names>) -> Vec<DeviceFootprint> {
    let mut out: Vec<DeviceFootprint> = per
        .into_iter()
        .map(|(slot, b)| DeviceFootprint {
            device: device_name(slot, names),
            footprint_bytes: b,
        })
        .collect();
    out.sort_by(|a, b| a.device.cmp(&b.device));
    out
}

/// Characterizes a Parquet trace, decoding only the columns needed.
pub fn characterize_file(path: &Path) -> Result<Characterization, TraceError> {
    characterize_file_with_progress(path, &mut |_, _| {})
}

/// As [`characterize_file`], calling `progress(rows_done, rows_total)` after each batch.
///
/// A trace whose rows are not in issue order (another tool wrote it: a frame sorted by
/// offset and saved) is first written sorted to a temporary file (the import's bounded
/// external sort) and that is characterized; `issue_order_violations` counts its rows
/// issued before a row above them. Measured as it was, every figure would be wrong.
pub fn characterize_file_with_progress(
    path: &Path,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Characterization, TraceError> {
    match characterize_sorted_file(path, progress) {
        Err(TraceError::Unsorted { .. }) => {
            let dir = tempfile::Builder::new()
                .prefix("storbench-sorted-")
                .tempdir()
                .map_err(|e| {
                    TraceError::io(&std::env::temp_dir(), "create a temporary directory", e)
                })?;
            let sorted = dir.path().join("sorted.parquet");
            let out_of_order = crate::formats::sink::sort_trace(path, &sorted)?;
            let mut c = characterize_sorted_file(&sorted, progress)?;
            c.issue_order_violations = out_of_order;
            Ok(c)
        }
        r => r,
    }
}

/// [`characterize_file_with_progress`] of a trace in issue order (else
/// [`TraceError::Unsorted`]).
fn characterize_sorted_file(
    path: &Path,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Characterization, TraceError> {
    let mut reader = TraceReader::open_columns_batched(path, Columns::NoStream, CHUNK_ROWS)?;
    let total = reader.num_rows();
    let mut c = Characterizer::new();
    let mut done = 0u64;
    while let Some(b) = reader.next_columns()? {
        c.push_columns(&b);
        done += b.len() as u64;
        progress(done, total);
    }
    // The reader names devices as it meets them: all are known at the end.
    c.set_device_names(reader.devices());
    Ok(c.finish())
}

impl Characterization {
    /// Why the QD and busy figures are n/a.
    fn no_completions(&self) -> &'static str {
        if self.ios_with_completion == 0 {
            "n/a (no completion times in trace)"
        } else {
            "n/a (every service time is 0: the trace does not say how long I/Os took)"
        }
    }
}

fn secs(ns: u64) -> String {
    format!("{:.3} s", ns as f64 / 1e9)
}

impl Characterization {
    /// A plain-text table, as published benchmarks print it. With several devices the
    /// trace-wide busy and QD rows say they count every device together, and a table of
    /// each device's own figures follows.
    pub fn to_table(&self) -> String {
        let mut s = String::new();
        let multi = self.per_device.len() > 1;
        self.table_mix(&mut s);
        match &self.qd {
            Some(q) => table_qd(&mut s, q, multi),
            None => row(&mut s, "queue depth", self.no_completions().into()),
        }
        row(&mut s, "duration", secs(self.duration_ns));
        match (self.busy_ns, self.idle_ns) {
            (Some(b), Some(i)) if multi => {
                row(&mut s, "busy time (any device busy)", secs(b));
                row(&mut s, "idle time (no device busy)", secs(i));
            }
            (Some(b), Some(i)) => {
                row(&mut s, "busy time", secs(b));
                row(&mut s, "idle time", secs(i));
            }
            _ => row(&mut s, "busy time", self.no_completions().into()),
        }
        if let Some(p) = &self.service_time_us {
            row(
                &mut s,
                "service time r+w (us)",
                format!(
                    "mean {:.1}, p50 {:.1}, p99 {:.1}, p99.9 {:.1}, max {:.1}",
                    p.mean, p.p50, p.p99, p.p99_9, p.max
                ),
            );
        }
        self.table_footprint(&mut s, multi);
        if let Some(p) = &self.inter_arrival_us {
            row(
                &mut s,
                "inter-arrival (us)",
                format!(
                    "p50 {:.1}, p90 {:.1}, p99 {:.1}, p99.9 {:.1}, max {:.1}",
                    p.p50, p.p90, p.p99, p.p99_9, p.max
                ),
            );
        }
        if self.issue_order_violations > 0 {
            row(
                &mut s,
                "out-of-order issues",
                format!(
                    "{} (sorted into issue order before measuring)",
                    self.issue_order_violations
                ),
            );
        }
        if multi {
            self.table_devices(&mut s);
        }
        s
    }

    /// Each device's own figures, the 16 with the most I/Os (all in JSON).
    fn table_devices(&self, s: &mut String) {
        const SHOWN: usize = 16;
        let _ = writeln!(
            s,
            "\nper device, each on its own:\n{:<16} {:>10} {:>6} {:>12} {:>10} {:>10} {:>7} {:>6}",
            "device", "I/Os", "seq %", "footprint GB", "busy s", "idle s", "avg QD", "QD1 %"
        );
        let mut by_ios: Vec<&DeviceStats> = self.per_device.iter().collect();
        by_ios.sort_by_key(|d| std::cmp::Reverse(d.ios));
        let na = |v: Option<String>| v.unwrap_or_else(|| "n/a".to_owned());
        for d in by_ios.iter().take(SHOWN) {
            let _ = writeln!(
                s,
                "{:<16} {:>10} {:>6.1} {:>12.3} {:>10} {:>10} {:>7} {:>6}",
                d.device.as_deref().unwrap_or("(no device)"),
                d.ios,
                d.sequential_pct,
                d.footprint_bytes as f64 / 1e9,
                na(d.busy_ns.map(|b| format!("{:.3}", b as f64 / 1e9))),
                na(d.idle_ns.map(|b| format!("{:.3}", b as f64 / 1e9))),
                na(d.avg_qd.map(|q| format!("{q:.3}"))),
                na(d.qd1_pct.map(|p| format!("{p:.1}"))),
            );
        }
        if by_ios.len() > SHOWN {
            let _ = writeln!(s, "{} more devices (all in --json)", by_ios.len() - SHOWN);
        }
    }

    /// The table's rows of counts, bytes, sizes and sequential I/O.
    fn table_mix(&self, s: &mut String) {
        row(s, "reads", self.reads.to_string());
        row(s, "writes", self.writes.to_string());
        row(s, "trims", self.trims.to_string());
        row(s, "flushes", self.flushes.to_string());
        row(s, "total I/Os", self.ios_total.to_string());
        row(s, "GB read", format!("{:.2}", self.gb_read));
        row(s, "GB written", format!("{:.2}", self.gb_written));
        for b in &self.sizes {
            row(
                s,
                &format!("I/O size {}", b.label),
                format!("{:.1}% ({})", b.pct, b.count),
            );
        }
        row(
            s,
            "sequential",
            format!(
                "{:.1}% (reads {:.1}%, writes {:.1}%)",
                self.sequential_pct, self.sequential_read_pct, self.sequential_write_pct
            ),
        );
    }

    /// The table's footprint rows: in all, then the largest devices' when there are
    /// several (unless the per-device table shows them: `multi`).
    fn table_footprint(&self, s: &mut String, multi: bool) {
        let fp = format!(
            "{:.3} GB ({} bytes)",
            self.footprint_bytes as f64 / 1e9,
            self.footprint_bytes
        );
        row(
            s,
            if multi {
                "footprint (all devices)"
            } else {
                "footprint"
            },
            fp,
        );
        if multi || self.footprint_per_device.len() <= 1 {
            return;
        }
        const SHOWN: usize = 16;
        let mut by_size: Vec<&DeviceFootprint> = self.footprint_per_device.iter().collect();
        by_size.sort_by_key(|d| std::cmp::Reverse(d.footprint_bytes));
        for d in by_size.iter().take(SHOWN) {
            row(
                s,
                &format!(
                    "  footprint {}",
                    d.device.as_deref().unwrap_or("(no device)")
                ),
                format!("{:.3} GB", d.footprint_bytes as f64 / 1e9),
            );
        }
        if by_size.len() > SHOWN {
            row(
                s,
                "  footprint, other devices",
                format!("{} more (all in --json)", by_size.len() - SHOWN),
            );
        }
    }
}

/// One row of [`Characterization::to_table`].
fn row(s: &mut String, k: &str, v: String) {
    let _ = writeln!(s, "{k:<28} {v}");
}

/// The table's queue-depth rows (`multi`: several devices, counted together).
fn table_qd(s: &mut String, q: &QdStats, multi: bool) {
    let (avg, max, qd1) = if multi {
        (
            "average QD (all devices)",
            "max QD (all devices)",
            "I/Os at QD1 (none on any device)",
        )
    } else {
        ("average QD (busy time)", "max QD", "I/Os issued at QD1")
    };
    row(s, avg, format!("{:.3}", q.avg_qd));
    row(s, max, q.max_qd.to_string());
    row(s, qd1, format!("{:.1}% ({})", q.qd1_pct, q.ios_at_qd1));
    for b in &q.histogram {
        let label = match b.qd_max {
            Some(m) if m == b.qd_min => format!("QD {}", b.qd_min),
            Some(m) => format!("QD {}-{}", b.qd_min, m),
            None => format!("QD {}+", b.qd_min),
        };
        row(
            s,
            &label,
            format!(
                "{:5.1}% of busy time, {:5.1}% of issues",
                b.busy_pct, b.issued_pct
            ),
        );
    }
}
