//! Trace replay source: streams a Parquet trace one bounded batch at a time and gives
//! each I/O its trace time (`at_ns`, for `timed` replay) and the number of I/Os the
//! trace had in flight when it was issued, itself included (`trace_qd`, for
//! `queue-depth` replay), computed from the trace's completion times with a bounded
//! min-heap of outstanding completion times.
//!
//! Memory is flat in trace length: one reader batch plus the heap (at most
//! [`MAX_TRACE_QD`] entries).

use crate::source::{NextIo, Source, SourceError};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::Path;
use storbench_trace::store::Columns;
use storbench_trace::{IoRecord, TraceMeta, TraceReader};

/// Bound of the in-flight heap. A trace claiming more outstanding I/Os than this is
/// clamped (the oldest outstanding completion is dropped) and the count reported.
pub const MAX_TRACE_QD: usize = 65_536;

/// Computes trace QD and the time-weighted average QD from a stream of records in
/// issue order. Separate from the reader so it is testable on hand-built records.
#[derive(Debug, Default)]
pub struct TraceQd {
    /// Completion times of I/Os still outstanding at the last issue time.
    outstanding: BinaryHeap<Reverse<u64>>,
    /// Busy-interval union: start and end of the open interval.
    busy_start_ns: Option<u64>,
    busy_end_ns: u64,
    busy_ns: u64,
    service_sum_ns: u128,
    with_completion: u64,
    without_completion: u64,
    /// Times the heap bound was hit.
    pub clamped: u64,
}

impl TraceQd {
    pub fn new() -> TraceQd {
        TraceQd::default()
    }

    /// The trace QD of `rec` (itself included), or `None` when it has no completion time.
    pub fn on_record(&mut self, rec: &IoRecord) -> Option<u32> {
        let issue = rec.issue_ns;
        while let Some(&Reverse(c)) = self.outstanding.peek() {
            if c > issue {
                break;
            }
            self.outstanding.pop();
        }
        let complete = match rec.complete_ns {
            Some(c) => c.max(issue),
            None => {
                self.without_completion += 1;
                return None;
            }
        };
        self.with_completion += 1;
        self.service_sum_ns += u128::from(complete - issue);
        match self.busy_start_ns {
            None => {
                self.busy_start_ns = Some(issue);
                self.busy_end_ns = complete;
            }
            Some(s) => {
                if issue > self.busy_end_ns {
                    self.busy_ns += self.busy_end_ns - s;
                    self.busy_start_ns = Some(issue);
                    self.busy_end_ns = complete;
                } else {
                    self.busy_end_ns = self.busy_end_ns.max(complete);
                }
            }
        }
        if complete > issue {
            if self.outstanding.len() >= MAX_TRACE_QD {
                self.outstanding.pop();
                self.clamped += 1;
            }
            self.outstanding.push(Reverse(complete));
            Some(self.outstanding.len() as u32)
        } else {
            // Zero service time: it was in flight only at its own instant.
            Some(self.outstanding.len() as u32 + 1)
        }
    }

    /// Time-weighted average QD over busy time (sum of service times / busy time, which
    /// is exact for the union of intervals), once every record has been seen.
    pub fn avg_qd(&self) -> Option<f64> {
        let busy = self.busy_ns
            + self
                .busy_start_ns
                .map_or(0, |s| self.busy_end_ns.saturating_sub(s));
        if busy == 0 {
            return None;
        }
        Some(self.service_sum_ns as f64 / busy as f64)
    }
}

/// What a replay needs to know of a trace before it touches a target: read whole
/// (every row checked by the reader, page checksums included), so a bad trace fails
/// before any purge or seasoning, and the buffers are sized from it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TraceScan {
    pub rows: u64,
    /// Rows that write or trim.
    pub writes: u64,
    /// The largest data I/O (read or write) and its row (0-based).
    pub max_len_bytes: u64,
    pub max_len_row: u64,
    /// The largest data I/O once widened to whole blocks of 512 bytes and of 4 KiB (the
    /// replay aligns an I/O to the target's logical block: 4 KiB at byte 512 moves 8 KiB
    /// on a 4Kn drive); see [`TraceScan::max_io_bytes_on`].
    pub max_widened_512_bytes: u64,
    pub max_widened_4k_bytes: u64,
    /// The largest I/O of any kind (TRIMs too) and its row: it must fit the target.
    pub max_extent_bytes: u64,
    pub max_extent_row: u64,
    /// The most I/Os the trace had in flight at once (from completion times; 1 when
    /// it has none).
    pub max_in_flight: u32,
    /// I/Os and bytes per op (`Op::index`), for the result's trace summary.
    pub ios_by_op: [u64; 4],
    pub bytes_by_op: [u64; 4],
    /// The first and last issue times (trace time).
    pub first_issue_ns: Option<u64>,
    pub last_issue_ns: u64,
    /// The trace's own metadata.
    pub meta: TraceMeta,
    /// The file's size when scanned.
    pub file_bytes: u64,
}

impl TraceScan {
    /// Read `path` to the end.
    pub fn of(path: &Path) -> Result<TraceScan, SourceError> {
        let mut r =
            TraceReader::open_columns(path, Columns::NoNames).map_err(|e| SourceError::Read {
                file: path.display().to_string(),
                message: e.to_string(),
            })?;
        let mut s = TraceScan {
            max_in_flight: 1,
            meta: r.meta().clone(),
            file_bytes: std::fs::metadata(path).map_or(0, |m| m.len()),
            ..TraceScan::default()
        };
        let mut qd = TraceQd::new();
        let mut batch = Vec::new();
        loop {
            match r.next_batch(&mut batch) {
                Ok(true) => {}
                Ok(false) => break,
                Err(e) => {
                    return Err(SourceError::Read {
                        file: path.display().to_string(),
                        message: format!("after row {}: {e}", s.rows),
                    })
                }
            }
            for rec in &batch {
                if rec.op.is_data() {
                    if rec.len_bytes > s.max_len_bytes {
                        s.max_len_bytes = rec.len_bytes;
                        s.max_len_row = s.rows;
                    }
                    let w = |b| widened(rec.offset_bytes, rec.len_bytes, b);
                    s.max_widened_512_bytes = s.max_widened_512_bytes.max(w(512));
                    s.max_widened_4k_bytes = s.max_widened_4k_bytes.max(w(4096));
                }
                if rec.len_bytes > s.max_extent_bytes {
                    s.max_extent_bytes = rec.len_bytes;
                    s.max_extent_row = s.rows;
                }
                if matches!(
                    rec.op,
                    storbench_trace::Op::Write | storbench_trace::Op::Trim
                ) {
                    s.writes += 1;
                }
                if let Some(n) = qd.on_record(rec) {
                    s.max_in_flight = s.max_in_flight.max(n);
                }
                s.ios_by_op[rec.op.index()] += 1;
                s.bytes_by_op[rec.op.index()] += rec.len_bytes;
                s.first_issue_ns.get_or_insert(rec.issue_ns);
                s.last_issue_ns = s.last_issue_ns.max(rec.issue_ns);
                s.rows += 1;
            }
        }
        Ok(s)
    }

    /// The largest data I/O as replayed on a target of `block_bytes` logical blocks:
    /// widened to whole blocks (exact for 512 bytes and 4 KiB and their divisors, a
    /// bound for larger blocks).
    pub fn max_io_bytes_on(&self, block_bytes: u64) -> u64 {
        let b = block_bytes.max(1);
        if 512 % b == 0 {
            self.max_widened_512_bytes.max(self.max_len_bytes)
        } else if 4096 % b == 0 {
            self.max_widened_4k_bytes.max(self.max_len_bytes)
        } else {
            // Any start within a block: at most b - 1 bytes before the I/O.
            (self.max_len_bytes + b - 1).div_ceil(b) * b
        }
    }

    /// Every I/O fits in `span_bytes` (the target, or the part of it the replay folds
    /// onto); otherwise an error naming the trace row.
    pub fn check_fits(&self, path: &Path, span_bytes: u64) -> Result<(), SourceError> {
        if self.max_extent_bytes > span_bytes {
            return Err(SourceError::Read {
                file: path.display().to_string(),
                message: format!(
                    "row {}: an I/O of {} bytes (len_bytes) is larger than the target's {span_bytes} bytes it replays onto",
                    self.max_extent_row, self.max_extent_bytes
                ),
            });
        }
        Ok(())
    }
}

/// Bytes `[offset, offset + len)` moves once widened to whole `block`s.
fn widened(offset: u64, len: u64, block: u64) -> u64 {
    let start = offset / block * block;
    let end = offset.saturating_add(len).div_ceil(block) * block;
    end - start
}

/// One job's share of a trace replayed by several (`replay --jobs N`). The trace's
/// `stream` column says which I/Os are independent: the k-th stream to appear in the
/// trace (0, 1, ...) goes to job k mod N, rows without a stream to job 0; each job
/// replays its streams' I/Os in the trace's order. Across jobs no order is kept but
/// the one time gives: in `timed` replay every job issues at trace time from the same
/// start, with the idle gaps of the whole trace cut alike (so the source hands out
/// trace times since the trace's first I/O, cut); in `queue-depth` replay each job
/// keeps its streams' own in-flight count (computed over its rows only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JobSplit {
    pub job: u32,
    pub jobs: u32,
    /// Cut every idle gap of the whole trace longer than this (`timed`'s max idle).
    pub max_idle_ns: Option<u64>,
}

impl JobSplit {
    /// Whether a row of `stream` is this job's.
    fn takes(&self, stream: Option<storbench_trace::StreamId>) -> bool {
        stream.map_or(0, |s| s.0 % self.jobs) == self.job
    }
}

/// Trace time since the first I/O with idle gaps cut, over every row read.
#[derive(Debug, Default)]
struct CutClock {
    prev_ns: Option<u64>,
    cut_ns: u64,
}

impl CutClock {
    fn at(&mut self, issue_ns: u64, max_idle_ns: Option<u64>) -> u64 {
        if let Some(p) = self.prev_ns {
            let gap = issue_ns.saturating_sub(p);
            self.cut_ns += max_idle_ns.map_or(gap, |m| gap.min(m));
        }
        self.prev_ns = Some(self.prev_ns.map_or(issue_ns, |p| p.max(issue_ns)));
        self.cut_ns
    }
}

/// Replays a Parquet trace (or one job's share of it) as a [`Source`].
pub struct ReplaySource {
    reader: TraceReader,
    batch: Vec<IoRecord>,
    pos: usize,
    done: bool,
    qd: TraceQd,
    read_rows: u64,
    split: Option<(JobSplit, CutClock)>,
}

impl ReplaySource {
    pub fn open(path: &Path) -> Result<ReplaySource, SourceError> {
        let reader = TraceReader::open_columns(path, Columns::NoNames)
            .map_err(|e| SourceError::Invalid(e.to_string()))?;
        Ok(ReplaySource::open_reader(reader))
    }

    /// Job `split.job`'s share of the trace at `path` (see [`JobSplit`]).
    pub fn open_job(path: &Path, split: JobSplit) -> Result<ReplaySource, SourceError> {
        assert!(split.jobs >= 1 && split.job < split.jobs);
        let reader = TraceReader::open_columns(path, Columns::All)
            .map_err(|e| SourceError::Invalid(e.to_string()))?;
        Ok(ReplaySource {
            split: Some((split, CutClock::default())),
            ..ReplaySource::open_reader(reader)
        })
    }

    fn open_reader(reader: TraceReader) -> ReplaySource {
        ReplaySource {
            reader,
            batch: Vec::new(),
            pos: 0,
            done: false,
            qd: TraceQd::new(),
            read_rows: 0,
            split: None,
        }
    }

    pub fn meta(&self) -> &TraceMeta {
        self.reader.meta()
    }

    pub fn num_rows(&self) -> u64 {
        self.reader.num_rows()
    }

    /// Rows handed out so far.
    pub fn read_rows(&self) -> u64 {
        self.read_rows
    }

    /// Times the in-flight heap bound was hit.
    pub fn qd_clamped(&self) -> u64 {
        self.qd.clamped
    }
}

impl Source for ReplaySource {
    fn next_io(&mut self) -> Option<Result<NextIo, SourceError>> {
        loop {
            while self.pos >= self.batch.len() {
                if self.done {
                    return None;
                }
                self.pos = 0;
                match self.reader.next_batch(&mut self.batch) {
                    Ok(true) => {}
                    Ok(false) => {
                        self.done = true;
                        return None;
                    }
                    Err(e) => {
                        self.done = true;
                        return Some(Err(SourceError::Invalid(e.to_string())));
                    }
                }
            }
            let rec = self.batch[self.pos];
            self.pos += 1;
            self.read_rows += 1;
            let at_ns = match self.split.as_mut() {
                None => rec.issue_ns,
                Some((split, clock)) => {
                    let at = clock.at(rec.issue_ns, split.max_idle_ns);
                    if !split.takes(rec.stream) {
                        continue;
                    }
                    at
                }
            };
            let trace_qd = self.qd.on_record(&rec);
            return Some(Ok(NextIo {
                op: rec.op,
                offset_bytes: rec.offset_bytes,
                len_bytes: rec.len_bytes,
                at_ns: Some(at_ns),
                trace_qd,
            }));
        }
    }

    /// The trace's rows; unknown for one job's share (how many are its is known only
    /// once read).
    fn total_ios(&self) -> Option<u64> {
        match self.split {
            None => Some(self.reader.num_rows()),
            Some(_) => None,
        }
    }

    fn trace_avg_qd(&self) -> Option<f64> {
        if self.done {
            self.qd.avg_qd()
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use storbench_trace::{Op, TraceWriter};

    fn rec(issue: u64, complete: Option<u64>) -> IoRecord {
        IoRecord {
            complete_ns: complete,
            ..IoRecord::new(Op::Read, 0, 4096, issue)
        }
    }

    #[test]
    fn trace_qd_counts_outstanding_including_itself() {
        let mut q = TraceQd::new();
        // [0,100) [10,50) [20,30) [40,60) [200,210)
        assert_eq!(q.on_record(&rec(0, Some(100))), Some(1));
        assert_eq!(q.on_record(&rec(10, Some(50))), Some(2));
        assert_eq!(q.on_record(&rec(20, Some(30))), Some(3));
        assert_eq!(q.on_record(&rec(40, Some(60))), Some(3)); // [20,30) done
        assert_eq!(q.on_record(&rec(200, Some(210))), Some(1));
        assert_eq!(q.on_record(&rec(205, None)), None);
        // Busy: [0,100) + [200,210) = 110; service sum 100+40+10+20+10 = 180.
        let avg = q.avg_qd().unwrap();
        assert!((avg - 180.0 / 110.0).abs() < 1e-12, "{avg}");
        // Completion exactly at the next issue: not outstanding any more.
        let mut q = TraceQd::new();
        assert_eq!(q.on_record(&rec(0, Some(10))), Some(1));
        assert_eq!(q.on_record(&rec(10, Some(20))), Some(1));
        assert_eq!(q.on_record(&rec(20, Some(20))), Some(1));
    }

    #[test]
    fn no_completion_times_no_avg() {
        let mut q = TraceQd::new();
        q.on_record(&rec(0, None));
        assert_eq!(q.avg_qd(), None);
    }

    #[test]
    fn replays_a_parquet_trace_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        let mut w = TraceWriter::create(&path, &TraceMeta::default()).unwrap();
        let n = 20_000u64;
        for i in 0..n {
            let r = IoRecord {
                complete_ns: Some(i * 1000 + 2500), // 2.5 I/Os in flight
                ..IoRecord::new(
                    if i.is_multiple_of(3) {
                        Op::Write
                    } else {
                        Op::Read
                    },
                    i * 4096,
                    4096,
                    i * 1000,
                )
            };
            w.write(&r).unwrap();
        }
        w.finish().unwrap();
        let mut s = ReplaySource::open(&path).unwrap();
        assert_eq!(s.total_ios(), Some(n));
        let mut i = 0u64;
        while let Some(io) = s.next_io() {
            let io = io.unwrap();
            assert_eq!(io.at_ns, Some(i * 1000));
            assert_eq!(io.offset_bytes, i * 4096);
            assert_eq!(
                io.op,
                if i.is_multiple_of(3) {
                    Op::Write
                } else {
                    Op::Read
                }
            );
            let want = if i < 2 { i as u32 + 1 } else { 3 };
            assert_eq!(io.trace_qd, Some(want), "row {i}");
            i += 1;
        }
        assert_eq!(i, n);
        assert!(s.next_io().is_none());
        let avg = s.trace_avg_qd().unwrap();
        // busy = (n-1)*1000 + 2500, service sum = n * 2500.
        let want = (n * 2500) as f64 / ((n - 1) * 1000 + 2500) as f64;
        assert!((avg - want).abs() < 1e-9, "{avg} vs {want}");
    }

    /// Issue 35: `replay --jobs N` gives stream k to job k mod N, rows without a
    /// stream to job 0, each job its rows in trace order with trace times cut over
    /// the whole trace and its own in-flight counts.
    #[test]
    fn a_job_replays_its_streams_in_order_on_the_trace_timeline() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        let mut w = TraceWriter::create(&path, &TraceMeta::default()).unwrap();
        // (issue us, stream): streams appear in the order a, b, c; a 10 s idle gap.
        let rows: [(u64, Option<&str>); 8] = [
            (0, Some("a")),
            (10, Some("b")),
            (20, None),
            (30, Some("c")),
            (40, Some("a")),
            (10_000_040, Some("b")),
            (10_000_050, Some("c")),
            (10_000_060, Some("a")),
        ];
        for (i, (t, s)) in rows.iter().enumerate() {
            let mut r = IoRecord {
                complete_ns: Some(t * 1000 + 1000),
                ..IoRecord::new(Op::Read, i as u64 * 4096, 4096, t * 1000)
            };
            r.stream = s.map(|s| w.intern_stream(s));
            w.write(&r).unwrap();
        }
        w.finish().unwrap();
        let take = |job, jobs| {
            let split = JobSplit {
                job,
                jobs,
                max_idle_ns: Some(1_000_000),
            };
            let mut s = ReplaySource::open_job(&path, split).unwrap();
            assert_eq!(s.total_ios(), None);
            let mut v = Vec::new();
            while let Some(io) = s.next_io() {
                let io = io.unwrap();
                v.push((
                    io.offset_bytes / 4096,
                    io.at_ns.unwrap() / 1000,
                    io.trace_qd,
                ));
            }
            v
        };
        // Streams a=0, b=1, c=2: job 0 takes a, c and the unnamed row.
        assert_eq!(
            take(0, 2),
            vec![
                (0, 0, Some(1)),
                (2, 20, Some(1)),
                (3, 30, Some(1)),
                (4, 40, Some(1)),
                (6, 1050, Some(1)),
                (7, 1060, Some(1))
            ]
        );
        // The 10 s gap cut to 1 ms on every job's timeline alike.
        assert_eq!(take(1, 2), vec![(1, 10, Some(1)), (5, 1040, Some(1))]);
        let all: usize = (0..3).map(|j| take(j, 3).len()).sum();
        assert_eq!(all, rows.len());
        assert_eq!(take(0, 1).len(), rows.len());
    }

    #[test]
    fn missing_file_is_a_clear_error() {
        let err = ReplaySource::open(Path::new("/nonexistent/x.parquet"))
            .err()
            .unwrap();
        assert!(err.to_string().contains("/nonexistent/x.parquet"), "{err}");
    }
}
