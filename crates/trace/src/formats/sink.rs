//! The sink every importer writes to: records in exact issue order, times rebased.

use super::spill::{SortLimits, Spill};
use crate::error::TraceError;
use crate::model::{IoRecord, TraceMeta};
use crate::store::TraceWriter;
use std::collections::{BinaryHeap, VecDeque};
use std::path::{Path, PathBuf};

/// Bound on records held to restore issue order (completions arrive out of issue order).
pub const REORDER_WINDOW: usize = 1 << 18;

/// The sink every importer writes to: writes records in exact issue order, with times
/// rebased so the smallest issue time is 0 (unless told to keep them: storbench CSV),
/// and counts them.
///
/// Records mostly arrive in issue order or a few places off it (completions of a queue
/// of requests): those are written straight out, or restored to order within
/// [`REORDER_WINDOW`] records. Held records are kept in a sorted run, appended at the
/// back or inserted a few places before it, and the rest in a heap; writing out takes
/// the smaller head of the two: the order a single heap of (issue_ns, arrival) gives,
/// without a heap's log-time sift of every record.
///
/// A record issued before one already written (shuffled lines, concatenated per-volume
/// files) cannot be put in order there: the sink then finishes what it wrote as a
/// sorted prefix and sorts the rest externally ([`super::spill`]), merging everything into the
/// output at the end. Ties keep input order throughout.
pub struct Sink {
    pub writer: TraceWriter,
    output: PathBuf,
    limits: SortLimits,
    /// Subtract the smallest issue time from every time.
    rebase: bool,
    /// The issue time of the first record written straight out: the smallest so far.
    base_ns: Option<u64>,
    /// Sorted by (issue_ns, seq).
    run: VecDeque<Held>,
    heap: BinaryHeap<std::cmp::Reverse<Held>>,
    seq: u64,
    /// Issue time of the last record written straight out (u64::MAX once sorting
    /// externally, so every record takes the slow path).
    last_out_ns: u64,
    /// Records written straight out.
    pub written: u64,
    spill: Option<Spill>,
}

/// A record held for ordering: sorted by (issue_ns, seq) only (seq is unique).
#[derive(Clone, Copy, Debug)]
struct Held {
    issue_ns: u64,
    seq: u64,
    rec: IoRecord,
}
impl Held {
    #[inline]
    fn key(&self) -> (u64, u64) {
        (self.issue_ns, self.seq)
    }
}
impl PartialEq for Held {
    fn eq(&self, o: &Self) -> bool {
        self.key() == o.key()
    }
}
impl Eq for Held {}
impl PartialOrd for Held {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Held {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.key().cmp(&o.key())
    }
}

/// How far before the back of the sorted run a record is inserted; further out of
/// order, it goes to the heap (bounds the shifting per record).
const RUN_INSERT_REACH: usize = 64;

/// What [`Sink::finish`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SinkDone {
    pub records: u64,
    /// The output went through the external sort.
    pub sorted: bool,
    /// Sorted runs written to disk.
    pub runs: u64,
}

impl Sink {
    /// A sink writing to `writer`, which writes `output` (the sort's temporary directory
    /// goes next to it).
    pub fn new(writer: TraceWriter, output: &Path, rebase: bool, limits: SortLimits) -> Self {
        Sink {
            writer,
            output: output.to_path_buf(),
            limits,
            rebase,
            base_ns: None,
            run: VecDeque::new(),
            heap: BinaryHeap::new(),
            seq: 0,
            last_out_ns: 0,
            written: 0,
            spill: None,
        }
    }

    /// Records accepted so far (written, held, or in the external sort).
    pub fn records(&self) -> u64 {
        match &self.spill {
            Some(s) => s.records(),
            None => self.written + self.held() as u64,
        }
    }

    /// The trace being written (temporary sort files go next to it).
    pub fn output(&self) -> &Path {
        &self.output
    }

    /// Whether the output goes through the external sort.
    pub fn sorting(&self) -> bool {
        self.spill.is_some()
    }

    /// Records held (both structures); at most [`REORDER_WINDOW`] between calls.
    #[inline]
    fn held(&self) -> usize {
        self.run.len() + self.heap.len()
    }

    /// Accepts one record (any order).
    pub fn push(&mut self, rec: IoRecord) -> Result<(), TraceError> {
        if rec.issue_ns < self.last_out_ns {
            // Before what was written already (or sorting externally).
            return self.spill_out(rec);
        }
        let h = Held {
            issue_ns: rec.issue_ns,
            seq: self.seq,
            rec,
        };
        self.seq += 1;
        // seq is the largest yet: h goes after every held record issued at or before it.
        let n = self.run.len();
        let mut at = n;
        while at > 0 && n - at < RUN_INSERT_REACH && self.run[at - 1].issue_ns > h.issue_ns {
            at -= 1;
        }
        if at == 0 || self.run[at - 1].issue_ns <= h.issue_ns {
            self.run.insert(at, h);
        } else {
            self.heap.push(std::cmp::Reverse(h));
        }
        if self.held() > REORDER_WINDOW {
            self.pop_one()?;
        }
        debug_assert!(self.held() <= REORDER_WINDOW);
        Ok(())
    }

    /// Writes directly when the caller guarantees order (fast path for sorted formats);
    /// falls back to the window, or the external sort, when the record is out of order.
    #[inline]
    pub fn push_ordered(&mut self, rec: IoRecord) -> Result<(), TraceError> {
        if self.held() == 0 && rec.issue_ns >= self.last_out_ns {
            return self.write_out(rec);
        }
        self.push(rec)
    }

    /// Writes one record straight to the output, rebased.
    #[inline(always)]
    fn write_out(&mut self, mut rec: IoRecord) -> Result<(), TraceError> {
        debug_assert!(rec.issue_ns >= self.last_out_ns && self.spill.is_none());
        self.last_out_ns = rec.issue_ns;
        if self.rebase {
            let b = *self.base_ns.get_or_insert(rec.issue_ns);
            rec.issue_ns -= b;
            rec.complete_ns = rec.complete_ns.map(|c| c.saturating_sub(b));
        }
        self.written += 1;
        self.writer.write(&rec)
    }

    /// The earliest held record's issue time.
    #[inline]
    fn first_issue_ns(&self) -> Option<u64> {
        match (self.run.front(), self.heap.peek()) {
            (Some(a), Some(std::cmp::Reverse(b))) => Some(a.issue_ns.min(b.issue_ns)),
            (Some(a), None) => Some(a.issue_ns),
            (None, Some(std::cmp::Reverse(b))) => Some(b.issue_ns),
            (None, None) => None,
        }
    }

    /// Writes out every held record issued at or before `t_ns` (the caller knows no
    /// later record will be issued before it): keeps the held records few.
    pub fn release_upto(&mut self, t_ns: u64) -> Result<(), TraceError> {
        while let Some(t) = self.first_issue_ns() {
            if t > t_ns {
                break;
            }
            self.pop_one()?;
        }
        Ok(())
    }

    /// Removes and returns the held record with the smallest (issue_ns, seq).
    fn take_first(&mut self) -> Option<Held> {
        let from_run = match (self.run.front(), self.heap.peek()) {
            (Some(a), Some(std::cmp::Reverse(b))) => a.key() < b.key(),
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => return None,
        };
        if from_run {
            self.run.pop_front()
        } else {
            self.heap.pop().map(|r| r.0)
        }
    }

    fn pop_one(&mut self) -> Result<(), TraceError> {
        match self.take_first() {
            // Every held record was at or after the last one written when it came.
            Some(h) => self.write_out(h.rec),
            None => Ok(()),
        }
    }

    /// Hands `rec` to the external sort, starting it first if needed: what was written
    /// so far becomes the sorted prefix, held records and `rec` the first run's start.
    #[cold]
    fn spill_out(&mut self, rec: IoRecord) -> Result<(), TraceError> {
        if let Some(s) = &mut self.spill {
            return s.push(rec);
        }
        let mut spill = Spill::new(&self.output, self.limits)?;
        // The output is written anew, judged as the first writer was (its rule, its
        // directory); names keep their ids.
        let mut next = self.writer.restart()?;
        for name in self.writer.devices().iter() {
            next.intern_device(name);
        }
        for name in self.writer.streams().iter() {
            next.intern_stream(name);
        }
        let prefix = std::mem::replace(&mut self.writer, next);
        // Finished aside, in the sort's directory: the output is written once, whole.
        let rows = prefix.finish_at(spill.prefix_path())?;
        spill.take_prefix(self.base_ns.unwrap_or(0), rows);
        // Held records, then `rec`: in arrival order for equal times (held ones are in
        // (issue, arrival) order, and `rec` came after all of them).
        while let Some(h) = self.take_first() {
            spill.push(h.rec)?;
        }
        self.run = VecDeque::new();
        self.heap = BinaryHeap::new();
        self.last_out_ns = u64::MAX;
        spill.push(rec)?;
        self.spill = Some(spill);
        Ok(())
    }

    /// Writes everything still held, sets `meta` and finishes the output.
    pub fn finish(mut self, meta: TraceMeta) -> Result<SinkDone, TraceError> {
        while self.held() > 0 {
            self.pop_one()?;
        }
        let mut done = SinkDone {
            records: self.written,
            ..Default::default()
        };
        let spill = self.spill.take();
        if let Some(spill) = &spill {
            done.sorted = true;
            done.runs = spill.runs_written;
        }
        let mut dir = None;
        if let Some(spill) = spill {
            let (records, d) = spill.finish(&mut self.writer, self.rebase)?;
            done.records = records;
            dir = Some(d);
        }
        self.writer.set_meta(meta);
        let rows = self.writer.finish()?;
        assert_eq!(rows, done.records);
        drop(dir);
        Ok(done)
    }
}

/// Writes the records of the Parquet trace `input` to `output` in exact issue order
/// (ties in row order), in the sink's bounded memory (its external sort beyond the
/// reorder window); metadata and names kept. Returns the number of rows issued before
/// a row above them.
pub fn sort_trace(input: &Path, output: &Path) -> Result<u64, TraceError> {
    let mut reader = crate::store::TraceReader::open(input)?.any_order();
    let meta = reader.meta().clone();
    let writer = TraceWriter::create(output, &meta)?;
    let mut sink = Sink::new(writer, output, false, SortLimits::default());
    let (mut devices, mut streams): (
        Vec<Option<crate::model::DeviceId>>,
        Vec<Option<crate::model::StreamId>>,
    ) = (Vec::new(), Vec::new());
    let mut batch = Vec::new();
    let (mut max, mut out_of_order) = (0u64, 0u64);
    while reader.next_batch(&mut batch)? {
        for rec in &mut batch {
            if rec.issue_ns < max {
                out_of_order += 1;
            }
            max = max.max(rec.issue_ns);
            if let Some(d) = rec.device {
                let i = d.0 as usize;
                if devices.len() <= i {
                    devices.resize(i + 1, None);
                }
                let name = reader.devices().get(d.0).unwrap_or("").to_owned();
                rec.device =
                    Some(*devices[i].get_or_insert_with(|| sink.writer.intern_device(&name)));
            }
            if let Some(st) = rec.stream {
                let i = st.0 as usize;
                if streams.len() <= i {
                    streams.resize(i + 1, None);
                }
                let name = reader.streams().get(st.0).unwrap_or("").to_owned();
                rec.stream =
                    Some(*streams[i].get_or_insert_with(|| sink.writer.intern_stream(&name)));
            }
            sink.push(*rec)?;
        }
    }
    sink.finish(meta)?;
    Ok(out_of_order)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Op;

    /// Pushes `n` records with the mix of order the importers give (mostly in order,
    /// some a few places off, some far off, equal times), releasing now and then as
    /// the block importers do; returns what was written and the records in arrival
    /// order.
    fn run_sink(
        n: u64,
        limits: SortLimits,
        rebase: bool,
    ) -> (Vec<IoRecord>, Vec<IoRecord>, SinkDone) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        let w = TraceWriter::create(&path, &TraceMeta::default()).unwrap();
        let mut rng = crate::test_rng::XorShift(0x9E37_79B9_7F4A_7C15);
        let mut rand = move |n: u64| rng.below(n);
        let mut sent = Vec::new();
        let mut sink = Sink::new(w, &path, rebase, limits);
        let mut t = 1_000_000u64;
        for i in 0..n {
            t += rand(50);
            let issue = match rand(10) {
                0..=5 => t,
                6 | 7 => t.saturating_sub(rand(200)),
                8 => t.saturating_sub(rand(100_000)),
                _ => t - t % 64,
            };
            // The offset identifies the record.
            let mut rec = IoRecord::new(Op::Read, i * 4096, 4096, issue);
            rec.complete_ns = Some(issue + 7);
            sink.push(rec).unwrap();
            sent.push(rec);
            if rand(100) == 0 {
                sink.release_upto(t.saturating_sub(rand(5_000))).unwrap();
            }
        }
        assert_eq!(sink.records(), n);
        let done = sink.finish(TraceMeta::default()).unwrap();
        let (_, got, _, _) = crate::store::read_all(&path).unwrap();
        let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "the sort's temporary files are gone");
        (got, sent, done)
    }

    #[test]
    fn sink_writes_exact_issue_order_keeping_input_order_of_ties() {
        for limits in [
            SortLimits::default(),
            // Small runs: many spilled, merged in several passes.
            SortLimits {
                run_records: 1000,
                fan_in: 4,
            },
        ] {
            let (got, mut want, done) = run_sink(200_000, limits, false);
            assert!(done.sorted && done.runs > 0 || limits == SortLimits::default());
            want.sort_by_key(|r| r.issue_ns);
            assert_eq!(got.len(), want.len());
            assert!(got == want, "records written in another order ({limits:?})");
        }
        // Rebased: the smallest issue time is 0, service times kept.
        let (got, mut want, _) = run_sink(20_000, SortLimits::default(), true);
        want.sort_by_key(|r| r.issue_ns);
        let base = want[0].issue_ns;
        assert_eq!(got[0].issue_ns, 0);
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(
                (g.issue_ns + base, g.complete_ns.map(|c| c + base)),
                (w.issue_ns, w.complete_ns)
            );
            assert_eq!(g.offset_bytes, w.offset_bytes);
        }
    }

    #[test]
    fn sink_in_order_input_is_written_straight_out() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        let w = TraceWriter::create(&path, &TraceMeta::default()).unwrap();
        let mut sink = Sink::new(w, &path, true, SortLimits::default());
        for i in 0..1000u64 {
            sink.push_ordered(IoRecord::new(Op::Write, 0, 512, 5_000 + i))
                .unwrap();
        }
        let done = sink.finish(TraceMeta::default()).unwrap();
        assert_eq!(
            done,
            SinkDone {
                records: 1000,
                sorted: false,
                runs: 0
            }
        );
        let (_, got, _, _) = crate::store::read_all(&path).unwrap();
        assert_eq!((got[0].issue_ns, got[999].issue_ns), (0, 999));
    }
}
